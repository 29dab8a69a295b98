/* Geometry on planted data with known answers: states = m + Z diag(sqrt(l)) U^T
 * with Z exactly whitened (column means 0, Z^T Z = (n-1) I) and U a random
 * orthonormal basis, so the sample covariance is exactly U diag(l) U^T and
 * every quantity has a closed form: the spectrum, the component counts for
 * 90% / 99%, stable rank, participation ratio, per-dimension stds and
 * correlations; the mean direction is m. */
#include <math.h>

#include "analyses/state/geometry.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

#define D 64
#define NW 8
#define T 512

static void test_planted(void) {
    const int64_t n = (int64_t)NW * T;
    gs_rng rng = {2024};
    double *U = malloc(sizeof(double) * D * D), *Z = malloc(sizeof(double) * n * D), lam[D], m[D];
    random_orthonormal(U, D, &rng);
    whitened_sample(Z, n, D, &rng);
    for (int i = 0; i < D; i++) lam[i] = 10.0 * pow(0.9, i);
    /* a mean of norm 107 in a random direction, as in the paper */
    double mn = 0;
    for (int j = 0; j < D; j++) { m[j] = gs_rng_normal(&rng); mn += m[j] * m[j]; }
    for (int j = 0; j < D; j++) m[j] *= 107.0 / sqrt(mn);
    owned_states o;
    owned_alloc(&o, NW, T, D);
    for (int64_t r = 0; r < n; r++)
        for (int j = 0; j < D; j++) {
            double v = m[j];
            for (int i = 0; i < D; i++) v += Z[r * D + i] * sqrt(lam[i]) * U[j * D + i];
            o.x[r * D + j] = (float)v;
        }
    gs_geometry g;
    gs_geometry_opts opts;
    gs_geometry_opts_default(&opts);
    opts.block_rows = 100; /* blocks that straddle windows */
    int rc = gs_geometry_run(owned_source(&o), &opts, &g);
    CHECK(rc == 0, "%s", gs_error());
    if (rc != 0) { owned_free(&o); free(U); free(Z); return; }

    /* closed forms */
    double sum = 0, sum2 = 0, cum = 0;
    int n90 = 0, n99 = 0;
    for (int i = 0; i < D; i++) { sum += lam[i]; sum2 += lam[i] * lam[i]; }
    for (int i = 0; i < D; i++) {
        cum += lam[i];
        if (!n90 && cum / sum >= 0.90) n90 = i + 1;
        if (!n99 && cum / sum >= 0.99) n99 = i + 1;
    }
    CHECK(g.n == n && g.n_windows == NW && g.d == D, "counts");
    double emax = 0;
    for (int i = 0; i < D; i++) {
        double e = fabs(g.eigvals[i] - lam[i]) / lam[i];
        if (e > emax) emax = e;
    }
    CHECK(emax < 1e-4, "spectrum rel err %g", emax);
    CHECK(g.n90 == n90 && g.n99 == n99, "components 90%%/99%%: %d/%d, planted %d/%d", g.n90, g.n99, n90, n99);
    CHECK(fabs(g.stable_rank - sum / lam[0]) / (sum / lam[0]) < 1e-4, "stable rank %g vs %g", g.stable_rank,
          sum / lam[0]);
    CHECK(fabs(g.participation_ratio - sum * sum / sum2) / (sum * sum / sum2) < 1e-4, "participation ratio %g vs %g",
          g.participation_ratio, sum * sum / sum2);
    CHECK(fabs(g.cum_explained[D - 1] - 1) < 1e-12, "cumulative ends at 1");
    CHECK(fabs(g.total_var - sum) / sum < 1e-4, "total variance");

    /* mean direction and the top singular vector */
    double c = 0, c2 = 0;
    for (int j = 0; j < D; j++) { c += g.mean[j] * m[j] / 107.0; c2 += g.top_sv[j] * m[j] / 107.0; }
    c /= g.mean_norm;
    CHECK(c > 0.999, "mean direction cosine %.6f", c);
    CHECK(fabs(g.mean_norm - 107) < 1e-3, "||s_bar|| %g", g.mean_norm);
    CHECK(c2 > 0.999 && !g.top_sv_fallback, "top singular vector cosine %.6f (fallback %d)", c2, g.top_sv_fallback);

    /* per-dimension std and correlations from the planted covariance */
    double Sig[D * D];
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            double s = 0;
            for (int i = 0; i < D; i++) s += U[a * D + i] * lam[i] * U[b * D + i];
            Sig[a * D + b] = s;
        }
    double sd_err = 0, cmean = 0, cmax = 0;
    for (int a = 0; a < D; a++) {
        double e = fabs(g.dim_std[a] - sqrt(Sig[a * D + a])) / sqrt(Sig[a * D + a]);
        if (e > sd_err) sd_err = e;
        for (int b = a + 1; b < D; b++) {
            double r = fabs(Sig[a * D + b] / sqrt(Sig[a * D + a] * Sig[b * D + b]));
            cmean += r;
            if (r > cmax) cmax = r;
        }
    }
    cmean /= D * (D - 1) / 2;
    CHECK(sd_err < 1e-4, "per-dim std rel err %g", sd_err);
    CHECK(fabs(g.corr_mean_abs - cmean) < 1e-5 && fabs(g.corr_max_abs - cmax) < 1e-5, "correlations %g/%g vs %g/%g",
          g.corr_mean_abs, g.corr_max_abs, cmean, cmax);
    int sorted = 1;
    for (int j = 1; j < D; j++) sorted &= g.dim_std_sorted[j] <= g.dim_std_sorted[j - 1];
    CHECK(sorted && g.dim_std_sorted[0] == g.dim_std[g.dim_order[0]], "sorted stds");
    CHECK(g.n_dead == 0 && g.n_zero_var == 0, "no dead dims");
    /* the heatmap sample: d < 300, so every coordinate, in order */
    CHECK(g.n_sample == D && g.sample_dims[0] == 0 && g.sample_dims[D - 1] == D - 1, "sample = all coordinates");
    double herr = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            double want = Sig[a * D + b] / sqrt(Sig[a * D + a] * Sig[b * D + b]);
            double e = fabs(g.corr_sample[a * D + b] - want);
            if (e > herr) herr = e;
        }
    CHECK(herr < 1e-5, "heatmap matrix err %g", herr);

    /* norms against a direct computation */
    double nm = 0, nv = 0;
    for (int64_t r = 0; r < n; r++) {
        double s = 0;
        for (int j = 0; j < D; j++) s += (double)o.x[r * D + j] * o.x[r * D + j];
        nm += sqrt(s);
    }
    nm /= n;
    for (int64_t r = 0; r < n; r++) {
        double s = 0;
        for (int j = 0; j < D; j++) s += (double)o.x[r * D + j] * o.x[r * D + j];
        nv += (sqrt(s) - nm) * (sqrt(s) - nm);
    }
    CHECK(fabs(g.norm_mean - nm) < 1e-9 * nm && fabs(g.norm_std - sqrt(nv / (n - 1))) < 1e-7, "norms");
    gs_geometry_free(&g);

    /* the same states through other block sizes: same answers */
    opts.block_rows = 1;
    gs_geometry g1;
    CHECK(gs_geometry_run(owned_source(&o), &opts, &g1) == 0, "%s", gs_error());
    gs_geometry_opts_default(&opts);
    gs_geometry g2;
    CHECK(gs_geometry_run(owned_source(&o), &opts, &g2) == 0, "%s", gs_error());
    double be = 0;
    for (int i = 0; i < D; i++) {
        double e = fabs(g1.eigvals[i] - g2.eigvals[i]) / g2.eigvals[i];
        if (e > be) be = e;
    }
    CHECK(be < 1e-10, "block size changes the spectrum by %g", be);
    gs_geometry_free(&g1);
    gs_geometry_free(&g2);
    owned_free(&o);
    free(U);
    free(Z);
}

/* a constant coordinate and a tiny one: counted, kept out of correlations, no NaN */
static void test_dead_dims(void) {
    owned_states o;
    owned_alloc(&o, 2, 50, 5);
    gs_rng rng = {3};
    for (int64_t r = 0; r < o.s.n; r++) {
        o.x[r * 5 + 0] = (float)gs_rng_normal(&rng);
        o.x[r * 5 + 1] = 4.0f; /* constant */
        o.x[r * 5 + 2] = (float)(2 * gs_rng_normal(&rng));
        o.x[r * 5 + 3] = (float)(1e-5 * gs_rng_normal(&rng)); /* dead, not constant */
        o.x[r * 5 + 4] = (float)gs_rng_normal(&rng);
    }
    gs_geometry g;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == 0, "%s", gs_error());
    CHECK(g.n_zero_var == 1 && g.n_dead == 2, "zero-variance %d, dead %d", g.n_zero_var, g.n_dead);
    int finite = isfinite(g.corr_mean_abs) && isfinite(g.corr_max_abs) && isfinite(g.stable_rank) &&
                 isfinite(g.participation_ratio);
    for (int i = 0; i < g.n_sample * g.n_sample; i++) finite &= isfinite(g.corr_sample[i]);
    CHECK(finite, "no NaN with a constant coordinate");
    CHECK(g.corr_sample[1 * 5 + 1] == 1 && g.corr_sample[1 * 5 + 2] == 0, "constant coordinate in the heatmap");
    CHECK(g.dim_order[4] == 1 && g.dim_order[3] == 3, "sorted order puts the constant last");
    gs_geometry_free(&g);
    owned_free(&o);
}

/* the seeded 300-coordinate sample: fixed by the seed, distinct, sorted */
static void test_sample(void) {
    owned_states o;
    owned_alloc(&o, 1, 20, 400);
    gs_rng rng = {8};
    for (int64_t i = 0; i < o.s.n * 400; i++) o.x[i] = (float)gs_rng_normal(&rng);
    gs_geometry_opts opts;
    gs_geometry_opts_default(&opts);
    opts.spectrum = 0;
    gs_geometry a, b, c;
    CHECK(gs_geometry_run(owned_source(&o), &opts, &a) == 0, "%s", gs_error());
    CHECK(gs_geometry_run(owned_source(&o), &opts, &b) == 0, "%s", gs_error());
    opts.seed = 2;
    CHECK(gs_geometry_run(owned_source(&o), &opts, &c) == 0, "%s", gs_error());
    CHECK(a.n_sample == 300 && !memcmp(a.sample_dims, b.sample_dims, 300 * sizeof(int)), "same seed, same sample");
    CHECK(memcmp(a.sample_dims, c.sample_dims, 300 * sizeof(int)) != 0, "other seed, other sample");
    int ok = 1;
    for (int i = 1; i < 300; i++) ok &= a.sample_dims[i] > a.sample_dims[i - 1];
    CHECK(ok && a.sample_dims[299] < 400, "sorted, distinct, in range");
    CHECK(!a.has_spectrum && a.eigvals == NULL && a.participation_ratio > 0, "spectrum skipped on request");
    gs_geometry_free(&a);
    gs_geometry_free(&b);
    gs_geometry_free(&c);
    owned_free(&o);
}

int main(void) {
    test_planted();
    test_dead_dims();
    test_sample();
    return test_summary();
}
