/* The cluster-vs-monoid metrics (analyses/automaton/clusters.h) on planted
 * data with known answers:
 * - purity and ARI on hand-computed tables (the second is scikit-learn's
 *   documented example, adjusted_rand_score([0,0,1,1], [0,0,1,2]) = 0.5714);
 * - vectors that are exactly the one-hot of a monoid element: k-means with
 *   k = the elements present, and the silhouette-chosen clustering, give
 *   purity 1, ARI 1, and the latter finds k = the number of elements;
 * - the same vectors with the labels shuffled: |ARI| < 0.05 for each of 20
 *   shuffles (N = 3000, 12 labels: under random labels the ARI has mean 0
 *   and a standard deviation of about 0.0035 here: the index sum_ij C(n_ij,2)
 *   varies by ~1200 around its expectation, over a denominator of ~3.4e5;
 *   0.05 is ~14 sd), their mean within 0.01 of 0, and purity between the
 *   majority share and that share + 0.1 (12 clusters of ~250 points with a
 *   label share of ~1/12 have a largest label count of ~30, purity ~0.12);
 * - noisy one-hots in between: ARI falls with the noise, from 1 (sigma 0.05)
 *   through a middle value (sigma 0.45) to near 0 (sigma 3);
 * - k-means is deterministic for a seed. */
#include "analyses/automaton/clusters.h"
#include "base/error.h"
#include "base/prng.h"
#include "testlib.h"

#define N 3000
#define M 12

static float normal(uint64_t *s) {
    double u = ((double)(gs_splitmix64(s) >> 11) + 1) * 0x1.0p-53, v = (double)(gs_splitmix64(s) >> 11) * 0x1.0p-53;
    return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static void shuffle(int *v, int n, uint64_t *rng) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(gs_splitmix64(rng) % (uint64_t)(i + 1)), t = v[i];
        v[i] = v[j], v[j] = t;
    }
}

static float x[N * M];
static int labels[N], assign[N], again[N];

/* k-means with k = M on one-hots plus noise of SIGMA: the ARI. */
static double noisy_ari(double sigma, uint64_t *rng) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) x[i * M + j] = (float)((j == labels[i]) + sigma * normal(rng));
    if (gs_kmeans(x, N, M, M, 3, 3, assign, NULL)) return NAN;
    return gs_adjusted_rand(labels, assign, N);
}

int main(void) {
    {
        int l[6] = {0, 0, 0, 1, 1, 1}, c[6] = {0, 0, 1, 1, 2, 2};
        /* index 2, A 6, B 3, E = 18/15, max 4.5: (2 - 1.2) / (4.5 - 1.2) */
        CHECK(fabs(gs_adjusted_rand(l, c, 6) - 0.8 / 3.3) < 1e-12, "ARI %.6f, want 0.242424", gs_adjusted_rand(l, c, 6));
        CHECK(fabs(gs_adjusted_rand(c, l, 6) - 0.8 / 3.3) < 1e-12, "ARI is symmetric");
        CHECK(fabs(gs_purity(l, c, 6) - 5.0 / 6) < 1e-12, "purity %.6f, want 5/6", gs_purity(l, c, 6));
        int a[4] = {0, 0, 1, 1}, b[4] = {0, 0, 1, 2}, b7[4] = {7, 7, -3, 9};
        CHECK(fabs(gs_adjusted_rand(a, b, 4) - (2.0 / 3) / (7.0 / 6)) < 1e-12, "sklearn's example: %.6f, want 0.571429",
              gs_adjusted_rand(a, b, 4));
        CHECK(gs_adjusted_rand(a, b7, 4) == gs_adjusted_rand(a, b, 4), "ARI depends on equality of ids only");
        CHECK(gs_adjusted_rand(a, a, 4) == 1 && gs_purity(a, b, 4) == 1, "identical partitions: 1");
        CHECK(fabs(gs_majority_share(l, 6) - 0.5) < 1e-12 && gs_distinct_count(b7, 4) == 3, "majority, distinct");
    }
    uint64_t rng = 2024;
    /* elements drawn unevenly (as segments' elements are): weight of element e ~ 1 + e % 3 */
    for (int i = 0; i < N; i++) {
        int r = (int)(gs_splitmix64(&rng) % (2 * M)), e = 0;
        while (r >= 1 + e % 3) r -= 1 + e % 3, e = (e + 1) % M;
        labels[i] = e;
    }
    int present = gs_distinct_count(labels, N);
    CHECK(present == M, "%d of %d elements present", present, M);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) x[i * M + j] = j == labels[i];
    CHECK(gs_kmeans(x, N, M, present, 1, 3, assign, NULL) == 0, "%s", gs_error());
    CHECK(gs_purity(labels, assign, N) == 1, "one-hots: k-means purity %.4f, want 1", gs_purity(labels, assign, N));
    CHECK(gs_adjusted_rand(labels, assign, N) == 1, "one-hots: k-means ARI %.4f, want 1", gs_adjusted_rand(labels, assign, N));
    int k = 0;
    double sil = 0;
    CHECK(gs_kmeans_auto(x, 600, M, 2 * M, M, 5, assign, &k, &sil) == 0, "%s", gs_error());
    CHECK(k == M && fabs(sil - 1) < 1e-9, "one-hots: the silhouette chose k = %d (silhouette %.4f), want %d (1)", k, sil, M);
    CHECK(gs_purity(labels, assign, 600) == 1 && gs_adjusted_rand(labels, assign, 600) == 1,
          "one-hots: self-chosen clustering purity %.4f ARI %.4f", gs_purity(labels, assign, 600),
          gs_adjusted_rand(labels, assign, 600));
    /* again without the hint in the grid: k = 12 is on it anyway (every k up to 12) */
    CHECK(gs_kmeans_auto(x, 600, M, 40, 0, 5, assign, &k, &sil) == 0 && k == M, "no hint: k = %d", k);

    /* shuffled labels */
    CHECK(gs_kmeans(x, N, M, present, 1, 3, assign, NULL) == 0, "%s", gs_error());
    int shuffled[N];
    memcpy(shuffled, labels, sizeof shuffled);
    double sum = 0, worst = 0;
    int purity_ok = 1;
    for (int s = 0; s < 20; s++) {
        shuffle(shuffled, N, &rng);
        double ari = gs_adjusted_rand(shuffled, assign, N), p = gs_purity(shuffled, assign, N),
               maj = gs_majority_share(shuffled, N);
        sum += ari;
        if (fabs(ari) > fabs(worst)) worst = ari;
        if (!(p >= maj && p < maj + 0.1)) purity_ok = 0, printf("shuffle %d: purity %.4f majority %.4f\n", s, p, maj);
    }
    CHECK(fabs(worst) < 0.05, "shuffled labels: the largest |ARI| of 20 shuffles is %.4f", worst);
    CHECK(fabs(sum / 20) < 0.01, "shuffled labels: mean ARI %.4f", sum / 20);
    CHECK(purity_ok, "shuffled labels: purity outside [majority, majority + 0.1]");
    printf("shuffled: largest |ARI| %.4f, mean %.5f\n", worst, sum / 20);

    /* noisy one-hots */
    double low = noisy_ari(0.05, &rng), mid = noisy_ari(0.45, &rng), high = noisy_ari(3, &rng);
    printf("noisy one-hots: ARI %.4f (sigma 0.05), %.4f (0.45), %.4f (3)\n", low, mid, high);
    CHECK(low == 1, "sigma 0.05: ARI %.4f, want 1", low);
    CHECK(mid > 0.2 && mid < 0.95, "sigma 0.45: ARI %.4f, want between 0.2 and 0.95", mid);
    CHECK(fabs(high) < 0.05, "sigma 3: ARI %.4f, want near 0", high);

    CHECK(gs_kmeans(x, N, M, M, 9, 2, assign, NULL) == 0 && gs_kmeans(x, N, M, M, 9, 2, again, NULL) == 0 &&
              !memcmp(assign, again, sizeof assign), "k-means is deterministic for a seed");
    CHECK(gs_kmeans(x, 0, M, 3, 1, 1, assign, NULL) == -1 && strstr(gs_error(), "k-means"), "no points: %s", gs_error());
    return test_summary();
}
