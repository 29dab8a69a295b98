/* The linear algebra and statistics helpers of analyses/: streaming
 * covariance (block-size independent, precise under a huge common offset),
 * eigenvalues, the top eigenvector on both paths, the ridge solve, ranks and
 * Spearman with ties, the lag grid, the log-k crossing and 1-D 2-means. */
#include <cblas.h>
#include <math.h>

#include "analyses/state/horizons.h"
#include "analyses/math/linalg.h"
#include "analyses/state/retention.h"
#include "analyses/math/stats.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

static double max_rel(const double *a, const double *b, int64_t n, double floor) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double den = fabs(b[i]) > floor ? fabs(b[i]) : floor;
        double r = fabs(a[i] - b[i]) / den;
        if (r > m) m = r;
    }
    return m;
}

static void test_covariance(void) {
    const int d = 7;
    const int64_t n = 1000;
    gs_rng rng = {11};
    float *x = malloc((size_t)(n * d) * sizeof *x);
    /* a common offset of 1e6 with unit spread: float32 values are exact
     * multiples of 1/16, so the exact moments of these floats are known in
     * double by a two-pass computation */
    for (int64_t i = 0; i < n * d; i++) x[i] = (float)(1e6 + 3.0 * gs_rng_normal(&rng) * (1 + i % d));
    double mean2[7] = {0}, cov2[49] = {0};
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < d; j++) mean2[j] += x[i * d + j];
    for (int j = 0; j < d; j++) mean2[j] /= n;
    for (int64_t i = 0; i < n; i++)
        for (int a = 0; a < d; a++)
            for (int b = 0; b < d; b++) cov2[a * d + b] += (x[i * d + a] - mean2[a]) * (x[i * d + b] - mean2[b]);
    for (int k = 0; k < d * d; k++) cov2[k] /= (n - 1);

    int caps[3] = {7, 64, 0};
    for (int c = 0; c < 3; c++) {
        gs_cov_acc acc;
        CHECK(gs_cov_acc_init(&acc, d, caps[c]) == 0, "%s", gs_error());
        /* uneven blocks */
        int64_t at = 0, step = 3;
        while (at < n) {
            int64_t k = at + step > n ? n - at : step;
            gs_cov_acc_add(&acc, x + at * d, k);
            at += k;
            step = step * 2 + 1;
        }
        double mean[7], cov[49];
        CHECK(gs_cov_acc_finish(&acc, mean, cov) == 0, "%s", gs_error());
        CHECK(max_rel(mean, mean2, d, 1) < 1e-14, "mean rel err %g", max_rel(mean, mean2, d, 1));
        double e = max_rel(cov, cov2, d * d, 1e-3);
        CHECK(e < 1e-9, "cap %d: covariance rel err %g under a 1e6 offset", caps[c], e);
        /* in place */
        CHECK(gs_cov_acc_finish(&acc, mean, acc.S) == 0, "%s", gs_error());
        CHECK(max_rel(acc.S, cov2, d * d, 1e-3) < 1e-9, "in-place finish");
        gs_cov_acc_free(&acc);
    }
    gs_cov_acc acc;
    gs_cov_acc_init(&acc, d, 0);
    gs_cov_acc_add(&acc, x, 1);
    double mean[7], cov[49];
    CHECK(gs_cov_acc_finish(&acc, mean, cov) == -1 && strstr(gs_error(), "at least 2"), "one row: %s", gs_error());
    gs_cov_acc_free(&acc);
    CHECK(gs_cov_acc_init(&acc, 0, 0) == -1, "d = 0 refused");
    free(x);
}

static void test_eigen(void) {
    const int d = 30;
    gs_rng rng = {5};
    double *U = malloc(sizeof(double) * d * d), *A = calloc((size_t)d * d, sizeof(double)), lam[30], w[30];
    random_orthonormal(U, d, &rng);
    for (int i = 0; i < d; i++) lam[i] = 100.0 / (i + 1);
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++)
            for (int i = 0; i < d; i++) A[a * d + b] += U[a * d + i] * lam[i] * U[b * d + i];
    double *B = malloc(sizeof(double) * d * d);
    memcpy(B, A, sizeof(double) * d * d);
    CHECK(gs_sym_eigvals(B, d, w) == 0, "%s", gs_error());
    CHECK(max_rel(w, lam, d, 1e-12) < 1e-11, "eigenvalues rel err %g", max_rel(w, lam, d, 1e-12));

    /* top eigenvector: power path on a well separated top (A + u u^T, u = 20 U_5) */
    double u[30], v[30], val;
    int fb = -1;
    for (int a = 0; a < d; a++) u[a] = 20 * U[a * d + 5];
    CHECK(gs_top_eigvec(A, u, NULL, d, v, &val, &fb) == 0, "%s", gs_error());
    CHECK(fb == 0, "power iteration should converge on a separated top");
    double c = 0;
    for (int a = 0; a < d; a++) c += v[a] * U[a * d + 5];
    CHECK(fabs(fabs(c) - 1) < 1e-9, "top eigenvector |cos| %.15f", fabs(c));
    CHECK(fabs(val - (400 + lam[5])) < 1e-8, "top eigenvalue %.12g", val);
    /* the fallback: thirty eigenvalues 1e-3 apart, power iteration cannot converge in its budget */
    for (int i = 0; i < d; i++) lam[i] = 1.0 - 1e-3 * i;
    memset(A, 0, sizeof(double) * d * d);
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++)
            for (int i = 0; i < d; i++) A[a * d + b] += U[a * d + i] * lam[i] * U[b * d + i];
    CHECK(gs_top_eigvec(A, NULL, NULL, d, v, &val, &fb) == 0, "%s", gs_error());
    CHECK(fb == 1, "LAPACK should answer when power iteration stalls");
    CHECK(fabs(val - 1.0) < 1e-12, "fallback eigenvalue %.15g", val);
    c = 0;
    for (int a = 0; a < d; a++) c += v[a] * U[a * d + 0];
    CHECK(fabs(fabs(c) - 1) < 1e-9, "fallback eigenvector |cos| %.15f", fabs(c));
    free(U); free(A); free(B);
}

static void test_ridge(void) {
    const int d = 6, m = 3;
    gs_rng rng = {9};
    double X[6 * 20], A[36] = {0}, Xs[18], B[18], R[18];
    for (int i = 0; i < 6 * 20; i++) X[i] = gs_rng_normal(&rng);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, 20, 1.0, X, d, X, d, 0.0, A, d);
    for (int i = 0; i < d * m; i++) Xs[i] = gs_rng_normal(&rng);
    /* B = (A + 0.5 I) Xs */
    for (int i = 0; i < d; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.5 * Xs[i * m + j];
            for (int k = 0; k < d; k++) s += A[i * d + k] * Xs[k * m + j];
            B[i * m + j] = s;
        }
    memcpy(R, B, sizeof B);
    CHECK(gs_ridge_solve(A, d, 0.5, R, m) == 0, "%s", gs_error());
    CHECK(max_rel(R, Xs, d * m, 1e-6) < 1e-10, "ridge solution rel err %g", max_rel(R, Xs, d * m, 1e-6));
    /* not positive definite */
    double N[4] = {1, 0, 0, -1}, b2[2] = {1, 1};
    CHECK(gs_ridge_solve(N, 2, 0.0, b2, 1) == -1 && strstr(gs_error(), "positive definite"), "%s", gs_error());
}

/* ranks by counting, independently of the sort-based implementation */
static void ranks_by_counting(const double *x, int n, double *r) {
    for (int i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (int j = 0; j < n; j++) { less += x[j] < x[i]; eq += x[j] == x[i]; }
        r[i] = less + (eq + 1) / 2.0;
    }
}

static void test_ranks(void) {
    double x[8] = {3, 1, 4, 1, 5, 9, 2, 6}, r[8];
    gs_ranks(x, 8, r);
    double want[8] = {4, 1.5, 5, 1.5, 6, 8, 3, 7};
    CHECK(max_rel(r, want, 8, 1) == 0, "average ranks for ties");
    /* no ties: the textbook formula 1 - 6 sum d^2 / (n (n^2 - 1)) */
    double a[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, b[10] = {2, 1, 4, 3, 6, 5, 8, 7, 10, 9}, rho;
    int def;
    gs_spearman(a, b, 10, &rho, &def);
    CHECK(def && fabs(rho - (1 - 6.0 * 10 / (10 * 99))) < 1e-14, "spearman no ties %.15f", rho);
    /* ties: Pearson of counting ranks */
    double y[8] = {0, 0, 7, 0, 2, 2, 9, 1}, rx[8], ry[8];
    ranks_by_counting(x, 8, rx);
    ranks_by_counting(y, 8, ry);
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < 8; i++) { mx += rx[i] / 8; my += ry[i] / 8; }
    for (int i = 0; i < 8; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my); sxx += (rx[i] - mx) * (rx[i] - mx); syy += (ry[i] - my) * (ry[i] - my);
    }
    gs_spearman(x, y, 8, &rho, &def);
    CHECK(def && fabs(rho - sxy / sqrt(sxx * syy)) < 1e-14, "spearman with ties %.15f", rho);
    double k[4] = {2, 2, 2, 2};
    gs_spearman(x, k, 4, &rho, &def);
    CHECK(!def && rho == 0, "constant input: undefined, not NaN");
}

static void test_grid_and_crossing(void) {
    int n;
    int *l = gs_log_lags(2047, 16, &n);
    CHECK(l && l[0] == 1 && l[n - 1] == 2047, "grid ends");
    int ok = 1;
    for (int i = 1; i < n; i++) ok &= l[i] > l[i - 1];
    CHECK(ok, "grid strictly increasing (deduplicated)");
    free(l);
    l = gs_log_lags(1, 16, &n);
    CHECK(n == 1 && l[0] == 1, "grid up to 1");
    free(l);
    CHECK(gs_log_lags(0, 16, &n) == NULL, "grid up to 0 refused");

    int lags[4] = {1, 2, 4, 8};
    double y[4] = {1.0, 0.6, 0.2, 0.1}, k;
    CHECK(gs_log_crossing(lags, y, NULL, 4, 0.4, 0, &k) == 1 && fabs(k - exp(log(2) + 0.5 * log(2))) < 1e-12,
          "crossing interpolated on log k: %g", k);
    CHECK(gs_log_crossing(lags, y, NULL, 4, 0.05, 0, &k) == 0 && k == 8, "censored at the last lag");
    CHECK(gs_log_crossing(lags, y, NULL, 4, 2.0, 0, &k) == 1 && k == 1, "below at the first lag");
    CHECK(gs_log_crossing(lags, y, NULL, 4, 0.2, 1, &k) == 1 && fabs(k - 4) < 1e-12,
          "strict: 0.2 is not below 0.2 (%g)", k);
    int64_t np[4] = {5, 0, 5, 5};
    CHECK(gs_log_crossing(lags, y, np, 4, 0.4, 0, &k) == 1 && fabs(k - exp(log(4) * (0.6 / 0.8))) < 1e-12,
          "lags without pairs are skipped: %g", k);
}

static void test_two_means(void) {
    double x[7] = {0.1, 5.0, 0.0, 5.2, 0.2, 4.8, 5.0};
    int pool[7];
    double mean[2], sse[2], sw;
    double s = gs_two_means(x, 7, pool, mean, sse, &sw);
    int want[7] = {0, 1, 0, 1, 0, 1, 1};
    CHECK(!memcmp(pool, want, sizeof want), "pools");
    CHECK(fabs(mean[0] - 0.1) < 1e-12 && fabs(mean[1] - 5.0) < 1e-12, "pool means");
    double sw_want = sqrt((0.02 + 0.08) / 5);
    CHECK(fabs(sw - sw_want) < 1e-12 && fabs(s - 4.9 / sw_want) < 1e-9, "score %g", s);
    /* one-head pool: the other pool's spread alone */
    double y[4] = {0, 0.1, 0.2, 9};
    s = gs_two_means(y, 4, pool, mean, sse, &sw);
    CHECK(pool[3] == 1 && pool[0] == 0 && fabs(sw - sqrt(0.02 / 2)) < 1e-12, "single-head pool: sw %g", sw);
    /* identical heads: the floor, not a division by zero */
    double z[4] = {1, 1, 3, 3};
    s = gs_two_means(z, 4, pool, mean, sse, &sw);
    CHECK(sw == GS_POOL_STD_FLOOR && isfinite(s) && fabs(s - 2 / GS_POOL_STD_FLOOR) < 1e-9, "floored: %g", s);
}

static void test_top_k(void) {
    float x[12] = {1, 5, 3, 5, 0, 9, 2, 8, 7, 6, 4, -1};
    int idx[10];
    gs_top_k(x, 12, 10, idx);
    int want[10] = {5, 7, 8, 9, 1, 3, 10, 2, 6, 0};
    CHECK(!memcmp(idx, want, sizeof want), "top-10 order (ties by lower index)");
}

int main(void) {
    test_covariance();
    test_eigen();
    test_ridge();
    test_ranks();
    test_grid_and_crossing();
    test_two_means();
    test_top_k();
    return test_summary();
}
