/* gpnscope plot FILE --out DIR: the figures of a run's analyses as editable
 * gnuplot scripts with their data, rendered when gnuplot is installed, and
 * report.md / report.html. The work is in plots/ (docs/plots.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "base/tmpfiles.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "plots/plots.h"

static const char *help =
    "usage: gpnscope plot FILE --out DIR [--run N] [--format png,svg,pdf] [--size WxH]\n"
    "                     [--font-size PT] [--gnuplot PROG] [--no-render]\n\n"
    "Draw the figures of a run's stored analyses (gpnscope analyze first): the state's geometry,\n"
    "the horizons (lag cosine and memory-head retention), the default-token direction, the probe\n"
    "horizon, and causal ablations when the store holds them. For each figure DIR gets NAME.gp, a\n"
    "standalone gnuplot script you can edit, with its data beside it (NAME-*.dat, plain columns),\n"
    "and the rendered images; then report.md and report.html, which show every figure with a\n"
    "caption and the summary table (our numbers beside the paper's), and link view.html, the\n"
    "run's interactive page (docs/view.md). Re-render one figure with\n"
    "`gnuplot NAME.gp` in DIR (`gnuplot -e \"fmt='svg'\" NAME.gp` for svg or pdf). Any warning\n"
    "gnuplot prints is treated as a failure. Without gnuplot the scripts, data and report are\n"
    "still written, and the command says nothing was rendered. Figures: docs/plots.md.\n\n"
    "  --out DIR        the folder to write (created if missing; files there with the same names\n"
    "                   are replaced, each atomically, but never the store itself; temporary\n"
    "                   files a killed plot left there are removed)\n"
    "  --run N          the run (default: the newest run that has analyses)\n"
    "  --format LIST    png, svg, pdf, comma-separated (png); `gnuplot NAME.gp` renders the first\n"
    "  --size WxH       image size in pixels (1200x800); pdf pages are W/150 x H/150 inches\n"
    "  --font-size PT   text size (default 16 at 1200 px wide, scaled with the width, at least 12)\n"
    "  --gnuplot PROG   the gnuplot program to render with (default: gnuplot on PATH)\n"
    "  --no-render      write scripts, data and report only\n\n"
    "Exit status: 0 when every figure was written and rendered (or gnuplot is absent), 1 on an\n"
    "error or when a figure failed to render (the others and the report are still written, and\n"
    "the report marks it), 2 on a usage error.\n";

static void bad_value(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: bad value '%s' for --%s\n%s", cmd, text, row->name, help);
}

/* --size WxH: 200..10000 by 150..10000 pixels */
static int size_option(const char *cmd, const char *value, void *opts) {
    gs_plot_opts *o = opts;
    const char *x = strchr(value, 'x');
    char *end_w, *end_h;
    long w = x ? strtol(value, &end_w, 10) : 0, h = x ? strtol(x + 1, &end_h, 10) : 0;
    if (!x || x == value || end_w != x || !x[1] || *end_h || w < 200 || w > 10000 || h < 150 || h > 10000) {
        bad_value(cmd, &(cli_opt){.name = "size"}, value);
        return 2;
    }
    o->width = (int)w, o->height = (int)h;
    return 0;
}

int cmd_plot(int argc, char **argv) {
    gs_plot_opts o;
    gs_plot_opts_default(&o);
    const char *out = NULL;
    long long run = 0;
    const cli_opt opts[] = {
        {CLI_STRING("out", &out), .short_name = 'o'},
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id")},
        {CLI_LIST("format", &o.formats, gs_plot_parse_formats, "")},
        {CLI_CALL("size", size_option, &o)},
        {CLI_INTEGER("font-size", &o.font_size, 1, 200, "a size")},
        {CLI_STRING("gnuplot", &o.gnuplot)},
        {CLI_CLEAR("no-render", &o.render)},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"plot", help, bad_value}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc - 1) {
        fprintf(stderr, "gpnscope plot: %s\n%s", optind >= argc ? "no store FILE given" : "more than one FILE given", help);
        return 2;
    }
    if (!out) {
        fprintf(stderr, "gpnscope plot: no --out DIR given\n%s", help);
        return 2;
    }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_READ);
    if (!st) { fprintf(stderr, "gpnscope plot: %s\n", gs_error()); return 1; }
    if (run == 0) {
        run = gs_plot_default_run(st);
        if (run <= 0) {
            char q[4200];
            if (run == 0)
                fprintf(stderr, "gpnscope plot: %s has no analysed runs: run `gpnscope analyze %s` first\n", path,
                        gs_shell_quote(path, q, sizeof q));
            else fprintf(stderr, "gpnscope plot: %s\n", gs_error());
            store_close(st);
            return 1;
        }
    }
    /* what a killed plot left (temporary images and scripts of a dead pid) */
    gs_remove_stale_tmp(out);
    gs_plot_result r;
    /* one snapshot of the store for every figure, even while a recording writes */
    store_snapshot_begin(st);
    int rc = gs_plot_store(st, run, out, &o, &r);
    store_snapshot_end(st);
    store_close(st);
    if (rc != 0 && r.n_figures == 0 && !r.n_failed) {
        fprintf(stderr, "gpnscope plot: %s\n", gs_error());
        return 1;
    }
    for (int i = 0; i < r.n_figures; i++) {
        const gs_plot_figure *f = &r.fig[i];
        printf("%-18s %s/%s.gp", f->name, out, f->name);
        static const char *const fmts[3] = {"png", "svg", "pdf"};
        for (int k = 0; k < 3; k++) if (f->rendered & (1u << k)) printf(", .%s", fmts[k]);
        if (f->error[0]) printf("  NOT RENDERED");
        putchar('\n');
    }
    if (r.notes[0]) printf("notes:\n%s", r.notes);
    fflush(stdout);
    if (rc != 0) {
        fprintf(stderr, "gpnscope plot: %s\n", gs_error());
        return 1;
    }
    if (o.render && !r.gnuplot_found)
        printf("gnuplot not found: wrote %d scripts with their data and %s/report.md; did not render\n", r.n_figures, out);
    else if (!o.render)
        printf("wrote %d scripts with their data and %s/report.md (not rendered: --no-render)\n", r.n_figures, out);
    else
        printf("rendered %d figures of run %lld into %s; report: %s/report.md, %s/report.html\n", r.n_figures, run, out,
               out, out);
    return 0;
}
