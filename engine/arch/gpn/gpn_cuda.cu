/* GPN's CUDA step (contract in engine/cuda/cuda_engine.h; in the family's
 * folder because the step is GPN's): the same sequence of operations as the
 * CPU step, with each projection one cuBLAS GEMM over the batch and the rest
 * the kernels of engine/cuda/cuda_kernels.cu, all on one stream. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "base/error.h"
}
#include "engine/arch/gpn/gpn_hooks.h"
#include "engine/cuda/cuda_engine.h"
#include "engine/cuda/cuda_kernels.cuh"

#define CK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t err_ = (x);                                                                                   \
        if (err_ != cudaSuccess) return gs_fail("CUDA: %s (%s, %s:%d)", cudaGetErrorString(err_), #x, __FILE__, __LINE__); \
    } while (0)
#define CB(x)                                                                                                     \
    do {                                                                                                          \
        cublasStatus_t st_ = (x);                                                                                 \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                                         \
            return gs_fail("cuBLAS: %s (%s:%d)", cublasGetStatusString(st_), __FILE__, __LINE__);                  \
    } while (0)

struct gpn_cuda {
    const gs_model *m;
    gs_config cfg;
    int max_batch, device;
    gs_precision prec;
    cudaStream_t stream;
    cublasHandle_t blas;
    int sticky_error; /* a failed reset, reported by the next step */
    /* weights: the model's float32 block, and its BF16 copy in bf16 mode, each
     * tensor starting on a 256-byte boundary (cuBLAS's vectorized tensor-core
     * paths want aligned matrices; the host block packs them end to end) */
    float *w32;
    gs_bf16 *w16;
    int n_tensors;
    size_t host_off[GS_MAX_TENSORS], dev_off[GS_MAX_TENSORS], numel[GS_MAX_TENSORS];
    /* carried state */
    float *s, *prev, *M;
    /* step scratch */
    float *c, *xn, *xr, *tmp, *k, *v, *beta, *alpha, *q, *o, *on, *g, *mem, *u, *h, *ffn, *pg, *sdec, *z, *logits;
    float *emb, *fg, *sg, *mem_norm, *nll, *entropy, *gathered;
    int *tokens, *top1, *rows;
    gs_bf16 *xn16, *xr16, *tmp16, *on16, *h16, *z16, *emb16; /* GEMM inputs in bf16 mode, else NULL */
    /* pinned host side */
    float *h_nll, *h_entropy, *h_alpha, *h_beta, *h_norm, *h_spred, *h_sground, *h_logits, *h_stage, *h_gathered;
    int *h_top1, *h_tokens, *h_rows;
    char name[160];
};

static void cu_destroy(gpn_cuda *g);

static int cu_usable(char *why, size_t why_size) {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        if (why && why_size)
            snprintf(why, why_size, "no usable CUDA device (%s)",
                     err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports none");
        return 0;
    }
    return 1;
}

/* Device offset of a host parameter pointer into the model's block. */
static size_t dev_offset(const gpn_cuda *g, const float *host) {
    size_t off = (size_t)(host - g->m->block);
    for (int i = 0; i < g->n_tensors; i++)
        if (off >= g->host_off[i] && off < g->host_off[i] + g->numel[i]) return g->dev_off[i] + (off - g->host_off[i]);
    return 0; /* not reached: every pointer of gpn_params lies in one of the tensors */
}
static const float *dev32(const gpn_cuda *g, const float *host) { return g->w32 + dev_offset(g, host); }
static const gs_bf16 *dev16(const gpn_cuda *g, const float *host) { return g->w16 + dev_offset(g, host); }

static int dalloc(void **p, size_t bytes) {
    CK(cudaMalloc(p, bytes ? bytes : 1));
    CK(cudaMemset(*p, 0, bytes ? bytes : 1));
    return 0;
}

static int halloc(void **p, size_t bytes) {
    CK(cudaMallocHost(p, bytes ? bytes : 1));
    memset(*p, 0, bytes ? bytes : 1);
    return 0;
}

static int upload_weights(gpn_cuda *g, const gs_tensor_spec *specs, int n_specs) {
    g->n_tensors = n_specs;
    size_t n = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        g->host_off[i] = specs[i].offset;
        g->numel[i] = specs[i].numel;
        g->dev_off[i] = n;
        n = (n + specs[i].numel + 127) & ~(size_t)127; /* 128 elements: 256 bytes in BF16, 512 in F32 */
    }
    if (dalloc((void **)&g->w32, n * sizeof(float))) return -1;
    for (int i = 0; i < g->n_tensors; i++)
        CK(cudaMemcpy(g->w32 + g->dev_off[i], g->m->block + g->host_off[i], g->numel[i] * sizeof(float),
                      cudaMemcpyHostToDevice));
    if (g->prec == GS_PREC_BF16) {
        if (dalloc((void **)&g->w16, n * sizeof(gs_bf16))) return -1;
        k_to_bf16(g->stream, g->w16, g->w32, (long)n);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(g->stream));
    }
    return 0;
}

static int alloc_buffers(gpn_cuda *g) {
    const gs_config *c = &g->cfg;
    size_t B = (size_t)g->max_batch, d = c->d, H = c->H, hk = H * c->dk, hv = H * c->dv;
    size_t mem = hk * c->dv, f = c->f, e = c->e, V = c->V;
    struct { float **p; size_t n; } f32[] = {
        {&g->s, B * d},     {&g->prev, B * d},   {&g->M, B * mem},     {&g->c, B * d},       {&g->xn, B * d},
        {&g->xr, B * d},    {&g->tmp, B * d},    {&g->k, B * hk},      {&g->v, B * hv},      {&g->beta, B * H},
        {&g->alpha, B * H}, {&g->q, B * hk},     {&g->o, B * hv},      {&g->on, B * hv},     {&g->g, B * hv},
        {&g->mem, B * d},   {&g->u, B * 2 * f},  {&g->h, B * f},       {&g->ffn, B * d},     {&g->pg, B * d},
        {&g->sdec, B * d},  {&g->z, B * e},      {&g->logits, B * V},  {&g->emb, B * e},     {&g->fg, B * d},
        {&g->sg, B * d},    {&g->mem_norm, B * H}, {&g->nll, B},       {&g->entropy, B},     {&g->gathered, B * d},
    };
    for (size_t i = 0; i < sizeof f32 / sizeof *f32; i++)
        if (dalloc((void **)f32[i].p, f32[i].n * sizeof(float))) return -1;
    if (dalloc((void **)&g->tokens, B * sizeof(int)) || dalloc((void **)&g->top1, B * sizeof(int)) ||
        dalloc((void **)&g->rows, B * sizeof(int)))
        return -1;
    if (g->prec == GS_PREC_BF16) {
        struct { gs_bf16 **p; size_t n; } b16[] = {{&g->xn16, B * d}, {&g->xr16, B * d}, {&g->tmp16, B * d},
                                                   {&g->on16, B * hv}, {&g->h16, B * f},  {&g->z16, B * e},
                                                   {&g->emb16, B * e}};
        for (size_t i = 0; i < sizeof b16 / sizeof *b16; i++)
            if (dalloc((void **)b16[i].p, b16[i].n * sizeof(gs_bf16))) return -1;
    }
    size_t widest = V;
    size_t widths[] = {d, hk, hv};
    for (size_t i = 0; i < 3; i++)
        if (widths[i] > widest) widest = widths[i];
    struct { float **p; size_t n; } host[] = {
        {&g->h_nll, B},          {&g->h_entropy, B},       {&g->h_alpha, B * H}, {&g->h_beta, B * H},
        {&g->h_norm, B * H},     {&g->h_spred, B * d},     {&g->h_sground, B * d}, {&g->h_logits, B * V},
        {&g->h_stage, B * widest}, {&g->h_gathered, B * d},
    };
    for (size_t i = 0; i < sizeof host / sizeof *host; i++)
        if (halloc((void **)host[i].p, host[i].n * sizeof(float))) return -1;
    if (halloc((void **)&g->h_top1, B * sizeof(int)) || halloc((void **)&g->h_tokens, B * sizeof(int)) ||
        halloc((void **)&g->h_rows, B * sizeof(int)))
        return -1;
    return 0;
}

static int setup(gpn_cuda *g, const gs_tensor_spec *specs, int n_specs) {
    char why[256];
    if (!cu_usable(why, sizeof why)) return gs_fail("--device cuda: %s", why);
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (g->device >= n) return gs_fail("--device cuda:%d: this machine has %d CUDA device(s)", g->device, n);
    CK(cudaSetDevice(g->device));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, g->device));
    static const char *prec_names[] = {"auto", "f32", "tf32", "bf16"};
    snprintf(g->name, sizeof g->name, "cuda:%d %s (%s)", g->device, prop.name, prec_names[g->prec]);
    /* a blocking stream: it waits for the legacy-stream cudaMemset/cudaMemcpy of set-up */
    CK(cudaStreamCreate(&g->stream));
    CB(cublasCreate(&g->blas));
    CB(cublasSetStream(g->blas, g->stream));
    if (upload_weights(g, specs, n_specs) || alloc_buffers(g)) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        return gs_fail_context("%s, batch %d (%zu of %zu MB free on the device): ", g->name, g->max_batch,
                               free_b >> 20, total_b >> 20);
    }
    CK(cudaDeviceSynchronize()); /* every upload and zeroing done before the first step */
    return 0;
}

static gpn_cuda *cu_create(const gs_model *m, const gs_tensor_spec *specs, int n_specs, int max_batch, int device,
                           gs_precision precision) {
    gpn_cuda *g = (gpn_cuda *)calloc(1, sizeof *g);
    if (!g) { gs_fail("out of memory"); return NULL; }
    g->m = m;
    g->cfg = m->cfg;
    g->max_batch = max_batch;
    g->device = device;
    if (precision == GS_PREC_AUTO)
        precision = (!strcmp(m->source_dtype, "BF16") || !strcmp(m->source_dtype, "F16")) ? GS_PREC_BF16 : GS_PREC_F32;
    g->prec = precision;
    if (n_specs < 1 || n_specs > GS_MAX_TENSORS) {
        gs_fail("CUDA engine: %d tensors in the model's layout", n_specs);
        free(g);
        return NULL;
    }
    /* launch limits of the memory kernels: sequences on grid y, 2 dk floats of shared memory */
    if (max_batch > 65535 || 2L * m->cfg.dk * (long)sizeof(float) > 48 * 1024) {
        gs_fail("CUDA engine: batch %d or d_key %d beyond what its memory kernels launch (65535, 6144)", max_batch,
                m->cfg.dk);
        free(g);
        return NULL;
    }
    if (setup(g, specs, n_specs)) {
        cu_destroy(g);
        return NULL;
    }
    return g;
}

static void cu_destroy(gpn_cuda *g) {
    if (!g) return;
    cudaSetDevice(g->device); /* another engine may have made another device current */
    float **dev[] = {&g->w32, &g->s, &g->prev, &g->M, &g->c, &g->xn, &g->xr, &g->tmp, &g->k, &g->v, &g->beta,
                     &g->alpha, &g->q, &g->o, &g->on, &g->g, &g->mem, &g->u, &g->h, &g->ffn, &g->pg, &g->sdec,
                     &g->z, &g->logits, &g->emb, &g->fg, &g->sg, &g->mem_norm, &g->nll, &g->entropy, &g->gathered};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(*dev[i]);
    gs_bf16 *b16[] = {g->w16, g->xn16, g->xr16, g->tmp16, g->on16, g->h16, g->z16, g->emb16};
    for (size_t i = 0; i < sizeof b16 / sizeof *b16; i++) cudaFree(b16[i]);
    cudaFree(g->tokens);
    cudaFree(g->top1);
    cudaFree(g->rows);
    float *host[] = {g->h_nll,     g->h_entropy, g->h_alpha, g->h_beta,  g->h_norm,
                     g->h_spred,   g->h_sground, g->h_logits, g->h_stage, g->h_gathered};
    for (size_t i = 0; i < sizeof host / sizeof *host; i++) cudaFreeHost(host[i]);
    cudaFreeHost(g->h_top1);
    cudaFreeHost(g->h_tokens);
    cudaFreeHost(g->h_rows);
    if (g->blas) cublasDestroy(g->blas);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

static const char *cu_name(const gpn_cuda *g) { return g->name; }

static void cu_reset_seq(gpn_cuda *g, int b) {
    const gs_config *c = &g->cfg;
    if (cudaSetDevice(g->device) != cudaSuccess) g->sticky_error = 1;
    size_t d = c->d, mem = (size_t)c->H * c->dk * c->dv;
    if (cudaMemsetAsync(g->s + b * d, 0, d * sizeof(float), g->stream) != cudaSuccess ||
        cudaMemsetAsync(g->prev + b * d, 0, d * sizeof(float), g->stream) != cudaSuccess ||
        (mem && cudaMemsetAsync(g->M + b * mem, 0, mem * sizeof(float), g->stream) != cudaSuccess))
        g->sticky_error = 1;
}

/* out[B x n] = in[B x k] @ W[k x n], W a parameter matrix. cuBLAS is
 * column-major: the row-major product is out^T = W^T in^T, i.e. W as an
 * (n x k) column-major matrix times in as (k x B). */
static int gemm(gpn_cuda *g, float *out, const float *in, const gs_bf16 *in16, const float *W, int B, int k, int n) {
    const float one = 1.0f, zero = 0.0f;
    if (g->prec == GS_PREC_BF16)
        CB(cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, B, k, &one, dev16(g, W), CUDA_R_16BF, n, in16,
                        CUDA_R_16BF, k, &zero, out, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        CB(cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, B, k, &one, dev32(g, W), CUDA_R_32F, n, in, CUDA_R_32F,
                        k, &zero, out, CUDA_R_32F, n,
                        g->prec == GS_PREC_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
    return 0;
}

/* logits[B x V] = z[B x e] @ E^T: E (V x e row-major) is (e x V) column-major, transposed. */
static int gemm_logits(gpn_cuda *g, int B) {
    const gs_config *c = &g->cfg;
    const float one = 1.0f, zero = 0.0f;
    const float *E = g->m->p.embedding;
    if (g->prec == GS_PREC_BF16)
        CB(cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, c->V, B, c->e, &one, dev16(g, E), CUDA_R_16BF, c->e, g->z16,
                        CUDA_R_16BF, c->e, &zero, g->logits, CUDA_R_32F, c->V, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
    else
        CB(cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, c->V, B, c->e, &one, dev32(g, E), CUDA_R_32F, c->e, g->z,
                        CUDA_R_32F, c->e, &zero, g->logits, CUDA_R_32F, c->V,
                        g->prec == GS_PREC_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
    return 0;
}

/* A step's hooks: the tensor goes to the host, through the hook, and back. */
typedef struct {
    unsigned mask;
    gpn_cuda_fire_fn fire;
    void *ctx;
} hooks;

static int fire(gpn_cuda *g, const hooks *hk, gs_hook_point p, int layer, float *d, int B, int width) {
    if (!(hk->mask & (1u << p))) return 0;
    size_t bytes = (size_t)B * width * sizeof(float);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(g->h_stage, d, bytes, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    hk->fire(hk->ctx, p, layer, g->h_stage, B, width);
    CK(cudaMemcpyAsync(d, g->h_stage, bytes, cudaMemcpyHostToDevice, g->stream));
    return 0;
}

#define P(x) dev32(g, x)
#define IF16(buf) (g->prec == GS_PREC_BF16 ? (buf) : NULL)

static int read_query(gpn_cuda *g, const hooks *hk, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &g->cfg;
    int hk_w = c->H * c->dk;
    k_rmsnorm(g->stream, g->xr, IF16(g->xr16), g->c, P(lp->read_norm_w), B, c->d);
    if (gemm(g, g->q, g->xr, g->xr16, lp->read_W_q_k, B, c->d, hk_w)) return -1;
    k_bias_relu_l2n(g->stream, g->q, P(lp->read_W_q_b), B, c->H, c->dk);
    return fire(g, hk, GS_HOOK_MEM_Q, layer, g->q, B, hk_w);
}

static int write_memory(gpn_cuda *g, const hooks *hk, int B) {
    const gs_config *c = &g->cfg;
    const gpn_params *p = &g->m->p;
    int d = c->d, H = c->H, hk_w = H * c->dk, hv = H * c->dv;
    k_rmsnorm(g->stream, g->xn, IF16(g->xn16), g->prev, P(p->write_norm_w), B, d);
    if (gemm(g, g->k, g->xn, g->xn16, p->write_W_k_k, B, d, hk_w)) return -1;
    k_bias_relu_l2n(g->stream, g->k, P(p->write_W_k_b), B, H, c->dk);
    k_rmsnorm(g->stream, g->xn, IF16(g->xn16), g->s, P(p->write_norm_w), B, d);
    if (gemm(g, g->v, g->xn, g->xn16, p->write_W_v_k, B, d, hv) ||
        gemm(g, g->beta, g->xn, g->xn16, p->write_W_beta_k, B, d, H) ||
        gemm(g, g->alpha, g->xn, g->xn16, p->write_W_a_k, B, d, H))
        return -1;
    k_write_gates(g->stream, g->beta, g->alpha, P(p->write_A_log), P(p->write_dt_bias), B, H);
    if (fire(g, hk, GS_HOOK_MEM_K, 0, g->k, B, hk_w) || fire(g, hk, GS_HOOK_MEM_V, 0, g->v, B, hv) ||
        fire(g, hk, GS_HOOK_MEM_ALPHA, 0, g->alpha, B, H) ||
        fire(g, hk, GS_HOOK_MEM_BETA, 0, g->beta, B, H) || read_query(g, hk, &p->layers[0], 0, B))
        return -1;
    k_memory_write_read(g->stream, g->M, g->k, g->v, g->alpha, g->beta, g->mem_norm, g->q, g->o, B, H, c->dk, c->dv);
    return fire(g, hk, GS_HOOK_MEM_NORM, 0, g->mem_norm, B, H);
}

static int read_memory(gpn_cuda *g, const hooks *hk, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &g->cfg;
    int d = c->d, hv = c->H * c->dv;
    if (layer > 0) {
        if (read_query(g, hk, lp, layer, B)) return -1;
        k_memory_read(g->stream, g->o, g->q, g->M, B, c->H, c->dk, c->dv);
    }
    if (fire(g, hk, GS_HOOK_MEM_HEADS, layer, g->o, B, hv)) return -1;
    if (gemm(g, g->g, g->xr, g->xr16, lp->read_W_gate_k, B, d, hv)) return -1;
    k_gated_read(g->stream, g->on, IF16(g->on16), g->o, P(lp->read_out_norm_w), g->g, B, hv);
    /* a capture (with bf16 GEMMs, an edit here misses W_o's bf16 copy of the reads) */
    if (fire(g, hk, GS_HOOK_MEM_GATED, layer, g->on, B, hv)) return -1;
    if (gemm(g, g->mem, g->on, g->on16, lp->read_W_o_k, B, hv, d)) return -1;
    return fire(g, hk, GS_HOOK_MEM_READ, layer, g->mem, B, d);
}

static int run_layer(gpn_cuda *g, const hooks *hk, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &g->cfg;
    int d = c->d, f = c->f, has_mem = c->arch == GS_ARCH_GPN_M;
    if (has_mem && read_memory(g, hk, lp, layer, B)) return -1;
    k_rmsnorm(g->stream, g->xn, IF16(g->xn16), g->c, P(lp->ffn_norm_w), B, d);
    if (gemm(g, g->u, g->xn, g->xn16, lp->ffn_w1, B, d, 2 * f)) return -1;
    k_swiglu(g->stream, g->h, IF16(g->h16), g->u, B, f);
    if (gemm(g, g->ffn, g->h, g->h16, lp->ffn_w2, B, f, d)) return -1;
    if (fire(g, hk, GS_HOOK_FFN_OUT, layer, g->ffn, B, d)) return -1;
    k_rmsnorm(g->stream, g->tmp, IF16(g->tmp16), g->c, P(lp->pg_norm_w), B, d);
    if (gemm(g, g->pg, g->tmp, g->tmp16, lp->pg_gate_k, B, d, d)) return -1;
    k_sigmoid_bias(g->stream, g->pg, P(lp->pg_gate_b), B, d);
    if (fire(g, hk, GS_HOOK_PRED_GATE, layer, g->pg, B, d)) return -1;
    k_layer_update(g->stream, g->c, g->pg, g->ffn, has_mem ? g->mem : NULL, (long)B * d);
    return 0;
}

/* decode s_pred (g->c) into logits and their statistics */
static int decode(gpn_cuda *g, const hooks *hk, int B) {
    const gs_config *c = &g->cfg;
    const gpn_params *p = &g->m->p;
    int d = c->d;
    const float *to_decode = g->c;
    if (hk->mask & (1u << GS_HOOK_S_DECODE)) {
        CK(cudaMemcpyAsync(g->sdec, g->c, (size_t)B * d * sizeof(float), cudaMemcpyDeviceToDevice, g->stream));
        if (fire(g, hk, GS_HOOK_S_DECODE, 0, g->sdec, B, d)) return -1;
        to_decode = g->sdec;
    }
    k_rmsnorm(g->stream, g->xn, IF16(g->xn16), to_decode, P(p->decode_norm_w), B, d);
    if (gemm(g, g->z, g->xn, g->xn16, p->decode_proj_k, B, d, c->e)) return -1;
    k_bias_convert(g->stream, g->z, IF16(g->z16), c->decoder_bias ? P(p->decode_bias) : NULL, B, c->e);
    if (gemm_logits(g, B) || fire(g, hk, GS_HOOK_LOGITS, 0, g->logits, B, c->V)) return -1;
    k_logits_stats(g->stream, g->logits, g->tokens, B, c->V, g->nll, g->entropy, g->top1);
    return fire(g, hk, GS_HOOK_NLL, 0, g->nll, B, 1);
}

/* s_ground = gate(s_pred; fg) * s_pred + rms(E[x], w) @ F */
static int ground(gpn_cuda *g, const hooks *hk, int B) {
    const gs_config *c = &g->cfg;
    const gpn_params *p = &g->m->p;
    int d = c->d;
    k_rmsnorm(g->stream, g->tmp, IF16(g->tmp16), g->c, P(p->fg_norm_w), B, d);
    if (gemm(g, g->fg, g->tmp, g->tmp16, p->fg_gate_k, B, d, d)) return -1;
    k_sigmoid_bias(g->stream, g->fg, P(p->fg_gate_b), B, d);
    if (fire(g, hk, GS_HOOK_FUSE_GATE, 0, g->fg, B, d)) return -1;
    k_embed_rms(g->stream, g->emb, IF16(g->emb16), P(p->embedding), g->tokens, P(p->fuse_norm_w), B, c->e);
    if (gemm(g, g->sg, g->emb, g->emb16, p->fuse_proj_k, B, c->e, d)) return -1;
    k_ground(g->stream, g->sg, g->fg, g->c, (long)B * d);
    return fire(g, hk, GS_HOOK_S_GROUND, 0, g->sg, B, d);
}

/* The states of the selected rows only cross the bus: gathered on the device,
 * copied compactly, then put back in their rows on the host. */
static int copy_states(gpn_cuda *g, int B, const unsigned char *rows) {
    size_t d = g->cfg.d;
    if (!rows) {
        CK(cudaMemcpyAsync(g->h_spred, g->c, B * d * sizeof(float), cudaMemcpyDeviceToHost, g->stream));
        CK(cudaMemcpyAsync(g->h_sground, g->sg, B * d * sizeof(float), cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        return 0;
    }
    int n = 0;
    for (int b = 0; b < B; b++)
        if (rows[b]) g->h_rows[n++] = b;
    if (n == 0) return 0;
    CK(cudaMemcpyAsync(g->rows, g->h_rows, n * sizeof(int), cudaMemcpyHostToDevice, g->stream));
    float *src[2] = {g->c, g->sg}, *dst[2] = {g->h_spred, g->h_sground};
    for (int s = 0; s < 2; s++) {
        k_gather_rows(g->stream, g->gathered, src[s], g->rows, n, (int)d);
        CK(cudaMemcpyAsync(g->h_gathered, g->gathered, n * d * sizeof(float), cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        for (int r = 0; r < n; r++)
            memcpy(dst[s] + (size_t)g->h_rows[r] * d, g->h_gathered + (size_t)r * d, d * sizeof(float));
    }
    return 0;
}

static int copy_outputs(gpn_cuda *g, int B, int outputs, const unsigned char *rows) {
    const gs_config *c = &g->cfg;
    size_t bh = (size_t)B * c->H * sizeof(float);
    cudaStream_t st = g->stream;
    CK(cudaMemcpyAsync(g->h_nll, g->nll, B * sizeof(float), cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(g->h_entropy, g->entropy, B * sizeof(float), cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(g->h_top1, g->top1, B * sizeof(int), cudaMemcpyDeviceToHost, st));
    if (c->arch == GS_ARCH_GPN_M) {
        CK(cudaMemcpyAsync(g->h_alpha, g->alpha, bh, cudaMemcpyDeviceToHost, st));
        CK(cudaMemcpyAsync(g->h_beta, g->beta, bh, cudaMemcpyDeviceToHost, st));
        CK(cudaMemcpyAsync(g->h_norm, g->mem_norm, bh, cudaMemcpyDeviceToHost, st));
    }
    if (outputs & GS_OUT_LOGITS)
        CK(cudaMemcpyAsync(g->h_logits, g->logits, (size_t)B * c->V * sizeof(float), cudaMemcpyDeviceToHost, st));
    if ((outputs & GS_OUT_STATES) && copy_states(g, B, rows)) return -1;
    CK(cudaStreamSynchronize(st));
    return 0;
}

static int cu_step(gpn_cuda *g, const int32_t *tokens, int B, unsigned hook_mask, gpn_cuda_fire_fn fire_fn, void *ctx,
                   int outputs, const unsigned char *rows, gs_step_out *out) {
    const gs_config *c = &g->cfg;
    if (g->sticky_error) {
        g->sticky_error = 0;
        return gs_fail("CUDA: resetting a sequence's state failed on %s", g->name);
    }
    CK(cudaSetDevice(g->device));
    hooks hk = {hook_mask, fire_fn, ctx};
    size_t Bd = (size_t)B * c->d;
    memcpy(g->h_tokens, tokens, B * sizeof(int));
    CK(cudaMemcpyAsync(g->tokens, g->h_tokens, B * sizeof(int), cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->c, g->s, Bd * sizeof(float), cudaMemcpyDeviceToDevice, g->stream));
    if (c->arch == GS_ARCH_GPN_M && write_memory(g, &hk, B)) return -1;
    for (int i = 0; i < c->n_layers; i++)
        if (run_layer(g, &hk, &g->m->p.layers[i], i, B)) return -1;
    if (fire(g, &hk, GS_HOOK_S_PRED, 0, g->c, B, c->d) || decode(g, &hk, B) || ground(g, &hk, B)) return -1;
    /* prev <- s, s <- s_ground, for the first B sequences only (as on the CPU) */
    CK(cudaMemcpyAsync(g->prev, g->s, Bd * sizeof(float), cudaMemcpyDeviceToDevice, g->stream));
    CK(cudaMemcpyAsync(g->s, g->sg, Bd * sizeof(float), cudaMemcpyDeviceToDevice, g->stream));
    CK(cudaGetLastError());
    if (copy_outputs(g, B, outputs, rows)) return -1;
    int has_mem = c->arch == GS_ARCH_GPN_M;
    *out = (gs_step_out){g->h_nll,   g->h_entropy, g->h_top1,                  g->h_spred,
                          g->h_sground, g->h_logits, has_mem ? g->h_alpha : NULL, has_mem ? g->h_beta : NULL,
                          has_mem ? g->h_norm : NULL};
    return 0;
}

static const char *cu_error(void) { return gs_error(); }

static const gpn_cuda_api api = {GPN_CUDA_ABI, cu_usable, cu_create, cu_destroy, cu_reset_seq, cu_step, cu_name, cu_error};

extern "C" __attribute__((visibility("default"))) const gpn_cuda_api *gpn_cuda_plugin(void) { return &api; }
