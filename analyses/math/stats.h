/* Small statistics shared by the analyses: a seeded generator, ranks with
 * ties, Spearman and Pearson correlation, cosines, and the log-spaced lag
 * grid. Everything in double. */
#ifndef GS_ANALYSES_STATS_H
#define GS_ANALYSES_STATS_H

#include <stdint.h>

/* splitmix64: a tiny, well-mixed, seedable generator; results depend only on
 * the seed, never on the platform. */
typedef struct { uint64_t s; } gs_rng;
static inline uint64_t gs_rng_next(gs_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [0, 1) with 53 bits */
static inline double gs_rng_uniform(gs_rng *r) { return (double)(gs_rng_next(r) >> 11) * 0x1.0p-53; }
double gs_rng_normal(gs_rng *r);
/* a value mixed from (seed, key): order-independent assignment (e.g. windows to splits) */
uint64_t gs_hash2(uint64_t seed, uint64_t key);

/* ranks (1-based) of x[0..n), ties get the average of their ranks */
int gs_ranks(const double *x, int64_t n, double *ranks);
/* Pearson correlation of x and y; 0 (with *defined = 0) when either is constant */
double gs_pearson(const double *x, const double *y, int64_t n, int *defined);
/* Spearman rank correlation (Pearson correlation of average ranks) */
int gs_spearman(const double *x, const double *y, int64_t n, double *rho, int *defined);

/* cosine of two vectors; 0 when either is zero */
double gs_cosine(const double *a, const double *b, int n);
double gs_cosine_f(const float *a, const float *b, int n);

/* Distinct integer lags round(10^(i / per_decade)) from 1 up to max_lag, with
 * max_lag itself always last. Returns a malloc'd array and its length. */
int *gs_log_lags(int max_lag, int per_decade, int *n_out);

/* indices of the top k values (descending; ties by lower index) */
void gs_top_k(const float *x, int n, int k, int *idx);

/* ---- intervals that hold at small n ----
 * Quantile of Student's t with df degrees of freedom (df >= 1; p in (0,1)),
 * by bisection on the CDF (regularized incomplete beta). NaN outside. */
double gs_t_quantile(double p, double df);
double gs_t_cdf(double t, double df);

/* A mean over tokens that come in clusters (documents), with a t-interval
 * that treats clusters, not tokens, as the independent units. sum[g] is the
 * sum of the G clusters' values and n[g] their token counts; the estimate is
 * the ratio sum(sum) / sum(n), its variance the linearized cluster-robust
 * one with the CR2 small-sample correction (Bell and McCaffrey 2002),
 * sum_g (sum[g] - n[g] mean)^2 / (1 - n[g] / N) / N^2 (with equal clusters:
 * the usual G / (G - 1) factor), and the interval mean +- t_{G-1,(1+level)/2} se. With equal cluster sizes and
 * normal cluster means it is the exact t-interval of the cluster means.
 * lo, hi and se are NaN when G < 2. Why t and not a bootstrap: at 4-8
 * clusters a percentile bootstrap is 0.5-0.8 times as wide as this and
 * under-covers; BCa's acceleration is itself too noisy at such G. */
typedef struct { double mean, se, lo, hi; int64_t clusters; double df; } gs_interval;
gs_interval gs_cluster_t_interval(const double *sum, const double *n, int64_t G, double level);

/* The 2.5% and 97.5% points (linear between order statistics) of the finite
 * values among v[0..n) (reordered in place): a 95% percentile bootstrap
 * interval; lo, hi NaN with fewer than 2. */
void gs_percentile_interval(double *v, int n, double *lo, double *hi);
/* One bootstrap resample of W units: w[i] = how many of W draws with
 * replacement picked unit i. compare, the default direction and the horizons
 * draw their resamples of windows with this from gs_hash2(seed, 0xC0A1), so
 * one seed gives the same resamples everywhere. */
void gs_resample_counts(gs_rng *rng, double *w, int64_t W);

#endif
