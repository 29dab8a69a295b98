/* Forward ops of the GPN step, batched over B rows (row-major, row b at
 * x + b*n). Each is the float32 form of a formula in docs/gpn-model.md; the
 * trainer pairs each with a _backward. Projections go through CBLAS SGEMM so a
 * whole batch is one GEMM. */
#ifndef GS_ENGINE_OPS_H
#define GS_ENGINE_OPS_H

#include "engine/cpu/kernel_math.h"

/* out = x / sqrt(mean(x^2) + eps) * w  (out may equal x) */
void rmsnorm_forward(float *out, const float *x, const float *w, int B, int n);
/* out[B x n] = in[B x k] @ W[k x n] (+ bias[n] when not NULL) */
void matmul_forward(float *out, const float *in, const float *W, const float *bias, int B, int k, int n);
/* out = sig(out) elementwise over B*n values */
void sigmoid_inplace(float *x, long n);
/* h[b, j] = silu(u[b, j]) * u[b, f + j] for u of width 2f */
void swiglu_forward(float *h, const float *u, int B, int f);
/* y[i] = e^x[i] for x[i] <= 0 (within 2 float ulps; below -87, -inf
 * included, 0), vectorized where expf is not; y may be x */
void exp_nonpositive_n(float *y, const float *x, long n);
/* h[i] += x[i] over n values: a residual add */
void add_inplace(float *h, const float *x, long n);
/* out[i] = silu(g[i]) * v[i] (v NULL: silu(g[i])) over n values, vectorized
 * (within 3e-7 relative of g / (1 + expf(-g))); out may be g or v. The
 * pooled form splits the values over the engine's pool (parallel.h). */
void silu_mul(float *out, const float *g, const float *v, long n);
void silu_mul_pooled(float *out, const float *g, const float *v, long n);
/* per head of width dk: x = l2n(relu(x)) over B*H heads */
void relu_l2norm_heads(float *x, int B, int H, int dk);
/* One sequence's delta-rule step on its memory M (H x dk x dv), in one pass
 * over M (the largest thing a step touches):
 *   M_h <- alpha_h M_h + beta_h k_h (v_h - k_h M_h)^T,  norms[h] = ||M_h||_F after;
 * then, on the updated M, the read o_h = q_h M_h (when q is set) and the next
 * step's prediction pred_next_h = k_next_h M_h (when k_next is set). The next
 * step's keys are known now (they come from this step's state, docs/engine.md),
 * so carrying pred_next saves that step a pass over M to find k M. */
typedef struct {
    float *M;
    const float *k, *v, *alpha, *beta;
    const float *pred;      /* k M before the write, carried from the last step; NULL: found here (one more pass) */
    const float *q;         /* NULL: no read */
    float *o;
    const float *k_next;    /* NULL: no pred_next */
    float *pred_next;       /* may be the same array as pred */
    float *norms;           /* NULL: not wanted */
} memory_pass;
void memory_write_read(const memory_pass *p, int H, int dk, int dv);
/* o_h = q_h M_h for each head (o: H*dv) */
void memory_read(float *o, const float *q, const float *M, int H, int dk, int dv);
/* decay alpha_h = exp(-exp(A_log_h) * softplus(a_h + dt_bias_h)), in place on a (B x H) */
void decay_forward(float *a, const float *A_log, const float *dt_bias, int B, int H);
/* rmsnorm_forward with its rows over the engine's pool (the same numbers), and
 * swiglu_forward the same with silu_mul's vectorized SiLU (3e-7 apart) */
void rmsnorm_forward_pooled(float *out, const float *x, const float *w, int B, int n);
void swiglu_forward_pooled(float *h, const float *u, int B, int f);
/* p[0..n-1] = softmax(p) in place, vectorized (within 1e-6 relative of
 * the scalar expf form; a NaN anywhere makes the row NaN) */
void softmax_rows(float *p, int n);
/* per row of logits: nll of target, entropy (nats) and top-1 index */
void logits_stats(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1);
/* the same, its rows split over the engine's pool (engine/cpu/parallel.h):
 * at batch 64 and V 32000 the serial loop is a tenth of a baseline's step */
void logits_stats_pooled(const float *logits, const int *targets, int B, int V, float *nll, float *entropy, int *top1);

#endif
