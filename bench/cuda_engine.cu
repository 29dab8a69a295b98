/* bench_cuda_engine: the CUDA engine's tokens/s on the paper's 130M GPN+M
 * (random weights) next to ceilings measured in the same run on the same
 * device:
 *   - the step's GEMMs alone through cuBLAS, same shapes and precision
 *     (batch >= 64: goal >= 50% in bf16);
 *   - the time to stream the weights once at the measured device-to-device
 *     copy bandwidth (batch 1: goal within 2x);
 *   - recording: states of 1 row in 64 copied to the host each step against
 *     no states at all (goal: < 10% slower).
 * Not a test: it prints a table (docs/cuda.md). Without a device it says so
 * and exits 0. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "base/error.h"
#include "engine/arch/family.h"
}
#include "engine/cuda/cuda_engine.h"
#include "engine/engine.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK_CUDA(x)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "bench_cuda_engine: %s: %s\n", #x, cudaGetErrorString(e_));        \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* device-to-device copy bandwidth, bytes read + written per second */
static double copy_bandwidth(void) {
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemset(a, 1, bytes));
    double best = 1e30;
    for (int r = 0; r < 6; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double t0 = now();
        CHECK_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK_CUDA(cudaDeviceSynchronize());
        double t = now() - t0;
        if (r > 0 && t < best) best = t;
    }
    cudaFree(a), cudaFree(b);
    return 2.0 * bytes / best;
}

/* seconds per step for the step's GEMMs alone, as the engine calls them */
static double gemm_seconds(const gs_config *c, int B, gs_precision prec, double *weight_bytes) {
    gs_gemm_shape s[GS_MAX_STEP_GEMMS];
    int n = gs_step_gemms(c, s);
    size_t esize = prec == GS_PREC_BF16 ? 2 : 4;
    cudaDataType_t type = prec == GS_PREC_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t compute = prec == GS_PREC_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    void *W[GS_MAX_STEP_GEMMS];
    size_t maxk = 0, maxn = 0;
    *weight_bytes = 0;
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaMalloc(&W[i], (size_t)s[i].k * s[i].n * esize));
        CHECK_CUDA(cudaMemset(W[i], 0, (size_t)s[i].k * s[i].n * esize));
        *weight_bytes += (double)s[i].k * s[i].n * esize;
        if ((size_t)s[i].k > maxk) maxk = s[i].k;
        if ((size_t)s[i].n > maxn) maxn = s[i].n;
    }
    void *in, *out;
    CHECK_CUDA(cudaMalloc(&in, (size_t)B * maxk * esize));
    CHECK_CUDA(cudaMalloc(&out, (size_t)B * maxn * 4));
    CHECK_CUDA(cudaMemset(in, 0, (size_t)B * maxk * esize));
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1.0f, zero = 0.0f;
    double best = 1e30;
    for (int r = 0; r < 8; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double t0 = now();
        for (int i = 0; i < n; i++)
            if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s[i].n, B, s[i].k, &one, W[i], type, s[i].n, in, type, s[i].k,
                             &zero, out, CUDA_R_32F, s[i].n, compute, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "bench_cuda_engine: cublasGemmEx failed for %d x %d x %d\n", B, s[i].k, s[i].n);
                exit(1); /* a failed call would otherwise look like a very fast ceiling */
            }
        CHECK_CUDA(cudaDeviceSynchronize());
        double t = now() - t0;
        if (r > 1 && t < best) best = t;
    }
    cublasDestroy(h);
    for (int i = 0; i < n; i++) cudaFree(W[i]);
    cudaFree(in), cudaFree(out);
    return best;
}

/* engine seconds per step; states of rows with (b + t) % sample == 0 copied
 * to the host when sample > 0 */
static double engine_seconds(const gs_model *m, int B, gs_precision prec, int sample, int steps) {
    gs_device dev = {GS_DEVICE_CUDA, 0, prec};
    gs_engine *e = gs_engine_new_on(m, B, &dev);
    if (!e) {
        fprintf(stderr, "bench_cuda_engine: %s\n", gs_error());
        exit(1);
    }
    unsigned char *rows = (unsigned char *)calloc(B, 1);
    gs_engine_set_outputs(e, sample ? GS_OUT_STATES : 0, rows);
    int32_t *tok = (int32_t *)malloc(B * sizeof *tok);
    gs_engine_reset(e);
    double t0 = 0;
    for (int t = 0; t < steps + 3; t++) {
        if (t == 3) t0 = now();
        for (int b = 0; b < B; b++) {
            tok[b] = (int32_t)((b * 7919u + t * 104729u) % m->cfg.V);
            rows[b] = sample && (b + t) % sample == 0;
        }
        if (gs_engine_step(e, tok, B)) {
            fprintf(stderr, "bench_cuda_engine: %s\n", gs_error());
            exit(1);
        }
    }
    double t = (now() - t0) / steps;
    gs_engine_free(e);
    free(rows), free(tok);
    return t;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    char why[768];
    if (!gpn_cuda_usable(why, sizeof why)) {
        printf("bench_cuda_engine: skipped: %s\n", why);
        return 0;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    /* every field in order: designated initializers are C++20, and this is CUDA C++ */
    gs_config paper = {(gs_arch)0, 1, 2496, 768, 6656, 15, 128, 256, 32000, 0, 0, 0.0f};
    gs_family_config("gpn_m", &paper); /* the paper's 130M GPN+M */
    gs_model *m = gs_model_random(&paper, 1);
    double bw = copy_bandwidth();
    printf("gpnscope CUDA engine benchmark on %s: paper 130M GPN+M (random weights, %.1fM parameters)\n", prop.name,
           m->n_params / 1e6);
    printf("device-to-device copy bandwidth: %.0f GB/s (read + write)\n\n", bw / 1e9);
    printf("%-5s %6s %12s %14s %8s %12s %8s\n", "prec", "batch", "engine tok/s", "GEMM-only tok/s", "ratio",
           "stream tok/s", "x stream");
    gs_precision precs[] = {GS_PREC_BF16, GS_PREC_TF32, GS_PREC_F32};
    const char *names[] = {"", "f32", "tf32", "bf16"};
    int batches[] = {1, 64, 256, 1024};
    for (int p = 0; p < (quick ? 1 : 3); p++) {
        for (int i = 0; i < 4; i++) {
            int B = batches[i];
            double wbytes, tg = gemm_seconds(&paper, B, precs[p], &wbytes);
            double te = engine_seconds(m, B, precs[p], 0, B == 1 ? 64 : 16);
            double stream = wbytes / bw; /* the weights read once at the measured HBM rate */
            printf("%-5s %6d %12.0f %14.0f %8.2f", names[precs[p]], B, B / te, B / tg, tg / te);
            if (B == 1) printf(" %12.0f %8.2f\n", 1 / stream, te / stream);
            else printf(" %12s %8s\n", "-", "-");
            fflush(stdout);
        }
    }
    int B = 256;
    double plain = engine_seconds(m, B, GS_PREC_BF16, 0, 16), rec = engine_seconds(m, B, GS_PREC_BF16, 64, 16);
    printf("\nrecording, bf16, batch %d: %.0f tok/s without states, %.0f tok/s with 1 row in 64 copied: %.1f%% slower\n",
           B, B / plain, B / rec, 100.0 * (rec - plain) / plain);
    printf("goals: ratio >= 0.50 at batch >= 256 in bf16; x stream <= 2 at batch 1; recording < 10%% slower\n");
    gs_model_free(m);
    return 0;
}
