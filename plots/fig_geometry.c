/* state_geometry: the paper's three panels (section 1 of docs/analyses.md)
 * from the `geometry` analysis: (a) per-coordinate std sorted, (b) the
 * correlation heatmap of the sampled coordinates, (c) cumulative explained
 * variance with the 90% and 99% crossings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "store/paper_figures.h"
#include "analyses/state/geometry_keys.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int fig_geometry(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t aid = gp_analysis(c->st, c->run, GS_AN_GEOMETRY);
    if (aid <= 0) return 1;
    const char *name = "state_geometry";
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->sources, sizeof fig->sources, "%s", gs_analysis_stored_name(GS_AN_GEOMETRY));
    snprintf(fig->title, sizeof fig->title, "State geometry: per-coordinate spread, correlations, PCA spectrum");

    double *sx = NULL, *sy = NULL, *cx = NULL, *cy = NULL, *ex = NULL, *ey = NULL, *corr = NULL, *dims = NULL;
    int rc = -1;
    gp_file a = {0};
    int64_t ns = gp_series(c->st, aid, GS_KEY_DIM_STD_SORTED, &sx, &sy);
    int64_t nc = gp_series(c->st, aid, GS_KEY_CUMULATIVE_EXPLAINED, &cx, &cy);
    int64_t ne = gp_series(c->st, aid, GS_KEY_EIGENVALUES, &ex, &ey);
    int64_t ncorr = gp_vector(c->st, aid, GS_KEY_CORR_SAMPLE, &corr);
    int64_t ndims = gp_vector(c->st, aid, GS_KEY_CORR_SAMPLE_DIMS, &dims);
    if (ns < 0 || nc < 0 || ne < 0 || ncorr < 0 || ndims < 0) goto done;
    int m = ndims > 0 && ncorr == ndims * ndims ? (int)ndims : 0;
    /* a sample of the wrong size is there but unusable: say so, not "not in the store" */
    char corr_msg[300] = "not in the store (geometry: corr_sample)";
    if (!m && (ncorr > 0 || ndims > 0)) {
        if (!ndims)
            snprintf(corr_msg, sizeof corr_msg, "corr_sample holds %lld values but corr_sample_dims is not in the "
                     "store (geometry)", (long long)ncorr);
        else if (!ncorr)
            snprintf(corr_msg, sizeof corr_msg, "corr_sample_dims names %lld coordinates but corr_sample is not in "
                     "the store (geometry)", (long long)ndims);
        else
            snprintf(corr_msg, sizeof corr_msg, "corr_sample holds %lld values, not %lld x %lld = %lld for the %lld "
                     "coordinates of corr_sample_dims (geometry)", (long long)ncorr, (long long)ndims,
                     (long long)ndims, (long long)(ndims * ndims), (long long)ndims);
        snprintf(fig->problem, sizeof fig->problem, "panel (b) left empty: %s", corr_msg);
    }
    const double d = gp_scalar(c->st, aid, GS_KEY_D), n_states = gp_scalar(c->st, aid, GS_KEY_N_STATES);
    const double n90 = gp_scalar(c->st, aid, GS_KEY_COMPONENTS_90), n99 = gp_scalar(c->st, aid, GS_KEY_COMPONENTS_99);
    const double median = gp_scalar(c->st, aid, GS_KEY_MEDIAN_STD);
    const double cmean = gp_scalar(c->st, aid, GS_KEY_CORR_MEAN_ABS), cmax = gp_scalar(c->st, aid, GS_KEY_CORR_MAX_ABS);
    char b1[32], b2[32], b3[32];

    /* ---- data ---- */
    if (ns > 0) {
        const double *cols[] = {sx, sy};
        if (gp_write_columns(c, "state_geometry-std.dat",
                             "per-coordinate std over the states, sorted descending (geometry: dim_std_sorted)",
                             "rank std", 2, ns, cols) != 0)
            goto done;
    }
    if (nc > 0) {
        double *ev = calloc((size_t)nc, sizeof *ev), *pct = calloc((size_t)nc, sizeof *pct);
        if (!ev || !pct) { free(ev); free(pct); gs_fail("out of memory"); goto done; }
        for (int64_t i = 0; i < nc; i++) { ev[i] = i < ne ? ey[i] : NAN; pct[i] = 100.0 * cy[i]; }
        const double *cols[] = {cx, cy, pct, ev};
        int w = gp_write_columns(c, "state_geometry-pca.dat",
                                 "PCA of the centered covariance (geometry: cumulative_explained, eigenvalues)",
                                 "components cumulative_fraction cumulative_percent eigenvalue", 4, nc, cols);
        free(ev);
        free(pct);
        if (w != 0) goto done;
        double lv[2] = {90, 99}, kv[2] = {n90, n99};
        const double *mc[] = {lv, kv};
        if (gp_write_columns(c, "state_geometry-pca_marks.dat",
                             "smallest number of components reaching 90% and 99% (components_90, components_99)",
                             "percent components", 2, 2, mc) != 0)
            goto done;
    }
    double cb = 1;
    if (m > 0) {
        if (gp_file_open(&a, c->dir, "state_geometry-corr.dat") != 0) goto done;
        fprintf(a.f,
                "# Pearson correlations of %d sampled coordinates (geometry: corr_sample); row i, column j\n"
                "# %s, %s\n# sampled coordinates (corr_sample_dims), in row order:\n#",
                m, c->run_label, c->store_name);
        for (int i = 0; i < m; i++) fprintf(a.f, " %.0f", dims[i]);
        fputc('\n', a.f);
        /* |r| off the diagonal, for the colour range */
        double *off = malloc((size_t)m * (size_t)m * sizeof *off);
        int64_t noff = 0;
        if (!off) { gs_fail("out of memory"); goto done; }
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < m; j++) {
                double v = corr[(int64_t)i * m + j];
                if (isfinite(v)) fprintf(a.f, j ? " %.9g" : "%.9g", v);
                else fprintf(a.f, j ? " NaN" : "NaN");
                if (i != j && isfinite(v)) off[noff++] = fabs(v);
            }
            fputc('\n', a.f);
        }
        if (gp_file_commit(&a) != 0) { free(off); goto done; }
        /* the colour range is the 99th percentile of the off-diagonal |r| rounded up to 1, 2 or 5 x 10^k:
         * at the paper's mean |r| of 0.03 a range set by the largest entry (0.61) would show a blank
         * square; the rare larger entries and the diagonal saturate, and the caption says so */
        qsort(off, (size_t)noff, sizeof *off, cmp_double);
        double q = noff ? off[(int64_t)floor(0.99 * (double)(noff - 1))] : 0;
        free(off);
        cb = q > 0 ? gp_nice_step(0, q, 1) : 1;
        if (cb > 1) cb = 1;
    }

    /* ---- script ---- */
    if (gp_file_open(&a, c->dir, "state_geometry.gp") != 0) goto done;
    FILE *f = a.f;
    gp_preamble(f, c, name, "the geometry of the state, three panels as in the paper",
                "state_geometry-std.dat, state_geometry-corr.dat, state_geometry-pca.dat, state_geometry-pca_marks.dat");
    fprintf(f, "N_STATES = %.0f; D = %.0f\n", isfinite(n_states) ? n_states : 0, isfinite(d) ? d : (double)ns);
    fprintf(f, "set multiplot title sprintf('State geometry · %%s · %%d states, d = %%d', RUN, N_STATES, D) "
               "font TITLE_FONT\n");

    /* (a) */
    gp_panel(f, "(a) per-coordinate std, sorted: top left", 0.0, 0.47, 0.5, 0.47);
    if (ns > 0) {
        double lo = 0, hi = 0;
        gp_minmax(sy, ns, &lo, &hi);
        if (isfinite(median) && median > hi) hi = median;
        lo = 0;
        gp_pad(&lo, &hi, 0);
        lo = 0;
        fprintf(f,
                "set title '(a) per-coordinate std, sorted'\n"
                "set xlabel 'coordinate rank (by std, descending)'\n"
                "set ylabel 'std over states (state units)'\n"
                "set xrange [1:%lld]\nset yrange [%.17g:%.17g]\n"
                "set key top right\n",
                (long long)(ns > 1 ? ns : 2), lo, hi);
        if (isfinite(median))
            fprintf(f, "plot 'state_geometry-std.dat' using 1:2 with lines lw 2.5 lc rgb C_BLUE title 'std of each coordinate', \\\n"
                       "     %.17g with lines dt 2 lw 2 lc rgb C_GREY title sprintf('median %%.3g', %.17g)\n",
                    median, median);
        else
            fprintf(f, "plot 'state_geometry-std.dat' using 1:2 with lines lw 2.5 lc rgb C_BLUE title 'std of each coordinate'\n");
    } else {
        gp_empty_panel(f, "(a) per-coordinate std, sorted", "not in the store (geometry: dim_std_sorted)");
    }

    /* (c) */
    gp_panel(f, "(c) cumulative explained variance: bottom left", 0.0, 0.0, 0.5, 0.47);
    if (nc > 0) {
        const double xmax = (double)(nc > 1 ? nc : 2);
        fprintf(f,
                "set title \"(c) PCA: cumulative explained variance\\n90%% at %s, 99%% at %s components\"\n"
                "set xlabel 'number of principal components'\n"
                "set ylabel 'variance explained (%%)'\n"
                "set xrange [0:%.17g]\nset yrange [0:105]\n"
                "set key bottom right\n",
                gp_num(b1, sizeof b1, n90), gp_num(b2, sizeof b2, n99), xmax);
        const double lv[2] = {90, 99}, kv[2] = {n90, n99};
        for (int i = 0; i < 2; i++) {
            if (!isfinite(kv[i])) continue;
            fprintf(f,
                    "set arrow %d from graph 0, first %g to first %.17g, first %g nohead dt 2 lw 1.5 lc rgb C_GREY\n"
                    "set arrow %d from first %.17g, graph 0 to first %.17g, first %g nohead dt 2 lw 1.5 lc rgb C_GREY\n",
                    2 * i + 1, lv[i], kv[i], lv[i], 2 * i + 2, kv[i], kv[i], lv[i]);
        }
        fprintf(f, "plot 'state_geometry-pca.dat' using 1:3 with lines lw 2.5 lc rgb C_BLUE title 'cumulative share'");
        if (isfinite(n90) || isfinite(n99))
            fprintf(f, ", \\\n     'state_geometry-pca_marks.dat' using 2:1 with points pt 7 ps 1.6 lc rgb C_VERMILION "
                       "title '90%% and 99%% crossings'");
        fprintf(f, "\n");
    } else {
        gp_empty_panel(f, "(c) PCA: cumulative explained variance", "no spectrum in the store (geometry: cumulative_explained)");
    }

    /* (b) */
    char comment[160];
    snprintf(comment, sizeof comment,
             "(b) correlation heatmap: right (colour range +-%.2g, the 99th percentile of |r| off the diagonal: "
             "larger entries and the diagonal saturate)", cb);
    gp_panel(f, comment, 0.5, 0.0, 0.5, 0.94);
    fprintf(f, "set size square 0.5, 0.94\n");
    if (m > 0) {
        snprintf(b3, sizeof b3, "%d", m);
        fprintf(f,
                "set title \"(b) correlations of %s sampled coordinates\\nmean |r| %s, max |r| %s (off-diagonal)\"\n"
                "set xlabel 'sampled coordinate (sample index)'\n"
                "set ylabel 'sampled coordinate (sample index)'\n"
                "set xrange [-0.5:%d-0.5]; set yrange [%d-0.5:-0.5]\n"
                "set cbrange [-%g:%g]\n"
                "set cblabel 'Pearson r (clipped to the range)'\n"
                "set cbtics %g\n"
                "set palette defined (-1 '#2166ac', -0.5 '#92c5de', 0 '#f7f7f7', 0.5 '#f4a582', 1 '#b2182b')\n"
                "set colorbox\n"
                "unset grid\nunset key\n"
                "plot 'state_geometry-corr.dat' matrix with image pixels notitle\n",
                b3, gp_num(b1, sizeof b1, cmean), gp_num(b2, sizeof b2, cmax), m, m, cb, cb, cb / 2);
    } else {
        gp_empty_panel(f, "(b) correlation heatmap", corr_msg);
    }
    fprintf(f, "\nunset multiplot\n");
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;

    snprintf(fig->caption, sizeof fig->caption,
             "State geometry of %s (%s states, d = %s). (a) The standard deviation of each coordinate over the "
             "states, sorted descending; dead coordinates (std below 1e-3 x the median): %s. (b) Pearson "
             "correlations between %d randomly sampled coordinates (colour range +-%.2g, the 99th percentile of the "
             "off-diagonal |r|, so rarer larger values saturate; mean off-diagonal |r| %s, max %s). (c) Cumulative share of variance explained by the principal components of the centered "
             "covariance; 90%% is reached at %s and 99%% at %s components (paper: %s).",
             c->run_label, gp_num(b1, sizeof b1, n_states), gp_num(b2, sizeof b2, d),
             gp_num(b3, sizeof b3, gp_scalar(c->st, aid, GS_KEY_DEAD_DIMS)), m, cb,
             gp_num((char[32]){0}, 32, cmean), gp_num((char[32]){0}, 32, cmax), gp_num((char[32]){0}, 32, n90),
             gp_num((char[32]){0}, 32, n99), gs_paper(GS_PAPER_PCA)->paper);
    if (fig->problem[0]) {
        size_t k = strlen(fig->caption);
        snprintf(fig->caption + k, sizeof fig->caption - k, " Not drawn: %s.", fig->problem);
    }
    rc = 0;
done:
    gp_file_abort(&a);
    free(sx); free(sy); free(cx); free(cy); free(ex); free(ey); free(corr); free(dims);
    return rc;
}
