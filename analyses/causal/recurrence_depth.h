/* Recurrence depth: how far back each layer's attention reaches, read from
 * a run's recorded attention pattern sites (blocks.{i}.attn.hook_pattern,
 * docs/hooks.md). For the Recurrent Transformer the key at lag k >= 1 of
 * position t is the layer's own output at t - k (its recurrent memory) and
 * lag 0 the diagonal key from the layer's input; for Transformer++ the keys
 * are positions' inputs, and the same numbers say how far back it looks.
 *
 * Per layer and head, averaged over every recorded position: the
 * attention-weighted lag sum_k w_k k / sum_k w_k over the kept keys; the same
 * over the recurrent keys only (k >= 1, positions t >= 1); the weight on the
 * diagonal (k = 0); the kept mass sum_k w_k (1 while t < the pattern's
 * bound of keys, less once older keys took weight: the lags are then lower
 * bounds); and the mean weight at each lag. docs/analyses.md. */
#ifndef GS_ANALYSES_RECURRENCE_DEPTH_H
#define GS_ANALYSES_RECURRENCE_DEPTH_H

#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

typedef struct {
    int layer, head;
    int64_t rows;         /* positions averaged */
    double mean_lag;      /* attention-weighted lag over the kept keys (diagonal: 0) */
    double recurrent_lag; /* the same over the recurrent keys only (NaN when no position has one) */
    double diag_share;    /* mean weight on the diagonal key */
    double kept_mass;     /* mean weight on the kept keys */
    double deep_share;    /* share of positions whose kept mass is < 1 - 1e-4: lags there are lower bounds */
    double *lag_weight;   /* keys entries: mean weight at lag 0 .. keys - 1 */
} gs_recurrence_head;

typedef struct {
    int n_layers, n_heads, keys; /* layers with a recorded pattern; heads; keys per head in the pattern */
    int layers[64];              /* their indices */
    gs_recurrence_head *heads;   /* n_layers * n_heads, layer-major */
} gs_recurrence_depth;

/* From every blocks.{i}.attn.hook_pattern site the run recorded; -1 with
 * gs_error() when there is none ("record --sites blocks.0.attn.hook_pattern"). */
int gs_recurrence_depth_compute(store *st, int64_t run_id, gs_recurrence_depth *out);
/* As analysis "recurrence_depth": scalars L{i}.h{h}.{mean_lag,recurrent_lag,
 * diag_share,kept_mass,deep_share,rows}, series L{i}.h{h}.lag_weight. */
int gs_recurrence_depth_write(store *st, int64_t run_id, const gs_recurrence_depth *r, const char *code_version);
void gs_recurrence_depth_print(FILE *out, const gs_recurrence_depth *r);
void gs_recurrence_depth_free(gs_recurrence_depth *r);

#endif
