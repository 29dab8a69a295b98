/* State horizons (analyses.md section 3): raw and centered lag cosines
 *   c_k = mean over pairs (t, t+k) of one window of cos(s_t, s_{t+k}),
 * pooled over windows (every pair weighs the same), on a log-spaced lag grid;
 * "centered" subtracts each window's own mean state first. Pairs are matched
 * by position, so windows with gaps only lose the pairs they lack; a state of
 * zero norm has no direction and its pairs are left out (counted).
 *
 * Content horizons from the centered curve, interpolated linearly in c
 * against log k between the two grid lags around the crossing:
 *   h_e    = smallest k with c_k <= c_1 / e,
 *   h_0.02 = smallest k with c_k < 0.02.
 * Not reached on the grid: right-censored, the value is the last lag (a lower
 * bound). c_1 <= 0 leaves h_e undefined (valid = 0). c_1 is the value at
 * the first lag that has pairs: lag 1, unless states were kept at a stride.
 *
 * A lag that no pair reaches has no value (NaN here, no value in the store;
 * its pair count, 0, is kept). Summaries, figures and the notebook read a
 * curve only out to the last lag with at least GS_HORIZON_MIN_PAIRS pairs: at
 * the far end of a window the few pairs left come from the same handful of
 * positions (at k = T - 1 one pair per window), too few for a mean. */
#ifndef GS_ANALYSES_HORIZONS_H
#define GS_ANALYSES_HORIZONS_H

#include <stdint.h>

#include "analyses/states.h"

#define GS_HORIZON_MIN_PAIRS 100

typedef struct {
    int max_lag;     /* 0: the longest window's span (at least T - 1) */
    int per_decade;  /* grid density (16) */
    int per_window;  /* 1: also keep each window's sums (a bootstrap over windows resamples them); 0 */
} gs_horizon_opts;

void gs_horizon_opts_default(gs_horizon_opts *o);

typedef struct {
    int n_lags;
    int *lags;
    double *raw, *centered;           /* n_lags; NaN where no pair reaches the lag */
    int64_t *n_raw, *n_centered;      /* pairs behind each value */
    int64_t n_zero_states;            /* states left out of the raw curve for a zero norm */
    double c1;                        /* centered curve at k = 1 (the first lag with pairs) */
    int c1_lag;                       /* 1, or the stride of states kept at every K-th position */
    double h_e, h_002;
    int h_e_valid, h_e_censored, h_002_censored;
    /* with per_window: window w's sums of cosines and pair counts, row w of n_windows x n_lags (the
     * curves above are the pooled sums over the rows divided by the pooled counts) */
    int64_t n_windows;
    double *win_raw, *win_centered;
    int64_t *win_id; /* the store's window number of each row (the shards order their rows by it) */
    int64_t *win_n_raw, *win_n_centered;
    /* gs_horizons_intervals: 95% bootstrap intervals over windows of c_1 and h_0.02 (NaN: none), over
     * boot resamples, and how many of them put h_0.02 past the window (censored) */
    double c1_lo, c1_hi, h_002_lo, h_002_hi;
    int boot, h_002_boot_censored;
} gs_horizons;

int gs_horizons_run(gs_state_source *src, const gs_horizon_opts *o, gs_horizons *h);
/* The run in parts, for sums made in pieces (analyses/shards.h adds them up
 * over MPI ranks): the largest lag (o->max_lag, else the longest window's
 * span: a pass over the states), the pass that leaves per-lag sums of
 * cosines in raw and centered with their pair counts, and the means, c_1 and
 * horizons from them. gs_horizons_run is the three in turn. */
int gs_horizons_max_lag(gs_state_source *src, const gs_horizon_opts *o, int *max_lag);
int gs_horizons_accumulate(gs_state_source *src, int max_lag, const gs_horizon_opts *o, gs_horizons *h);
int gs_horizons_finish(gs_horizons *h);
/* The grid index nearest to k on a log scale among the lags with at least
 * GS_HORIZON_MIN_PAIRS pairs (n_pairs: n_raw or n_centered), or -1. */
int gs_horizons_nearest_enough(const gs_horizons *h, const int64_t *n_pairs, double k);
void gs_horizons_free(gs_horizons *h);
/* The intervals above from the per-window sums (per_window): B resamples of
 * the windows (gs_resample_counts from gs_hash2(seed, 0xC0A1), so compare
 * and analyze draw the same ones), each a reweighting of the windows' sums
 * (a censored resample's h_0.02 is its last lag, a lower bound). Nothing
 * without per-window sums, or with B < 2 or fewer than 2 windows. */
int gs_horizons_intervals(gs_horizons *h, int B, uint64_t seed);
/* The pooled centered curve of the windows weighed by wt (n_windows):
 * cen and ncen (n_lags) get the weighted sums over the weighted counts. */
void gs_horizons_weighted_centered(const gs_horizons *h, const double *wt, double *cen, int64_t *ncen);

/* The crossing rule above on any curve: smallest k where y falls to <= thr
 * (strictly < when strict), interpolated on log k. Returns 1 when found, 0
 * when censored (then *k_out = last lag). Lags with no pairs are skipped. */
int gs_log_crossing(const int *lags, const double *y, const int64_t *n_pairs, int n, double thr, int strict,
                    double *k_out);

#endif
