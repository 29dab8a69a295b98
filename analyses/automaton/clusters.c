/* analyses/automaton/clusters.h */
#include "analyses/automaton/clusters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/prng.h"

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* dense[i] = rank of v[i] among the distinct values; returns their count, -1 out of memory. */
static int densify(const int *v, int n, int *dense) {
    int *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!sorted) return -1;
    memcpy(sorted, v, (size_t)n * sizeof *v);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[m - 1]) sorted[m++] = sorted[i];
    for (int i = 0; dense && i < n; i++)
        dense[i] = (int)((const int *)bsearch(&v[i], sorted, (size_t)m, sizeof *sorted, cmp_int) - sorted);
    free(sorted);
    return m;
}

int gs_distinct_count(const int *v, int n) { return densify(v, n, NULL); }

/* The contingency table of two labelings: *table[a * nb + b] (malloc'd),
 * with dense ids in la, lb. 0, or -1 out of memory. */
static int contingency(const int *a, const int *b, int n, int *na, int *nb, int64_t **table) {
    int *da = malloc((size_t)(n ? n : 1) * sizeof *da), *db = malloc((size_t)(n ? n : 1) * sizeof *db);
    int rc = -1;
    if (da && db && (*na = densify(a, n, da)) >= 0 && (*nb = densify(b, n, db)) >= 0 &&
        (*table = calloc((size_t)(*na ? *na : 1) * (*nb ? *nb : 1), sizeof **table))) {
        for (int i = 0; i < n; i++) (*table)[(size_t)da[i] * *nb + db[i]]++;
        rc = 0;
    }
    free(da);
    free(db);
    return rc;
}

double gs_purity(const int *labels, const int *clusters, int n) {
    if (n == 0) return 1;
    int nl, nc;
    int64_t *t;
    if (contingency(labels, clusters, n, &nl, &nc, &t)) return NAN;
    int64_t sum = 0;
    for (int c = 0; c < nc; c++) {
        int64_t best = 0;
        for (int l = 0; l < nl; l++)
            if (t[(size_t)l * nc + c] > best) best = t[(size_t)l * nc + c];
        sum += best;
    }
    free(t);
    return (double)sum / n;
}

double gs_majority_share(const int *labels, int n) {
    int *zero = calloc((size_t)(n ? n : 1), sizeof *zero);
    double p = zero ? gs_purity(labels, zero, n) : NAN;
    free(zero);
    return p;
}

static double pairs(double x) { return x * (x - 1) / 2; }

double gs_adjusted_rand(const int *labels, const int *clusters, int n) {
    if (n < 2) return NAN;
    int nl, nc;
    int64_t *t;
    if (contingency(labels, clusters, n, &nl, &nc, &t)) return NAN;
    double index = 0, a = 0, b = 0;
    for (int l = 0; l < nl; l++) {
        int64_t row = 0;
        for (int c = 0; c < nc; c++) {
            index += pairs((double)t[(size_t)l * nc + c]);
            row += t[(size_t)l * nc + c];
        }
        a += pairs((double)row);
    }
    for (int c = 0; c < nc; c++) {
        int64_t col = 0;
        for (int l = 0; l < nl; l++) col += t[(size_t)l * nc + c];
        b += pairs((double)col);
    }
    free(t);
    double expected = a * b / pairs(n), max = (a + b) / 2;
    if (max == expected) return 1; /* both all-in-one or both all-singletons */
    return (index - expected) / (max - expected);
}

/* ---------- k-means ---------- */

static double uniform01(uint64_t *s) { return (double)(gs_splitmix64(s) >> 11) * 0x1.0p-53; }

static double sqdist(const float *x, const double *c, int d) {
    double s = 0;
    for (int j = 0; j < d; j++) {
        double e = x[j] - c[j];
        s += e * e;
    }
    return s;
}

static void set_center(double *c, const float *x, int d) {
    for (int j = 0; j < d; j++) c[j] = x[j];
}

/* Greedy k-means++ (Arthur and Vassilvitskii 2007; the variant scikit-learn
 * uses): the first center uniform; each next one the best, by the sum of
 * squared distances to the nearest center, of 2 + ln k candidates drawn
 * with probability proportional to the squared distance to the nearest
 * center so far. Plain k-means++ too often puts two centers in one tight
 * group and none in another, which Lloyd's rounds cannot undo. */
static int draw(const double *dmin, int n, double total, uint64_t *rng) {
    if (!(total > 0)) return (int)(gs_splitmix64(rng) % (uint64_t)n); /* every point is a center already */
    double r = uniform01(rng) * total;
    int pick = 0;
    while (pick < n - 1 && (r -= dmin[pick]) >= 0) pick++;
    while (dmin[pick] == 0 && pick > 0) pick--; /* rounding at the end of the sum */
    return pick;
}

static void seed_centers(const float *x, int n, int d, int k, uint64_t *rng, double *centers, double *dmin) {
    set_center(centers, x + (size_t)(gs_splitmix64(rng) % (uint64_t)n) * d, d);
    for (int i = 0; i < n; i++) dmin[i] = sqdist(x + (size_t)i * d, centers, d);
    int candidates = 2 + (int)log((double)k);
    for (int c = 1; c < k; c++) {
        double total = 0, best_total = INFINITY;
        for (int i = 0; i < n; i++) total += dmin[i];
        int best = 0;
        for (int t = 0; t < candidates; t++) {
            int pick = draw(dmin, n, total, rng);
            double sum = 0;
            for (int i = 0; i < n; i++) {
                double e = 0;
                for (int j = 0; j < d; j++) {
                    double u = (double)x[(size_t)i * d + j] - x[(size_t)pick * d + j];
                    e += u * u;
                }
                sum += e < dmin[i] ? e : dmin[i];
            }
            if (sum < best_total) best_total = sum, best = pick;
        }
        set_center(centers + (size_t)c * d, x + (size_t)best * d, d);
        for (int i = 0; i < n; i++) {
            double e = sqdist(x + (size_t)i * d, centers + (size_t)c * d, d);
            if (e < dmin[i]) dmin[i] = e;
        }
    }
}

/* Lloyd's rounds from the given centers; the final sum of squares. */
static double lloyd(const float *x, int n, int d, int k, double *centers, int *assign, double *dmin, int *count) {
    for (int i = 0; i < n; i++) assign[i] = -1;
    double inertia = 0;
    for (int round = 0; round < 200; round++) {
        int changed = 0;
        inertia = 0;
        for (int i = 0; i < n; i++) {
            int best = 0;
            double bd = sqdist(x + (size_t)i * d, centers, d);
            for (int c = 1; c < k; c++) {
                double e = sqdist(x + (size_t)i * d, centers + (size_t)c * d, d);
                if (e < bd) bd = e, best = c;
            }
            changed += assign[i] != best;
            assign[i] = best;
            dmin[i] = bd;
            inertia += bd;
        }
        if (!changed) break;
        memset(centers, 0, (size_t)k * d * sizeof *centers);
        memset(count, 0, (size_t)k * sizeof *count);
        for (int i = 0; i < n; i++) {
            double *c = centers + (size_t)assign[i] * d;
            for (int j = 0; j < d; j++) c[j] += x[(size_t)i * d + j];
            count[assign[i]]++;
        }
        for (int c = 0; c < k; c++) {
            if (count[c]) {
                for (int j = 0; j < d; j++) centers[(size_t)c * d + j] /= count[c];
                continue;
            }
            /* An empty cluster takes the point farthest from its center. */
            int far = 0;
            for (int i = 1; i < n; i++)
                if (dmin[i] > dmin[far]) far = i;
            set_center(centers + (size_t)c * d, x + (size_t)far * d, d);
            dmin[far] = 0;
        }
    }
    return inertia;
}

int gs_kmeans(const float *x, int n, int d, int k, uint64_t seed, int restarts, int *assign, double *inertia) {
    if (n < 1 || d < 1 || k < 1) return gs_fail("k-means: %d points of width %d into %d clusters is not a clustering", n, d, k);
    if (k > n) k = n;
    if (restarts < 1) restarts = 1;
    double *centers = malloc((size_t)k * d * sizeof *centers), *dmin = malloc((size_t)n * sizeof *dmin);
    int *count = malloc((size_t)k * sizeof *count), *trial = malloc((size_t)n * sizeof *trial);
    if (!centers || !dmin || !count || !trial) {
        free(centers), free(dmin), free(count), free(trial);
        return gs_fail("k-means: out of memory for %d points of width %d", n, d);
    }
    uint64_t rng = seed;
    double best = INFINITY;
    for (int r = 0; r < restarts; r++) {
        seed_centers(x, n, d, k, &rng, centers, dmin);
        double e = lloyd(x, n, d, k, centers, trial, dmin, count);
        if (e < best) {
            best = e;
            memcpy(assign, trial, (size_t)n * sizeof *assign);
        }
    }
    if (inertia) *inertia = best;
    free(centers), free(dmin), free(count), free(trial);
    return 0;
}

/* Mean silhouette of a clustering from the distance matrix D (n x n): for
 * each point, a = mean distance to the rest of its cluster, b = the least
 * mean distance to another cluster, s = (b - a) / max(a, b), and s = 0 for
 * a point alone in its cluster (Rousseeuw 1987). */
static double mean_silhouette(const float *D, int n, const int *assign, int k, double *sum, int *count) {
    memset(count, 0, (size_t)k * sizeof *count);
    for (int i = 0; i < n; i++) count[assign[i]]++;
    double total = 0;
    for (int i = 0; i < n; i++) {
        memset(sum, 0, (size_t)k * sizeof *sum);
        for (int j = 0; j < n; j++) sum[assign[j]] += D[(size_t)i * n + j];
        int own = assign[i];
        if (count[own] < 2) continue;
        double a = sum[own] / (count[own] - 1), b = INFINITY;
        for (int c = 0; c < k; c++)
            if (c != own && count[c] && sum[c] / count[c] < b) b = sum[c] / count[c];
        double m = a > b ? a : b;
        if (isfinite(b) && m > 0) total += (b - a) / m;
    }
    return total / n;
}

int gs_kmeans_auto(const float *x, int n, int d, int k_max, int k_hint, uint64_t seed, int *assign, int *k_found,
                   double *silhouette) {
    if (n < 1 || d < 1) return gs_fail("clustering: %d points of width %d", n, d);
    float *D = malloc((size_t)n * n * sizeof *D);
    int *trial = malloc((size_t)n * sizeof *trial), *count = malloc((size_t)(n + 1) * sizeof *count);
    double *sum = malloc((size_t)(n + 1) * sizeof *sum), *cd = malloc((size_t)d * sizeof *cd);
    int rc = D && trial && count && sum && cd ? 0 : gs_fail("clustering: out of memory for %d points (the distance matrix)", n);
    int distinct = 0;
    for (int i = 0; !rc && i < n; i++) {
        int duplicate = 0;
        set_center(cd, x + (size_t)i * d, d);
        for (int j = 0; j < n; j++) {
            D[(size_t)i * n + j] = (float)sqrt(sqdist(x + (size_t)j * d, cd, d));
            if (j < i && D[(size_t)i * n + j] == 0) duplicate = 1;
        }
        distinct += !duplicate;
    }
    if (k_max > distinct) k_max = distinct;
    *k_found = 1;
    *silhouette = NAN;
    if (!rc) memset(assign, 0, (size_t)n * sizeof *assign);
    double best = -INFINITY;
    for (int k = 2; !rc && k <= k_max;) {
        rc = gs_kmeans(x, n, d, k, seed + (uint64_t)k, 2, trial, NULL);
        double s = rc ? 0 : mean_silhouette(D, n, trial, k, sum, count);
        /* Ties (within rounding) go to the larger k: splitting off a point
         * that is alone anyway changes no silhouette (a singleton's is 0),
         * and an exact automaton's distinct vectors should all be found. */
        if (!rc && s >= best - 1e-9) {
            best = s;
            *k_found = k;
            *silhouette = s;
            memcpy(assign, trial, (size_t)n * sizeof *assign);
        }
        int next = k < 12 ? k + 1 : k + k / 4;
        if (k < k_hint && k_hint < next && k_hint <= k_max) next = k_hint;
        k = next;
    }
    free(D), free(trial), free(count), free(sum), free(cd);
    return rc;
}
