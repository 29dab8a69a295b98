#include "analyses/math/stats.h"

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

/* ln Gamma of a positive argument (libm) */
static double lgamma_pos(double x) { return lgamma(x); }

/* continued fraction of the incomplete beta (modified Lentz) */
static double beta_cf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1 / d; h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15) break;
    }
    return h;
}

/* regularized incomplete beta I_x(a, b) */
static double beta_inc(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double lbt = lgamma_pos(a + b) - lgamma_pos(a) - lgamma_pos(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2)) return exp(lbt) * beta_cf(a, b, x) / a;
    return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

double gs_t_cdf(double t, double df) {
    if (!(df > 0) || isnan(t)) return NAN;
    double x = df / (df + t * t), tail = 0.5 * beta_inc(df / 2, 0.5, x);
    return t >= 0 ? 1 - tail : tail;
}

double gs_t_quantile(double p, double df) {
    if (!(p > 0 && p < 1) || !(df > 0)) return NAN;
    if (p == 0.5) return 0;
    if (p < 0.5) return -gs_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (gs_t_cdf(hi, df) < p && hi < 1e300) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * (1 + hi); i++) {
        double mid = 0.5 * (lo + hi);
        if (gs_t_cdf(mid, df) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Bell-McCaffrey degrees of freedom of the CR2 variance under the working
 * model "document means independent with equal variance" (between-document
 * variance dominates): the variance estimate is m' A m with
 * A = P' D P, P = I - 1 w', D = diag(w^2 / (1 - w)), w = n / N, and
 * Satterthwaite gives df = tr(A)^2 / tr(A^2). Equal documents: G - 1. With
 * unequal ones fewer (the large documents dominate the mean); G - 1 used
 * when G is large (then the t is nearly normal anyway). */
static double cluster_df(const double *n, int64_t G, double N, int64_t g_used) {
    if (g_used > 2000) return (double)(g_used - 1);
    double *w = malloc((size_t)g_used * sizeof *w), *D = malloc((size_t)g_used * sizeof *D);
    if (!w || !D) { free(w); free(D); return (double)(g_used - 1); }
    int64_t k = 0;
    double sD = 0;
    for (int64_t g = 0; g < G; g++)
        if (n[g] > 0) {
            w[k] = n[g] / N;
            D[k] = w[k] < 1 ? w[k] * w[k] / (1 - w[k]) : 0;
            sD += D[k];
            k++;
        }
    double tr = 0, fro = 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            double a = (i == j ? D[i] : 0) - D[i] * w[j] - w[i] * D[j] + w[i] * w[j] * sD;
            if (i == j) tr += a;
            fro += a * a;
        }
    free(w);
    free(D);
    return fro > 0 ? tr * tr / fro : (double)(g_used - 1);
}

gs_interval gs_cluster_t_interval(const double *sum, const double *n, int64_t G, double level) {
    gs_interval r = {NAN, NAN, NAN, NAN, 0, NAN};
    double S = 0, N = 0;
    int64_t g_used = 0;
    for (int64_t g = 0; g < G; g++)
        if (n[g] > 0) { S += sum[g]; N += n[g]; g_used++; }
    r.clusters = g_used;
    if (!(N > 0)) return r;
    r.mean = S / N;
    if (g_used < 2) return r;
    /* CR2 (Bell-McCaffrey): each residual over sqrt(1 - h_g), h_g = n_g / N the
     * document's leverage; equal documents give the factor G / (G - 1) */
    double v = 0;
    for (int64_t g = 0; g < G; g++)
        if (n[g] > 0) {
            double e = sum[g] - n[g] * r.mean, h = n[g] / N;
            v += e * e / (h < 1 ? 1 - h : 1);
        }
    r.se = sqrt(v) / N;
    r.df = cluster_df(n, G, N, g_used);
    double q = gs_t_quantile(0.5 * (1 + level), r.df);
    r.lo = r.mean - q * r.se;
    r.hi = r.mean + q * r.se;
    return r;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void gs_percentile_interval(double *v, int n, double *lo, double *hi) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) v[k++] = v[i];
    *lo = *hi = NAN;
    if (k < 2) return;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    const double q[2] = {0.025, 0.975};
    for (int j = 0; j < 2; j++) {
        double at = q[j] * (k - 1);
        int i0 = (int)floor(at);
        double f = at - i0, x = i0 + 1 < k ? v[i0] + f * (v[i0 + 1] - v[i0]) : v[i0];
        *(j ? hi : lo) = x;
    }
}

void gs_resample_counts(gs_rng *rng, double *w, int64_t W) {
    memset(w, 0, (size_t)W * sizeof *w);
    for (int64_t k = 0; k < W; k++) w[(int64_t)(gs_rng_uniform(rng) * (double)W)] += 1;
}
