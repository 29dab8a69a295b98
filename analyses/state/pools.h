/* The pool verdict of the memory heads (analyses.md section 3, "Pools").
 *
 * Split: exact 1-D 2-means on the log 1/e-times (sort, try every cut, least
 * total squared error; the first cut on a tie). Separation score = (mean of
 * the slow pool - mean of the fast pool) / s_w, s_w^2 = (SSE_fast +
 * SSE_slow) / (H - 2), floored at GS_POOL_STD_FLOOR; needs H >= 3.
 *
 * The score is location- and scale-free, so a null needs only a shape. The
 * null p is computed under four unimodal families of one pool (normal,
 * uniform, Laplace, Student t with 3 degrees of freedom): the share of
 * samples of H values whose split scores at least as high, +1 smoothed, from
 * GS_POOL_NULL_DRAWS draws each, so its Monte Carlo standard error
 * sqrt(p (1 - p) / N) is below 0.002 for every p.
 *
 * Verdict (alpha = 0.05, z = GS_POOL_Z): a family *rejects* one pool when
 * p + z SE < alpha, and *clears* it when p - z SE >= alpha.
 *   present:   every family rejects;
 *   not shown: every family clears;
 *   marginal:  anything else (the families disagree, or a p is within z SE
 *              of alpha).
 * A seed moves the p's by about one SE, so it can change the verdict only when
 * some family's p lies within a few SE (~0.003) of alpha +- z SE; it can never
 * move present to not shown or back, which takes every family across the
 * marginal band of 2 z SE. */
#ifndef GS_ANALYSES_POOLS_H
#define GS_ANALYSES_POOLS_H

#include <stdint.h>

#define GS_POOL_STD_FLOOR 0.01
#define GS_POOL_NULL_DRAWS 65536
#define GS_POOL_ALPHA 0.05
#define GS_POOL_Z 4.0

typedef enum { GS_NULL_NORMAL, GS_NULL_UNIFORM, GS_NULL_LAPLACE, GS_NULL_T3, GS_NULL_COUNT } gs_null_family;
typedef enum { GS_POOLS_NOT_SHOWN = 0, GS_POOLS_MARGINAL = 1, GS_POOLS_PRESENT = 2 } gs_pool_verdict;

/* "normal", "uniform", "laplace", "t3" */
const char *gs_null_family_name(gs_null_family f);
/* "not shown", "marginal", "present" */
const char *gs_pool_verdict_name(gs_pool_verdict v);

typedef struct {
    int valid;             /* H >= 2: a split */
    int score_valid;       /* H >= 3: a score and its null p's */
    int H;
    int *pool;             /* H: 0 fast, 1 slow */
    int pool_n[2];
    double pool_min[2], pool_max[2]; /* 1/e-time range in tokens */
    double pool_mean_log[2];
    double gap, within_std, separation;
    int null_draws;
    double null_p[GS_NULL_COUNT], null_se[GS_NULL_COUNT];
    double null_crit95[GS_NULL_COUNT];  /* the 95th percentile of the null score */
    gs_pool_verdict verdict;
    /* bootstrap over windows (filled by retention.c) */
    int boot_n;
    double boot_lo, boot_median, boot_hi; /* 2.5%, 50%, 97.5% of the resampled score */
    double boot_same_split;               /* share of resamples with the same pool of every head */
} gs_pools;

/* Exact 2-means split of x[0..n) (n >= 2): pool[i] = 0 for the lower group.
 * Returns the separation score (0 when n < 3) and fills the means and squared
 * errors when asked. */
double gs_two_means(const double *x, int n, int *pool, double mean[2], double sse[2], double *within_std);

/* The null scores of one family for H heads (draws values, seeded), sorted
 * ascending. malloc'd; NULL with gs_error(). */
double *gs_pool_null_scores(gs_null_family f, int H, int draws, uint64_t seed);

/* The verdict rule above on p's and standard errors of n families. */
gs_pool_verdict gs_pool_verdict_rule(const double *p, const double *se, int n);

/* Split the heads by their 1/e-times (tokens, H values) and fill the score.
 * null[f] (sorted, `draws` each) gives the null p's and the verdict; NULL
 * leaves them out (verdict not shown, p = 1). 0, or -1 with gs_error(). */
int gs_pools_compute(const double *e_fold_time, int H, double *const null[GS_NULL_COUNT], int draws, gs_pools *p);
void gs_pools_free(gs_pools *p);

#endif
