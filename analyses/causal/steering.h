/* Steering (docs/causal.md): add c u to the state, u a unit direction (s_bar,
 * a principal direction, a .npy such as a probe's weights; analyses/causal/direction.h), at
 * every step or from a position on, and measure over held-out windows the
 * mean NLL and the top-1 predictions against the unsteered run, for each c
 * of a list.
 *
 * The hook is on the family's state site: GPN's state.pred (decoded and
 * carried) or, in decode scope, state.decode (decoded only: the recurrence is
 * the unsteered one); a layered family's last blocks.{i}.hook_resid_post.
 * Counted: the tokens at positions >= from whose NLL is defined (a
 * transformer has none at position 0). */
#ifndef GS_ANALYSES_STEERING_H
#define GS_ANALYSES_STEERING_H

#include <stdint.h>

#include "io/corpora/corpus.h"
#include "engine/model.h"

#define GS_STEER_TOP 5
#define GS_STEER_MAX_C 64

typedef struct {
    const float *u;   /* d floats; normalised to length 1 here */
    const double *c;
    int n_c;          /* 1 .. GS_STEER_MAX_C */
    int from;         /* first position steered (0: every step) */
    int decode_only;  /* GPN: state.decode instead of state.pred */
    int batch;        /* windows per batch (<= 0: 16) */
    int (*progress)(void *ctx, int64_t done, int64_t total); /* runs done: 1 + n_c */
    void *progress_ctx;
} gs_steer_opts;

typedef struct {
    double c;
    int64_t n_tokens;
    double nll, delta_nll;  /* mean over the counted tokens; delta against c-less baseline */
    double top1_changed;    /* share of counted tokens whose top-1 differs from the baseline's */
    int n_top;
    int32_t top_id[GS_STEER_TOP];  /* the most frequent top-1 predictions, most frequent first */
    double top_share[GS_STEER_TOP];
} gs_steer_point;

typedef struct {
    char site[80];        /* where the hook was */
    double baseline_nll;  /* no hook */
    int64_t n_tokens, windows;
    double state_norm;    /* mean ||s|| at the site over the counted positions, unsteered: c's scale */
    gs_steer_point point[GS_STEER_MAX_C];
    int n;
} gs_steer_result;

/* 0, 1 when stopped by progress, -1 with gs_error(). */
int gs_steer_run(const gs_model *m, const gs_corpus *corpus, const gs_steer_opts *o, gs_steer_result *r);

#endif
