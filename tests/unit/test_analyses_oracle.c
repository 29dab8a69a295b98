/* External oracle: the same states through numpy (tests/analyses/oracle.py,
 * run with $GPNSCOPE_PYTHON) give the same spectrum, stds, correlations,
 * norms, stable rank, participation ratio and lag curves to 1e-6 relative.
 * The states have a large common offset, correlated coordinates, slow
 * dynamics, a window with gaps and a zero state. Skipped (77) without numpy. */
#include <math.h>
#include <stdio.h>

#include "analyses/state/geometry.h"
#include "analyses/state/horizons.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

enum { D = 40 };

static int write_file(const char *dir, const char *name, const void *p, size_t bytes) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, bytes, f);
    fclose(f);
    return w == bytes ? 0 : -1;
}

static double *read_f64(const char *dir, const char *name, size_t n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    double *x = malloc(n * sizeof *x);
    size_t r = fread(x, sizeof *x, n, f);
    fclose(f);
    if (r != n) { free(x); return NULL; }
    return x;
}

/* largest |a - b| / max(|b|, floor) */
static double cmp(const double *a, const double *b, size_t n, double floor) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue; /* undefined on both sides (a lag without pairs) */
        double den = fabs(b[i]) > floor ? fabs(b[i]) : floor;
        double e = fabs(a[i] - b[i]) / den;
        if (!(e <= m)) m = e; /* NaN propagates as a failure */
    }
    return m;
}

int main(void) {
    const char *py = test_numpy_python(), *srcdir = getenv("GPNSCOPE_SOURCE");
    if (!py) return test_skip(TEST_NO_NUMPY);
    char cmd[8600];

    /* three windows: 300 contiguous, 250 with gaps (and a zero state), 200 */
    const int lens[3] = {300, 250, 200};
    const int64_t n = 750;
    owned_states o;
    owned_alloc(&o, 1, (int)n, D);
    gs_rng rng = {4242};
    double mix[D][D], z[D], m[D];
    for (int a = 0; a < D; a++) {
        m[a] = 20 + 5 * gs_rng_normal(&rng);
        for (int b = 0; b < D; b++) mix[a][b] = gs_rng_normal(&rng) * (b < 8 ? 2.0 : 0.5) * (a == b ? 3 : 1);
    }
    int64_t r = 0;
    for (int w = 0; w < 3; w++) {
        int32_t p = 0;
        for (int a = 0; a < D; a++) z[a] = gs_rng_normal(&rng);
        for (int t = 0; t < lens[w]; t++, r++) {
            for (int a = 0; a < D; a++) z[a] = 0.8 * z[a] + 0.6 * gs_rng_normal(&rng);
            o.window[r] = 10 * (3 - w);
            o.pos[r] = p;
            p += (w == 1 && t % 3 == 2) ? 2 : 1;
            for (int a = 0; a < D; a++) {
                double v = m[a];
                for (int b = 0; b < D; b++) v += mix[a][b] * z[b];
                o.x[r * D + a] = (float)v;
            }
        }
    }
    for (int a = 0; a < D; a++) o.x[(300 + 17) * D + a] = 0.0f;

    gs_geometry g;
    gs_horizons h;
    int rc = gs_geometry_run(owned_source(&o), NULL, &g);
    CHECK(rc == 0, "%s", gs_error());
    rc |= gs_horizons_run(owned_source(&o), NULL, &h);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) return test_summary();

    const char *dir = scratch_dir("test_analyses_oracle");
    char meta[64];
    snprintf(meta, sizeof meta, "%lld %d\n", (long long)n, D);
    int wr = write_file(dir, "meta.txt", meta, strlen(meta));
    wr |= write_file(dir, "states.f32", o.x, sizeof(float) * n * D);
    wr |= write_file(dir, "window.i64", o.window, sizeof(int64_t) * n);
    wr |= write_file(dir, "pos.i32", o.pos, sizeof(int32_t) * n);
    wr |= write_file(dir, "lags.i32", h.lags, sizeof(int) * h.n_lags);
    wr |= write_file(dir, "sample.i32", g.sample_dims, sizeof(int) * g.n_sample);
    CHECK(wr == 0, "writing the oracle's input in %s", dir);
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/analyses/oracle.py' '%s'", py, srcdir ? srcdir : ".", dir);
    int prc = system(cmd);
    CHECK(prc == 0, "oracle script failed: %s", cmd);
    if (prc != 0) return test_summary();

    double *mean = read_f64(dir, "mean", D), *sd = read_f64(dir, "std", D), *eig = read_f64(dir, "eig", D);
    double *corr = read_f64(dir, "corr", 2), *sc = read_f64(dir, "sample_corr", (size_t)g.n_sample * g.n_sample);
    double *norms = read_f64(dir, "norms", 2), *ratios = read_f64(dir, "ratios", 2);
    double *raw = read_f64(dir, "raw", h.n_lags), *cen = read_f64(dir, "centered", h.n_lags);
    int64_t *np_ = (int64_t *)read_f64(dir, "npairs.i64", 2 * h.n_lags);
    CHECK(mean && sd && eig && corr && sc && norms && ratios && raw && cen && np_, "oracle outputs present");
    if (mean && sd && eig && corr && sc && norms && ratios && raw && cen && np_) {
        double e;
        CHECK((e = cmp(g.mean, mean, D, 1e-3)) < 1e-6, "mean: %g", e);
        CHECK((e = cmp(g.dim_std, sd, D, 1e-3)) < 1e-6, "per-dim std: %g", e);
        CHECK((e = cmp(g.eigvals, eig, D, 1e-6 * eig[0])) < 1e-6, "spectrum: %g (smallest %g, largest %g)", e,
              eig[D - 1], eig[0]);
        double mc[2] = {g.corr_mean_abs, g.corr_max_abs};
        CHECK((e = cmp(mc, corr, 2, 1e-3)) < 1e-6, "correlation mean/max: %g", e);
        CHECK((e = cmp(g.corr_sample, sc, (size_t)g.n_sample * g.n_sample, 1e-2)) < 1e-6, "correlation sample: %g", e);
        double nm[2] = {g.norm_mean, g.norm_std};
        CHECK((e = cmp(nm, norms, 2, 1e-3)) < 1e-6, "norms: %g", e);
        double rr[2] = {g.stable_rank, g.participation_ratio};
        CHECK((e = cmp(rr, ratios, 2, 1e-3)) < 1e-6, "stable rank / participation ratio: %g", e);
        CHECK((e = cmp(h.raw, raw, h.n_lags, 1e-2)) < 1e-6, "raw lag curve: %g", e);
        CHECK((e = cmp(h.centered, cen, h.n_lags, 1e-2)) < 1e-6, "centered lag curve: %g", e);
        int same = 1;
        for (int i = 0; i < h.n_lags; i++) same &= h.n_raw[i] == np_[i] && h.n_centered[i] == np_[h.n_lags + i];
        CHECK(same, "pair counts");
        CHECK(h.n_zero_states == 1, "the zero state is left out of the raw curve");
    }
    free(mean); free(sd); free(eig); free(corr); free(sc); free(norms); free(ratios); free(raw); free(cen); free(np_);
    gs_geometry_free(&g);
    gs_horizons_free(&h);
    owned_free(&o);
    return test_summary();
}
