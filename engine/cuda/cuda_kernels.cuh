/* The custom kernels of the CUDA step: everything a step does that is not a
 * GEMM. Each launcher enqueues on `st` and returns at once. Per-element math
 * is engine/cpu/kernel_math.h, shared with the CPU engine and tested on the CPU;
 * a bf16 output pointer, when not NULL, receives a BF16 copy of the result
 * for the next GEMM in bf16 mode. */
#ifndef GS_ENGINE_CUDA_KERNELS_CUH
#define GS_ENGINE_CUDA_KERNELS_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>

typedef __nv_bfloat16 gs_bf16;

/* out = x / sqrt(mean(x^2) + eps) * w per row of n (out may equal x) */
void k_rmsnorm(cudaStream_t st, float *out, gs_bf16 *out16, const float *x, const float *w, int B, int n);
/* per head of dk: x = l2n(relu(x + bias)) (bias per column, may be NULL) */
void k_bias_relu_l2n(cudaStream_t st, float *x, const float *bias, int B, int H, int dk);
/* x = sig(x + bias) per row of n (bias may be NULL) */
void k_sigmoid_bias(cudaStream_t st, float *x, const float *bias, int B, int n);
/* beta = sig(beta); alpha = exp(-exp(A_log) softplus(alpha + dt_bias)), B x H */
void k_write_gates(cudaStream_t st, float *beta, float *alpha, const float *A_log, const float *dt_bias, int B, int H);
/* the delta-rule write of every sequence and head, then (q not NULL) the read
 * o = q M on the new memory and norms = ||M_h||_F; M is B x H x dk x dv */
void k_memory_write_read(cudaStream_t st, float *M, const float *k, const float *v, const float *alpha,
                         const float *beta, float *norms, const float *q, float *o, int B, int H, int dk, int dv);
/* o = q M for every sequence and head */
void k_memory_read(cudaStream_t st, float *o, const float *q, const float *M, int B, int H, int dk, int dv);
/* out = rms(o, w) * silu(g) per row of n */
void k_gated_read(cudaStream_t st, float *out, gs_bf16 *out16, const float *o, const float *w, const float *g, int B,
                  int n);
/* h = silu(u[:f]) * u[f:] per row */
void k_swiglu(cudaStream_t st, float *h, gs_bf16 *h16, const float *u, int B, int f);
/* c = pg * c + ffn + mem (mem may be NULL) over n values */
void k_layer_update(cudaStream_t st, float *c, const float *pg, const float *ffn, const float *mem, long n);
/* z += bias (may be NULL); z16 = bf16(z) (may be NULL) per row of n */
void k_bias_convert(cudaStream_t st, float *z, gs_bf16 *z16, const float *bias, int B, int n);
/* per row: nll of the target, entropy in nats, first index of the maximum */
void k_logits_stats(cudaStream_t st, const float *logits, const int *targets, int B, int V, float *nll,
                    float *entropy, int *top1);
/* out = rms(E[tokens[b]], w) per row of e */
void k_embed_rms(cudaStream_t st, float *out, gs_bf16 *out16, const float *E, const int *tokens, const float *w,
                 int B, int e);
/* sg += fg * sp over n values */
void k_ground(cudaStream_t st, float *sg, const float *fg, const float *sp, long n);
/* dst row r = src row rows[r] */
void k_gather_rows(cudaStream_t st, float *dst, const float *src, const int *rows, int n_rows, int width);
/* dst = bf16(src) over n values */
void k_to_bf16(cudaStream_t st, gs_bf16 *dst, const float *src, long n);

#endif
