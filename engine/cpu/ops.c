#include "engine/cpu/ops.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/cpu/parallel.h"
#include "engine/cpu/target_clones.h"

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

void add_inplace(float *h, const float *x, long n) {
    for (long i = 0; i < n; i++) h[i] += x[i];
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
 * squared norm is kept per column and summed once per head. Rows whose key,
 * query or next key is zero (relu makes them sparse) skip that product. */
GS_HOT void memory_write_read(const memory_pass *p, int H, int dk, int dv) {
    float delta[dv > 0 ? dv : 1], sq[dv > 0 ? dv : 1];
    for (int h = 0; h < H; h++) {
        float *Mh = p->M + (long)h * dk * dv;
        const float *kh = p->k + (long)h * dk, *vh = p->v + (long)h * dv;
        float *restrict dl = delta, *restrict sqc = sq;
        /* delta = beta (v - k M), with M before the decay (companion: pred_v from the old M) */
        if (p->pred) {
            for (int j = 0; j < dv; j++) dl[j] = p->pred[(long)h * dv + j];
        } else {
            for (int j = 0; j < dv; j++) dl[j] = 0.0f;
            for (int i = 0; i < dk; i++) {
                float ki = kh[i];
                if (ki == 0.0f) continue;
                const float *restrict row = Mh + (long)i * dv;
                for (int j = 0; j < dv; j++) dl[j] += ki * row[j];
            }
        }
        float bh = p->beta[h], a = p->alpha[h];
        for (int j = 0; j < dv; j++) dl[j] = bh * (vh[j] - dl[j]);
        /* pred was read whole above, so pred_next may overwrite it now */
        float *restrict oh = p->q ? p->o + (long)h * dv : NULL;
        float *nh = p->k_next ? p->pred_next + (long)h * dv : NULL; /* not restrict: may be pred */
        const float *qh = p->q ? p->q + (long)h * dk : NULL, *knh = p->k_next ? p->k_next + (long)h * dk : NULL;
        if (oh)
            for (int j = 0; j < dv; j++) oh[j] = 0.0f;
        if (nh)
            for (int j = 0; j < dv; j++) nh[j] = 0.0f;
        for (int j = 0; j < dv; j++) sqc[j] = 0.0f;
        for (int i = 0; i < dk; i++) {
            float *restrict row = Mh + (long)i * dv;
            float ki = kh[i], qi = qh ? qh[i] : 0.0f, kni = knh ? knh[i] : 0.0f;
            for (int j = 0; j < dv; j++) {
                float m = a * row[j] + ki * dl[j];
                row[j] = m;
                sqc[j] += m * m;
            }
            if (qi != 0.0f)
                for (int j = 0; j < dv; j++) oh[j] += qi * row[j];
            if (kni != 0.0f)
                for (int j = 0; j < dv; j++) nh[j] += kni * row[j];
        }
        double ss = 0.0;
        for (int j = 0; j < dv; j++) ss += sqc[j];
        if (p->norms) p->norms[h] = (float)sqrt(ss);
    }
}

GS_HOT void memory_read(float *o, const float *q, const float *M, int H, int dk, int dv) {
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

GS_HOT void exp_nonpositive_n(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = exp_nonpositive(x[i]);
}

/* silu(g) v as g sigmoid(g) v with sigmoid from e^-|g| (exp_nonpositive:
 * the argument is never positive, so nothing overflows), which GCC
 * vectorizes where it leaves glibc's expf scalar: at GDN's window rows the
 * scalar SiLUs of the gate, the MLP and the convolution were a tenth of the
 * time. A NaN stays NaN; -inf gives 0, as the limit. */
static inline float silu_exact_enough(float g) {
    float e = exp_nonpositive(-fabsf(g));
    float s = (g >= 0.0f ? 1.0f : e) / (1.0f + e);
    float y = s > 0.0f ? g * s : 0.0f;
    return g != g ? g : y;
}

GS_HOT void silu_mul(float *out, const float *g, const float *v, long n) {
    if (v)
        for (long i = 0; i < n; i++) out[i] = silu_exact_enough(g[i]) * v[i];
    else
        for (long i = 0; i < n; i++) out[i] = silu_exact_enough(g[i]);
}

typedef struct {
    float *out;
    const float *g, *v;
} silu_job;

static void silu_range(void *ctx, long i0, long i1) {
    const silu_job *j = ctx;
    silu_mul(j->out + i0, j->g + i0, j->v ? j->v + i0 : NULL, i1 - i0);
}

void silu_mul_pooled(float *out, const float *g, const float *v, long n) {
    silu_job j = {out, g, v};
    gs_parallel_for(n, gs_parallel_grain(1), silu_range, &j);
}

/* Three vectorized passes over each row (this file is built at -O3 with
 * -fno-trapping-math, so the selects become blends): the maximum, in GCC
 * vector types because GCC does not vectorize a float max reduction written
 * as a loop (NaN rules); then e^(z - max); then the sums in double lanes. The
 * clamp at -87 makes a -inf logit add 0 * -87 to the entropy sum, not
 * 0 * -inf. A row with a NaN has no distribution: its nll and entropy are
 * NaN, its top-1 the largest of the other logits. */
typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));

/* the largest logit that is not NaN (-inf when none); *nan: whether any is */
static float row_max(const float *z, int V, int *nan) {
    float mx = -INFINITY;
    int any_nan = 0, i = 0;
    if (V >= 8) {
        f32x8 m = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
        i32x8 unordered = {0, 0, 0, 0, 0, 0, 0, 0};
        for (; i + 8 <= V; i += 8) {
            f32x8 x;
            memcpy(&x, z + i, sizeof x);
            i32x8 gt = x > m; /* false for a NaN x: it never enters m */
            unordered |= x != x;
            m = (f32x8)((gt & (i32x8)x) | (~gt & (i32x8)m));
        }
        for (int l = 0; l < 8; l++) {
            mx = m[l] > mx ? m[l] : mx;
            any_nan |= unordered[l] != 0;
        }
    }
    for (; i < V; i++) {
        mx = z[i] > mx ? z[i] : mx;
        any_nan |= z[i] != z[i];
    }
    *nan = any_nan;
    return mx;
}

typedef float f32x4 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef double f64x4 __attribute__((vector_size(32)));

/* sum of p and of p * max(x, -87) in double, four lanes at a time */
static void sums(const float *p, const float *z, float mx, int V, double *sum, double *wsum) {
    f64x4 s = {0, 0, 0, 0}, w = {0, 0, 0, 0};
    int i = 0;
    for (; i + 4 <= V; i += 4) {
        f32x4 pv, x;
        memcpy(&pv, p + i, sizeof pv);
        memcpy(&x, z + i, sizeof x);
        x -= mx;
        i32x4 low = x < -87.0f;
        x = (f32x4)((low & (i32x4)(f32x4){-87.0f, -87.0f, -87.0f, -87.0f}) | (~low & (i32x4)x));
        f64x4 pd = __builtin_convertvector(pv, f64x4);
        s += pd;
        w += pd * __builtin_convertvector(x, f64x4);
    }
    double ss = s[0] + s[1] + s[2] + s[3], ws = w[0] + w[1] + w[2] + w[3];
    for (; i < V; i++) {
        float x = z[i] - mx;
        ss += p[i];
        ws += (double)p[i] * (x > -87.0f ? x : -87.0f);
    }
    *sum = ss;
    *wsum = ws;
}

typedef struct {
    float *out;
    const float *x, *w;
    int n;
} row_job;

static void rmsnorm_range(void *ctx, long b0, long b1) {
    const row_job *j = ctx;
    rmsnorm_forward(j->out + b0 * j->n, j->x + b0 * j->n, j->w, (int)(b1 - b0), j->n);
}

void rmsnorm_forward_pooled(float *out, const float *x, const float *w, int B, int n) {
    row_job j = {out, x, w, n};
    gs_parallel_for(B, gs_parallel_grain(n), rmsnorm_range, &j);
}

static void swiglu_range(void *ctx, long b0, long b1) {
    const row_job *j = ctx;
    for (long b = b0; b < b1; b++) {
        const float *g = j->x + b * 2 * j->n;
        silu_mul(j->out + b * j->n, g, g + j->n, j->n);
    }
}

void swiglu_forward_pooled(float *h, const float *u, int B, int f) {
    row_job j = {h, u, NULL, f};
    gs_parallel_for(B, gs_parallel_grain(2L * f), swiglu_range, &j);
}

/* The window paths' attention rows: the maximum in vector lanes (row_max),
 * e^(p - max) vectorized, the sum in double lanes (sums; its weighted sum is
 * not used). exp_nonpositive takes a NaN for -87, so a row with one is made
 * all NaN here, as the scalar softmax's sum would make it. */
GS_HOT void softmax_rows(float *p, int n) {
    int nan;
    float mx = row_max(p, n, &nan);
    for (int i = 0; i < n; i++) p[i] = exp_nonpositive(p[i] - mx);
    double sum, wsum;
    sums(p, p, 0.0f, n, &sum, &wsum);
    float inv = nan ? NAN : (float)(1.0 / sum);
    for (int i = 0; i < n; i++) p[i] *= inv;
}

GS_HOT void logits_stats(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1) {
    float p[V > 0 ? V : 1];
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * V;
        int nan;
        float mx = row_max(z, V, &nan);
        int best = 0; /* the first index of the maximum, as a scan with > finds */
        while (best < V && !(z[best] == mx)) best++;
        if (best == V) best = 0; /* every logit NaN */
        for (int i = 0; i < V; i++) p[i] = exp_nonpositive(z[i] - mx);
        double sum, wsum;
        sums(p, z, mx, V, &sum, &wsum);
        double logz = mx + log(sum);
        if (nll) nll[b] = nan ? NAN : (float)(logz - z[targets[b]]);
        if (entropy) entropy[b] = nan ? NAN : (float)(log(sum) - wsum / sum);
        if (top1) top1[b] = best;
    }
}

typedef struct {
    const float *logits;
    const int *targets;
    int V;
    float *nll, *entropy;
    int *top1;
} logits_job;

static void logits_rows(void *ctx, long b0, long b1) {
    const logits_job *j = ctx;
    logits_stats(j->logits + b0 * j->V, j->targets + b0, (int)(b1 - b0), j->V, j->nll ? j->nll + b0 : NULL,
                 j->entropy ? j->entropy + b0 : NULL, j->top1 ? j->top1 + b0 : NULL);
}

void logits_stats_pooled(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1) {
    logits_job j = {logits, targets, V, nll, entropy, top1};
    gs_parallel_for(B, gs_parallel_grain(V), logits_rows, &j);
}
