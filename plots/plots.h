/* Plots: the paper's figures (and ours) from the analyses stored for a run,
 * as standalone gnuplot scripts with their data files beside them, rendered
 * when gnuplot is installed, plus report.md / report.html that embed them
 * with captions and the summary table (ours beside the paper's numbers).
 * docs/plots.md describes every figure and how to edit and re-render it.
 *
 *     gs_plot_opts o; gs_plot_opts_default(&o);
 *     gs_plot_result r;
 *     int rc = gs_plot_store(st, run, "figs", &o, &r);
 *
 * Reads the store only (results of `gpnscope analyze`, the run's model and
 * vocabulary). Every file is written atomically (a temporary file renamed
 * into place). Never prints: the outcome of each figure is in the result. */
#ifndef GS_PLOTS_PLOTS_H
#define GS_PLOTS_PLOTS_H

#include <stdint.h>

#include "base/error.h"
#include "store/store.h"

enum { GS_PLOT_PNG = 1, GS_PLOT_SVG = 2, GS_PLOT_PDF = 4 };

typedef struct {
    int width, height; /* pixels; pdf pages are width/150 x height/150 inches (1200 x 800) */
    int font_size;     /* points; 0: 16 at 1200 px wide, scaled with the width, at least 12 */
    unsigned formats;  /* GS_PLOT_* bits (png) */
    int render;        /* 0: write scripts and data only (1) */
    const char *gnuplot; /* the program to render with (NULL: "gnuplot" on PATH) */
} gs_plot_opts;

#define GS_PLOT_MAX_FIGURES 8

typedef struct {
    char name[32];        /* file stem: NAME.gp, NAME.png, NAME-*.dat */
    char title[160];      /* what the figure shows, one line */
    char caption[2048];   /* a short caption for the report (plain text) */
    const char *reading;  /* one line: what it shows and how to read it (the figure table's; NULL: none) */
    char sources[128];    /* the analyses it is drawn from */
    unsigned rendered;    /* GS_PLOT_* bits rendered by this call */
    char error[GS_ERROR_MAX]; /* why it was not (fully) rendered; "" if it was */
    char problem[512];    /* what in the store was not as the figure needs it (a panel left empty for it); "" */
} gs_plot_figure;

typedef struct {
    int64_t run_id;
    int n_figures;
    gs_plot_figure fig[GS_PLOT_MAX_FIGURES];
    int gnuplot_found; /* rendering was asked for and the program was found */
    int n_failed;      /* figures whose rendering failed (gnuplot error or warning) */
    char notes[2048];  /* analyses without a figure, figures left out and why; one per line */
    int view_written;  /* DIR/view.html, the run's interactive page (view/view.h), was written */
} gs_plot_result;

void gs_plot_opts_default(gs_plot_opts *o);
/* "png,svg,pdf" (any subset, comma-separated) -> GS_PLOT_* bits. */
int gs_plot_parse_formats(const char *list, unsigned *formats);
/* The newest run that has analyses; 0 if none has, -1 on a store error. */
int64_t gs_plot_default_run(store *st);

/* Write every figure for the run's stored analyses into dir (created if
 * missing), render them, then write report.md and report.html. Returns 0
 * when everything asked for was written and rendered (or gnuplot is absent:
 * r->gnuplot_found = 0, scripts written, nothing rendered); -1 with
 * gs_error() set otherwise. After a rendering failure the other figures and
 * the report are still written (the report marks the failed figure) and r
 * says which one failed. */
int gs_plot_store(store *st, int64_t run_id, const char *dir, const gs_plot_opts *o, gs_plot_result *r);

#endif
