/* plots/causal_plots.h */
#include "plots/causal_plots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "plots/gp.h"
#include "store/experiments.h"

void gp_experiment_context(plot_ctx *c, gs_plot_opts *o, store *st, const char *dir, const char *kind, int64_t experiment,
                           const char *model_path) {
    gs_plot_opts_default(o);
    memset(c, 0, sizeof *c);
    c->st = st;
    c->dir = dir;
    c->o = o;
    c->font = 16;
    snprintf(c->first_fmt, sizeof c->first_fmt, "png");
    char model[512] = "";
    if (model_path && model_path[0]) gp_model_name(model, sizeof model, model_path);
    snprintf(c->run_label, sizeof c->run_label, "%s experiment %lld · %s", kind, (long long)experiment, model);
    const char *p = store_path(st), *b = strrchr(p, '/');
    gp_text_visible(c->store_name, sizeof c->store_name, b ? b + 1 : p, (size_t)-1, 80);
}

/* A causal experiment's context, labelled with its model. */
static void context(plot_ctx *c, gs_plot_opts *o, store *st, int64_t experiment, const char *dir, const char *kind) {
    char path[4096];
    if (store_experiment_model_path(st, experiment, path, sizeof path)) path[0] = 0;
    gp_experiment_context(c, o, st, dir, kind, experiment, path);
}

int gp_experiment_render(const plot_ctx *c, const char *name, char *made, size_t size) {
    char prog[4096];
    if (gp_find_program("gnuplot", prog, sizeof prog)) {
        snprintf(made, size, "wrote %s/%s.gp and its data (gnuplot is not on PATH: no image)", c->dir, name);
        return 0;
    }
    char out[96];
    snprintf(out, sizeof out, "%s.png", name);
    if (gp_render(prog, c->dir, name, "png", out)) return -1;
    snprintf(made, size, "drew %s/%s.png (script %s.gp, editable)", c->dir, name, name);
    return 0;
}

int gs_plot_patch(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    if (gs_mkdir_p(dir)) return -1;
    store_patch_cell *cells = NULL;
    int64_t n = store_patch_summary(st, experiment, &cells);
    if (n < 0) return gs_fail_context("reading patch experiment %lld: ", (long long)experiment);
    size_t m = n ? (size_t)n : 1;
    char (*names)[96] = malloc(m * sizeof *names);
    double *x = malloc(m * sizeof *x), *y = malloc(m * sizeof *y), *z = malloc(m * sizeof *z);
    int n_comp = 0, n_pos = 0, rc = names && x && y && z ? 0 : gs_fail("out of memory");
    for (int64_t i = 0; !rc && i < n; i++) {
        const store_patch_cell *e = &cells[i];
        if (n_comp == 0 || strcmp(names[n_comp - 1], e->component)) snprintf(names[n_comp++], 96, "%s", e->component);
        if (e->position + 1 > n_pos) n_pos = e->position + 1;
        x[i] = e->position;
        y[i] = n_comp - 1;
        z[i] = e->mean_score;
    }
    free(cells);
    if (!rc && n == 0) rc = gs_fail("patch experiment %lld has no results", (long long)experiment);
    for (int64_t i = 0; !rc && i < n; i++)
        if (x[i] < 0) x[i] = n_pos; /* "all" after the last position */
    plot_ctx c;
    gs_plot_opts o;
    context(&c, &o, st, experiment, dir, "patch");
    const double *cols[3] = {x, y, z};
    if (!rc) rc = gp_write_columns(&c, "patch_heatmap-scores.dat", "mean patching score by component and position",
                                   "position (last column: every position) component_index mean_score", 3, n, cols);
    char **tokens = NULL;
    int n_tok = rc ? 0 : store_patch_clean_tokens(st, experiment, &tokens);
    gp_file f = {0};
    if (!rc) rc = gp_file_open(&f, dir, "patch_heatmap.gp");
    if (!rc) {
        gp_preamble(f.f, &c, "patch_heatmap", "state patching: mean score by component and position",
                    "patch_heatmap-scores.dat");
        char q[512], v[256];
        fprintf(f.f, "set title 'State patching: mean of (LD - LD_corr) / (LD_clean - LD_corr)' font TITLE_FONT\n"
                     "set xlabel '%s (all: every position)'\nset ylabel ''\n"
                     "set cbrange [-0.2:1.2]\nset palette defined (-0.2 '#D55E00', 0 '#ffffff', 1 '#0072B2', 1.2 '#003050')\n"
                     "set cblabel 'score (0 corrupted, 1 clean)'\nunset grid\nunset key\nset lmargin 28\n",
                n_tok >= n_pos ? "position patched, labelled by the clean prompt of pair 0" : "position patched");
        fprintf(f.f, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset xtics (", n_pos, n_comp - 1);
        int step = n_pos > 24 ? (n_pos + 23) / 24 : 1;
        for (int p = 0; p < n_pos; p += step) {
            char num[16], label[96];
            snprintf(num, sizeof num, "%d", p);
            if (n_tok >= n_pos) { /* "3 ▁free": the position and the token the state read there */
                gp_token_visible(v, sizeof v, tokens[p], 12);
                snprintf(label, sizeof label, "%d %s", p, v);
            } else {
                snprintf(label, sizeof label, "%s", num);
            }
            fprintf(f.f, "%s%s %d", p ? ", " : "", gp_quote(q, sizeof q, label, GP_Q_PERCENT), p);
        }
        fprintf(f.f, ", 'all' %d)%s\nset ytics (", n_pos, n_tok >= n_pos ? " rotate by 90 right" : "");
        for (int k = 0; k < n_comp; k++) {
            gp_text_visible(v, sizeof v, names[k], (size_t)-1, 40);
            fprintf(f.f, "%s%s %d", k ? ", " : "", gp_quote(q, sizeof q, v, GP_Q_PERCENT), k);
        }
        fprintf(f.f, ")\nplot 'patch_heatmap-scores.dat' using 1:2:3 with image notitle, \\\n"
                     "     '' using 1:2:(sprintf('%%.2f', $3)) with labels font 'Sans,9' notitle\n");
        gp_epilogue(f.f);
        rc = gp_file_commit(&f);
    } else {
        gp_file_abort(&f);
    }
    for (int i = 0; i < n_tok; i++) free(tokens[i]);
    free(tokens);
    free(names);
    free(x);
    free(y);
    free(z);
    return rc ? -1 : gp_experiment_render(&c, "patch_heatmap", made, size);
}

int gs_plot_steer(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    if (gs_mkdir_p(dir)) return -1;
    store_steer_point *pts = NULL;
    int n = store_steer_points(st, experiment, &pts);
    if (n < 0) return gs_fail_context("reading steer experiment %lld: ", (long long)experiment);
    if (n > 256) n = 256; /* the figure's limit (a sweep of --c values is a few dozen) */
    double cc[256], dn[256], tc[256];
    for (int i = 0; i < n; i++) {
        cc[i] = pts[i].c;
        dn[i] = pts[i].delta_nll;
        tc[i] = pts[i].top1_changed;
    }
    free(pts);
    if (n == 0) return gs_fail("steer experiment %lld has no results", (long long)experiment);
    plot_ctx c;
    gs_plot_opts o;
    context(&c, &o, st, experiment, dir, "steer");
    const double *cols[3] = {cc, dn, tc};
    if (gp_write_columns(&c, "steer_curve-c.dat", "steering: NLL change and changed top-1 by coefficient", "c delta_nll top1_changed",
                         3, n, cols))
        return -1;
    gp_file f = {0};
    if (gp_file_open(&f, dir, "steer_curve.gp")) return -1;
    gp_preamble(f.f, &c, "steer_curve", "steering: NLL change and changed top-1 predictions against c", "steer_curve-c.dat");
    fprintf(f.f, "set title 'Steering: s <- s + c u' font TITLE_FONT\n"
                 "set xlabel 'c'\nset ylabel 'held-out NLL change (nats/token)'\nset y2label 'top-1 predictions changed'\n"
                 "set y2range [0:1]\nset y2tics\nset ytics nomirror\nset key top left\n"
                 "plot 'steer_curve-c.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb C_BLUE title 'NLL change', \\\n"
                 "     '' using 1:3 axes x1y2 with linespoints lw 2 pt 5 lc rgb C_ORANGE title 'top-1 changed'\n");
    gp_epilogue(f.f);
    if (gp_file_commit(&f)) return -1;
    return gp_experiment_render(&c, "steer_curve", made, size);
}

/* lens_heatmap.gp and -top1.dat of a lens experiment into c->dir, in c's context: 0, 1 when it has no
 * results, -1 with gs_error() */
int gp_lens_figure(const plot_ctx *c0, int64_t experiment) {
    store_lens_cell *cells = NULL;
    int n = store_lens_top1(c0->st, experiment, &cells);
    if (n < 0) return gs_fail_context("reading lens experiment %lld: ", (long long)experiment);
    if (n == 0) { free(cells); return 1; }
    const char *dir = c0->dir;
    /* rows: sites in the stored order; columns: positions; the top-1 token written in each cell */
    char (*sites)[128] = malloc((size_t)n * sizeof *sites);
    int n_sites = 0, n_pos = 0, rc = sites ? 0 : gs_fail("out of memory");
    gp_file d = {0}, f = {0};
    if (!rc) rc = gp_file_open(&d, dir, "lens_heatmap-top1.dat");
    if (!rc) fprintf(d.f, "# the logit lens: top-1 token of each site's decode per position\n"
                          "# position site_index top1_logit top1_token_id \"top1 piece\"\n");
    for (int i = 0; !rc && i < n; i++) {
        if (!n_sites || strcmp(sites[n_sites - 1], cells[i].site)) snprintf(sites[n_sites++], 128, "%s", cells[i].site);
        if (cells[i].position + 1 > n_pos) n_pos = cells[i].position + 1;
        char v[64], label[64];
        /* a tie (every logit equal at GPN's zero state) ranks nothing: no token to write */
        if (cells[i].tie) snprintf(v, sizeof v, "tie");
        else if (cells[i].piece[0]) gp_token_visible(v, sizeof v, cells[i].piece, 7);
        else snprintf(v, sizeof v, "#%d", (int)cells[i].token_id);
        /* a data file's string column is double-quoted: a quote inside is shown as U+2033 */
        size_t k = 0;
        for (const char *p = v; *p && k + 4 < sizeof label; p++) {
            if (*p == '"') { memcpy(label + k, "\u2033", 3); k += 3; }
            else label[k++] = *p;
        }
        label[k] = 0;
        fprintf(d.f, "%d %d %.6g %d \"%s\"\n", cells[i].position, n_sites - 1, cells[i].logit, (int)cells[i].token_id, label);
    }
    free(cells);
    if (!rc) rc = gp_file_commit(&d);
    else gp_file_abort(&d);
    /* wide enough for a readable cell per position, tall enough for a row per site */
    gs_plot_opts wide = *c0->o;
    if (wide.width < 120 + 56 * n_pos) wide.width = 120 + 56 * n_pos;
    wide.height = 190 + 42 * n_sites;
    if (wide.width > 10000) wide.width = 10000; /* plot's own bound: a long window's cells get narrow */
    if (wide.height > 10000) wide.height = 10000;
    plot_ctx c = *c0;
    c.o = &wide;
    if (!rc) rc = gp_file_open(&f, dir, "lens_heatmap.gp");
    if (!rc) {
        gp_preamble(f.f, &c, "lens_heatmap", "the logit lens: top-1 token per site and position", "lens_heatmap-top1.dat");
        char q[512], v[256];
        /* two lines: one would run past a narrow figure's edge */
        fprintf(f.f, "set title sprintf(\"Logit lens: the top-1 token of each site at each position\\n"
                     "(colour: its logit; tie: every logit equal) · %%s\", RUN) font TITLE_FONT\n"
                     "set xlabel 'position t (the step that read x_t; state.pred predicts x_t, a residual x_{t+1})'\n"
                     "set ylabel ''\nunset grid\nunset key\nset lmargin 30\nset palette defined (0 '#ffffff', 1 '#0072B2')\n"
                     "set cblabel 'top-1 logit'\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset xtics 1\nset ytics (",
                n_pos - 1, n_sites - 1);
        for (int k = 0; k < n_sites; k++) {
            gp_text_visible(v, sizeof v, sites[k], (size_t)-1, 40);
            fprintf(f.f, "%s%s %d", k ? ", " : "", gp_quote(q, sizeof q, v, GP_Q_PERCENT), k);
        }
        fprintf(f.f, ")\nplot 'lens_heatmap-top1.dat' using 1:2:3 with image notitle, \\\n"
                     "     '' using 1:2:5 with labels font 'Sans,9' notitle\n");
        gp_epilogue(f.f);
        rc = gp_file_commit(&f);
    }
    free(sites);
    return rc ? -1 : 0;
}

int gs_plot_lens(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    if (gs_mkdir_p(dir)) return -1;
    plot_ctx c;
    gs_plot_opts o;
    context(&c, &o, st, experiment, dir, "lens");
    int rc = gp_lens_figure(&c, experiment);
    if (rc > 0) return gs_fail("lens experiment %lld has no results", (long long)experiment);
    return rc ? -1 : gp_experiment_render(&c, "lens_heatmap", made, size);
}

/* The figure table's row for the store's newest lens experiment (plot draws it beside the run's figures). */
int fig_lens(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t exp = store_newest_experiment(c->st, "lens");
    if (exp < 0) return -1;
    if (exp == 0) return 1;
    /* labelled by the experiment's model, which need not be the plotted run's */
    plot_ctx cc = *c;
    char path[4096], model[512];
    if (store_experiment_model_path(c->st, exp, path, sizeof path)) path[0] = 0;
    gp_model_name(model, sizeof model, path);
    snprintf(cc.run_label, sizeof cc.run_label, "lens experiment %lld · %s", (long long)exp, model);
    int rc = gp_lens_figure(&cc, exp);
    if (rc) return rc;
    snprintf(fig->name, sizeof fig->name, "lens_heatmap");
    snprintf(fig->title, sizeof fig->title, "the logit lens: top-1 token per site and position");
    snprintf(fig->sources, sizeof fig->sources, "lens experiment %lld", (long long)exp);
    snprintf(fig->caption, sizeof fig->caption,
             "The store's newest logit lens (gpnscope lens ... --store, experiment %lld): each row a site, each column "
             "a position, the top-1 token of the site's decode written in the cell and its logit as the colour. Row t is "
             "the step that read token t: state.pred there predicts token t, a residual stream token t + 1.",
             (long long)exp);
    return 0;
}
