#include "analyses/state/pools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
#include "base/error.h"

const char *gs_null_family_name(gs_null_family f) {
    static const char *const names[GS_NULL_COUNT] = {"normal", "uniform", "laplace", "t3", "init"};
    return f >= 0 && f < GS_NULL_COUNT ? names[f] : "?";
}

const char *gs_pool_verdict_name(gs_pool_verdict v) {
    return v == GS_POOLS_PRESENT ? "present" : v == GS_POOLS_INCONCLUSIVE ? "inconclusive" : "not demonstrated";
}

void gs_pools_free(gs_pools *p) {
    free(p->pool);
    memset(p, 0, sizeof *p);
}

static void insertion_sort(double *v, int n) {
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
        v[j + 1] = x;
    }
}

/* The best cut of sorted v[0..n): the first c in 1..n-1 with the least total
 * squared error. Sums are taken about the overall mean, so values with a
 * large common offset keep their precision. */
static int best_cut(const double *v, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) m += v[i];
    m /= n;
    double tot = 0, tot2 = 0;
    for (int i = 0; i < n; i++) { tot += v[i] - m; tot2 += (v[i] - m) * (v[i] - m); }
    double s = 0, s2 = 0, best_sse = INFINITY;
    int best = 1;
    for (int c = 1; c < n; c++) {
        double x = v[c - 1] - m;
        s += x;
        s2 += x * x;
        double r = tot - s, r2 = tot2 - s2;
        double sse = (s2 - s * s / c) + (r2 - r * r / (n - c));
        if (sse < best_sse) { best_sse = sse; best = c; }
    }
    return best;
}

/* score of sorted v cut at c, with the squared errors computed directly */
static double cut_score(const double *v, int n, int c, double mean[2], double sse[2], double *within_std) {
    double mm[2] = {0, 0}, ss[2] = {0, 0};
    for (int i = 0; i < n; i++) mm[i >= c] += v[i];
    mm[0] /= c;
    mm[1] /= (n - c);
    for (int i = 0; i < n; i++) ss[i >= c] += (v[i] - mm[i >= c]) * (v[i] - mm[i >= c]);
    if (mean) { mean[0] = mm[0]; mean[1] = mm[1]; }
    if (sse) { sse[0] = ss[0]; sse[1] = ss[1]; }
    double sw = n > 2 ? sqrt((ss[0] + ss[1]) / (n - 2)) : 0.0;
    if (sw < GS_POOL_STD_FLOOR) sw = GS_POOL_STD_FLOOR;
    if (within_std) *within_std = sw;
    return n > 2 ? (mm[1] - mm[0]) / sw : 0.0;
}

int gs_pool_min_heads(int H) {
    int m = H / 2 < GS_POOL_MIN_HEADS ? H / 2 : GS_POOL_MIN_HEADS;
    return m < 1 ? 1 : m;
}

/* The rule's cut of sorted v[0..n) (n >= 2) and its LR into *lr: the first c in [m, n - m] with the largest
 * (n ln v - c ln v_0 - (n - c) ln v_1) / 2. Sums about the overall mean, as best_cut's. */
static int lr_cut(const double *v, int n, double *lr) {
    const int m = gs_pool_min_heads(n);
    double mean = 0;
    for (int i = 0; i < n; i++) mean += v[i];
    mean /= n;
    double tot = 0, tot2 = 0;
    for (int i = 0; i < n; i++) { tot += v[i] - mean; tot2 += (v[i] - mean) * (v[i] - mean); }
    const double var = tot2 / n, vfloor = GS_POOL_VAR_FLOOR * var;
    double s = 0, s2 = 0, best_lr = -INFINITY;
    int best = m;
    for (int c = 1; c <= n - m; c++) {
        double x = v[c - 1] - mean;
        s += x;
        s2 += x * x;
        if (c < m) continue;
        double r = tot - s, r2 = tot2 - s2;
        double v0 = fmax((s2 - s * s / c) / c, vfloor), v1 = fmax((r2 - r * r / (n - c)) / (n - c), vfloor);
        double l = 0.5 * (n * log(var) - c * log(v0) - (n - c) * log(v1));
        if (l > best_lr) { best_lr = l; best = c; }
    }
    *lr = var > 0 && n >= 3 ? best_lr : 0.0; /* identical values: no split to speak of */
    return best;
}

typedef struct { double v; int i; } xi_pair;
static int cmp_xi(const void *a, const void *b) {
    const xi_pair *x = a, *y = b;
    if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
    return (x->i > y->i) - (x->i < y->i);
}

double gs_two_means(const double *x, int n, int *pool, double mean[2], double sse[2], double *within_std) {
    if (n < 2) return 0.0;
    xi_pair *p = malloc((size_t)n * sizeof *p);
    double *v = malloc((size_t)n * sizeof *v);
    if (!p || !v) { free(p); free(v); return 0.0; }
    for (int i = 0; i < n; i++) { p[i].v = x[i]; p[i].i = i; }
    qsort(p, (size_t)n, sizeof *p, cmp_xi);
    for (int i = 0; i < n; i++) v[i] = p[i].v;
    int c = best_cut(v, n);
    double score = cut_score(v, n, c, mean, sse, within_std);
    if (pool)
        for (int i = 0; i < n; i++) pool[p[i].i] = i >= c;
    free(p);
    free(v);
    return score;
}

/* x's order (sorted values and their heads) into v and idx; 0, or -1 out of memory */
static int sort_heads(const double *x, int n, double *v, int *idx) {
    xi_pair *p = malloc((size_t)n * sizeof *p);
    if (!p) return -1;
    for (int i = 0; i < n; i++) { p[i].v = x[i]; p[i].i = i; }
    qsort(p, (size_t)n, sizeof *p, cmp_xi);
    for (int i = 0; i < n; i++) { v[i] = p[i].v; idx[i] = p[i].i; }
    free(p);
    return 0;
}

double gs_pool_lr_split(const double *x, int n, int *pool) {
    if (n < 2) return 0.0;
    double *v = malloc((size_t)n * sizeof *v);
    int *idx = malloc((size_t)n * sizeof *idx);
    double lr = 0.0;
    if (v && idx && sort_heads(x, n, v, idx) == 0) {
        int c = lr_cut(v, n, &lr);
        if (pool)
            for (int i = 0; i < n; i++) pool[idx[i]] = i >= c;
    }
    free(v);
    free(idx);
    return lr;
}

static double null_value(gs_null_family f, gs_rng *r) {
    switch (f) {
    case GS_NULL_UNIFORM: return gs_rng_uniform(r);
    case GS_NULL_LAPLACE: {
        double e = -log(1.0 - gs_rng_uniform(r)); /* exponential; 1 - u in (0, 1] */
        return (gs_rng_next(r) & 1) ? e : -e;
    }
    case GS_NULL_T3: {
        double z = gs_rng_normal(r), c = 0;
        for (int i = 0; i < 3; i++) { double g = gs_rng_normal(r); c += g * g; }
        return z / sqrt(c / 3.0);
    }
    case GS_NULL_INIT: { /* log(1 / (A dt)); 1 - u in (0, 1] keeps A > 0 */
        double A = 16.0 * (1.0 - gs_rng_uniform(r));
        double dt = exp(gs_rng_uniform(r) * (log(0.1) - log(0.001)) + log(0.001));
        return -log(A) - log(dt);
    }
    default: return gs_rng_normal(r);
    }
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double *gs_pool_null_scores(gs_null_family f, int H, int draws, uint64_t seed) {
    if (H < 3 || draws < 1) { gs_fail("pool null: needs 3 heads and 1 draw (H = %d, %d draws)", H, draws); return NULL; }
    double *s = malloc((size_t)draws * sizeof *s), *z = malloc((size_t)H * sizeof *z);
    if (!s || !z) { free(s); free(z); gs_fail("out of memory for %d null draws", draws); return NULL; }
    /* one stream per family, so adding a family never changes another's draws */
    gs_rng rng = {gs_hash2(seed, 0x9001u + (uint64_t)f)};
    for (int b = 0; b < draws; b++) {
        for (int h = 0; h < H; h++) z[h] = null_value(f, &rng);
        insertion_sort(z, H);
        lr_cut(z, H, &s[b]);
    }
    free(z);
    qsort(s, (size_t)draws, sizeof *s, cmp_dbl);
    return s;
}

gs_pool_verdict gs_pool_verdict_rule(const double *p, const double *se, int n) {
    int reject = 0, fail = 0;
    for (int i = 0; i < n; i++) {
        reject += p[i] + GS_POOL_Z * se[i] < GS_POOL_ALPHA;
        fail += p[i] - GS_POOL_Z * se[i] >= GS_POOL_ALPHA;
    }
    if (n > 0 && reject == n) return GS_POOLS_PRESENT;
    if (n == 0 || fail > 0) return GS_POOLS_NOT_DEMONSTRATED;
    return GS_POOLS_INCONCLUSIVE;
}

/* the number of sorted s[0..n) that are >= x */
static int count_ge(const double *s, int n, double x) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (s[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return n - lo;
}

int gs_pools_compute(const double *e_fold_time, int H, double *const null[GS_NULL_COUNT], int draws, gs_pools *p) {
    memset(p, 0, sizeof *p);
    p->H = H;
    p->verdict = GS_POOLS_NOT_DEMONSTRATED;
    for (int f = 0; f < GS_NULL_COUNT; f++) { p->null_p[f] = 1.0; p->null_crit95[f] = NAN; }
    if (H < 2) return 0;
    p->pool = calloc((size_t)H, sizeof *p->pool);
    double *v = malloc((size_t)H * sizeof *v);
    int *idx = malloc((size_t)H * sizeof *idx);
    if (!p->pool || !v || !idx) { free(v); free(idx); gs_pools_free(p); return gs_fail("out of memory"); }
    for (int h = 0; h < H; h++) v[h] = log(e_fold_time[h]);
    if (sort_heads(v, H, v, idx) != 0) { free(v); free(idx); gs_pools_free(p); return gs_fail("out of memory"); }
    /* the rule's cut, and the separation of that split beside it */
    const int c = lr_cut(v, H, &p->lr);
    double mean[2], sse[2];
    p->separation = cut_score(v, H, c, mean, sse, &p->within_std);
    for (int i = 0; i < H; i++) p->pool[idx[i]] = i >= c;
    free(v);
    free(idx);
    p->valid = 1;
    p->score_valid = H >= 3;
    p->pool_mean_log[0] = mean[0];
    p->pool_mean_log[1] = mean[1];
    p->gap = mean[1] - mean[0];
    for (int k = 0; k < 2; k++) { p->pool_min[k] = INFINITY; p->pool_max[k] = 0; }
    for (int h = 0; h < H; h++) {
        int k = p->pool[h];
        p->pool_n[k]++;
        if (e_fold_time[h] < p->pool_min[k]) p->pool_min[k] = e_fold_time[h];
        if (e_fold_time[h] > p->pool_max[k]) p->pool_max[k] = e_fold_time[h];
    }
    if (!p->score_valid || !null || draws < 1) return 0;
    p->null_draws = draws;
    for (int f = 0; f < GS_NULL_COUNT; f++) {
        if (!null[f]) return gs_fail("pool null: family %s has no draws", gs_null_family_name(f));
        double q = (1.0 + count_ge(null[f], draws, p->lr)) / (1.0 + draws);
        p->null_p[f] = q;
        p->null_se[f] = sqrt(q * (1.0 - q) / draws);
        int i95 = (int)ceil(0.95 * draws) - 1;
        p->null_crit95[f] = null[f][i95 < 0 ? 0 : i95];
    }
    p->verdict = gs_pool_verdict_rule(p->null_p, p->null_se, GS_NULL_COUNT);
    return 0;
}

double gs_pools_power(const int n[2], const double lo[2], const double hi[2], double *const null[GS_NULL_COUNT],
                      int draws, int sets, uint64_t seed) {
    const int H = n[0] + n[1];
    if (H < 3 || n[0] < 1 || n[1] < 1 || sets < 1 || draws < 1 || H > 4096) return NAN;
    for (int f = 0; f < GS_NULL_COUNT; f++)
        if (!null[f]) return NAN;
    double v[4096], p[GS_NULL_COUNT], se[GS_NULL_COUNT];
    gs_rng rng = {gs_hash2(seed, 0x90E7u)};
    int present = 0;
    for (int k = 0; k < sets; k++) {
        for (int h = 0; h < H; h++) {
            const int pool = h >= n[0];
            v[h] = log(lo[pool]) + gs_rng_uniform(&rng) * (log(hi[pool]) - log(lo[pool]));
        }
        insertion_sort(v, H);
        double score;
        lr_cut(v, H, &score);
        for (int f = 0; f < GS_NULL_COUNT; f++) {
            p[f] = (1.0 + count_ge(null[f], draws, score)) / (1.0 + draws);
            se[f] = sqrt(p[f] * (1.0 - p[f]) / draws);
        }
        present += gs_pool_verdict_rule(p, se, GS_NULL_COUNT) == GS_POOLS_PRESENT;
    }
    return (double)present / sets;
}

void gs_pools_fill_power(gs_pools *p, double *const null[GS_NULL_COUNT], int draws, uint64_t seed) {
    p->power_paper = p->power_fitted = NAN;
    p->power_sets = 0;
    if (!p->score_valid || !null || draws < 1) return;
    /* the paper's 6 + 9 of 15 heads, in proportion for another head count */
    int fast = (int)lround(0.4 * p->H);
    if (fast < 1) fast = 1;
    if (fast > p->H - 1) fast = p->H - 1;
    const int np[2] = {fast, p->H - fast};
    const double plo[2] = {1, 5}, phi[2] = {3, 322};
    p->power_paper = gs_pools_power(np, plo, phi, null, draws, GS_POOL_POWER_SETS, seed);
    p->power_fitted = gs_pools_power(p->pool_n, p->pool_min, p->pool_max, null, draws, GS_POOL_POWER_SETS, seed + 1);
    p->power_sets = GS_POOL_POWER_SETS;
}
