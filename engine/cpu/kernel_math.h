/* Per-element math of the GPN step, shared by the CPU engine (ops.c) and the
 * CUDA kernels (cuda_kernels.cu). Every function here compiles as plain C and,
 * under nvcc, as __host__ __device__, so the CPU test suite checks the exact
 * code the GPU runs (tests/unit/test_kernel_math.c); only the parallel
 * reductions around these functions are GPU-only. */
#ifndef GS_ENGINE_KERNEL_MATH_H
#define GS_ENGINE_KERNEL_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

#define GPN_RMS_EPS 1e-6f
#define GPN_L2_EPS 1e-12f

GS_HD float gs_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
GS_HD float gs_silu(float x) { return x / (1.0f + expf(-x)); }
/* log(1 + e^x); above 20 the correction is below float resolution */
GS_HD float gs_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }
/* 1 / sqrt(mean(x^2) + eps) from the sum of squares of n values */
GS_HD float gs_rms_scale(float sumsq, int n) { return 1.0f / sqrtf(sumsq / (float)n + GPN_RMS_EPS); }
/* 1 / sqrt(sum(x^2) + eps) for l2n */
GS_HD float gs_l2_scale(float sumsq) { return 1.0f / sqrtf(sumsq + GPN_L2_EPS); }
/* the memory decay rate alpha = exp(-exp(A_log) * softplus(a + dt_bias)) */
GS_HD float gs_decay(float a, float A_log, float dt_bias) { return expf(-expf(A_log) * gs_softplus(a + dt_bias)); }
/* SwiGLU element: silu(gate) * value */
GS_HD float gs_swiglu(float gate, float value) { return gs_silu(gate) * value; }
/* a layer's state update from one c: gate * c + ffn + mem */
GS_HD float gs_layer_update(float gate, float c, float ffn, float mem) { return gate * c + ffn + mem; }

/* Column j of one head's delta-rule write and read (M_h is dk x dv, row-major):
 * delta_j = beta (v_j - sum_i k_i M_ij) from the memory before the decay, then
 * M_ij <- alpha M_ij + k_i delta_j, and o_j = sum_i q_i M_ij on the new memory
 * (q may be NULL: no read). Returns sum_i M_ij^2 after the write, for the
 * head's Frobenius norm. One GPU thread runs one column: threads of a warp
 * touch consecutive j, so every access to M is coalesced. */
GS_HD float gs_memory_column(float *Mh, const float *k, const float *q, float v_j, float alpha, float beta, int dk,
                             int dv, int j, float *o_j) {
    float kM = 0.0f;
    for (int i = 0; i < dk; i++) kM += k[i] * Mh[(long)i * dv + j];
    float delta = beta * (v_j - kM);
    float ss = 0.0f, o = 0.0f;
    for (int i = 0; i < dk; i++) {
        float m = alpha * Mh[(long)i * dv + j] + k[i] * delta;
        Mh[(long)i * dv + j] = m;
        ss += m * m;
        if (q) o += q[i] * m;
    }
    if (o_j) *o_j = o;
    return ss;
}

/* o_j = sum_i q_i M_ij (a later layer's read of the written memory) */
GS_HD float gs_memory_read_column(const float *Mh, const float *q, int dk, int dv, int j) {
    float o = 0.0f;
    for (int i = 0; i < dk; i++) o += q[i] * Mh[(long)i * dv + j];
    return o;
}

/* Running log-sum-exp over logits, mergeable in any order (one per thread,
 * then combined by a tree): m = max so far, s = sum e^(z - m),
 * w = sum e^(z - m) (z - m), and the first index of the maximum. */
typedef struct {
    float m, s, w;
    int best;
} gs_lse;

GS_HD gs_lse gs_lse_empty(void) {
    gs_lse r = {-INFINITY, 0.0f, 0.0f, 0x7fffffff};
    return r;
}

GS_HD gs_lse gs_lse_merge(gs_lse a, gs_lse b) {
    if (b.s == 0.0f) return a;
    if (a.s == 0.0f) return b;
    gs_lse r;
    r.best = (a.m > b.m || (a.m == b.m && a.best < b.best)) ? a.best : b.best;
    r.m = fmaxf(a.m, b.m);
    if (r.m == -INFINITY) { /* only -inf so far (a hook that bans tokens): no mass yet, no NaN */
        r.s = a.s + b.s;
        r.w = 0.0f;
        return r;
    }
    float ea = expf(a.m - r.m), eb = expf(b.m - r.m);
    /* shifting the reference point by delta: w' = (w + s delta) e^delta; a part
     * whose weight underflowed to 0 (e.g. -inf logits) adds nothing, not 0 * inf */
    r.s = a.s * ea + b.s * eb;
    r.w = (ea > 0.0f ? (a.w + a.s * (a.m - r.m)) * ea : 0.0f) + (eb > 0.0f ? (b.w + b.s * (b.m - r.m)) * eb : 0.0f);
    return r;
}

GS_HD gs_lse gs_lse_push(gs_lse a, float z, int index) {
    gs_lse one = {z, 1.0f, 0.0f, index};
    return gs_lse_merge(a, one);
}

/* log Z, entropy (nats) and the NLL of a target logit from a finished lse */
GS_HD float gs_lse_logz(gs_lse a) { return a.m + logf(a.s); }
GS_HD float gs_lse_entropy(gs_lse a) { return logf(a.s) - a.w / a.s; }

#endif
