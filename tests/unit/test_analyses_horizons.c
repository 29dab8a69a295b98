/* Horizons on planted data: centered content following an AR(1) process with
 * known rho gives a centered curve close to rho^k and the matching horizon
 * numbers; a constant offset gives the raw plateau |m|^2 / (|m|^2 + d s^2);
 * windows with gaps match pairs by position (against brute force); a lag
 * that no pair reaches (the model's zero state at position 0) has no value,
 * its count 0, and the summaries read only lags with enough pairs. */
#include <math.h>

#include "analyses/state/horizons.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

/* Subtracting a window's own mean biases the centered covariance of an AR(1)
 * by about V = Var(mean) = (1 + rho) / ((1 - rho) T) (unit variance), so the
 * expected curve is (rho^k - V) / (1 - V). */
static double expected_curve(double rho, double V, double k) { return (pow(rho, k) - V) / (1 - V); }

/* smallest real k >= 1 where the expected curve reaches y (bisection) */
static double expected_crossing(double rho, double V, double y) {
    double lo = 1, hi = 1e4;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (expected_curve(rho, V, mid) > y) lo = mid;
        else hi = mid;
    }
    return lo;
}

static void test_ar1(void) {
    const int d = 128, NW = 6, T = 2048;
    const double rho = 0.9, sigma = 1.0, plateau = 0.65;
    owned_states o;
    owned_alloc(&o, NW, T, d);
    gs_rng rng = {77};
    double *m = malloc(sizeof(double) * d), *z = malloc(sizeof(double) * d), mn = 0;
    for (int j = 0; j < d; j++) { m[j] = gs_rng_normal(&rng); mn += m[j] * m[j]; }
    /* |m|^2 / (|m|^2 + d sigma^2) = plateau */
    double want_m2 = plateau / (1 - plateau) * d * sigma * sigma;
    for (int j = 0; j < d; j++) m[j] *= sqrt(want_m2 / mn);
    for (int w = 0; w < NW; w++) {
        for (int j = 0; j < d; j++) z[j] = gs_rng_normal(&rng);
        for (int t = 0; t < T; t++) {
            if (t > 0)
                for (int j = 0; j < d; j++) z[j] = rho * z[j] + sqrt(1 - rho * rho) * gs_rng_normal(&rng);
            float *row = o.x + ((int64_t)w * T + t) * d;
            for (int j = 0; j < d; j++) row[j] = (float)(m[j] + sigma * z[j]);
        }
    }
    gs_horizons h;
    int rc = gs_horizons_run(owned_source(&o), NULL, &h);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) { owned_free(&o); free(m); free(z); return; }
    CHECK(h.lags[0] == 1 && h.lags[h.n_lags - 1] == T - 1, "grid from 1 to T-1 = %d", h.lags[h.n_lags - 1]);
    const double V = (1 + rho) / ((1 - rho) * T);
    double worst = 0;
    for (int i = 0; i < h.n_lags && h.lags[i] <= 64; i++) {
        double e = fabs(h.centered[i] - expected_curve(rho, V, h.lags[i]));
        if (e > worst) worst = e;
    }
    CHECK(worst < 0.01, "centered curve within 0.01 of rho^k (worst %g)", worst);
    CHECK(fabs(h.c1 - rho) < 0.02, "c_1 = %g for rho %g", h.c1, rho);
    double he = expected_crossing(rho, V, expected_curve(rho, V, 1) / M_E);
    double h2 = expected_crossing(rho, V, 0.02);
    CHECK(h.h_e_valid && !h.h_e_censored && fabs(h.h_e - he) / he < 0.05, "h_e %g, expected %g (1 + 1/-ln rho = %g)",
          h.h_e, he, 1 + 1 / -log(rho));
    CHECK(!h.h_002_censored && fabs(h.h_002 - h2) / h2 < 0.05, "h_0.02 %g, expected %g", h.h_002, h2);
    /* raw: plateau at large lags */
    int nplat = 0;
    double pw = 0;
    for (int i = 0; i < h.n_lags; i++)
        if (h.lags[i] >= 200 && h.lags[i] <= 1500) {
            nplat++;
            double e = fabs(h.raw[i] - plateau);
            if (e > pw) pw = e;
        }
    CHECK(nplat > 5 && pw < 0.02, "raw plateau near %g (worst deviation %g over %d lags)", plateau, pw, nplat);
    CHECK(fabs(h.raw[0] - (plateau + (1 - plateau) * rho)) < 0.02, "raw at k=1: %g", h.raw[0]);
    CHECK(h.n_raw[0] == (int64_t)NW * (T - 1) && h.n_raw[h.n_lags - 1] == NW, "pair counts");
    gs_horizons_free(&h);

    /* a fixed lag grid */
    gs_horizon_opts ho;
    gs_horizon_opts_default(&ho);
    ho.max_lag = 100;
    ho.per_decade = 4;
    CHECK(gs_horizons_run(owned_source(&o), &ho, &h) == 0, "%s", gs_error());
    CHECK(h.n_lags == 9 && h.lags[h.n_lags - 1] == 100, "grid 1..100 at 4 per decade: %d lags", h.n_lags);
    gs_horizons_free(&h);
    owned_free(&o);
    free(m);
    free(z);
}

/* windows with gaps, one with a zero state: compare with brute force */
static void test_gaps(void) {
    const int d = 5;
    int32_t posA[] = {0, 1, 2, 4, 5, 7, 8, 9, 12, 13};
    int32_t posB[] = {3, 4, 5, 6, 7, 8};
    const int nA = 10, nB = 6, n = nA + nB;
    owned_states o;
    owned_alloc(&o, 1, n, d);
    gs_rng rng = {4};
    for (int i = 0; i < n; i++) {
        o.window[i] = i < nA ? 7 : 3;
        o.pos[i] = i < nA ? posA[i] : posB[i - nA];
        for (int j = 0; j < d; j++) o.x[i * d + j] = (float)(1 + gs_rng_normal(&rng));
    }
    for (int j = 0; j < d; j++) o.x[4 * d + j] = 0; /* window 7, position 5: zero state */
    gs_horizons h;
    int rc = gs_horizons_run(owned_source(&o), NULL, &h);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) { owned_free(&o); return; }
    CHECK(h.lags[h.n_lags - 1] == 13, "max lag = longest span");
    CHECK(h.n_zero_states == 1, "zero states counted");
    for (int li = 0; li < h.n_lags; li++) {
        int k = h.lags[li];
        for (int centered = 0; centered < 2; centered++) {
            double sum = 0;
            int64_t cnt = 0;
            for (int w = 0; w < 2; w++) {
                int a = w ? nA : 0, b = w ? n : nA;
                double mean[5] = {0};
                for (int i = a; i < b; i++)
                    for (int j = 0; j < d; j++) mean[j] += o.x[i * d + j] / (double)(b - a);
                for (int i = a; i < b; i++)
                    for (int i2 = a; i2 < b; i2++) {
                        if (o.pos[i2] - o.pos[i] != k) continue;
                        double u[5], v[5];
                        for (int j = 0; j < d; j++) {
                            u[j] = o.x[i * d + j] - (centered ? mean[j] : 0);
                            v[j] = o.x[i2 * d + j] - (centered ? mean[j] : 0);
                        }
                        double uu = 0, vv = 0, uv = 0;
                        for (int j = 0; j < d; j++) { uu += u[j] * u[j]; vv += v[j] * v[j]; uv += u[j] * v[j]; }
                        if (uu == 0 || vv == 0) continue;
                        sum += uv / sqrt(uu * vv);
                        cnt++;
                    }
            }
            double want = cnt ? sum / cnt : 0;
            double got = centered ? h.centered[li] : h.raw[li];
            int64_t gotn = centered ? h.n_centered[li] : h.n_raw[li];
            CHECK(gotn == cnt && fabs(got - want) < 1e-12, "lag %d %s: %g (%lld pairs) vs %g (%lld)", k,
                  centered ? "centered" : "raw", got, (long long)gotn, want, (long long)cnt);
        }
    }
    gs_horizons_free(&h);
    owned_free(&o);
}

/* states kept at every 4th position: c_1 is the value at lag 4 */
static void test_stride(void) {
    const int d = 32, NW = 2, T = 50;
    owned_states o;
    owned_alloc(&o, NW, T, d);
    gs_rng rng = {8};
    double z[32];
    for (int w = 0; w < NW; w++) {
        for (int j = 0; j < d; j++) z[j] = gs_rng_normal(&rng);
        for (int t = 0; t < T; t++) {
            o.pos[w * T + t] = 4 * t;
            for (int j = 0; j < d; j++) {
                z[j] = 0.7 * z[j] + 0.7 * gs_rng_normal(&rng);
                o.x[((int64_t)w * T + t) * d + j] = (float)(3 + z[j]);
            }
        }
    }
    gs_horizons h;
    int rc = gs_horizons_run(owned_source(&o), NULL, &h);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) { owned_free(&o); return; }
    CHECK(h.c1_lag == 4 && h.n_centered[0] == 0 && h.lags[h.n_lags - 1] == 4 * (T - 1), "c_1 at lag %d", h.c1_lag);
    int i4 = -1;
    for (int i = 0; i < h.n_lags; i++)
        if (h.lags[i] == 4) i4 = i;
    CHECK(i4 >= 0 && h.c1 == h.centered[i4] && h.n_centered[i4] == NW * (T - 1) && h.h_e_valid, "stride pairs");
    gs_horizons_free(&h);
    owned_free(&o);
}

/* Every window starts at the zero state, as the model's do: at lag T - 1 the
 * only pair of each window is (0, T - 1), so the raw curve has no pair there.
 * Its value must be undefined (NaN, stored as NULL), never 0, with the count
 * kept; the centered curve still has one pair per window there, too few to
 * be read by the summaries. */
static void test_no_pairs(void) {
    enum { NW = 12, T = 64, D = 5 };
    owned_states o;
    owned_alloc(&o, NW, T, D);
    gs_rng rng = {31};
    for (int w = 0; w < NW; w++)
        for (int t = 1; t < T; t++)
            for (int j = 0; j < D; j++) o.x[((int64_t)w * T + t) * D + j] = (float)(3.0 + gs_rng_normal(&rng));
    gs_horizons h;
    int rc = gs_horizons_run(owned_source(&o), NULL, &h);
    CHECK(rc == 0, "%s", gs_error());
    if (rc == 0) {
        int last = h.n_lags - 1;
        CHECK(h.lags[last] == T - 1, "last lag %d", h.lags[last]);
        CHECK(h.n_raw[last] == 0 && isnan(h.raw[last]), "no pair at k = T - 1: count %lld, value %g (not 0)",
              (long long)h.n_raw[last], h.raw[last]);
        CHECK(h.n_centered[last] == NW && isfinite(h.centered[last]), "centered: one pair per window");
        CHECK(h.n_zero_states == NW, "the zero states are counted");
        int ok = 1;
        for (int i = 0; i < last; i++) ok &= h.n_raw[i] == (int64_t)NW * (T - 1 - h.lags[i]) && isfinite(h.raw[i]);
        CHECK(ok, "every other lag has its pairs, without the zero state");
        /* the summaries: the nearest lag with >= GS_HORIZON_MIN_PAIRS pairs */
        int i = gs_horizons_nearest_enough(&h, h.n_raw, 1500);
        CHECK(i >= 0 && h.n_raw[i] >= GS_HORIZON_MIN_PAIRS && (i == last || h.n_raw[i + 1] < GS_HORIZON_MIN_PAIRS),
              "the far end read at k = %d (%lld pairs)", i >= 0 ? h.lags[i] : -1, i >= 0 ? (long long)h.n_raw[i] : 0LL);
        CHECK(gs_horizons_nearest_enough(&h, h.n_centered, 1500) < last, "the centered end is not read from 12 pairs");
        gs_horizons_free(&h);
    }
    owned_free(&o);
}

int main(void) {
    test_no_pairs();
    test_ar1();
    test_gaps();
    test_stride();
    return test_summary();
}
