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
static gemm_job split(float *out, const float *in, const float *W, int w_rows_are_columns, const float *bias, int B,
                      int k, int n, long *parts_out) {
    int threads = gs_parallel_threads();
    int per_thread = 1;
    while (per_thread < 4 && n / (threads * per_thread * 2) >= 1024) per_thread *= 2;
    int parts = n / threads >= 64 ? threads * per_thread : 1;
    int cols = ((n + parts - 1) / parts + 15) & ~15;
    *parts_out = (n + cols - 1) / cols;
    return (gemm_job){out, in, W, bias, w_rows_are_columns, B, k, n, cols};
}

void gs_gemm_parallel(float *out, const float *in, const float *W, int w_rows_are_columns, const float *bias, int B,
                      int k, int n) {
    if (n <= 0 || B <= 0) return;
    long parts;
    gemm_job j = split(out, in, W, w_rows_are_columns, bias, B, k, n, &parts);
    gs_parallel_for(parts, 1, gemm_parts, &j);
}

/* One queue of P column parts and C chunks of the other loop, T = P + C
 * tasks: part p at task floor(p T / P), so the parts are spread evenly
 * through the chunks (the first task is a part: one thread starts
 * multiplying while the others stream). Task t is a part when
 * p = ceil(t P / T) puts it there; ceil(t P / T) parts come before it. */
typedef struct {
    gemm_job gemm;
    long parts, chunks, items, grain;
    gs_range_fn fn;
    void *ctx;
} beside_job;

static void beside_tasks(void *ctx, long t0, long t1) {
    const beside_job *j = ctx;
    long T = j->parts + j->chunks;
    for (long t = t0; t < t1; t++) {
        long before = (t * j->parts + T - 1) / T; /* parts before task t */
        if (before < j->parts && before * T / j->parts == t) {
            gemm_parts((void *)&j->gemm, before, before + 1);
            continue;
        }
        long c = t - before, i0 = c * j->grain, i1 = i0 + j->grain < j->items ? i0 + j->grain : j->items;
        j->fn(j->ctx, i0, i1);
    }
}

void gs_gemm_parallel_beside(float *out, const float *in, const float *W, int w_rows_are_columns, const float *bias,
                             int B, int k, int n, long items, long grain, gs_range_fn fn, void *ctx) {
    if (grain < 1) grain = 1;
    if (n <= 0 || B <= 0) {
        gs_parallel_for(items, grain, fn, ctx);
        return;
    }
    beside_job j = {.items = items > 0 ? items : 0, .grain = grain, .fn = fn, .ctx = ctx};
    j.gemm = split(out, in, W, w_rows_are_columns, bias, B, k, n, &j.parts);
    j.chunks = (j.items + grain - 1) / grain;
    gs_parallel_for(j.parts + j.chunks, 1, beside_tasks, &j);
}
