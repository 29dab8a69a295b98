/* The pool verdict of the memory heads (analyses.md section 3, "Pools";
 * issue 39.5 chose the statistic for its power).
 *
 * Statistic: the log likelihood ratio of two normal pools of the heads' log
 * 1/e times, each with its own mean and variance, against one, at the best
 * cut of the sorted values:
 *   LR = max_c (H ln v - c ln v_fast - (H - c) ln v_slow) / 2,
 * v the overall variance (MLE), v_fast, v_slow the pools' (MLE, floored at
 * GS_POOL_VAR_FLOOR v), over the cuts that leave at least gs_pool_min_heads(H)
 * heads in each pool (3; H / 2 below 6 heads); the first cut on a tie. That
 * cut is the split: pool 0 fast, pool 1 slow. Beside it, descriptive only,
 * the separation (mean of the slow pool - mean of the fast) / s_w, s_w^2 =
 * (SSE_fast + SSE_slow) / (H - 2), floored at GS_POOL_STD_FLOOR. Needs H >= 3.
 *
 * The LR is location- and scale-free, so a null needs only a shape. The
 * null p is computed under five families of one pool: four unimodal shapes
 * (normal, uniform, Laplace, Student t with 3 degrees of freedom) and the
 * initialisation's own (init: log tau, tau = 1 / (A dt), A ~ U(0, 16), dt
 * log-uniform in [0.001, 0.1], the data-free time constants of GPN+M and GDN
 * as the companion code, fla and gpnscope train draw them (train_init.c); a
 * split that training did not add scores like these): the share of
 * samples of H values whose LR is at least as high, +1 smoothed, from
 * GS_POOL_NULL_DRAWS draws each, so its Monte Carlo standard error
 * sqrt(p (1 - p) / N) is below 0.002 for every p. Every family decides; the
 * uniform (an even spread of log time constants, as dt alone gives) has the
 * highest 95th percentile at every head count measured (6 to 64), so the
 * others cost no power (scripts/pools_power.py).
 *
 * Verdict (alpha = 0.05, z = GS_POOL_Z): a family *rejects* one pool when
 * p + z SE < alpha, and *fails* to when p - z SE >= alpha.
 *   present:          every family rejects;
 *   not demonstrated: some family fails to (read beside the rule's power);
 *   inconclusive:     neither: no family fails, but some p is within z SE
 *                     of alpha, where the Monte Carlo cannot tell.
 * A seed moves the p's by about one SE, so it can change the verdict only when
 * some family's p lies within a few SE (~0.003) of alpha +- z SE; it can never
 * move present to not demonstrated or back, which takes a family across the
 * inconclusive band of 2 z SE. */
#ifndef GS_ANALYSES_POOLS_H
#define GS_ANALYSES_POOLS_H

#include <stdint.h>

#define GS_POOL_STD_FLOOR 0.01
#define GS_POOL_VAR_FLOOR 1e-3
#define GS_POOL_MIN_HEADS 3
#define GS_POOL_NULL_DRAWS 65536
#define GS_POOL_ALPHA 0.05
#define GS_POOL_Z 4.0
#define GS_POOL_POWER_SETS 2000

typedef enum { GS_NULL_NORMAL, GS_NULL_UNIFORM, GS_NULL_LAPLACE, GS_NULL_T3, GS_NULL_INIT, GS_NULL_COUNT } gs_null_family;
typedef enum { GS_POOLS_NOT_DEMONSTRATED = 0, GS_POOLS_INCONCLUSIVE = 1, GS_POOLS_PRESENT = 2 } gs_pool_verdict;

/* "normal", "uniform", "laplace", "t3", "init" */
const char *gs_null_family_name(gs_null_family f);
/* "not demonstrated", "inconclusive", "present" */
const char *gs_pool_verdict_name(gs_pool_verdict v);

typedef struct {
    int valid;             /* H >= 2: a split */
    int score_valid;       /* H >= 3: the LR and its null p's */
    int H;
    int *pool;             /* H: 0 fast, 1 slow */
    int pool_n[2];
    double pool_min[2], pool_max[2]; /* 1/e-time range in tokens */
    double pool_mean_log[2];
    double lr;             /* the rule's statistic */
    double gap, within_std, separation; /* of the split, descriptive */
    int null_draws;
    double null_p[GS_NULL_COUNT], null_se[GS_NULL_COUNT]; /* of the LR */
    double null_crit95[GS_NULL_COUNT];  /* the 95th percentile of the null LR */
    gs_pool_verdict verdict;
    /* bootstrap over windows (filled by retention.c) */
    int boot_n;
    double boot_lo, boot_median, boot_hi; /* 2.5%, 50%, 97.5% of the resampled LR */
    double boot_same_split;               /* share of resamples with the same pool of every head */
    /* share of resamples whose LR is above each family's 95th percentile: how often the windows would have
     * rejected that family at 5% (NaN without null draws) */
    double boot_over_crit95[GS_NULL_COUNT];
    /* the rule's power (issue 39.5): the share of GS_POOL_POWER_SETS simulated sets of H heads, two true
     * pools drawn log-uniform within [lo, hi] tokens, that the verdict calls present, against the paper's
     * configuration (40% of the heads at 1-3 tokens, 60% at 5-322: its 6 + 9 of 15) and this split's own
     * fitted pools (the counts and ranges found). NaN without null draws; SE sqrt(P (1 - P) / sets). */
    double power_paper, power_fitted;
    int power_sets;
} gs_pools;

/* Exact 2-means split of x[0..n) (n >= 2): pool[i] = 0 for the lower group.
 * Returns the separation score (0 when n < 3) and fills the means and squared
 * errors when asked. */
double gs_two_means(const double *x, int n, int *pool, double mean[2], double sse[2], double *within_std);

/* The fewest heads in a pool of the rule's split: GS_POOL_MIN_HEADS, H / 2 below 2 x that, at least 1 */
int gs_pool_min_heads(int H);
/* The rule's split of x[0..n) (n >= 2; pool[i] = 0 for the lower group, may be NULL) and its LR (0 when
 * n < 3 or every value is the same). */
double gs_pool_lr_split(const double *x, int n, int *pool);

/* The null LRs of one family for H heads (draws values, seeded), sorted
 * ascending. malloc'd; NULL with gs_error(). */
double *gs_pool_null_scores(gs_null_family f, int H, int draws, uint64_t seed);

/* The verdict rule above on p's and standard errors of n families. */
gs_pool_verdict gs_pool_verdict_rule(const double *p, const double *se, int n);

/* Split the heads by their 1/e-times (tokens, H values) and fill the LR.
 * null[f] (sorted, `draws` each) gives the null p's and the verdict; NULL
 * leaves them out (verdict not demonstrated, p = 1). 0, or -1 with gs_error(). */
int gs_pools_compute(const double *e_fold_time, int H, double *const null[GS_NULL_COUNT], int draws, gs_pools *p);
void gs_pools_free(gs_pools *p);

/* The share of `sets` simulated sets of n[0] + n[1] heads (1/e times
 * log-uniform in [lo[k], hi[k]] tokens for pool k) judged present against the
 * sorted null scores null[f] (`draws` each, for H = n[0] + n[1] heads). */
double gs_pools_power(const int n[2], const double lo[2], const double hi[2], double *const null[GS_NULL_COUNT],
                      int draws, int sets, uint64_t seed);
/* Both powers of p (its H heads, its fitted pools) into p->power_*. */
void gs_pools_fill_power(gs_pools *p, double *const null[GS_NULL_COUNT], int draws, uint64_t seed);

#endif
