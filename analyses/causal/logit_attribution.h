/* Direct logit attribution for GPN and GPN+M (issue #22, item 3;
 * docs/causal.md). The step (docs/engine.md) forms the predicted state from
 * the carried state s = s^g_{t-1} layer by layer, c <- pg_l * c + ffn_l +
 * mem_l, so with G_l = pg_l * pg_{l+1} * ... * pg_{L-1} (G_L = 1):
 *     s^p_t = G_0 * s^g_{t-1} + sum_l G_{l+1} * (ffn_l + sum_h mem_{l,h})
 * and s^g_{t-1} = fg_{t-1} * s^p_{t-1} + rms(E[x_{t-1}]) F. The parts:
 *     carry       G_0 * fg_{t-1} * s^p_{t-1}   the gated carry of the previous state
 *     ground      G_0 * (s^g_{t-1} - fg_{t-1} * s^p_{t-1})   the grounded input path
 *     ffn  (l)    G_{l+1} * ffn_l
 *     mem  (l, h) G_{l+1} * (W_o's rows of head h) applied to head h's gated read
 * (all from the engine's sites: state.pred, state.fuse_gate, state.ground,
 * blocks.{i}.pred_gate, hook_mlp_out, mem.gated) add up to s^p_t. Each is
 * decoded through the output head with the decode norm's scale frozen from
 * the full state, r = 1 / sqrt(mean(s^p_t ^2) + eps):
 *     logit_part(x) = ((r * part * w_norm) P) . E[x]
 * which is linear, so the parts and the decoder bias (part "bias") add up to
 * the logit with the scale frozen; the residual, the engine's logit minus
 * that sum, is float rounding, and is measured and stored at every position
 * (part "residual"). Frozen: a part alone would be normed by its own scale
 * in a real decode; attribution here answers "how much of this logit, at the
 * scale the model used, came from where". */
#ifndef GS_ANALYSES_LOGIT_ATTRIBUTION_H
#define GS_ANALYSES_LOGIT_ATTRIBUTION_H

#include <stdint.h>

#include "store/store.h"

#define GS_DLA_MAX_PARTS 512

typedef struct {
    int64_t windows;        /* the run's first K windows (default 4) */
    int length;             /* the first T positions (<= 0: the run's) */
    const char *model_path; /* NULL: the run's model file */
    const char *code_version;
    int (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
} gs_dla_opts;

void gs_dla_opts_default(gs_dla_opts *o);

typedef struct {
    char part[16];
    int layer, head;        /* -1: none */
    double mean, mean_abs;  /* of its logit share over the recorded tokens */
} gs_dla_part;

typedef struct {
    int64_t analysis_id, windows, tokens;
    int T, n_parts;
    gs_dla_part part[GS_DLA_MAX_PARTS];
    double residual_max;    /* max |logit - sum of parts| */
    double residual_rel;    /* that over the mean |logit| */
    double logit_mean_abs;
} gs_dla_result;

/* How many parts a position splits into: carry, ground, ffn per layer, mem
 * per layer and head (GPN+M), bias (a decoder bias), residual. */
int gs_dla_n_parts(int n_layers, int H, int has_mem, int has_bias);

int gs_logit_attribution(store *st, int64_t run_id, const gs_dla_opts *o, gs_dla_result *out);

#endif
