#include "engine/ops.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
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

/* e^x for x <= 0 in a form GCC vectorizes (no call, no branch): x = n ln2 + r
 * with |r| <= ln2/2, e^r by its Taylor series to r^7 (relative error below
 * 2e-7, about 2 float ulps), times 2^n built in the exponent bits. Inputs
 * below -87 (and -inf) give 0. */
static inline float exp_nonpositive(float x) {
    x = x > -87.0f ? x : -87.0f; /* also turns a NaN into -87; callers never pass one */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f; /* ln2 split hi/lo */
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666668e-2f + r * (8.3333338e-3f +
                  r * (1.3888889e-3f + r * 1.9841270e-4f))))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float y = p * scale;
    return x <= -87.0f ? 0.0f : y;
}

void logits_stats(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1) {
    float p[V > 0 ? V : 1];
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * V;
        int best = 0;
        for (int i = 1; i < V; i++)
            if (z[i] > z[best]) best = i;
        float mx = z[best];
        for (int i = 0; i < V; i++) p[i] = exp_nonpositive(z[i] - mx);
        /* sums in double, four chains so the adds overlap */
        double s[4] = {0, 0, 0, 0}, w[4] = {0, 0, 0, 0};
        int i = 0;
        for (; i + 4 <= V; i += 4)
            for (int l = 0; l < 4; l++) {
                s[l] += p[i + l];
                if (p[i + l] > 0.0f) w[l] += (double)p[i + l] * (z[i + l] - mx); /* a -inf logit adds nothing */
            }
        for (; i < V; i++) {
            s[0] += p[i];
            if (p[i] > 0.0f) w[0] += (double)p[i] * (z[i] - mx);
        }
        double sum = s[0] + s[1] + s[2] + s[3], wsum = w[0] + w[1] + w[2] + w[3];
        double logz = mx + log(sum);
        if (nll) nll[b] = (float)(logz - z[targets[b]]);
        if (entropy) entropy[b] = (float)(log(sum) - wsum / sum);
        if (top1) top1[b] = best;
    }
}
