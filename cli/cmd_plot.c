/* gpnscope plot FILE --out DIR: the figures of a run's analyses as editable
 * gnuplot scripts with their data, rendered when gnuplot is installed, and
 * report.md / report.html. The work is in plots/ (docs/plots.md). */
#include <getopt.h>
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
    "caption and the summary table (our numbers beside the paper's). Re-render one figure with\n"
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

static int parse_int(const char *s, long lo, long hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int cmd_plot(int argc, char **argv) {
    gs_plot_opts o;
    gs_plot_opts_default(&o);
    const char *out = NULL;
    long long run = 0;
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},     {"run", required_argument, 0, 'r'},
        {"format", required_argument, 0, 'f'},  {"size", required_argument, 0, 's'},
        {"font-size", required_argument, 0, 'F'}, {"gnuplot", required_argument, 0, 'g'},
        {"no-render", no_argument, 0, 'n'},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch, li = -1;
    cli_options_start();
    while ((ch = getopt_long(argc, argv, "ho:", opts, &li)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'r': {
            char *end;
            run = strtoll(optarg, &end, 10);
            if (!*optarg || *end || run < 1) goto bad;
            break;
        }
        case 'f':
            if (gs_plot_parse_formats(optarg, &o.formats) != 0) {
                fprintf(stderr, "gpnscope plot: %s\n", gs_error());
                return 2;
            }
            break;
        case 's': {
            char w[32], *x = strchr(optarg, 'x');
            if (!x || (size_t)(x - optarg) >= sizeof w) goto bad;
            snprintf(w, sizeof w, "%.*s", (int)(x - optarg), optarg);
            if (parse_int(w, 200, 10000, &o.width) || parse_int(x + 1, 150, 10000, &o.height)) goto bad;
            break;
        }
        case 'F': if (parse_int(optarg, 1, 200, &o.font_size)) goto bad; break;
        case 'g': o.gnuplot = optarg; break;
        case 'n': o.render = 0; break;
        default: return cli_other_option(ch, "plot", help, opts, argv);
        }
    }
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
bad:
    fprintf(stderr, "gpnscope plot: bad value '%s' for --%s\n%s", optarg, li >= 0 ? opts[li].name : "?", help);
    return 2;
}
