#include "engine/ops.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void rmsnorm_forward(float *out, const float *x, const float *w, int B, int n) {
    for (int b = 0; b < B; b++) {
        const float *xr = x + (long)b * n;
        float *o = out + (long)b * n;
        double ss = 0.0;
        for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        float r = gs_rms_scale((float)ss, n);
        for (int i = 0; i < n; i++) o[i] = xr[i] * r * w[i];
    }
}

void matmul_forward(float *out, const float *in, const float *W, const float *bias, int B, int k, int n) {
    if (bias) {
        for (int b = 0; b < B; b++) memcpy(out + (long)b * n, bias, (size_t)n * sizeof *out);
    }
    if (B == 1) /* OpenBLAS's GEMV streams the weights at full bandwidth; its GEMM with M = 1 does not */
        cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, W, n, in, 1, bias ? 1.0f : 0.0f, out, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, n, k, 1.0f, in, k, W, n, bias ? 1.0f : 0.0f, out, n);
}

void sigmoid_inplace(float *x, long n) {
    for (long i = 0; i < n; i++) x[i] = gs_sigmoid(x[i]);
}

void swiglu_forward(float *h, const float *u, int B, int f) {
    for (int b = 0; b < B; b++) {
        const float *g = u + (long)b * 2 * f, *v = g + f;
        float *o = h + (long)b * f;
        for (int j = 0; j < f; j++) o[j] = gs_swiglu(g[j], v[j]);
    }
}

void relu_l2norm_heads(float *x, int B, int H, int dk) {
    for (long r = 0; r < (long)B * H; r++) {
        float *h = x + r * dk;
        double ss = 0.0;
        for (int i = 0; i < dk; i++) {
            if (h[i] < 0.0f) h[i] = 0.0f;
            ss += (double)h[i] * h[i];
        }
        float inv = gs_l2_scale((float)ss);
        for (int i = 0; i < dk; i++) h[i] *= inv;
    }
}

/* Every inner loop runs along a row of M (j over dv) with no reduction across
 * j, so GCC vectorizes it (this file is built at -O3, module.cmake): the
 * squared norm is kept per column and summed once per head. */
void memory_write_read(float *M, const float *k, const float *v, const float *alpha, const float *beta, float *norms,
                       const float *q, float *o, int H, int dk, int dv) {
    float delta[dv > 0 ? dv : 1], sq[dv > 0 ? dv : 1];
    for (int h = 0; h < H; h++) {
        float *Mh = M + (long)h * dk * dv;
        const float *kh = k + (long)h * dk, *vh = v + (long)h * dv;
        float *restrict dl = delta, *restrict sqc = sq;
        /* delta = beta (v - k M), with M before the decay (companion: pred_v from the old M) */
        for (int j = 0; j < dv; j++) dl[j] = 0.0f;
        for (int i = 0; i < dk; i++) {
            float ki = kh[i];
            if (ki == 0.0f) continue; /* relu keys are sparse */
            const float *restrict row = Mh + (long)i * dv;
            for (int j = 0; j < dv; j++) dl[j] += ki * row[j];
        }
        float bh = beta[h], a = alpha[h];
        for (int j = 0; j < dv; j++) dl[j] = bh * (vh[j] - dl[j]);
        float *restrict oh = o ? o + (long)h * dv : NULL;
        const float *qh = q ? q + (long)h * dk : NULL;
        if (oh)
            for (int j = 0; j < dv; j++) oh[j] = 0.0f;
        for (int j = 0; j < dv; j++) sqc[j] = 0.0f;
        for (int i = 0; i < dk; i++) {
            float *restrict row = Mh + (long)i * dv;
            float ki = kh[i], qi = qh ? qh[i] : 0.0f;
            for (int j = 0; j < dv; j++) {
                float m = a * row[j] + ki * dl[j];
                row[j] = m;
                sqc[j] += m * m;
            }
            if (qi != 0.0f)
                for (int j = 0; j < dv; j++) oh[j] += qi * row[j];
        }
        double ss = 0.0;
        for (int j = 0; j < dv; j++) ss += sqc[j];
        if (norms) norms[h] = (float)sqrt(ss);
    }
}

void memory_read(float *o, const float *q, const float *M, int H, int dk, int dv) {
    for (int h = 0; h < H; h++) {
        const float *Mh = M + (long)h * dk * dv, *qh = q + (long)h * dk;
        float *oh = o + (long)h * dv;
        for (int j = 0; j < dv; j++) oh[j] = 0.0f;
        for (int i = 0; i < dk; i++) {
            float qi = qh[i];
            if (qi == 0.0f) continue;
            const float *row = Mh + (long)i * dv;
            for (int j = 0; j < dv; j++) oh[j] += qi * row[j];
        }
    }
}

void decay_forward(float *a, const float *A_log, const float *dt_bias, int B, int H) {
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            float *x = a + (long)b * H + h;
            *x = gs_decay(*x, A_log[h], dt_bias[h]);
        }
}

void logits_stats(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1) {
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * V;
        int best = 0;
        for (int i = 1; i < V; i++)
            if (z[i] > z[best]) best = i;
        double mx = z[best], sum = 0.0, wsum = 0.0;
        for (int i = 0; i < V; i++) {
            double p = exp((double)z[i] - mx);
            sum += p;
            if (p > 0.0) wsum += p * ((double)z[i] - mx); /* a -inf logit (banned by a hook) adds nothing */
        }
        double logz = mx + log(sum);
        if (nll) nll[b] = (float)(logz - z[targets[b]]);
        if (entropy) entropy[b] = (float)(log(sum) - wsum / sum);
        if (top1) top1[b] = best;
    }
}
