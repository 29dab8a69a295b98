/* plots/automaton_plots.h: three panels side by side, tree level on x. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "plots/automaton_plots.h"
#include "plots/gp.h"
#include "store/automaton.h"

#define N_COLS 8

/* The level cells of one regime as columns: level, k-means purity and ARI,
 * the self-chosen clustering's purity and ARI, the majority share, the
 * elements present, the clusters the silhouette chose. The number of rows,
 * or -1. */
static int write_regime(const plot_ctx *c, const store_automaton_cell *cells, int n, int in, const char *file) {
    double *col[N_COLS];
    int rc = 0, m = 0;
    for (int j = 0; j < N_COLS; j++)
        if (!(col[j] = malloc((size_t)(n ? n : 1) * sizeof **col))) rc = gs_fail("out of memory");
    for (int i = 0; !rc && i < n; i++) {
        const store_automaton_cell *e = &cells[i];
        if (e->grouping != 0 || e->in_distribution != in) continue;
        const double v[N_COLS] = {e->bucket,   e->kmeans_purity, e->kmeans_ari,  e->auto_purity,
                                  e->auto_ari, e->majority,      e->n_elements, e->auto_k};
        for (int j = 0; j < N_COLS; j++) col[j][m] = v[j];
        m++;
    }
    if (!rc)
        rc = gp_write_columns(c, file, in ? "tree levels, segments in distribution" : "tree levels, segments out of distribution",
                              "level kmeans_purity kmeans_ari auto_purity auto_ari majority elements auto_k", N_COLS, m,
                              (const double *const *)col);
    for (int j = 0; j < N_COLS; j++) free(col[j]);
    return rc ? -1 : m;
}

/* One panel's plot command: for each regime that has cells (gnuplot warns
 * of a file with no points), column A as k-means' line and column B (if
 * any) as the self-chosen clustering's, dashed; then EXTRA. */
static void plot_lines(FILE *f, const int have[2], int a, int b, const char *what_a, const char *what_b, const char *extra) {
    const char *sep = "plot ";
    for (int in = 1; in >= 0; in--) {
        if (!have[in]) continue;
        const char *file = in ? "automaton-in.dat" : "automaton-out.dat", *colour = in ? "C_BLUE" : "C_ORANGE";
        fprintf(f, "%s'%s' using 1:%d with linespoints lw 2 pt 7 lc rgb %s title '%s, %s'", sep, file, a, colour, what_a,
                in ? "in" : "out");
        sep = ", \\\n     ";
        if (b) fprintf(f, "%s'%s' using 1:%d with linespoints lw 2 dt 2 pt 6 lc rgb %s title '%s, %s'", sep, file, b, colour,
                       what_b, in ? "in" : "out");
    }
    fprintf(f, "%s%s\n", extra && *extra ? sep : "", extra ? extra : "");
}

int gs_plot_automaton(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    store_automaton_experiment e;
    store_automaton_cell *cells = NULL;
    int n = store_get_automaton(st, &experiment, &e, &cells);
    if (n < 0) return -1;
    if (gs_mkdir_p(dir)) { free(cells); return -1; }
    int top = 0;
    for (int i = 0; i < n; i++)
        if (cells[i].grouping == 0 && cells[i].bucket > top) top = cells[i].bucket;
    plot_ctx c;
    gs_plot_opts o;
    gp_experiment_context(&c, &o, st, dir, "automaton", experiment, e.model_path);
    int have[2] = {write_regime(&c, cells, n, 0, "automaton-out.dat"), write_regime(&c, cells, n, 1, "automaton-in.dat")};
    free(cells);
    if (have[0] < 0 || have[1] < 0) return -1;
    if (!have[0] && !have[1]) return gs_fail("automaton experiment %lld has no tree-level cells to draw", (long long)experiment);
    gp_file f = {0};
    if (gp_file_open(&f, dir, "automaton.gp")) return -1;
    char task[128], q[256], monoid[96];
    gp_text_visible(task, sizeof task, e.task, (size_t)-1, 40);
    gp_preamble(f.f, &c, "automaton", "does the operator learn the automaton? cluster-vs-monoid scores per tree level",
                "automaton-in.dat automaton-out.dat");
    fprintf(f.f, "TASK = %s\nMONOID = %d\nset multiplot title sprintf('%%s: node clusters against the transition monoid"
                 " (%%d elements)', TASK, MONOID) font TITLE_FONT\n",
            gp_quote(q, sizeof q, task, 0), e.monoid_size);
    const double w = 1.0 / 3;
    /* in: segments of at most the training length; level l covers up to 2^l symbols */
    const char *axes = "set xlabel 'tree level'\nset xrange [-0.5:%d.5]\nset xtics 1\n";
    gp_panel(f.f, "purity", 0, 0, w, 0.92);
    fprintf(f.f, "set title 'purity' font TITLE_FONT\nset yrange [0:1.05]\n");
    fprintf(f.f, axes, top);
    gp_key_below(f.f, 0, 5);
    plot_lines(f.f, have, 2, 4, "k-means", "own k", have[1] ? "'automaton-in.dat' using 1:6 with lines lw 1 dt 3 lc rgb C_GREY title 'majority share, in'" : NULL);
    gp_panel(f.f, "adjusted Rand index", w, 0, w, 0.92);
    fprintf(f.f, "set title 'adjusted Rand index' font TITLE_FONT\nset yrange [-0.1:1.05]\n");
    fprintf(f.f, axes, top);
    gp_key_below(f.f, w, 5);
    plot_lines(f.f, have, 3, 5, "k-means", "own k", NULL);
    gp_panel(f.f, "clusters found against elements present", 2 * w, 0, w, 0.92);
    fprintf(f.f, "set title 'clusters vs monoid elements' font TITLE_FONT\nset logscale y\nset yrange [0.8:%d]\n",
            2 * e.monoid_size > 16 ? 2 * e.monoid_size : 16);
    fprintf(f.f, axes, top);
    gp_key_below(f.f, 2 * w, 5);
    snprintf(monoid, sizeof monoid, "MONOID with lines lw 1 dt 3 lc rgb C_GREY title 'monoid size'");
    plot_lines(f.f, have, 7, 8, "elements", "own k", monoid);
    fprintf(f.f, "unset multiplot\n");
    gp_epilogue(f.f);
    if (gp_file_commit(&f)) return -1;
    return gp_experiment_render(&c, "automaton", made, size);
}
