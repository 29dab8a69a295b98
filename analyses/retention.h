/* Memory horizon of a GPN+M (analyses.md section 3): per-head retention
 *   R_h(k) = mean over t of prod_{tau=t+1..t+k} alpha_tau^h
 * over every t of every window with t + k inside the window (all pairs weigh
 * the same), from prefix sums of log alpha. alpha is the decay the engine
 * records per step and head ("mem.alpha"); a decay that underflowed to 0 is
 * taken as 1e-30 so the logs stay finite.
 *
 * Half-life k_h: the smallest integer k with R_h(k) <= 1/e, interpolated
 * between k-1 and k linearly in log R (R(0) = 1), which is exact for a
 * constant decay (k_h = -1/ln alpha). Not reached by the longest window:
 * right-censored, and k_h is the extrapolation 1/(-mean log alpha_h)
 * (capped at GS_HALF_LIFE_CAP for a head that never decays).
 *
 * Pools: exact 1-D 2-means on log k_h (sort, try every cut, least total
 * squared error). Separation score = (mean of the slow pool - mean of the fast
 * pool) / s_w in log units, with s_w^2 = (SSE_fast + SSE_slow) / (H - 2), the
 * pooled within-pool variance: a one-head pool contributes no squared error
 * and no degree of freedom, so s_w is then the other pool's spread. s_w is
 * floored at GS_POOL_STD_FLOOR (pools of identical heads would divide by 0).
 * Needs H >= 3. null_p: the share of H-head samples from one normal
 * distribution whose 2-means split scores at least as high (Monte Carlo,
 * seeded), so a split of noise is told from a real one. */
#ifndef GS_ANALYSES_RETENTION_H
#define GS_ANALYSES_RETENTION_H

#include <stdint.h>

#define GS_HALF_LIFE_CAP 1e9
#define GS_POOL_STD_FLOOR 0.01

typedef struct {
    int per_decade;  /* density of the lag grid for the stored curves (16) */
    int null_draws;  /* Monte Carlo samples for null_p (2000) */
    uint64_t seed;
} gs_retention_opts;

void gs_retention_opts_default(gs_retention_opts *o);

typedef struct {
    int H, n_windows;
    int64_t n_rows;
    int max_lag;            /* longest window - 1 */
    int n_lags;
    int *lags;
    double *R;              /* n_lags x H (row = lag) */
    double *half_life;      /* H: interpolated, or the extrapolation when censored */
    int *censored;          /* H */
    double *extrapolated;   /* H: 1 / (-mean log alpha) */
    double *mean_log_alpha, *mean_alpha, *mean_beta;  /* H (mean_beta 0 without beta) */
    int has_beta;
    /* pools: 0 = fast, 1 = slow */
    int pools_valid;        /* H >= 2 */
    int score_valid;        /* H >= 3 */
    int *pool;              /* H */
    int pool_n[2];
    double pool_min[2], pool_max[2];  /* half-life range */
    double pool_mean_log[2];
    double gap, within_std, separation, null_p;
} gs_retention;

/* alpha, beta: n_rows x H (beta may be NULL), the rows of window w are
 * win_start[w] .. win_start[w+1]-1 at consecutive positions. H = 0 (a model
 * without memory) is an error. */
int gs_retention_run(const float *alpha, const float *beta, const int64_t *win_start, int n_windows, int H,
                     const gs_retention_opts *o, gs_retention *r);
void gs_retention_free(gs_retention *r);

/* Exact 2-means split of x[0..n) (n >= 2) in one dimension: pool[i] = 0 for
 * the lower group. Returns the separation score (floored std; 0 when n < 3)
 * and fills the pools' means and squared errors when asked. */
double gs_two_means(const double *x, int n, int *pool, double mean[2], double sse[2], double *within_std);

#endif
