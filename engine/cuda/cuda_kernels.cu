/* The custom kernels of the CUDA step (contracts in cuda_kernels.cuh). Rows
 * are reduced by one block each, heads by one warp each; blocks are always a
 * multiple of 32 threads so every warp shuffle has a full mask. */
#include "engine/cuda/cuda_kernels.cuh"
#include "engine/cpu/kernel_math.h"

#define FULL_MASK 0xffffffffu

static inline unsigned blocks_for(long n, int threads) { return (unsigned)((n + threads - 1) / threads); }

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

/* Sum over the block, returned to every thread. */
__device__ float block_sum(float v) {
    __shared__ float part[32];
    __shared__ float total;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads(); /* an earlier call may still be reading part[] */
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < n_warps ? part[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) total = v;
    }
    __syncthreads();
    return total;
}

__device__ gs_lse shfl_lse(gs_lse a, int o) {
    gs_lse b;
    b.m = __shfl_xor_sync(FULL_MASK, a.m, o);
    b.s = __shfl_xor_sync(FULL_MASK, a.s, o);
    b.w = __shfl_xor_sync(FULL_MASK, a.w, o);
    b.best = __shfl_xor_sync(FULL_MASK, a.best, o);
    return b;
}

__device__ gs_lse block_lse(gs_lse a) {
    __shared__ gs_lse part[32];
    __shared__ gs_lse total;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) a = gs_lse_merge(a, shfl_lse(a, o));
    if (lane == 0) part[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < n_warps ? part[lane] : gs_lse_empty();
        for (int o = 16; o > 0; o >>= 1) a = gs_lse_merge(a, shfl_lse(a, o));
        if (lane == 0) total = a;
    }
    __syncthreads();
    return total;
}

/* ---- row norms ---- */

__global__ void rmsnorm_kernel(float *out, gs_bf16 *out16, const float *x, const float *w, int n) {
    const float *xr = x + (long)blockIdx.x * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
    float r = gs_rms_scale(block_sum(ss), n);
    float *o = out + (long)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float y = xr[i] * r * w[i];
        o[i] = y;
        if (out16) out16[(long)blockIdx.x * n + i] = __float2bfloat16_rn(y);
    }
}

void k_rmsnorm(cudaStream_t st, float *out, gs_bf16 *out16, const float *x, const float *w, int B, int n) {
    rmsnorm_kernel<<<B, 256, 0, st>>>(out, out16, x, w, n);
}

__global__ void gated_read_kernel(float *out, gs_bf16 *out16, const float *o, const float *w, const float *g, int n) {
    long row = (long)blockIdx.x * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += o[row + i] * o[row + i];
    float r = gs_rms_scale(block_sum(ss), n);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float y = o[row + i] * r * w[i] * gs_silu(g[row + i]);
        out[row + i] = y;
        if (out16) out16[row + i] = __float2bfloat16_rn(y);
    }
}

void k_gated_read(cudaStream_t st, float *out, gs_bf16 *out16, const float *o, const float *w, const float *g, int B,
                  int n) {
    gated_read_kernel<<<B, 256, 0, st>>>(out, out16, o, w, g, n);
}

__global__ void embed_rms_kernel(float *out, gs_bf16 *out16, const float *E, const int *tokens, const float *w, int e) {
    const float *row = E + (long)tokens[blockIdx.x] * e;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < e; i += blockDim.x) ss += row[i] * row[i];
    float r = gs_rms_scale(block_sum(ss), e);
    long o = (long)blockIdx.x * e;
    for (int i = threadIdx.x; i < e; i += blockDim.x) {
        float y = row[i] * r * w[i];
        out[o + i] = y;
        if (out16) out16[o + i] = __float2bfloat16_rn(y);
    }
}

void k_embed_rms(cudaStream_t st, float *out, gs_bf16 *out16, const float *E, const int *tokens, const float *w,
                 int B, int e) {
    embed_rms_kernel<<<B, 128, 0, st>>>(out, out16, E, tokens, w, e);
}

/* one warp per head: relu, then l2n over dk */
__global__ void bias_relu_l2n_kernel(float *x, const float *bias, long n_heads, int H, int dk) {
    long head = (long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (head >= n_heads) return; /* whole warps leave together: the shuffle below stays full */
    float *xh = x + head * dk;
    const float *bh = bias ? bias + (head % H) * dk : NULL;
    float ss = 0.0f;
    for (int i = lane; i < dk; i += 32) {
        float y = fmaxf(xh[i] + (bh ? bh[i] : 0.0f), 0.0f);
        xh[i] = y;
        ss += y * y;
    }
    float s = gs_l2_scale(warp_sum(ss));
    for (int i = lane; i < dk; i += 32) xh[i] *= s;
}

void k_bias_relu_l2n(cudaStream_t st, float *x, const float *bias, int B, int H, int dk) {
    long n = (long)B * H;
    bias_relu_l2n_kernel<<<blocks_for(n, 8), 256, 0, st>>>(x, bias, n, H, dk);
}

/* ---- elementwise ---- */

__global__ void sigmoid_bias_kernel(float *x, const float *bias, long total, int n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) x[i] = gs_sigmoid(x[i] + (bias ? bias[i % n] : 0.0f));
}

void k_sigmoid_bias(cudaStream_t st, float *x, const float *bias, int B, int n) {
    long total = (long)B * n;
    sigmoid_bias_kernel<<<blocks_for(total, 256), 256, 0, st>>>(x, bias, total, n);
}

__global__ void write_gates_kernel(float *beta, float *alpha, const float *A_log, const float *dt_bias, long total,
                                   int H) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    int h = (int)(i % H);
    beta[i] = gs_sigmoid(beta[i]);
    alpha[i] = gs_decay(alpha[i], A_log[h], dt_bias[h]);
}

void k_write_gates(cudaStream_t st, float *beta, float *alpha, const float *A_log, const float *dt_bias, int B, int H) {
    long total = (long)B * H;
    write_gates_kernel<<<blocks_for(total, 128), 128, 0, st>>>(beta, alpha, A_log, dt_bias, total, H);
}

__global__ void swiglu_kernel(float *h, gs_bf16 *h16, const float *u, long total, int f) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    long b = i / f, j = i % f;
    float y = gs_swiglu(u[b * 2 * f + j], u[b * 2 * f + f + j]);
    h[i] = y;
    if (h16) h16[i] = __float2bfloat16_rn(y);
}

void k_swiglu(cudaStream_t st, float *h, gs_bf16 *h16, const float *u, int B, int f) {
    long total = (long)B * f;
    swiglu_kernel<<<blocks_for(total, 256), 256, 0, st>>>(h, h16, u, total, f);
}

__global__ void layer_update_kernel(float *c, const float *pg, const float *ffn, const float *mem, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = gs_layer_update(pg[i], c[i], ffn[i], mem ? mem[i] : 0.0f);
}

void k_layer_update(cudaStream_t st, float *c, const float *pg, const float *ffn, const float *mem, long n) {
    layer_update_kernel<<<blocks_for(n, 256), 256, 0, st>>>(c, pg, ffn, mem, n);
}

__global__ void bias_convert_kernel(float *z, gs_bf16 *z16, const float *bias, long total, int n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    float y = z[i] + (bias ? bias[i % n] : 0.0f);
    z[i] = y;
    if (z16) z16[i] = __float2bfloat16_rn(y);
}

void k_bias_convert(cudaStream_t st, float *z, gs_bf16 *z16, const float *bias, int B, int n) {
    long total = (long)B * n;
    bias_convert_kernel<<<blocks_for(total, 256), 256, 0, st>>>(z, z16, bias, total, n);
}

__global__ void ground_kernel(float *sg, const float *fg, const float *sp, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sg[i] += fg[i] * sp[i];
}

void k_ground(cudaStream_t st, float *sg, const float *fg, const float *sp, long n) {
    ground_kernel<<<blocks_for(n, 256), 256, 0, st>>>(sg, fg, sp, n);
}

__global__ void gather_rows_kernel(float *dst, const float *src, const int *rows, long total, int width) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    long r = i / width, j = i % width;
    dst[i] = src[(long)rows[r] * width + j];
}

void k_gather_rows(cudaStream_t st, float *dst, const float *src, const int *rows, int n_rows, int width) {
    long total = (long)n_rows * width;
    if (total) gather_rows_kernel<<<blocks_for(total, 256), 256, 0, st>>>(dst, src, rows, total, width);
}

__global__ void to_bf16_kernel(gs_bf16 *dst, const float *src, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __float2bfloat16_rn(src[i]);
}

void k_to_bf16(cudaStream_t st, gs_bf16 *dst, const float *src, long n) {
    to_bf16_kernel<<<blocks_for(n, 256), 256, 0, st>>>(dst, src, n);
}

/* ---- memory: one block per (head, sequence), one thread per column ---- */

__global__ void memory_write_read_kernel(float *M, const float *k, const float *v, const float *alpha,
                                         const float *beta, float *norms, const float *q, float *o, int H, int dk,
                                         int dv) {
    extern __shared__ float kq[]; /* k_h then q_h: 2 dk floats */
    int h = blockIdx.x, b = blockIdx.y;
    long bh = (long)b * H + h;
    const float *kh = k + bh * dk;
    for (int i = threadIdx.x; i < dk; i += blockDim.x) {
        kq[i] = kh[i];
        kq[dk + i] = q ? q[bh * dk + i] : 0.0f;
    }
    __syncthreads();
    float *Mh = M + bh * dk * dv;
    float a = alpha[bh], be = beta[bh], ss = 0.0f;
    for (int j = threadIdx.x; j < dv; j += blockDim.x) {
        float oj;
        ss += gs_memory_column(Mh, kq, q ? kq + dk : NULL, v[bh * dv + j], a, be, dk, dv, j, &oj);
        if (q) o[bh * dv + j] = oj;
    }
    ss = block_sum(ss);
    if (threadIdx.x == 0) norms[bh] = sqrtf(ss);
}

static int column_threads(int dv) {
    int t = (dv + 31) / 32 * 32;
    return t > 1024 ? 1024 : t;
}

void k_memory_write_read(cudaStream_t st, float *M, const float *k, const float *v, const float *alpha,
                         const float *beta, float *norms, const float *q, float *o, int B, int H, int dk, int dv) {
    dim3 grid(H, B);
    memory_write_read_kernel<<<grid, column_threads(dv), 2 * dk * sizeof(float), st>>>(M, k, v, alpha, beta, norms,
                                                                                      q, o, H, dk, dv);
}

__global__ void memory_read_kernel(float *o, const float *q, const float *M, int H, int dk, int dv) {
    extern __shared__ float qs[];
    int h = blockIdx.x, b = blockIdx.y;
    long bh = (long)b * H + h;
    for (int i = threadIdx.x; i < dk; i += blockDim.x) qs[i] = q[bh * dk + i];
    __syncthreads();
    const float *Mh = M + bh * dk * dv;
    for (int j = threadIdx.x; j < dv; j += blockDim.x) o[bh * dv + j] = gs_memory_read_column(Mh, qs, dk, dv, j);
}

void k_memory_read(cudaStream_t st, float *o, const float *q, const float *M, int B, int H, int dk, int dv) {
    dim3 grid(H, B);
    memory_read_kernel<<<grid, column_threads(dv), dk * sizeof(float), st>>>(o, q, M, H, dk, dv);
}

/* ---- logits: log-softmax statistics, one block per row ---- */

__global__ void logits_stats_kernel(const float *logits, const int *targets, int V, float *nll, float *entropy,
                                    int *top1) {
    const float *z = logits + (long)blockIdx.x * V;
    gs_lse a = gs_lse_empty();
    for (int i = threadIdx.x; i < V; i += blockDim.x) a = gs_lse_push(a, z[i], i);
    a = block_lse(a);
    if (threadIdx.x == 0) {
        nll[blockIdx.x] = gs_lse_logz(a) - z[targets[blockIdx.x]];
        entropy[blockIdx.x] = gs_lse_entropy(a);
        top1[blockIdx.x] = a.best;
    }
}

void k_logits_stats(cudaStream_t st, const float *logits, const int *targets, int B, int V, float *nll,
                    float *entropy, int *top1) {
    logits_stats_kernel<<<B, 512, 0, st>>>(logits, targets, V, nll, entropy, top1);
}
