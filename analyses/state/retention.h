/* Memory horizon of a GPN+M (analyses.md section 3): per-head retention
 * under two estimators, alpha being the decay the engine records per step and
 * head ("mem.alpha"; a decay that underflowed to 0 is taken as 1e-30 so the
 * logs stay finite):
 *
 *   all starts (gpnscope's):  R_h(k) = mean over every t of every window with
 *       t + k inside it of prod_{tau=t+1..t+k} alpha_tau (all pairs weigh the
 *       same), from prefix sums of log alpha;
 *   from the start (the paper's caption: "the product of decays from the
 *       start of the sequence"):  R_h(k) = mean over windows of
 *       prod_{tau=1..k} alpha_tau, what is left at step k of a write at
 *       step 0.
 * They agree for a stationary decay and differ when the decays change along
 * the window. A lag that no pair (window) reaches has no value: NaN here, no
 * value in the store, never 0.
 *
 * 1/e time k_h (the paper and earlier gpnscope called it "half-life"; a
 * half-life proper is ln 2 times it): the smallest integer k with R_h(k) <=
 * 1/e, interpolated between k-1 and k linearly in log R (R(0) = 1), exact
 * for a constant decay (k_h = -1/ln alpha). Not reached by the longest
 * window: right-censored, and k_h is the extrapolation 1/(-mean log alpha_h)
 * (capped at GS_E_FOLD_CAP for a head that never decays).
 *
 * Pools, their likelihood ratio, null p's and the three-way verdict: analyses/state/pools.h, under
 * each estimator. The bootstrap resamples whole windows with replacement and
 * recomputes every head's 1/e time, the split and its LR. */
#ifndef GS_ANALYSES_RETENTION_H
#define GS_ANALYSES_RETENTION_H

#include <stdint.h>

#include "analyses/state/pools.h"

#define GS_E_FOLD_CAP 1e9

typedef enum { GS_RET_ALL_STARTS = 0, GS_RET_FROM_START = 1, GS_RET_COUNT } gs_ret_estimator;

/* "all starts" / "from the start"; keys: "" / "_from_start" (suffixes of the stored names) */
const char *gs_ret_estimator_name(gs_ret_estimator e);
const char *gs_ret_estimator_suffix(gs_ret_estimator e);

typedef struct {
    int per_decade;  /* density of the lag grid for the stored curves (16) */
    int null_draws;  /* Monte Carlo samples per null family (GS_POOL_NULL_DRAWS); 0: no null p */
    int boot;        /* bootstrap resamples of the windows (200); 0: none */
    uint64_t seed;
} gs_retention_opts;

void gs_retention_opts_default(gs_retention_opts *o);

typedef struct {
    double *R;             /* n_lags x H (row = lag); NaN where no pair reaches the lag */
    double *e_fold_time;   /* H: interpolated, or the extrapolation when censored */
    int *censored;         /* H */
    gs_pools pools;
} gs_retention_est;

typedef struct {
    int H, n_windows;
    int64_t n_rows;
    int max_lag;            /* longest window - 1 */
    int n_lags;
    int *lags;
    int64_t *n_pairs;       /* n_lags: pairs behind the all-starts value */
    int64_t *n_starts;      /* n_lags: windows behind the from-start value */
    gs_retention_est est[GS_RET_COUNT];
    double *extrapolated;   /* H: 1 / (-mean log alpha) */
    double *mean_log_alpha, *mean_alpha, *mean_beta;  /* H (mean_beta 0 without beta) */
    int has_beta;
} gs_retention;

/* alpha, beta: n_rows x H (beta may be NULL), the rows of window w are
 * win_start[w] .. win_start[w+1]-1 at consecutive positions. H = 0 (a model
 * without memory) is an error. */
int gs_retention_run(const float *alpha, const float *beta, const int64_t *win_start, int n_windows, int H,
                     const gs_retention_opts *o, gs_retention *r);
void gs_retention_free(gs_retention *r);

/* The same as sums over windows, for pieces of the windows analysed apart
 * (the shards of an MPI job, docs/scale.md): the means, the curves on the lag
 * grid and their pair counts are sums; so are, for every integer lag, the
 * numerator and denominator of R(k) weighted once and by each bootstrap
 * resample's count of each window (the resamples are drawn from the whole
 * pass's window count and seed, alike on every piece), and the 1/e times are
 * scanned on the added-up curves. Memory: (boot + 1) x max_lag x (2H + 2)
 * doubles, whatever the number of windows. Unlike gs_retention_run, which
 * stops summing at the lags the 1/e times need, every lag of every window is
 * summed (T^2 / 2 terms per window and head). */
typedef struct {
    int H, n_windows, max_lag, B, n_lags;
    int *lags;
    int *counts;                       /* B x n_windows resample counts */
    double *f64;                       /* every double below, n_f64 in all (one reduction) */
    int64_t n_f64;
    double *sum_log, *sum_alpha, *sum_beta;            /* H */
    double *grid[GS_RET_COUNT];                        /* n_lags x H: sums of the grid lags' terms */
    double *num[GS_RET_COUNT], *den[GS_RET_COUNT];     /* (B + 1) x max_lag x H, (B + 1) x max_lag */
    double *ext_log, *ext_n;                           /* (B + 1) x H, B + 1: for the extrapolation */
    int64_t *i64;                      /* every count below, n_i64 in all */
    int64_t n_i64;
    int64_t *n_pairs, *n_starts;       /* n_lags */
    int64_t *n_rows, *has_beta;        /* 1 each */
} gs_retention_sums;

/* n_windows: the whole pass's; max_lag: its longest window - 1 */
int gs_retention_sums_init(gs_retention_sums *s, int H, int n_windows, int max_lag, const gs_retention_opts *o);
/* windows first .. first + n_windows - 1 of the whole pass, laid out as gs_retention_run's */
int gs_retention_accumulate(const float *alpha, const float *beta, const int64_t *win_start, int n_windows, int first,
                            gs_retention_sums *s);
int gs_retention_finish(const gs_retention_sums *s, const gs_retention_opts *o, gs_retention *r);
void gs_retention_sums_free(gs_retention_sums *s);

#endif
