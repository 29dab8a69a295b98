/* gs_plot_store: every figure for a run's analyses, rendered, then the
 * report. The figures themselves are in plots/fig_*.c. */
#include "plots/plots.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inputs.h"
#include "base/text.h"
#include "plots/gp.h"
#include "view/view.h"

void gs_plot_opts_default(gs_plot_opts *o) {
    memset(o, 0, sizeof *o);
    o->width = 1200;
    o->height = 800;
    o->formats = GS_PLOT_PNG;
    o->render = 1;
}

static const char *const format_names[3] = {"png", "svg", "pdf"};

int gs_plot_parse_formats(const char *list, unsigned *formats) {
    *formats = 0;
    const char *p = list ? list : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int k = 0; k < 3; k++)
            if (len == strlen(format_names[k]) && !strncmp(p, format_names[k], len)) { *formats |= 1u << k; found = 1; }
        if (!found) return gs_fail("unknown format '%.*s' (choose from png, svg, pdf)", (int)len, p);
        p = e ? e + 1 : p + len;
    }
    if (!*formats) return gs_fail("no format named in '%s' (choose from png, svg, pdf)", list ? list : "");
    return 0;
}

int64_t gs_plot_default_run(store *st) { return store_newest_analysed_run(st); }

static int mkdirs(const char *dir) {
    char buf[4096];
    if ((size_t)snprintf(buf, sizeof buf, "%s", dir) >= sizeof buf) return gs_fail("%s: path too long", dir);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char keep = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return gs_fail("%s: cannot create the folder: %s", buf, strerror(errno));
            *p = keep;
            if (!keep) break;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return gs_fail("%s: not a folder", dir);
    if (access(dir, W_OK) != 0) return gs_fail("%s: cannot write there: %s", dir, strerror(errno));
    return 0;
}

static void note(gs_plot_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gs_plot_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(r->notes, sizeof r->notes, fmt, ap);
    va_end(ap);
}

/* "run 3 · gpnm15-small" (the model's folder, gp_model_name) */
static void run_label(const store_run_info *info, char *out, size_t size) {
    char vis[300];
    if (info->model_path[0])
        snprintf(out, size, "run %lld · %s", (long long)info->id, gp_model_name(vis, sizeof vis, info->model_path));
    else snprintf(out, size, "run %lld", (long long)info->id);
}

/* Find gnuplot (when o->render) and render every figure of r in each format; a failed figure is marked in
 * r (its error, n_failed) and the first failure's message goes to first_error. -1 only when the program
 * given with o->gnuplot is not there. */
int gp_render_figures(const char *dir, const gs_plot_opts *o, unsigned formats, gs_plot_result *r, char *first_error,
                      size_t fe_size) {
    char program[4096] = "";
    if (o->render) {
        const char *want = o->gnuplot ? o->gnuplot : "gnuplot";
        if (gp_find_program(want, program, sizeof program) == 0) {
            r->gnuplot_found = 1;
        } else if (o->gnuplot) {
            return gs_fail("%s: not found or not executable (the scripts are written in %s)", o->gnuplot, dir);
        } else {
            note(r, "gnuplot not found on PATH: scripts and data written, nothing rendered");
        }
    }
    if (r->gnuplot_found) {
        for (int i = 0; i < r->n_figures; i++) {
            gs_plot_figure *fg = &r->fig[i];
            for (int k = 0; k < 3; k++) {
                if (!(formats & (1u << k))) continue;
                char tmp[96], tmp_path[4096], final[4096];
                snprintf(tmp, sizeof tmp, ".%s.%s.tmp.%ld", fg->name, format_names[k], (long)getpid());
                snprintf(tmp_path, sizeof tmp_path, "%s/%s", dir, tmp);
                snprintf(final, sizeof final, "%s/%s.%s", dir, fg->name, format_names[k]);
                if (gs_output_check(final)) { /* an input of this command: neither rendered over nor removed */
                    if (!fg->error[0]) {
                        snprintf(fg->error, sizeof fg->error, "%s", gs_error());
                        r->n_failed++;
                    }
                    if (!first_error[0]) snprintf(first_error, fe_size, "%s", gs_error());
                    continue;
                }
                int ok = gp_render(program, dir, fg->name, format_names[k], tmp) == 0;
                struct stat sb;
                if (ok && (stat(tmp_path, &sb) != 0 || sb.st_size == 0)) {
                    gs_fail("%s/%s.gp: gnuplot wrote no %s image", dir, fg->name, format_names[k]);
                    ok = 0;
                }
                if (ok && rename(tmp_path, final) != 0) {
                    gs_fail("%s: cannot rename into place: %s", final, strerror(errno));
                    ok = 0;
                }
                if (!ok) {
                    unlink(tmp_path);
                    unlink(final); /* never leave an older image that looks like this one */
                    if (!fg->error[0]) {
                        snprintf(fg->error, sizeof fg->error, "%s", gs_error());
                        r->n_failed++;
                    }
                    if (!first_error[0]) snprintf(first_error, fe_size, "%s", gs_error());
                    continue;
                }
                fg->rendered |= 1u << k;
            }
        }
    }

    return 0;
}

int gs_plot_store(store *st, int64_t run, const char *dir, const gs_plot_opts *o, gs_plot_result *r) {
    gs_plot_opts dflt;
    if (!o) { gs_plot_opts_default(&dflt); o = &dflt; }
    memset(r, 0, sizeof *r);
    r->run_id = run;
    if (o->width < 200 || o->width > 10000 || o->height < 150 || o->height > 10000)
        return gs_fail("figure size %dx%d is out of range (200x150 to 10000x10000 pixels)", o->width, o->height);
    if (o->font_size < 0 || o->font_size > 200) return gs_fail("font size %d is out of range (1 to 200 points)", o->font_size);
    unsigned formats = o->formats ? o->formats : GS_PLOT_PNG;
    store_run_info info;
    if (store_run_get(st, run, &info) != 0) return -1;
    char names[32][64];
    int n_names = store_analysis_names(st, run, names, 32, 0);
    if (n_names < 0) return -1;
    char q[4200];
    if (n_names == 0)
        return gs_fail("%s: run %lld has no analyses to plot: run `gpnscope analyze %s --run %lld` first", store_path(st),
                       (long long)run, gs_shell_quote(store_path(st), q, sizeof q), (long long)run);
    if (mkdirs(dir) != 0) return -1;

    gs_plot_opts oo = *o;
    oo.formats = formats;
    plot_ctx c = {.st = st, .run = run, .dir = dir, .o = &oo};
    c.font = o->font_size ? o->font_size : (int)lround(16.0 * o->width / 1200.0);
    if (c.font < 12) c.font = 12;
    for (int k = 0; k < 3; k++) if (formats & (1u << k)) { snprintf(c.first_fmt, sizeof c.first_fmt, "%s", format_names[k]); break; }
    run_label(&info, c.run_label, sizeof c.run_label);
    {
        const char *p = store_path(st), *b = strrchr(p, '/');
        gp_text_visible(c.store_name, sizeof c.store_name, b ? b + 1 : p, (size_t)-1, 80);
    }

    /* ---- scripts and data: every row of the figure table ---- */
    unsigned drawn = gp_report_analyses; /* the analyses the figures or the report show */
    for (int i = 0; i < gp_n_figure_rows; i++) {
        const gp_figure_row *row = &gp_figure_rows[i];
        gs_plot_figure *fg = &r->fig[r->n_figures];
        memset(fg, 0, sizeof *fg);
        gs_clear_error();
        int rc = row->draw(&c, fg);
        if (rc < 0) {
            gs_fail_context("%s: writing figure '%s' (%d figure%s written before it): ", dir,
                            fg->name[0] ? fg->name : "?", r->n_figures, r->n_figures == 1 ? "" : "s");
            return -1;
        }
        if (rc == 0) {
            fg->reading = row->reading;
            if (fg->problem[0]) note(r, "figure '%s': %s", fg->name, fg->problem);
            drawn |= row->analysis;
            r->n_figures++;
        }
    }
    for (int i = 0; i < n_names; i++) {
        const char *nm = names[i];
        const gs_analysis_row *an = gs_analysis_row_stored(nm);
        if (an && (drawn & an->bit)) continue;
        const char *why = "";
        for (int k = 0; an && k < gp_n_figure_rows; k++)
            if (gp_figure_rows[k].analysis == an->bit && gp_figure_rows[k].when_undrawn) why = gp_figure_rows[k].when_undrawn;
        char vis[128];
        note(r, "analysis '%s' has no figure%s", gp_text_visible(vis, sizeof vis, nm, (size_t)-1, 60), why);
    }

    /* ---- rendering ---- */
    char first_error[GS_ERROR_MAX] = "";
    if (gp_render_figures(dir, o, formats, r, first_error, sizeof first_error) != 0) return -1;

    /* ---- the run's interactive page, which the report links ---- */
    char page[4200];
    snprintf(page, sizeof page, "%s/view.html", dir);
    gs_view_opts vo = {.runs = &run, .n_runs = 1, .windows = 2, .max_tokens = 512, .lens_k = 5};
    gs_view_result vr;
    if (gs_view_write(st, &vo, page, &vr) == 0) r->view_written = 1;
    else note(r, "no interactive page: %s", gs_error());

    /* ---- report ---- */
    if (gp_write_report(&c, r) != 0) return -1;
    if (r->n_failed)
        return gs_fail("%d of %d figures did not render (first: %s); the rest and report.md (which marks them) are in %s",
                       r->n_failed, r->n_figures, first_error, dir);
    return 0;
}
