/* plots/causal_plots.h */
#include "plots/causal_plots.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "plots/gp.h"

/* A plot context for an experiment (the figures of a run use a run's). */
static void context(plot_ctx *c, gs_plot_opts *o, store *st, int64_t experiment, const char *dir, const char *kind) {
    gs_plot_opts_default(o);
    memset(c, 0, sizeof *c);
    c->st = st;
    c->dir = dir;
    c->o = o;
    c->font = 16;
    snprintf(c->first_fmt, sizeof c->first_fmt, "png");
    char model[512] = "";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(store_db(st), "SELECT model_path FROM causal_experiments WHERE id = ?1", -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, experiment);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)) {
            const char *p = (const char *)sqlite3_column_text(s, 0), *b = strrchr(p, '/');
            gp_text_visible(model, sizeof model, b ? b + 1 : p, (size_t)-1, 60);
        }
        sqlite3_finalize(s);
    }
    snprintf(c->run_label, sizeof c->run_label, "%s experiment %lld · %s", kind, (long long)experiment, model);
    const char *p = store_path(st), *b = strrchr(p, '/');
    gp_text_visible(c->store_name, sizeof c->store_name, b ? b + 1 : p, (size_t)-1, 80);
}

/* Render NAME.gp to NAME.png when gnuplot is there; say what was made. */
static int render(const plot_ctx *c, const char *name, char *made, size_t size) {
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

/* The first pair's clean prompt as the experiment stored it (settings'
 * clean_tokens), n pieces malloc'd into *out; 0 for an experiment without
 * them (the axis then shows position numbers). */
static int patch_tokens(store *st, int64_t experiment, char ***out) {
    sqlite3_stmt *s;
    *out = NULL;
    if (sqlite3_prepare_v2(store_db(st),
                           "SELECT j.value FROM causal_experiments e, json_each(e.settings, '$.clean_tokens') j"
                           " WHERE e.id = ?1 AND json_valid(e.settings) ORDER BY j.key",
                           -1, &s, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(s, 1, experiment);
    int n = 0, cap = 0;
    char **v = NULL;
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (n == cap) {
            char **a = realloc(v, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *a);
            if (!a) break;
            v = a;
        }
        const char *t = (const char *)sqlite3_column_text(s, 0);
        if (!(v[n] = strdup(t ? t : ""))) break;
        n++;
    }
    sqlite3_finalize(s);
    *out = v;
    return n;
}

int gs_plot_patch(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    if (gs_mkdir_p(dir)) return -1;
    sqlite3 *db = store_db(st);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT component, position, mean_score FROM patch_summary"
                           " WHERE experiment_id = ?1 ORDER BY component_index, position < 0, position",
                           -1, &s, NULL) != SQLITE_OK)
        return gs_fail("reading patch experiment %lld: %s", (long long)experiment, sqlite3_errmsg(db));
    sqlite3_bind_int64(s, 1, experiment);
    char (*names)[96] = NULL;
    double *x = NULL, *y = NULL, *z = NULL;
    int64_t n = 0, cap = 0;
    int n_comp = 0, n_pos = 0, rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *comp = (const char *)sqlite3_column_text(s, 0);
        int pos = sqlite3_column_int(s, 1);
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            double *a = realloc(x, (size_t)cap * sizeof *a), *b = a ? realloc(y, (size_t)cap * sizeof *b) : NULL;
            if (a) x = a;
            if (b) y = b;
            double *c3 = b ? realloc(z, (size_t)cap * sizeof *c3) : NULL;
            if (c3) z = c3;
            char (*nm)[96] = c3 ? realloc(names, (size_t)cap * sizeof *nm) : NULL;
            if (!nm) { rc = gs_fail("out of memory"); break; }
            names = nm;
        }
        if (n_comp == 0 || strcmp(names[n_comp - 1], comp ? comp : "")) snprintf(names[n_comp++], 96, "%s", comp ? comp : "");
        if (pos + 1 > n_pos) n_pos = pos + 1;
        x[n] = pos;
        y[n] = n_comp - 1;
        z[n] = sqlite3_column_type(s, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 2);
        n++;
    }
    sqlite3_finalize(s);
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
    int n_tok = rc ? 0 : patch_tokens(st, experiment, &tokens);
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
                gp_text_visible(v, sizeof v, tokens[p], (size_t)-1, 12);
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
    return rc ? -1 : render(&c, "patch_heatmap", made, size);
}

int gs_plot_steer(store *st, int64_t experiment, const char *dir, char *made, size_t size) {
    if (gs_mkdir_p(dir)) return -1;
    sqlite3 *db = store_db(st);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT c, delta_nll, top1_changed FROM steer_results WHERE experiment_id = ?1 ORDER BY c",
                           -1, &s, NULL) != SQLITE_OK)
        return gs_fail("reading steer experiment %lld: %s", (long long)experiment, sqlite3_errmsg(db));
    sqlite3_bind_int64(s, 1, experiment);
    double cc[256], dn[256], tc[256];
    int n = 0;
    while (n < 256 && sqlite3_step(s) == SQLITE_ROW) {
        cc[n] = sqlite3_column_double(s, 0);
        dn[n] = sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
        tc[n] = sqlite3_column_type(s, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 2);
        n++;
    }
    sqlite3_finalize(s);
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
    return render(&c, "steer_curve", made, size);
}
