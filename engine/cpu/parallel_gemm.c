#include "engine/cpu/parallel_gemm.h"

#include <cblas.h>
#include <string.h>

#include "engine/cpu/parallel.h"

int gs_gemm_threads_begin(int *restore) {
    *restore = 0;
    if (gs_parallel_threads() < 2) return 0;
    int blas = openblas_get_num_threads();
    if (blas > 1) {
        openblas_set_num_threads(1);
        *restore = blas;
    }
    return 1;
}

void gs_gemm_threads_end(int restore) {
    if (restore > 1) openblas_set_num_threads(restore);
}

int gs_gemm_pooled_step(int B, int *own_gemms, int (*step)(void *ctx, int B), void *ctx) {
    int restore = 0;
    *own_gemms = B > 1 && gs_gemm_threads_begin(&restore);
    int rc = step(ctx, B);
    gs_gemm_threads_end(restore);
    *own_gemms = 0;
    return rc;
}

typedef struct {
    float *out;
    const float *in, *W, *bias;
    int transposed, B, k, n, cols; /* cols: output columns per part */
} gemm_job;

static void gemm_parts(void *ctx, long p0, long p1) {
    const gemm_job *j = ctx;
    for (long p = p0; p < p1; p++) {
        int c0 = (int)(p * j->cols), c1 = c0 + j->cols < j->n ? c0 + j->cols : j->n;
        if (c0 >= c1) continue;
        if (j->bias)
            for (int b = 0; b < j->B; b++)
                memcpy(j->out + (long)b * j->n + c0, j->bias + c0, (size_t)(c1 - c0) * sizeof(float));
        float beta = j->bias ? 1.0f : 0.0f;
        if (j->transposed)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->B, c1 - c0, j->k, 1.0f, j->in, j->k,
                        j->W + (long)c0 * j->k, j->k, beta, j->out + c0, j->n);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->B, c1 - c0, j->k, 1.0f, j->in, j->k, j->W + c0,
                        j->n, beta, j->out + c0, j->n);
    }
}

/* Parts: as many as threads (more, up to 4 per thread, when each still has
 * >= 1024 columns, so a thread slowed by something else takes fewer), each a
 * multiple of 16 columns (whole cache lines of a row of W). Below 64 columns
 * per thread the whole GEMM stays on the caller: waking a worker costs more. */
void gs_gemm_parallel(float *out, const float *in, const float *W, int w_rows_are_columns, const float *bias, int B,
                      int k, int n) {
    if (n <= 0 || B <= 0) return;
    int threads = gs_parallel_threads();
    int per_thread = 1;
    while (per_thread < 4 && n / (threads * per_thread * 2) >= 1024) per_thread *= 2;
    int parts = n / threads >= 64 ? threads * per_thread : 1;
    int cols = ((n + parts - 1) / parts + 15) & ~15;
    parts = (n + cols - 1) / cols;
    gemm_job j = {out, in, W, bias, w_rows_are_columns, B, k, n, cols};
    gs_parallel_for(parts, 1, gemm_parts, &j);
}
