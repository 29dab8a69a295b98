/* The ablation intervals and their units (analyses/math/stats.h, analyses/documents.h):
 * - Student t quantiles against tabulated values;
 * - coverage on planted data: a known mean effect with known between-document
 *   variance, drawn again and again, is covered by the document t-interval
 *   at its nominal 95% within 3 binomial standard errors of the coverage
 *   estimate (R draws: SE = sqrt(0.95 * 0.05 / R); with unequal documents
 *   at most 3 points wide of nominal, never 3 SE narrow); at the same data a normal
 *   (z) interval, a token-level interval and a percentile bootstrap over
 *   documents all cover less, as the issue measured (so this test fails if
 *   the interval is any of those);
 * - documents found from BOS/EOS: a window belongs to the document holding
 *   most of its tokens; without boundary tokens every window is its own unit. */
#include <math.h>
#include <stdlib.h>

#include "analyses/documents.h"
#include "analyses/math/stats.h"
#include "testlib.h"

static void quantiles(void) {
    const struct { double p, df, q; } tab[] = {
        {0.975, 1, 12.7062047}, {0.975, 2, 4.30265273}, {0.975, 5, 2.57058184},
        {0.975, 7, 2.36462425}, {0.975, 30, 2.04227246}, {0.95, 10, 1.81246112},
        {0.995, 3, 5.84090931}, {0.975, 1e6, 1.95996656},
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
        double q = gs_t_quantile(tab[i].p, tab[i].df);
        CHECK(fabs(q - tab[i].q) < 1e-6 * tab[i].q, "t quantile p %.3f df %g: %.9f, want %.9f", tab[i].p, tab[i].df, q, tab[i].q);
    }
    CHECK(fabs(gs_t_quantile(0.025, 5) + 2.57058184) < 1e-6, "lower tail");
    CHECK(isnan(gs_t_quantile(1.0, 5)) && isnan(gs_t_quantile(0.5, 0)), "outside the domain: NaN");
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One planted study: G documents of sizes n[g] tokens, token value
 * mu + u_g + e (u ~ N(0, tau^2), e ~ N(0, sigma^2)). Counts, over R draws,
 * how often each interval covers mu. */
typedef struct { int t, z, token, boot; } covers;

static covers coverage(int G, const int *n, double mu, double tau, double sigma, int R, int n_boot, uint64_t seed) {
    gs_rng r = {seed};
    covers c = {0, 0, 0, 0};
    double sum[64], cnt[64], bs[64], bn[64], *boot = malloc((size_t)n_boot * sizeof *boot);
    for (int rep = 0; rep < R; rep++) {
        double all = 0, all2 = 0, N = 0;
        for (int g = 0; g < G; g++) {
            double u = tau * gs_rng_normal(&r);
            sum[g] = 0;
            cnt[g] = n[g];
            for (int i = 0; i < n[g]; i++) {
                double x = mu + u + sigma * gs_rng_normal(&r);
                sum[g] += x;
                all += x;
                all2 += x * x;
            }
            N += n[g];
        }
        gs_interval iv = gs_cluster_t_interval(sum, cnt, G, 0.95);
        c.t += iv.lo <= mu && mu <= iv.hi;
        c.z += fabs(iv.mean - mu) <= 1.959964 * iv.se;
        double m = all / N, sd = sqrt((all2 - N * m * m) / (N - 1));
        c.token += fabs(m - mu) <= 1.959964 * sd / sqrt(N);
        if (n_boot > 0) {
            for (int b = 0; b < n_boot; b++) {
                for (int g = 0; g < G; g++) {
                    int k = (int)(gs_rng_uniform(&r) * G);
                    bs[g] = sum[k];
                    bn[g] = cnt[k];
                }
                double S = 0, M = 0;
                for (int g = 0; g < G; g++) { S += bs[g]; M += bn[g]; }
                boot[b] = S / M;
            }
            qsort(boot, (size_t)n_boot, sizeof *boot, cmp_d);
            c.boot += boot[(int)(0.025 * (n_boot - 1))] <= mu && mu <= boot[(int)ceil(0.975 * (n_boot - 1))];
        }
    }
    free(boot);
    return c;
}

static void planted_coverage(void) {
    const int R = 2000;
    const double se = sqrt(0.95 * 0.05 / R), tol = 3 * se;
    /* equal documents: the document means are normal, the t-interval exact */
    int eq[6] = {128, 128, 128, 128, 128, 128};
    covers c = coverage(6, eq, 0.8, 0.3, 1.0, R, 200, 11);
    double t = (double)c.t / R, z = (double)c.z / R, tok = (double)c.token / R, bt = (double)c.boot / R;
    printf("6 equal documents: coverage t %.3f, z %.3f, token-level %.3f, percentile bootstrap %.3f (nominal 0.95, 3 SE %.3f)\n",
           t, z, tok, bt, tol);
    CHECK(fabs(t - 0.95) <= tol, "document t-interval covers %.3f, nominal 0.95 +- %.3f", t, tol);
    CHECK(z < 0.95 - tol, "a z-interval at 6 documents should under-cover: %.3f", z);
    CHECK(tok < 0.5, "treating tokens as independent should badly under-cover: %.3f", tok);
    CHECK(bt < 0.95 - tol, "a percentile bootstrap over 6 documents should under-cover: %.3f", bt);
    /* unequal documents: the token-weighted mean is a ratio estimator and its
     * degrees of freedom (Bell-McCaffrey) an approximation; it may err on the
     * wide side by a few points, never below nominal by more than 3 SE */
    int uneq[8] = {64, 96, 128, 192, 256, 320, 384, 512};
    c = coverage(8, uneq, -0.2, 0.25, 1.0, R, 0, 12);
    t = (double)c.t / R;
    printf("8 unequal documents: coverage t %.3f\n", t);
    CHECK(t >= 0.95 - tol && t <= 0.98, "unequal documents: t-interval covers %.3f, want 0.95 - %.3f to 0.98", t, tol);
    /* no between-document variance and 2 documents: still a t with 1 df */
    int two[2] = {50, 50};
    c = coverage(2, two, 0, 0, 1.0, R, 0, 13);
    t = (double)c.t / R;
    CHECK(fabs(t - 0.95) <= tol, "2 documents: t-interval covers %.3f", t);
    double s1 = 3, n1 = 2;
    gs_interval one = gs_cluster_t_interval(&s1, &n1, 1, 0.95);
    CHECK(one.mean == 1.5 && isnan(one.lo) && isnan(one.hi) && one.clusters == 1, "one document: mean, no interval");
}

static void documents(void) {
    enum { T = 8 };
    const int32_t bos = 1, eos = 2;
    /* doc A: 1 a a a a a a a | a a 2; doc B: 1 b b b b | b b b b b b b b | b 2; doc C: 1 c ... */
    const int32_t tok[4 * T] = {1, 5, 5, 5, 5, 5, 5, 5, /* A */
                                5, 5, 2, 1, 6, 6, 6, 6, /* 3 of A, 5 of B: B */
                                6, 6, 6, 6, 6, 6, 6, 6, /* B */
                                6, 2, 1, 7, 7, 7, 7, 7}; /* 2 of B, 6 of C: C */
    int64_t doc[4];
    int64_t G = gs_window_documents(tok, 4, T, bos, eos, doc);
    CHECK(G == 3 && doc[0] == 0 && doc[1] == 1 && doc[2] == 1 && doc[3] == 2, "documents %lld: %lld %lld %lld %lld",
          (long long)G, (long long)doc[0], (long long)doc[1], (long long)doc[2], (long long)doc[3]);
    /* EOS only (a corpus without BOS) gives the same documents */
    G = gs_window_documents(tok, 4, T, -1, eos, doc);
    CHECK(G == 3 && doc[1] == 1 && doc[2] == 1 && doc[3] == 2, "EOS only: %lld documents", (long long)G);
    G = gs_window_documents(tok, 4, T, -1, -1, doc);
    CHECK(G == 0 && doc[0] == 0 && doc[3] == 3, "no boundary tokens: each window its own unit");
}

int main(void) {
    quantiles();
    planted_coverage();
    documents();
    return test_summary();
}
