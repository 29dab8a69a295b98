#include "analyses/state/geometry.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/linalg.h"
#include "analyses/math/stats.h"
#include "base/error.h"

void gs_geometry_opts_default(gs_geometry_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->n_sample = GS_GEOM_SAMPLE;
    o->spectrum = 1;
    o->block_rows = 512;
}

void gs_geometry_free(gs_geometry *g) {
    free(g->mean); free(g->dim_std); free(g->dim_std_sorted); free(g->dim_order);
    free(g->sample_dims); free(g->corr_sample); free(g->eigvals); free(g->cum_explained); free(g->top_sv); free(g->pc1);
    memset(g, 0, sizeof *g);
}

typedef struct { double v; int i; } std_entry;
static int cmp_std_desc(const void *a, const void *b) {
    const std_entry *x = a, *y = b;
    if (x->v != y->v) return (x->v < y->v) - (x->v > y->v);
    return (x->i > y->i) - (x->i < y->i);
}
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }
static int cmp_dbl(const void *a, const void *b) { return (*(const double *)a > *(const double *)b) - (*(const double *)a < *(const double *)b); }

int gs_geometry_accumulate(gs_state_source *src, const gs_geometry_opts *opts, gs_geometry_sums *sums) {
    gs_geometry_opts dflt;
    if (!opts) { gs_geometry_opts_default(&dflt); opts = &dflt; }
    memset(sums, 0, sizeof *sums);
    const int d = src ? src->d : 0;
    if (gs_cov_acc_init(&sums->acc, d, opts->block_rows) != 0) return -1;
    gs_window_reader *wr = gs_window_reader_new(src);
    if (!wr) { gs_cov_acc_free(&sums->acc); return -1; }

    /* ---- the one pass: norms (Welford), windows, mean and covariance ---- */
    double nm = 0, nM2 = 0, sq = 0;
    int64_t n = 0;
    for (;;) {
        gs_window cur;
        int64_t k = gs_window_reader_read(wr, &cur);
        if (k < 0) goto fail;
        if (k == 0) break;
        sums->n_windows++;
        for (int64_t i = 0; i < k; i++) {
            double s2 = 0;
            const float *r = cur.rows + i * d;
            for (int j = 0; j < d; j++) s2 += (double)r[j] * r[j];
            double x = sqrt(s2);
            n++;
            double dl = x - nm;
            nm += dl / (double)n;
            nM2 += dl * (x - nm);
            sq += s2;
        }
        if (gs_cov_acc_add(&sums->acc, cur.rows, k) != 0) goto fail;
    }
    gs_window_reader_free(wr);
    sums->n = n;
    sums->norm_mean = nm;
    sums->norm_m2 = nM2;
    sums->sq = sq;
    return 0;
fail:
    gs_window_reader_free(wr);
    gs_cov_acc_free(&sums->acc);
    return -1;
}

int gs_geometry_run(gs_state_source *src, const gs_geometry_opts *opts, gs_geometry *g) {
    gs_geometry_sums sums;
    memset(g, 0, sizeof *g);
    if (gs_geometry_accumulate(src, opts, &sums) != 0) return -1;
    return gs_geometry_finish(&sums, opts, g);
}

int gs_geometry_finish(gs_geometry_sums *sums, const gs_geometry_opts *opts, gs_geometry *g) {
    gs_geometry_opts dflt;
    if (!opts) { gs_geometry_opts_default(&dflt); opts = &dflt; }
    memset(g, 0, sizeof *g);
    gs_cov_acc acc = sums->acc; /* owned from here on */
    const int d = acc.d;
    const int64_t n = sums->n;
    const double nm = sums->norm_mean, nM2 = sums->norm_m2, sq = sums->sq;
    g->d = d;
    g->n_windows = sums->n_windows;
    if (n < 2) {
        gs_fail("geometry needs at least 2 states (got %lld): record more tokens or lower --skip-positions", (long long)n);
        goto fail;
    }
    g->n = n;
    g->norm_mean = nm;
    g->norm_std = sqrt(nM2 / (double)(n - 1));
    g->mean_sq_norm = sq / (double)n;

    g->mean = malloc((size_t)d * sizeof *g->mean);
    g->dim_std = malloc((size_t)d * sizeof(double));
    g->dim_std_sorted = malloc((size_t)d * sizeof(double));
    g->dim_order = malloc((size_t)d * sizeof(int));
    g->top_sv = malloc((size_t)d * sizeof(double));
    g->pc1 = malloc((size_t)d * sizeof(double));
    if (!g->mean || !g->dim_std || !g->dim_std_sorted || !g->dim_order || !g->top_sv) { gs_fail("out of memory"); goto fail; }
    double *C = acc.S; /* finished in place: one d x d matrix */
    if (gs_cov_acc_finish(&acc, g->mean, C) != 0) goto fail;
    g->mean_norm = cblas_dnrm2(d, g->mean, 1);

    /* ---- per-coordinate stds, dead and constant coordinates ---- */
    double tr = 0, maxsd = 0;
    for (int j = 0; j < d; j++) {
        double v = C[(int64_t)j * d + j];
        g->dim_std[j] = v > 0 ? sqrt(v) : 0.0;
        tr += v > 0 ? v : 0.0;
        if (g->dim_std[j] > maxsd) maxsd = g->dim_std[j];
    }
    if (!(tr > 1e-12 * g->mean_sq_norm) || maxsd == 0) {
        gs_fail("all %lld states are identical (zero variance in every coordinate): the spectrum, correlations and "
                "stable rank are undefined; check that the recording captured the states (not a constant)",
                (long long)n);
        goto fail;
    }
    g->total_var = tr;
    {
        std_entry *e = malloc((size_t)d * sizeof *e);
        if (!e) { gs_fail("out of memory"); goto fail; }
        for (int j = 0; j < d; j++) { e[j].v = g->dim_std[j]; e[j].i = j; }
        qsort(e, (size_t)d, sizeof *e, cmp_std_desc);
        for (int j = 0; j < d; j++) { g->dim_order[j] = e[j].i; g->dim_std_sorted[j] = e[j].v; }
        free(e);
    }
    {
        double *tmp = malloc((size_t)d * sizeof *tmp);
        if (!tmp) { gs_fail("out of memory"); goto fail; }
        memcpy(tmp, g->dim_std, (size_t)d * sizeof *tmp);
        qsort(tmp, (size_t)d, sizeof *tmp, cmp_dbl);
        g->median_std = d % 2 ? tmp[d / 2] : 0.5 * (tmp[d / 2 - 1] + tmp[d / 2]);
        free(tmp);
    }
    const double zero_sd = 1e-12 * maxsd;
    for (int j = 0; j < d; j++) {
        if (g->dim_std[j] < 1e-3 * g->median_std) g->n_dead++;
        if (g->dim_std[j] <= zero_sd) g->n_zero_var++;
    }

    /* ---- Pearson correlations over the non-constant coordinates ---- */
    {
        double sum = 0;
        int64_t pairs = 0;
        g->corr_max_i = g->corr_max_j = -1;
        for (int i = 0; i < d; i++) {
            if (g->dim_std[i] <= zero_sd) continue;
            const double *Ci = C + (int64_t)i * d;
            for (int j = i + 1; j < d; j++) {
                if (g->dim_std[j] <= zero_sd) continue;
                double r = fabs(Ci[j] / (g->dim_std[i] * g->dim_std[j]));
                if (r > 1) r = 1;
                sum += r;
                pairs++;
                if (r > g->corr_max_abs) { g->corr_max_abs = r; g->corr_max_i = i; g->corr_max_j = j; }
            }
        }
        g->corr_mean_abs = pairs ? sum / (double)pairs : 0.0;
    }
    {
        int ns = opts->n_sample > 0 ? opts->n_sample : GS_GEOM_SAMPLE;
        if (ns > d) ns = d;
        g->n_sample = ns;
        g->sample_dims = malloc((size_t)ns * sizeof(int));
        g->corr_sample = malloc((size_t)ns * ns * sizeof(double));
        int *perm = malloc((size_t)d * sizeof *perm);
        if (!g->sample_dims || !g->corr_sample || !perm) { free(perm); gs_fail("out of memory"); goto fail; }
        for (int j = 0; j < d; j++) perm[j] = j;
        gs_rng rng = {opts->seed};
        for (int i = 0; i < ns; i++) { /* partial Fisher-Yates */
            int k = i + (int)(gs_rng_uniform(&rng) * (d - i));
            int t = perm[i]; perm[i] = perm[k]; perm[k] = t;
        }
        memcpy(g->sample_dims, perm, (size_t)ns * sizeof(int));
        free(perm);
        qsort(g->sample_dims, (size_t)ns, sizeof(int), cmp_int);
        for (int a = 0; a < ns; a++) {
            int i = g->sample_dims[a];
            for (int b = 0; b < ns; b++) {
                int j = g->sample_dims[b];
                double r;
                if (i == j) r = 1.0;
                else if (g->dim_std[i] <= zero_sd || g->dim_std[j] <= zero_sd) r = 0.0;
                else {
                    r = C[(int64_t)i * d + j] / (g->dim_std[i] * g->dim_std[j]);
                    if (r > 1) r = 1;
                    if (r < -1) r = -1;
                }
                g->corr_sample[(int64_t)a * ns + b] = r;
            }
        }
    }

    /* participation ratio from the trace and the Frobenius norm: exact for
     * (sum l)^2 / sum l^2 and independent of the eigensolver */
    {
        double fro = 0;
        for (int64_t i = 0; i < (int64_t)d * d; i++) fro += C[i] * C[i];
        g->participation_ratio = tr * tr / fro;
    }

    /* ---- top right singular vector of the uncentered states ----
     * S^T S / n = C (n-1)/n + s_bar s_bar^T; scaled by n/(n-1) it is C + u u^T
     * with u = s_bar sqrt(n/(n-1)): same eigenvector. */
    {
        double *u = malloc((size_t)d * sizeof *u);
        if (!u) { gs_fail("out of memory"); goto fail; }
        double f = sqrt((double)n / (double)(n - 1));
        for (int j = 0; j < d; j++) u[j] = g->mean[j] * f;
        double val;
        int rc = gs_top_eigvec(C, u, g->mean_norm > 0 ? u : NULL, d, g->top_sv, &val, &g->top_sv_fallback);
        free(u);
        if (rc != 0) goto fail;
        g->top_sv_sigma2 = val * (double)(n - 1) / (double)n;
        if (cblas_ddot(d, g->top_sv, 1, g->mean, 1) < 0) cblas_dscal(d, -1.0, g->top_sv, 1);
    }
    /* ---- the centered PC1 (before the spectrum destroys C) ---- */
    if (!g->pc1) { gs_fail("out of memory"); goto fail; }
    if (gs_top_eigvec(C, NULL, g->mean_norm > 0 ? g->mean : NULL, d, g->pc1, &g->pc1_lambda, NULL) != 0) goto fail;
    if (cblas_ddot(d, g->pc1, 1, g->mean, 1) < 0) cblas_dscal(d, -1.0, g->pc1, 1);

    /* ---- the spectrum (destroys C) ---- */
    if (opts->spectrum) {
        g->eigvals = malloc((size_t)d * sizeof(double));
        g->cum_explained = malloc((size_t)d * sizeof(double));
        if (!g->eigvals || !g->cum_explained) { gs_fail("out of memory"); goto fail; }
        if (gs_sym_eigvals(C, d, g->eigvals) != 0) goto fail;
        double sum = 0;
        for (int j = 0; j < d; j++) {
            if (g->eigvals[j] < 0) g->eigvals[j] = 0; /* round-off below zero */
            sum += g->eigvals[j];
        }
        double run = 0;
        g->n90 = g->n99 = d;
        for (int j = 0; j < d; j++) {
            run += g->eigvals[j];
            g->cum_explained[j] = run / sum;
        }
        for (int j = d - 1; j >= 0; j--) {
            if (g->cum_explained[j] >= 0.90) g->n90 = j + 1;
            if (g->cum_explained[j] >= 0.99) g->n99 = j + 1;
        }
        g->stable_rank = sum / g->eigvals[0];
        g->has_spectrum = 1;
    }
    gs_cov_acc_free(&acc);
    return 0;
fail:
    gs_cov_acc_free(&acc);
    gs_geometry_free(g);
    return -1;
}
