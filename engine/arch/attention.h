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

/* What the attention families' CPU backends hold alike: the caches, one
 * arena for every float buffer (the family carves it), the buffers the
 * engine reads after a step, and one head's attention weights. It is the
 * first member of a backend's state. */
typedef struct {
    int max_batch;
    gs_kv_cache *cache; /* one per sequence */
    float *arena;
    float *emb, *h, *fin;                    /* hook_embed, the last block's resid_post (the state), ln_final */
    float *logits, *pending, *nll, *entropy; /* pending: this step's prediction, reported at the next */
    int32_t *top1;
    float *scores; /* gs_kv_reserve sizes it */
    int scores_cap;
} gs_attn_cpu;

/* a's caches for max_batch sequences, top1 and an arena of `floats`: 0, or
 * -1 out of memory (a keeps what it got, for gs_attn_cpu_release) */
int gs_attn_cpu_alloc(gs_attn_cpu *a, int max_batch, size_t floats);
void gs_attn_cpu_release(gs_attn_cpu *a);
/* logits and pending (B x V each), nll and entropy (B each) from the arena
 * at p, in that order; returns the float after them */
float *gs_attn_cpu_carve_outputs(gs_attn_cpu *a, float *p, size_t B, size_t V);

/* A step's start: the pending prediction reported (gs_report_pending), room
 * in each sequence's cache for a row of `row` floats at its position, and
 * emb = h = E[token] (hook_embed fired on emb); 0, or -1 with gs_error(). */
int gs_attn_cpu_begin(gs_attn_cpu *a, const gs_engine_host *host, int B, int V, int d, size_t row, const float *E);

/* the reset_seq entry of such a backend: a reset that keeps the cache's
 * memory (the engine's pos[b] = 0 is its length) */
void gs_attn_cpu_reset_seq(void *impl, int b);
/* The engine's handle on the backend (table i, state impl holding a), with
 * the CPU defaults (engine/backend.h) filled from a: h in both state slots
 * (a transformer has no separate grounded state); logits, nll, hook_embed
 * and ln_final as sites. Call it once the arena is carved. */
gs_backend gs_attn_cpu_backend(const gs_backend_i *i, void *impl, const gs_attn_cpu *a);

/* What every attention family's config must be: positive sizes, at most
 * GS_MAX_LAYERS layers, heads that divide the width (dk = dv = d / H).
 * `family`, `width` and `ffn` name the family and its sizes as its source
 * does, for the message. 0, or -1 with gs_error(). */
int gs_attn_validate(const gs_config *c, const char *family, const char *width, const char *ffn);

/* describe()'s line for the fixed pattern_keys (GS_PATTERN_KEYS) */
void gs_attn_describe_pattern(char *buf, size_t size);

#endif
