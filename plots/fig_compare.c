/* The comparison's figures and report (plots/compare_plots.h), from the
 * JSON that analyses/compare/compare_out.c writes. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "plots/compare_plots.h"
#include "plots/gp.h"

#define N_COLOURS 7
static const char *const colour[N_COLOURS] = {"C_BLUE", "C_ORANGE", "C_GREEN", "C_PURPLE", "C_VERMILION", "C_SKY", "C_GREY"};

/* ---------- reading the JSON ---------- */

static double jnum(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *jstr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}
static const cJSON *jobj(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* a JSON array of numbers (null: NaN) as doubles; n = its length (0 and NULL when absent) */
static int64_t jarray(const cJSON *a, double **out) {
    *out = NULL;
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    if (n == 0) return 0;
    *out = malloc((size_t)n * sizeof **out);
    if (!*out) return gs_fail("out of memory");
    int i = 0;
    for (const cJSON *v = a->child; v; v = v->next) (*out)[i++] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    return n;
}

/* "0.812 [0.790, 0.830]" from {value, lo, hi}; prefix ">= " when censored */
static const char *ci(char *buf, size_t size, const cJSON *n, int censored) {
    double v = jnum(n, "value"), lo = jnum(n, "lo"), hi = jnum(n, "hi");
    if (!isfinite(v)) snprintf(buf, size, "n/a");
    else if (isfinite(lo)) snprintf(buf, size, "%s%.3g [%.3g, %.3g]", censored ? ">= " : "", v, lo, hi);
    else snprintf(buf, size, "%s%.3g", censored ? ">= " : "", v);
    return buf;
}

/* row i's name in figures: "R2 tpp-small L0" (the model's folder and the layer; a site that is not per
 * layer by its name), or "R1 store.db:1:site" for a store that names no model; visible text */
static void row_name(const cJSON *row, int i, char *out, size_t size) {
    char vis[300], what[200];
    const char *model = jstr(row, "model"), *label = jstr(row, "label"), *slash = strrchr(label, '/');
    double layer = jnum(row, "layer");
    if (!model[0]) snprintf(what, sizeof what, "%s", slash ? slash + 1 : label);
    else if (isfinite(layer)) snprintf(what, sizeof what, "%s L%.0f", model, layer);
    else snprintf(what, sizeof what, "%s %s", model, jstr(row, "site"));
    gp_text_visible(vis, sizeof vis, what, (size_t)-1, 60);
    snprintf(out, size, "R%d %s", i + 1, vis);
}

/* Rows of one run (one model) share a colour; its layers differ by dash, so a legend of 13 rows reads as
 * four models. group[i] is row i's run in order of first appearance, dash[i] its place within that run. */
static void row_styles(const cJSON *rows, int n, int *group, int *dash) {
    int groups = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        group[i] = -1;
        dash[i] = 0;
        for (int j = 0; j < i && group[i] < 0; j++) {
            const cJSON *q = cJSON_GetArrayItem(rows, j);
            if (!strcmp(jstr(r, "store"), jstr(q, "store")) && jnum(r, "run") == jnum(q, "run")) group[i] = group[j];
        }
        if (group[i] < 0) group[i] = groups++;
        for (int j = 0; j < i; j++) dash[i] += group[j] == group[i];
    }
}

/* the key under the panels, in columns, with a bottom margin that keeps every panel's axes level */
/* two columns of long names fit the width, three of short ones (a row per layer) */
static int key_rows(int entries) { return entries <= 4 ? entries : entries <= 10 ? (entries + 1) / 2 : (entries + 2) / 3; }
static void key_under(FILE *g, int entries, int with_key) {
    int rows = key_rows(entries);
    fprintf(g, "set bmargin %.1f\n", 4.2 + 1.25 * rows);
    if (with_key) fprintf(g, "set key at screen 0.012, screen 0.012 left bottom Left reverse maxrows %d width 2\n", rows);
    else fprintf(g, "unset key\n");
}

/* ---------- figures ---------- */

typedef struct {
    const plot_ctx *c;
    const cJSON *rows;
    int n;
    int *group, *dash; /* row_styles: each row's colour (its run) and dash (its place among the run's rows) */
} figs;

/* data file NAME-R<i>.dat with ncol columns */
static int columns(const figs *f, const char *name, int i, const char *header, const char *colnames, int ncol, int64_t n,
                   const double *const *cols) {
    char file[96];
    snprintf(file, sizeof file, "%s-R%d.dat", name, i + 1);
    return gp_write_columns(f->c, file, header, colnames, ncol, n, cols);
}

/* one line of a plot: colour number c, gnuplot dash type dt (1 solid) */
static void line_style(FILE *g, int c, const char *name, int i_file, const char *using, const char *title, int dt,
                       int first) {
    char q[400];
    fprintf(g, "%s '%s-R%d.dat' using %s with lines lw 2 dt %d lc rgb %s %s%s", first ? "plot" : ", \\\n    ", name,
            i_file + 1, using, dt, colour[c % N_COLOURS], title ? "title " : "notitle",
            title ? gp_quote(q, sizeof q, title, 0) : "");
}

static void fill_fig(gs_plot_figure *fig, const char *name, const char *title, const char *caption) {
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->title, sizeof fig->title, "%s", title);
    snprintf(fig->caption, sizeof fig->caption, "%s", caption);
    snprintf(fig->sources, sizeof fig->sources, "compare.json");
}

/* close the script and name the figure */
static int finish(gp_file *a, gs_plot_figure *fig, const char *name, const char *title, const char *caption) {
    gp_epilogue(a->f);
    if (gp_file_commit(a) != 0) return -1;
    fill_fig(fig, name, title, caption);
    return 0;
}

/* row i's curve `key` (an array over t = 1, 2, ...) as NAME-R<i>.dat and one line of the plot; 1 when
 * drawn, 0 when the row has none, -1 on an error */
static int indexed_curve(const figs *f, FILE *g, const char *name, int i, const char *key, const char *header,
                         const char *colnames, int first) {
    const cJSON *row = cJSON_GetArrayItem(f->rows, i);
    double *y = NULL;
    int64_t n = jarray(jobj(jobj(row, "curves"), key), &y);
    if (n <= 0) return (int)n;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) { free(y); return gs_fail("out of memory"); }
    for (int64_t k = 0; k < n; k++) x[k] = (double)(k + 1);
    const double *cols[2] = {x, y};
    int rc = columns(f, name, i, header, colnames, 2, n, cols);
    free(x); free(y);
    if (rc != 0) return -1;
    char t[400];
    row_name(row, i, t, sizeof t);
    line_style(g, f->group[i], name, i, "1:2", t, 1 + f->dash[i], first);
    return 1;
}

/* NAME.gp opened, with the preamble that names what it draws from NAME + data (the .dat files). */
static int open_script(const figs *f, gp_file *a, const char *name, const char *what, const char *data) {
    char script[96], files[96];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(files, sizeof files, "%s%s", name, data);
    if (gp_file_open(a, f->c->dir, script) != 0) return -1;
    gp_preamble(a->f, f->c, name, what, files);
    return 0;
}

static int fig_explained(const figs *f, gs_plot_figure *fig) {
    const char *name = "compare_explained";
    int drawn = 0;
    gp_file a;
    if (open_script(f, &a, name, "cumulative explained variance of each row's states", "-R*.dat") != 0) return -1;
    int entries = 0;
    double last_k = 1;
    for (int i = 0; i < f->n; i++) {
        double *y = NULL;
        int64_t n = jarray(jobj(jobj(cJSON_GetArrayItem(f->rows, i), "curves"), "explained"), &y);
        free(y);
        entries += n > 0;
        if (n > last_k) last_k = (double)n;
    }
    fprintf(a.f, "set title 'Explained variance of the first k principal components' font TITLE_FONT\n"
                 "set xlabel 'components k'; set ylabel 'fraction of variance'\nset logscale x\nset yrange [0:1.02]\n"
                 "set xrange [1:%g]\n", last_k);
    gp_log_tics(a.f, "x", 1, last_k);
    key_under(a.f, entries, 1);
    for (int i = 0; i < f->n; i++) {
        int k = indexed_curve(f, a.f, name, i, "explained", "cumulative explained variance", "k fraction", !drawn);
        if (k < 0) { gp_file_abort(&a); return -1; }
        drawn += k;
    }
    if (!drawn) { gp_file_abort(&a); return 1; }
    fprintf(a.f, "\n");
    return finish(&a, fig, name, "Explained variance, per row",
             "Cumulative fraction of the centered states' variance in the first k principal components (geometry), one "
             "line per row. A curve that rises fast: the states live in few directions.");
}

static int fig_horizons_cmp(const figs *f, gs_plot_figure *fig) {
    const char *name = "compare_horizons";
    gp_file a;
    if (open_script(f, &a, name, "raw and centered lag cosines, overlaid per row", "-R*.dat") != 0) return -1;
    /* the rows drawn and the last lag any of them reaches: the key lists them under both panels, the x axis
     * ends where the data does */
    int entries = 0;
    double last_lag = 1;
    for (int i = 0; i < f->n; i++) {
        double *lag = NULL;
        int64_t n = jarray(jobj(jobj(cJSON_GetArrayItem(f->rows, i), "curves"), "lags"), &lag);
        entries += n > 0;
        for (int64_t k = 0; k < n; k++) if (lag[k] > last_lag) last_lag = lag[k];
        free(lag);
    }
    fprintf(a.f, "set multiplot\n");
    for (int panel = 0; panel < 2; panel++) {
        gp_panel(a.f, panel ? "(b) centered" : "(a) raw", panel * 0.5, 0, 0.5, 1);
        fprintf(a.f, "set title '(%c) %s lag cosine c_k' font TITLE_FONT\nset xlabel 'lag k (tokens)'; set ylabel 'c_k'\n"
                     "set logscale x\nset xrange [1:%g]\n",
                panel ? 'b' : 'a', panel ? "centered" : "raw", last_lag);
        gp_log_tics(a.f, "x", 1, last_lag);
        key_under(a.f, entries, panel == 0);
        int drawn = 0;
        for (int i = 0; i < f->n; i++) {
            const cJSON *row = cJSON_GetArrayItem(f->rows, i), *cv = jobj(row, "curves");
            double *lag = NULL, *y = NULL, *pairs = NULL;
            int64_t n = jarray(jobj(cv, "lags"), &lag), ny = jarray(jobj(cv, panel ? "centered" : "raw"), &y);
            int64_t np = jarray(jobj(cv, panel ? "centered_pairs" : "raw_pairs"), &pairs);
            if (n > 0 && ny == n && np == n && panel == 0) {
                /* both curves in one file, each masked where fewer pairs than a mean needs */
                double *cen = NULL, *cp = NULL;
                jarray(jobj(cv, "centered"), &cen);
                jarray(jobj(cv, "centered_pairs"), &cp);
                if (!cen || !cp) { free(cen); free(cp); free(lag); free(y); free(pairs); gp_file_abort(&a); return -1; }
                for (int64_t k = 0; k < n; k++) {
                    if (!(pairs[k] >= 100)) y[k] = NAN;
                    if (!(cp[k] >= 100)) cen[k] = NAN;
                }
                const double *cols[5] = {lag, y, cen, pairs, cp};
                int rc = columns(f, name, i, "lag cosines (NaN: fewer than 100 pairs)", "lag raw centered raw_pairs centered_pairs",
                                 5, n, cols);
                free(cen); free(cp);
                if (rc != 0) { free(lag); free(y); free(pairs); gp_file_abort(&a); return -1; }
            }
            free(lag); free(y); free(pairs);
            if (n <= 0 || ny != n || np != n) continue;
            char t[400];
            row_name(row, i, t, sizeof t);
            line_style(a.f, f->group[i], name, i, panel ? "1:3" : "1:2", t, 1 + f->dash[i], !drawn);
            drawn++;
        }
        if (!drawn) { gp_file_abort(&a); return 1; }
        fprintf(a.f, "\n");
    }
    fprintf(a.f, "unset multiplot\n");
    return finish(&a, fig, name, "Lag cosines, per row",
             "(a) raw and (b) centered (each window's mean subtracted) mean cosine of states k tokens apart, one line per "
             "row (one colour per model, one dash per layer), drawn only at lags with at least 100 pairs. The raw curve's plateau is the default direction; the "
             "centered curve's fall is the content horizon.");
}

static int fig_default_cmp(const figs *f, gs_plot_figure *fig) {
    const char *name = "compare_default";
    double *x = malloc((size_t)f->n * sizeof *x), *v = malloc((size_t)f->n * sizeof *v);
    double *lo = malloc((size_t)f->n * sizeof *lo), *hi = malloc((size_t)f->n * sizeof *hi);
    if (!x || !v || !lo || !hi) { free(x); free(v); free(lo); free(hi); return gs_fail("out of memory"); }
    for (int i = 0; i < f->n; i++) {
        const cJSON *nr = jobj(jobj(cJSON_GetArrayItem(f->rows, i), "default_direction"), "norm_ratio");
        x[i] = i + 1;
        v[i] = jnum(nr, "value");
        lo[i] = isfinite(jnum(nr, "lo")) ? jnum(nr, "lo") : v[i];
        hi[i] = isfinite(jnum(nr, "hi")) ? jnum(nr, "hi") : v[i];
    }
    const double *cols[4] = {x, v, lo, hi};
    char file[64];
    snprintf(file, sizeof file, "%s-ratio.dat", name);
    int rc = gp_write_columns(f->c, file, "norm ratio per row with its 95% bootstrap interval", "row ratio lo hi", 4, f->n, cols);
    free(x); free(v); free(lo); free(hi);
    if (rc != 0) return -1;
    gp_file a;
    if (open_script(f, &a, name, "the default direction's norm ratio and emergence, per row", "-*.dat") != 0) return -1;
    int entries = 0;
    double last_t = 1;
    for (int i = 0; i < f->n; i++) {
        double *y = NULL;
        int64_t n = jarray(jobj(jobj(cJSON_GetArrayItem(f->rows, i), "curves"), "emergence"), &y);
        free(y);
        entries += n > 0;
        if (n > last_t) last_t = (double)n;
    }
    fprintf(a.f, "set multiplot\n");
    gp_panel(a.f, "(a) norm ratio", 0, 0, 0.45, 1);
    key_under(a.f, entries, 0);
    fprintf(a.f, "set title '(a) ||s_bar|| / mean ||s||' font TITLE_FONT\nset xlabel 'row (R as in the key)'; set ylabel 'norm ratio'\n"
                 /* R1..R13 upright would run together past 9 rows: named as the key names them, turned */
                 "set xrange [0.5:%d.5]; set yrange [0:1.05]\nset xtics 1 format 'R%%.0f' rotate by 90 right\nunset key\n"
                 "set arrow from 0.5, 0.25 to %d.5, 0.25 nohead dt 2 lc rgb C_GREY\n"
                 "set label 'rule 0.25' at 0.6, 0.28 tc rgb C_GREY\n"
                 "plot '%s' using 1:2:3:4 with yerrorbars pt 7 ps 1.5 lw 2 lc rgb C_BLUE notitle\n"
                 "set xtics norotate format '%%g'\n",
            f->n, f->n, file);
    gp_panel(a.f, "(b) emergence", 0.45, 0, 0.55, 1);
    fprintf(a.f, "set title '(b) emergence cos(m_t, s_bar)' font TITLE_FONT\nset xlabel 't (states averaged)'\n"
                 "set xrange [1:%g]; set yrange [*:1.05]\nunset arrow; unset label\n"
                 "set ylabel 'cosine'\nset logscale x\n", last_t);
    gp_log_tics(a.f, "x", 1, last_t);
    key_under(a.f, entries, 1);
    int drawn = 0;
    for (int i = 0; i < f->n; i++) {
        int k = indexed_curve(f, a.f, name, i, "emergence", "emergence: mean over windows of cos(running mean of t states, s_bar)",
                              "t cos", !drawn);
        if (k < 0) { gp_file_abort(&a); return -1; }
        drawn += k;
    }
    if (!drawn) gp_empty_panel(a.f, "(b) emergence", "no emergence curve");
    fprintf(a.f, "\nunset multiplot\n");
    return finish(&a, fig, name, "The default direction, per row",
             "(a) ||s_bar|| / mean ||s|| of each row (R1, R2, ... as in the table) with its 95% bootstrap interval over "
             "windows; the findings' rule asks for at least 0.25 (dashed). (b) how fast the running mean of a window's "
             "first t states lines up with s_bar.");
}

static int fig_retention_cmp(const figs *f, gs_plot_figure *fig) {
    const char *name = "compare_retention";
    gp_file a;
    if (open_script(f, &a, name, "per-head retention of every row with decaying heads", "-R*.dat") != 0) return -1;
    /* the rows with decays (one colour each; the dash is the estimator) and the last lag they reach */
    int entries = 0;
    double last_lag = 1;
    for (int i = 0; i < f->n; i++) {
        const cJSON *ret = jobj(jobj(cJSON_GetArrayItem(f->rows, i), "curves"), "retention");
        double *lag = NULL;
        int64_t n = ret ? jarray(jobj(ret, "lags"), &lag) : 0;
        entries += n > 0;
        for (int64_t k = 0; k < n; k++) if (lag[k] > last_lag) last_lag = lag[k];
        free(lag);
    }
    fprintf(a.f, "set title 'Per-head retention R_h(k): all starts (solid), from the start (dashed)' font TITLE_FONT\n"
                 "set xlabel 'lag k (tokens)'; set ylabel 'R_h(k)'\nset logscale x\nset logscale y\nset yrange [1e-4:1.2]\n"
                 "set xrange [1:%g]\n"
                 "set arrow from graph 0, first exp(-1) to graph 1, first exp(-1) nohead dt 3 lc rgb C_GREY\n",
            last_lag);
    gp_log_tics(a.f, "x", 1, last_lag);
    key_under(a.f, entries + 2, 1);
    int drawn = 0, colour_of = 0;
    for (int i = 0; i < f->n; i++) {
        const cJSON *row = cJSON_GetArrayItem(f->rows, i), *ret = jobj(jobj(row, "curves"), "retention");
        if (!ret) continue;
        const cJSON *all = jobj(ret, "R"), *fs = jobj(ret, "R_from_start");
        int H = cJSON_GetArraySize(all);
        double *lag = NULL;
        int64_t n = jarray(jobj(ret, "lags"), &lag);
        if (n <= 0 || H <= 0 || cJSON_GetArraySize(fs) != H) { free(lag); continue; }
        int ncol = 1 + 2 * H;
        double **cols = calloc((size_t)ncol, sizeof *cols);
        int ok = cols != NULL;
        if (ok) cols[0] = lag;
        for (int h = 0; ok && h < H; h++) {
            ok = jarray(cJSON_GetArrayItem(all, h), &cols[1 + h]) == n && jarray(cJSON_GetArrayItem(fs, h), &cols[1 + H + h]) == n;
        }
        int rc = ok ? columns(f, name, i, "retention per head: lag, all starts R_h0.., from the start R_h0..", "lag R... R_from_start...",
                              ncol, n, (const double *const *)cols) : -1;
        for (int k = 0; cols && k < ncol; k++) free(cols[k]);
        if (!cols) free(lag);
        free(cols);
        if (rc != 0) { gp_file_abort(&a); return ok ? -1 : gs_fail("compare.json: row %d's retention curves are malformed", i + 1); }
        char t[400], using[32];
        row_name(row, i, t, sizeof t);
        snprintf(t + strlen(t), sizeof t - strlen(t), " (%d heads)", H);
        for (int h = 0; h < H; h++) {
            snprintf(using, sizeof using, "1:%d", 2 + h);
            line_style(a.f, colour_of, name, i, using, h == 0 ? t : NULL, 1, !drawn);
            drawn++;
            snprintf(using, sizeof using, "1:%d", 2 + H + h);
            line_style(a.f, colour_of, name, i, using, NULL, 2, 0);
        }
        colour_of++;
    }
    if (!drawn) { gp_file_abort(&a); return 1; }
    /* the estimators, in black, at the end of the key */
    fprintf(a.f, ", \\\n    NaN with lines lw 2 dt 1 lc rgb 'black' title 'all starts'"
                 ", \\\n    NaN with lines lw 2 dt 2 lc rgb 'black' title 'from the start'\n");
    return finish(&a, fig, name, "Per-head retention, per row with decaying heads",
             "R_h(k), the share of a write left after k steps, for every head of every row that recorded decays (GPN+M's "
             "memory heads, a GDN layer's heads), one colour per row; solid: averaged over every start (gpnscope's), "
             "dashed: from the start of the window (the paper's). The dotted line is 1/e.");
}

/* ---------- report.md / report.html ---------- */

typedef struct { char name[64], defaults[900], horizon[900], pools[600]; } cells;

static void row_cells(const cJSON *row, int i, cells *c) {
    char a[96], b[96], e[96], g[96], k[96];
    const cJSON *dd = jobj(row, "default_direction"), *h = jobj(row, "content_horizon"), *p = jobj(row, "memory_pools");
    snprintf(c->name, sizeof c->name, "R%d", i + 1);
    /* which grouping of the windows the 8-batch cosine is over, and why (issue 39.2) */
    snprintf(c->defaults, sizeof c->defaults, "**%s** (%s): ratio %s, 8-batch cos %s, top SV %s; %s", jstr(dd, "verdict"),
             jstr(dd, "reason"), ci(a, sizeof a, jobj(dd, "norm_ratio"), 0), ci(b, sizeof b, jobj(dd, "batch_cos"), 0),
             ci(e, sizeof e, jobj(dd, "top_sv_cos"), 0), jstr(dd, "batch_grouping_note"));
    const cJSON *cf = jobj(h, "centered_first"), *c256 = jobj(h, "centered_256"), *rf = jobj(h, "raw_first"), *rr = jobj(h, "raw_far");
    snprintf(c->horizon, sizeof c->horizon, "**%s** (%s): centered %s at k=%.0f, %s at k=%.0f; raw %s at k=%.0f, %s at k=%.0f; "
             "h_0.02 %s", jstr(h, "verdict"), jstr(h, "reason"), ci(a, sizeof a, cf, 0), jnum(cf, "lag"), ci(b, sizeof b, c256, 0),
             jnum(c256, "lag"), ci(e, sizeof e, rf, 0), jnum(rf, "lag"), ci(g, sizeof g, rr, 0), jnum(rr, "lag"),
             ci(k, sizeof k, jobj(h, "h_002"), cJSON_IsTrue(jobj(h, "h_002_censored"))));
    const cJSON *fs = jobj(p, "from_start"), *al = jobj(p, "all_starts");
    if (fs && al)
        snprintf(c->pools, sizeof c->pools, "**%s** (%s, %.0f heads): from the start %s, LR %s; all starts %s, LR %s; "
                 "power %.2f on the paper's pools", jstr(p, "verdict"), jstr(p, "decay_site"), jnum(p, "heads"),
                 jstr(fs, "verdict"), ci(a, sizeof a, jobj(fs, "lr"), 0), jstr(al, "verdict"), ci(b, sizeof b, jobj(al, "lr"), 0),
                 jnum(fs, "power_paper"));
    else
        snprintf(c->pools, sizeof c->pools, "**%s**: %s", jstr(p, "verdict"), jstr(p, "note"));
}

/* text for markdown table cells ('|' escaped, and '$': a viewer with MathJax
 * would typeset a model named "$$x$$") or html (<>& escaped) */
static void put_text(FILE *f, const char *s, int html) {
    char vis[2048];
    gp_text_visible(vis, sizeof vis, s, (size_t)-1, 0);
    for (const char *p = vis; *p; p++) {
        if (html && *p == '<') fputs("&lt;", f);
        else if (html && *p == '>') fputs("&gt;", f);
        else if (html && *p == '&') fputs("&amp;", f);
        else if (!html && (*p == '|' || *p == '$')) fputc('\\', f), fputc(*p, f);
        else fputc(*p, f);
    }
}

/* markdown bold **x** as <b>x</b> in html */
static void put_cell(FILE *f, const char *s, int html) {
    if (!html) { put_text(f, s, 0); return; }
    const char *b = strstr(s, "**"), *e = b ? strstr(b + 2, "**") : NULL;
    if (!b || !e) { put_text(f, s, 1); return; }
    char part[1024];
    snprintf(part, sizeof part, "%.*s", (int)(b - s), s);
    put_text(f, part, 1);
    snprintf(part, sizeof part, "%.*s", (int)(e - b - 2), b + 2);
    fputs("<b>", f);
    put_text(f, part, 1);
    fputs("</b>", f);
    put_text(f, e + 2, 1);
}

/* Each run's perplexity by position, once per run (its first row): where a
 * model stops predicting well is where its rows stop reading (issue 39.7). */
static void put_perplexity(FILE *o, const figs *f, int html) {
    int any = 0;
    for (int i = 0; i < f->n; i++) {
        const cJSON *row = cJSON_GetArrayItem(f->rows, i), *pp = jobj(row, "perplexity_by_position");
        if (f->dash[i] != 0 || !pp) continue;
        double *from = NULL, *to = NULL, *ppl = NULL;
        int64_t n = jarray(jobj(pp, "from"), &from);
        if (n > 0 && jarray(jobj(pp, "to"), &to) == n && jarray(jobj(pp, "perplexity"), &ppl) == n) {
            if (!any) fputs(html ? "<h2>Perplexity by position</h2>\n<ul>\n" : "\n## Perplexity by position\n\n", o);
            any = 1;
            char name[320], line[1400];
            row_name(row, i, name, sizeof name);
            size_t at = (size_t)snprintf(line, sizeof line, "%s: ", name);
            for (int64_t b = 0; b < n && at < sizeof line; b++)
                at += (size_t)snprintf(line + at, sizeof line - at, "%s%.0f-%.0f %.2f", b ? ", " : "", from[b], to[b] - 1,
                                       ppl[b]);
            double below = jnum(pp, "below_training"), past = jnum(pp, "from_training");
            double T = jnum(jobj(row, "positions"), "trained_seq_len");
            if (at < sizeof line && isfinite(below) && isfinite(past))
                snprintf(line + at, sizeof line - at, " (below %.0f: %.2f; from %.0f on: %.2f)", T, below, T, past);
            fputs(html ? "<li>" : "- ", o);
            put_text(o, line, html);
            fputs(html ? "</li>\n" : "\n", o);
        }
        free(from); free(to); free(ppl);
    }
    if (any) fputs(html ? "</ul>\n" : "\n", o);
}

/* What a first-time reader needs before the table (issue 37.4), and the
 * study's interactive page when this comparison sits in a demo folder. */
static void put_how_to_read(FILE *o, const char *dir, int html) {
    static const char *const how =
        "How to read it: a row is one state site of one run (a layered model gives one row per layer). Column 1 "
        "tests the paper's default-token direction (||s_bar|| / mean ||s|| >= 0.25, the 8-batch cosine >= 0.9, "
        "|cos| with the top singular vector >= 0.9), column 2 its content horizon (centered lag cosine c_1 >= "
        "0.05 and 10 <= h_0.02 < 1000 tokens), column 3 its fast and slow memory pools (every null family's p "
        "< 0.05; the rule's power on the paper's pools is in compare.json). present and absent need the "
        "interval clear of the threshold; inconclusive: it straddles it. Each row reads positions below its "
        "model's training length (the run-and-site column says which) and the runs' perplexity by position "
        "follows the table. The figures overlay the rows: one colour per run, one dash per layer.";
    fputs(html ? "</p>\n<p>" : "\n\n", o);
    put_text(o, how, html);
    char view[4200];
    struct stat sb;
    snprintf(view, sizeof view, "%s/../view.html", dir);
    if (stat(view, &sb) == 0 && S_ISREG(sb.st_mode))
        fputs(html ? "</p>\n<p>The study's interactive page: <a href=\"../view.html\">view.html</a> (docs/view.md)."
                   : "\n\nThe study's interactive page: [view.html](../view.html) (docs/view.md).", o);
}

static int write_report(const figs *f, const cJSON *root, const gs_plot_result *r, int html) {
    gp_file a;
    if (gp_file_open(&a, f->c->dir, html ? "report.html" : "report.md") != 0) return -1;
    FILE *o = a.f;
    const cJSON *win = jobj(root, "windows");
    if (html) fputs("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpnscope compare</title>\n"
                    "<style>body{font-family:sans-serif;max-width:80em;margin:auto} td,th{border:1px solid #ccc;"
                    "padding:4px;vertical-align:top} table{border-collapse:collapse} img{max-width:100%}</style>"
                    "</head><body>\n<h1>gpnscope compare</h1>\n<p>", o);
    else fputs("# gpnscope compare\n\n", o);
    fputs("Windows: ", o);
    put_text(o, jstr(win, "note"), html);
    fprintf(o, html ? ".</p>\n<p>" : ".\n\n");
    fprintf(o, "Numbers in brackets: 95%% bootstrap interval over windows (%.0f resamples, seed %.0f); verdicts by the "
               "findings' rules (docs/comparison.md).", jnum(root, "boot"), jnum(root, "seed"));
    put_how_to_read(o, f->c->dir, html);
    fputs(html ? "</p>\n<table><tr><th>row</th><th>run and site</th><th>1. default-token direction</th><th>2. content "
                 "horizon</th><th>3. memory pools</th></tr>\n"
               : "\n\n| row | run and site | 1. default-token direction | 2. content horizon | 3. memory pools |\n"
                 "|---|---|---|---|---|\n", o);
    for (int i = 0; i < f->n; i++) {
        const cJSON *row = cJSON_GetArrayItem(f->rows, i);
        cells c;
        row_cells(row, i, &c);
        char who[1000], few[200] = "";
        /* a row over fewer windows than its intervals need says so, as the table does (issue 38.3) */
        const cJSON *fw = jobj(row, "few_windows");
        if (cJSON_IsObject(fw)) snprintf(few, sizeof few, "; **%s**", jstr(fw, "note"));
        snprintf(who, sizeof who, "%s (%s, %.0f states in %.0f windows, d = %.0f; %s%s)", jstr(row, "label"),
                 jstr(row, "arch"), jnum(row, "states"), jnum(row, "windows"), jnum(row, "d"),
                 jstr(jobj(row, "positions"), "note"), few);
        const char *cell[5] = {c.name, who, c.defaults, c.horizon, c.pools};
        fputs(html ? "<tr>" : "|", o);
        for (int k = 0; k < 5; k++) {
            fputs(html ? "<td>" : " ", o);
            put_cell(o, cell[k], html);
            fputs(html ? "</td>" : " |", o);
        }
        fputs("\n", o);
    }
    if (html) fputs("</table>\n", o);
    put_perplexity(o, f, html);
    for (int i = 0; i < r->n_figures; i++) {
        const gs_plot_figure *g = &r->fig[i];
        if (html) {
            fputs("<h2>", o); put_text(o, g->title, 1); fputs("</h2>\n", o);
            if (g->rendered & GS_PLOT_PNG) fprintf(o, "<img src=\"%s.png\" alt=\"%s\">\n", g->name, g->name);
            else fprintf(o, "<p>(not rendered: <code>gnuplot %s.gp</code> draws it)</p>\n", g->name);
            fputs("<p>", o); put_text(o, g->caption, 1); fputs("</p>\n", o);
        } else {
            fprintf(o, "\n## %s\n\n", g->title);
            if (g->rendered & GS_PLOT_PNG) fprintf(o, "![%s](%s.png)\n\n", g->name, g->name);
            else fprintf(o, "(not rendered: `gnuplot %s.gp` draws it)\n\n", g->name);
            fprintf(o, "%s\n", g->caption);
        }
    }
    if (html) fputs("</body></html>\n", o);
    return gp_file_commit(&a);
}

int gs_plot_compare(const char *dir, const char *compare_json, const gs_plot_opts *o, gs_plot_result *r) {
    gs_plot_opts dflt;
    if (!o) { gs_plot_opts_default(&dflt); o = &dflt; }
    memset(r, 0, sizeof *r);
    cJSON *root = cJSON_Parse(compare_json);
    const cJSON *rows = root ? jobj(root, "rows") : NULL;
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) < 1) {
        cJSON_Delete(root);
        return gs_fail("%s/compare.json: not a comparison with rows", dir);
    }
    gs_plot_opts oo = *o;
    oo.formats = o->formats ? o->formats : GS_PLOT_PNG;
    plot_ctx c = {.dir = dir, .o = &oo};
    c.font = o->font_size ? o->font_size : (int)lround(16.0 * o->width / 1200.0);
    if (c.font < 12) c.font = 12;
    snprintf(c.first_fmt, sizeof c.first_fmt, "%s", oo.formats & GS_PLOT_PNG ? "png" : oo.formats & GS_PLOT_SVG ? "svg" : "pdf");
    const int n = cJSON_GetArraySize(rows);
    snprintf(c.run_label, sizeof c.run_label, "comparison of %d row%s", n, n == 1 ? "" : "s");
    snprintf(c.store_name, sizeof c.store_name, "compare.json");
    int *group = calloc((size_t)n, sizeof *group), *dash = calloc((size_t)n, sizeof *dash);
    if (!group || !dash) { free(group); free(dash); cJSON_Delete(root); return gs_fail("out of memory"); }
    row_styles(rows, n, group, dash);
    figs f = {&c, rows, n, group, dash};
    int (*const figures[])(const figs *, gs_plot_figure *) = {fig_explained, fig_horizons_cmp, fig_default_cmp,
                                                               fig_retention_cmp};
    int rc = 0;
    for (size_t i = 0; i < sizeof figures / sizeof *figures && rc == 0; i++) {
        gs_plot_figure *fg = &r->fig[r->n_figures];
        memset(fg, 0, sizeof *fg);
        int k = figures[i](&f, fg);
        if (k < 0) rc = -1;
        else if (k == 0) r->n_figures++;
    }
    char first_error[GS_ERROR_MAX] = "";
    if (rc == 0) rc = gp_render_figures(dir, &oo, oo.formats, r, first_error, sizeof first_error);
    if (rc == 0) rc = write_report(&f, root, r, 0);
    if (rc == 0) rc = write_report(&f, root, r, 1);
    cJSON_Delete(root);
    free(group);
    free(dash);
    if (rc == 0 && r->n_failed)
        return gs_fail("%d of %d figures did not render (first: %s); the rest and report.md are in %s", r->n_failed,
                       r->n_figures, first_error, dir);
    return rc;
}
