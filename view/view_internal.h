/* Shared by the page's data readers (view_data.c, view_sites.c,
 * view_causal.c, view_lens.c): numbers as the page writes them. */
#ifndef GS_VIEW_VIEW_INTERNAL_H
#define GS_VIEW_VIEW_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "store/store.h"
#include "view/view.h"

/* NaN and infinities are null; num6 rounds to 6 significant digits (smaller pages, the same reading) */
cJSON *gs_view_num(double v);
cJSON *gs_view_num6(double v);
cJSON *gs_view_floats(const float *v, int64_t n);

/* A run's per-head (and per-token) scalar sites over its shown windows: [{"site", "layer", "heads",
 * "values": [per window: T x heads]}] (view_sites.c). */
cJSON *gs_view_sites(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows);
/* The run's newest attention analysis with matrices: every (layer, head), the shown windows' exact and
 * heuristic matrices within *budget weights (taken from it); null when none (view_causal.c). */
cJSON *gs_view_attention(store *st, int64_t run, const int32_t *windows, int n_windows, int64_t *budget,
                         gs_view_result *r);
/* The run's newest direct logit attribution over the shown windows; null when none. */
cJSON *gs_view_attribution(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows);
/* The store's newest patching and steering sweeps; null when none. */
cJSON *gs_view_patch(store *st);
cJSON *gs_view_steer(store *st);
/* The logit lens over the shown windows, re-run with the run's model (view_lens.c): per token the top k of
 * every lens site's decode that predicted this token; {"note"} alone when the model cannot be run. */
cJSON *gs_view_lens(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows, int k);

#endif
