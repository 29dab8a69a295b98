/* The step's projections on the engine's own worker threads (parallel.h):
 * out = in @ W split by output columns into a few parts, each part one
 * single-threaded OpenBLAS SGEMM, taken in turn like every other loop of the
 * step. One set of threads then does all of a step's work: OpenBLAS's own
 * workers, which spin (sched_yield) for a while after each GEMM, no longer
 * take the cores from the memory loops and row-wise ops between GEMMs (that
 * spinning was ~10% of a step's samples at batch 64, docs/performance.md).
 *
 * Between gs_gemm_threads_begin() and _end() OpenBLAS runs one thread per call
 * (a process-wide setting: another thread's BLAS call made meanwhile also
 * runs on one thread; it is not wrong, only slower). */
#ifndef GS_ENGINE_PARALLEL_GEMM_H
#define GS_ENGINE_PARALLEL_GEMM_H

/* Returns 1 when the pool takes over the GEMMs (it has more than one thread:
 * $GPNSCOPE_THREADS, whatever OpenBLAS's own count), 0 when they stay with
 * OpenBLAS; *restore: what to hand to _end (the OpenBLAS thread count to set
 * back, 0 for nothing). */
int gs_gemm_threads_begin(int *restore);
void gs_gemm_threads_end(int restore);

/* A backend's step of B sequences, step(ctx, B), with its GEMMs on the pool
 * above batch 1: *own_gemms is 1 for the step's duration when the pool takes
 * them (gs_gemm_threads_begin), else 0, as the step's projections ask it;
 * returns step's result. */
int gs_gemm_pooled_step(int B, int *own_gemms, int (*step)(void *ctx, int B), void *ctx);

/* out[B x n] = in[B x k] @ W (+ bias[n] when not NULL), W stored k x n
 * (w_rows_are_columns = 0) or n x k (1: out = in @ W^T, e.g. the tied
 * embedding), over the pool. */
void gs_gemm_parallel(float *out, const float *in, const float *W, int w_rows_are_columns, const float *bias, int B,
                      int k, int n);

#endif
