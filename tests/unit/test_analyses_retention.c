/* Retention on planted decays: a constant alpha per head gives R_h(k) =
 * alpha^k and the half-life -1/ln(alpha) (exactly, with interpolation in
 * log R), a head slower than the window is right-censored with the
 * extrapolation; two planted pools are recovered with a high separation score
 * and a single pool gives a low one; mean beta per head; bad decays. */
#include <math.h>

#include "analyses/retention.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

/* n_windows windows of T steps, head h decaying by alpha[h] at every step
 * (times a per-step jitter exp(jit * N(0,1)) when jit > 0) */
static float *planted(const double *alpha, int H, int n_windows, int T, double jit, gs_rng *rng, int64_t *ws) {
    float *a = malloc(sizeof(float) * (size_t)n_windows * T * H);
    for (int w = 0; w <= n_windows; w++) ws[w] = (int64_t)w * T;
    for (int64_t i = 0; i < (int64_t)n_windows * T; i++)
        for (int h = 0; h < H; h++) {
            double v = alpha[h];
            if (jit > 0) v = pow(alpha[h], exp(jit * gs_rng_normal(rng)));
            a[i * H + h] = (float)v;
        }
    return a;
}

static void test_constant(void) {
    enum { H = 6, NW = 3, T = 512 };
    double alpha[H] = {0.5, 0.8, 0.9, 0.97, 0.995, 0.9999};
    int64_t ws[NW + 1];
    float *a = planted(alpha, H, NW, T, 0, NULL, ws);
    float *beta = malloc(sizeof(float) * NW * T * H);
    for (int64_t i = 0; i < (int64_t)NW * T; i++)
        for (int h = 0; h < H; h++) beta[i * H + h] = (float)(0.1 * h + (i % 2 ? 0.05 : -0.05));
    gs_retention r;
    int rc = gs_retention_run(a, beta, ws, NW, H, NULL, &r);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) { free(a); free(beta); return; }
    CHECK(r.max_lag == T - 1 && r.lags[r.n_lags - 1] == T - 1, "lag grid to T-1");
    for (int h = 0; h < H; h++) {
        double af = (float)alpha[h]; /* the decay as stored */
        double want = -1 / log(af);
        if (h < H - 1) {
            CHECK(!r.censored[h] && fabs(r.half_life[h] - want) / want < 1e-6, "head %d: half-life %.9g, want %.9g", h,
                  r.half_life[h], want);
        } else {
            CHECK(r.censored[h] && fabs(r.half_life[h] - want) / want < 1e-6 && r.half_life[h] > T,
                  "head %d: censored, extrapolated %.9g, want %.9g", h, r.half_life[h], want);
        }
        CHECK(fabs(r.extrapolated[h] - want) / want < 1e-6, "extrapolation head %d", h);
        double cw = 0;
        for (int li = 0; li < r.n_lags; li++) {
            double e = fabs(r.R[(int64_t)li * H + h] - pow(af, r.lags[li]));
            if (e > cw) cw = e;
        }
        CHECK(cw < 1e-9, "head %d: R(k) = alpha^k (worst %g)", h, cw);
        CHECK(fabs(r.mean_beta[h] - 0.1 * h) < 1e-6 && r.has_beta, "mean beta head %d: %g", h, r.mean_beta[h]);
        CHECK(fabs(r.mean_alpha[h] - af) < 1e-9, "mean alpha");
    }
    gs_retention_free(&r);
    /* without beta */
    CHECK(gs_retention_run(a, NULL, ws, NW, H, NULL, &r) == 0 && !r.has_beta && r.mean_beta[0] == 0, "no beta");
    gs_retention_free(&r);
    free(a);
    free(beta);
}

/* A decay that varies over time: R(k) against brute force, half-life scanned */
static void test_varying(void) {
    enum { H = 2, T = 40 };
    float a[2 * T * H];
    int64_t ws[3] = {0, T, 2 * T};
    gs_rng rng = {6};
    for (int i = 0; i < 2 * T * H; i++) a[i] = (float)(0.6 + 0.39 * gs_rng_uniform(&rng));
    a[5 * H + 1] = 0.0f; /* an underflowed decay: floored, no NaN */
    gs_retention r;
    CHECK(gs_retention_run(a, NULL, ws, 2, H, NULL, &r) == 0, "%s", gs_error());
    for (int h = 0; h < H; h++) {
        double prev = 1, hl = -1;
        for (int k = 1; k < T && hl < 0; k++) {
            double s = 0;
            int c = 0;
            for (int w = 0; w < 2; w++)
                for (int t = 0; t + k < T; t++) {
                    double p = 1;
                    for (int tau = t + 1; tau <= t + k; tau++) {
                        double v = a[(w * T + tau) * H + h];
                        p *= v > 1e-30 ? v : 1e-30;
                    }
                    s += p;
                    c++;
                }
            double R = s / c;
            for (int li = 0; li < r.n_lags; li++)
                if (r.lags[li] == k) CHECK(fabs(r.R[li * H + h] - R) < 1e-12, "R_%d(%d)", h, k);
            if (R <= exp(-1)) hl = (k - 1) + (log(prev) + 1) / (log(prev) - log(R));
            prev = R;
        }
        CHECK(hl > 0 && fabs(r.half_life[h] - hl) < 1e-9, "head %d half-life %g vs brute force %g", h, r.half_life[h], hl);
        CHECK(isfinite(r.mean_log_alpha[h]), "finite mean log alpha");
    }
    gs_retention_free(&r);
}

static void test_pools(void) {
    enum { H = 15, NW = 4, T = 1024 };
    gs_rng rng = {99};
    /* fast pool: 6 heads at half-lives 1.5-3; slow pool: 9 heads at 20-60 */
    double hl[H], alpha[H];
    for (int h = 0; h < 6; h++) hl[h] = 1.5 * pow(2.0, h / 5.0);
    for (int h = 6; h < H; h++) hl[h] = 20 * pow(3.0, (h - 6) / 8.0);
    /* interleave so pool order is not head order */
    for (int i = 0; i < H; i++) {
        int j = (int)(gs_rng_uniform(&rng) * H);
        double t = hl[i]; hl[i] = hl[j]; hl[j] = t;
    }
    for (int h = 0; h < H; h++) alpha[h] = exp(-1 / hl[h]);
    int64_t ws[NW + 1];
    float *a = planted(alpha, H, NW, T, 0, NULL, ws);
    gs_retention r;
    int rc = gs_retention_run(a, NULL, ws, NW, H, NULL, &r);
    CHECK(rc == 0, "%s", gs_error());
    if (rc == 0) {
        int ok = 1;
        for (int h = 0; h < H; h++) ok &= r.pool[h] == (hl[h] > 10);
        CHECK(ok, "planted pools recovered");
        CHECK(r.pool_n[0] == 6 && r.pool_n[1] == 9, "pool sizes %d/%d", r.pool_n[0], r.pool_n[1]);
        CHECK(fabs(r.pool_min[0] - 1.5) < 1e-3 && fabs(r.pool_max[1] - 60) < 1e-2, "ranges %g-%g, %g-%g",
              r.pool_min[0], r.pool_max[0], r.pool_min[1], r.pool_max[1]);
        CHECK(r.score_valid && r.separation > 5 && r.null_p < 0.01, "two pools: score %g, null p %g", r.separation,
              r.null_p);
        gs_retention_free(&r);
    }
    free(a);

    /* one pool: log half-lives at evenly spaced normal quantiles (mean log 10, sd 0.5) */
    static const double q15[H] = {-1.834, -1.282, -0.967, -0.728, -0.524, -0.341, -0.168, 0.0,
                                  0.168,  0.341,  0.524,  0.728,  0.967,  1.282,  1.834};
    for (int h = 0; h < H; h++) alpha[h] = exp(-1 / (10 * exp(0.5 * q15[h])));
    a = planted(alpha, H, NW, T, 0, NULL, ws);
    rc = gs_retention_run(a, NULL, ws, NW, H, NULL, &r);
    CHECK(rc == 0, "%s", gs_error());
    if (rc == 0) {
        CHECK(r.separation < 4 && r.null_p > 0.1, "one pool: score %g, null p %g", r.separation, r.null_p);
        gs_retention_free(&r);
    }
    free(a);
}

static void test_bad(void) {
    float a[8] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    int64_t ws[2] = {0, 4};
    gs_retention r;
    CHECK(gs_retention_run(NULL, NULL, ws, 1, 0, NULL, &r) == -1 && strstr(gs_error(), "GPN+M"),
          "no memory: %s", gs_error());
    a[3] = 1.5f;
    CHECK(gs_retention_run(a, NULL, ws, 1, 2, NULL, &r) == -1 && strstr(gs_error(), "outside [0, 1]"), "%s",
          gs_error());
    a[3] = NAN;
    CHECK(gs_retention_run(a, NULL, ws, 1, 2, NULL, &r) == -1 && strstr(gs_error(), "row 1, head 1"), "%s",
          gs_error());
    a[3] = 0.5f;
    int64_t ws1[3] = {0, 1, 2};
    CHECK(gs_retention_run(a, NULL, ws1, 2, 2, NULL, &r) == -1 && strstr(gs_error(), "at least 2 steps"), "%s",
          gs_error());
    /* one head: no pools, no score, still half-lives */
    CHECK(gs_retention_run(a, NULL, ws, 1, 1, NULL, &r) == 0 && !r.pools_valid && !r.score_valid, "%s", gs_error());
    gs_retention_free(&r);
    /* alpha = 1 everywhere: censored at the cap, finite */
    float one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(gs_retention_run(one, NULL, ws, 1, 2, NULL, &r) == 0 && r.censored[0] && r.half_life[0] == GS_HALF_LIFE_CAP,
          "never-decaying head capped");
    gs_retention_free(&r);
}

int main(void) {
    test_constant();
    test_varying();
    test_pools();
    test_bad();
    return test_summary();
}
