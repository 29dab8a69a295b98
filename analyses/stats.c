#include "analyses/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

double gs_rng_normal(gs_rng *r) {
    /* Box-Muller; u1 in (0, 1] so the log is finite */
    double u1 = 1.0 - gs_rng_uniform(r), u2 = gs_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t gs_hash2(uint64_t seed, uint64_t key) {
    gs_rng r = {seed ^ (key * 0xD6E8FEB86659FD93ull)};
    gs_rng_next(&r);
    return gs_rng_next(&r);
}

typedef struct { double v; int64_t i; } vi_pair;

static int cmp_vi(const void *a, const void *b) {
    const vi_pair *x = a, *y = b;
    if (x->v < y->v) return -1;
    if (x->v > y->v) return 1;
    return (x->i > y->i) - (x->i < y->i);
}

int gs_ranks(const double *x, int64_t n, double *ranks) {
    vi_pair *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return gs_fail("out of memory for ranks of %lld values", (long long)n);
    for (int64_t i = 0; i < n; i++) { p[i].v = x[i]; p[i].i = i; }
    qsort(p, (size_t)n, sizeof *p, cmp_vi);
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && p[j + 1].v == p[i].v) j++;
        double r = 0.5 * (double)(i + j) + 1.0; /* average of ranks i+1 .. j+1 */
        for (int64_t k = i; k <= j; k++) ranks[p[k].i] = r;
        i = j + 1;
    }
    free(p);
    return 0;
}

double gs_pearson(const double *x, const double *y, int64_t n, int *defined) {
    double mx = 0, my = 0;
    for (int64_t i = 0; i < n; i++) { mx += x[i]; my += y[i]; }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = x[i] - mx, b = y[i] - my;
        sxy += a * b; sxx += a * a; syy += b * b;
    }
    if (n < 2 || sxx <= 0 || syy <= 0) {
        if (defined) *defined = 0;
        return 0.0;
    }
    if (defined) *defined = 1;
    return sxy / sqrt(sxx * syy);
}

int gs_spearman(const double *x, const double *y, int64_t n, double *rho, int *defined) {
    double *rx = malloc((size_t)(n > 0 ? n : 1) * sizeof *rx), *ry = malloc((size_t)(n > 0 ? n : 1) * sizeof *ry);
    if (!rx || !ry) { free(rx); free(ry); return gs_fail("out of memory for ranks of %lld values", (long long)n); }
    int rc = gs_ranks(x, n, rx);
    if (rc == 0) rc = gs_ranks(y, n, ry);
    if (rc == 0) *rho = gs_pearson(rx, ry, n, defined);
    free(rx);
    free(ry);
    return rc;
}

double gs_cosine(const double *a, const double *b, int n) {
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < n; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

double gs_cosine_f(const float *a, const float *b, int n) {
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < n; i++) {
        ab += (double)a[i] * b[i]; aa += (double)a[i] * a[i]; bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

int *gs_log_lags(int max_lag, int per_decade, int *n_out) {
    *n_out = 0;
    if (max_lag < 1) { gs_fail("lag grid up to %d: the largest lag must be at least 1", max_lag); return NULL; }
    if (per_decade < 1) per_decade = 1;
    int cap = (int)(per_decade * (log10((double)max_lag) + 1)) + 4;
    int *lags = malloc((size_t)cap * sizeof *lags);
    if (!lags) { gs_fail("out of memory"); return NULL; }
    int n = 0;
    for (int i = 0;; i++) {
        double v = pow(10.0, (double)i / per_decade);
        if (v > max_lag) break;
        int k = (int)lround(v);
        if (k > max_lag) break;
        if (n == 0 || k > lags[n - 1]) lags[n++] = k;
    }
    if (n == 0 || lags[n - 1] != max_lag) lags[n++] = max_lag;
    *n_out = n;
    return lags;
}

void gs_top_k(const float *x, int n, int k, int *idx) {
    /* k is small (10): insertion into a sorted list of the best so far */
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m == k && !(x[i] > x[idx[m - 1]])) continue;
        int p = m < k ? m++ : k - 1;
        while (p > 0 && x[i] > x[idx[p - 1]]) { idx[p] = idx[p - 1]; p--; }
        idx[p] = i;
    }
    for (int i = m; i < k; i++) idx[i] = -1;
}
