/* What the CPU backends of the attention families share (Transformer++,
 * engine/arch/tpp/, and the Recurrent Transformer, engine/arch/rt/): an
 * nn.Linear over a batch, a per-sequence key/value cache grown by doubling,
 * a softmax in place, and the window of the pattern site
 * (blocks.{i}.attn.hook_pattern: the weights on the GS_PATTERN_KEYS most
 * recent keys, NaN before position 0). */
#ifndef GS_ENGINE_ARCH_ATTENTION_H
#define GS_ENGINE_ARCH_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"

/* out[B x n_out] = x[B x n_in] W^T for W stored [n_out, n_in] (PyTorch's
 * nn.Linear); one sequence goes through GEMV, which streams the weights at
 * full bandwidth where OpenBLAS's GEMM with M = 1 does not */
void gs_linear(float *out, const float *x, const float *W, int B, int n_in, int n_out);

/* One sequence's keys and values, position-major ([cap][row] floats each),
 * so growing is one realloc. */
typedef struct {
    float *k, *v;
    int cap;
} gs_kv_cache;

/* Room in sequence b's cache c for position pos, rows of `row` floats
 * (doubling from 64, so a window of T steps reallocates log2(T) times), and
 * in *scores for cap + 1 attention weights; 0, or -1 with gs_error(). */
int gs_kv_reserve(gs_kv_cache *c, int b, int64_t pos, size_t row, float **scores, int *scores_cap);
void gs_kv_free(gs_kv_cache *caches, int n);

/* p[0..n-1] = softmax(p), the sum in double */
void gs_softmax_inplace(float *p, int n);

/* The pattern window of P columns from the n weights p of one head (column
 * j: key n - P + j, NaN before 0), and an edited window back into p. */
void gs_pattern_window(float *row, const float *p, int n, int P);
void gs_pattern_apply(float *p, const float *row, int n, int P);

/* A transformer's step t begins by reporting the prediction of x_t that step
 * t - 1 left in `pending` (NaN rows where a window starts: a transformer
 * does not predict its first token): fires the logits hook, fills nll,
 * entropy and top1 (-1 without a prediction, stored as NULL) and fires the
 * nll hook. */
void gs_report_pending(const gs_engine_host *host, float *logits, const float *pending, int B, int V, float *nll,
                       float *entropy, int32_t *top1);

#endif
