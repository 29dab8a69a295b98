/* Internals of plots/: writing gnuplot scripts and data files safely.
 *
 * Text that comes from the store (token pieces, model file names) reaches a
 * script only through gp_text_visible + gp_quote: control characters and
 * invalid UTF-8 become visible escapes (\n, \x1b), the result is a
 * single-quoted gnuplot string (no backslash processing; ' doubled), and
 * tic labels, which gnuplot reads as printf formats, get % doubled. Every
 * script sets `termoption noenhanced`, so @ ^ _ { } are printed as they are. */
#ifndef GS_PLOTS_GP_H
#define GS_PLOTS_GP_H

#include <stdint.h>
#include <stdio.h>

#include "analyses/registry.h"
#include "plots/plots.h"

/* ---------- text ---------- */
/* Visible text of at most max_chars characters (0: no limit; a cut shows
 * "..."): valid UTF-8 kept, other bytes as \xNN, controls as \n \t \r \xNN,
 * Unicode direction overrides as \u{NNNN}. Returns out. */
char *gp_text_visible(char *out, size_t size, const char *in, size_t len, size_t max_chars);
/* A token's piece as a reader should see it: SentencePiece's leading-space mark and spaces as U+2423 (open
 * box), a newline as U+21B5, a tab as U+21E5, their byte tokens (<0x0A>, <0x09>, <0x20>) the same, then
 * gp_text_visible. The underscore-like U+2581 read as a bar under the axis. */
char *gp_token_visible(char *out, size_t size, const char *piece, size_t max_chars);
/* A model's name for titles: its folder when the file is the shipped layout's model.safetensors
 * (models/tpp-small/model.safetensors -> "tpp-small"), else the file's name; visible text. */
char *gp_model_name(char *out, size_t size, const char *model_path);
enum { GP_Q_PERCENT = 1 }; /* double % (for tic labels) */
/* A gnuplot single-quoted literal of visible text (apply gp_text_visible first
 * to anything from outside). Returns out; the result is always quoted. */
char *gp_quote(char *out, size_t size, const char *text, unsigned flags);

/* ---------- files ---------- */
/* A file written to DIR/.NAME.tmp.PID and renamed to DIR/NAME on commit. */
typedef struct {
    FILE *f;
    char tmp[4096], final[4096];
} gp_file;
int gp_file_open(gp_file *a, const char *dir, const char *name);
int gp_file_commit(gp_file *a); /* closes; -1 (and the temporary removed) on any write error */
void gp_file_abort(gp_file *a); /* NULL-safe, idempotent */

/* ---------- the figure being written ---------- */
typedef struct {
    store *st;
    int64_t run;
    const char *dir;
    const gs_plot_opts *o;
    int font;               /* points */
    char first_fmt[8];      /* what `gnuplot NAME.gp` renders */
    char run_label[512];    /* "run 1 · model.safetensors": visible text, not quoted */
    char store_name[256];
} plot_ctx;

/* Writes the header comment, the format/output selection, the terminal and
 * the common style (colours as variables C_*, grid, key). what: one line. */
void gp_preamble(FILE *f, const plot_ctx *c, const char *name, const char *what, const char *data_files);
/* Starts a panel of a multiplot at (ox, oy) of size (sx, sy) screen
 * fractions, undoing whatever the panel before it set. */
void gp_panel(FILE *f, const char *comment, double ox, double oy, double sx, double sy);
/* The key of a panel starting at screen x = ox, under its x label, with
 * room for `rows` entries (use the same rows for panels side by side, so
 * their axes line up). */
void gp_key_below(FILE *f, double ox, int rows);
/* Tics for a log axis ("x" or "y") over [lo, hi]: 1 2 5 10 20 50 ... when
 * it spans less than three decades, powers of ten otherwise. */
void gp_log_tics(FILE *f, const char *axis, double lo, double hi);
/* A tic step of 1, 2 or 5 x 10^k giving at most max_tics tics over [lo, hi]. */
double gp_nice_step(double lo, double hi, int max_tics);
/* A panel with no data: its title and a centred message instead of axes. */
void gp_empty_panel(FILE *f, const char *title, const char *message);
/* Closes the output (after the last plot / unset multiplot). */
void gp_epilogue(FILE *f);

/* Columns of numbers (n rows, ncol columns), with a comment header, written
 * atomically to DIR/file. Non-finite values are written as NaN. */
int gp_write_columns(const plot_ctx *c, const char *file, const char *header, const char *colnames, int ncol,
                     int64_t n, const double *const *cols);

/* Finite min and max of v (ignoring NaN); 0 when none is finite. */
int gp_minmax(const double *v, int64_t n, double *lo, double *hi);
/* A padded plotting range around [lo, hi] that is never empty. */
void gp_pad(double *lo, double *hi, int logscale);
/* A count of tokens as short text: 3 significant digits, whole numbers from 100 up (never 5e+03). */
const char *gp_tokens(char *buf, size_t size, double v);
/* A number as short text: %.4g, with "inf"/"n/a" for non-finite values. */
const char *gp_num(char *buf, size_t size, double v);

/* ---------- reading the store ---------- */
/* Series of analysis aid (n >= 0; x/y malloc'd, free them); 0 and NULL when
 * absent, -1 on a store error. */
int64_t gp_series(store *st, int64_t aid, const char *name, double **x, double **y);
/* The label of each point of a series, in idx order (n strings, each
 * malloc'd, NULL where the label is NULL); returns n or -1. */
int64_t gp_series_labels(store *st, int64_t aid, const char *name, char ***labels);
void gp_free_labels(char **labels, int64_t n);
/* A scalar, or NaN when absent. */
double gp_scalar(store *st, int64_t aid, const char *key);
/* A scalar's note into buf ("" when absent). */
char *gp_scalar_note(store *st, int64_t aid, const char *key, char *buf, size_t size);
/* A float32 vector of analysis aid as doubles (malloc'd); 0 and NULL when absent. */
int64_t gp_vector(store *st, int64_t aid, const char *key, double **v);
/* The newest analysis of a registry row (GS_AN_*, analyses/registry.h) for the run; 0 when none. */
int64_t gp_analysis(store *st, int64_t run, unsigned analysis);

/* ---------- the figures (plots/fig_*.c) ---------- */
/* Each writes NAME.gp and its data files and fills the figure's name, title,
 * caption and sources. Returns 1 when it has nothing to draw from (the
 * analyses are absent), 0 when written, -1 on an error. */
int fig_geometry(const plot_ctx *c, gs_plot_figure *fig);
int fig_horizons(const plot_ctx *c, gs_plot_figure *fig);
int fig_default_direction(const plot_ctx *c, gs_plot_figure *fig);
int fig_probe(const plot_ctx *c, gs_plot_figure *fig);
int fig_ablations(const plot_ctx *c, gs_plot_figure *fig);
/* The figures as one table (plots/figures.c), keyed by the analysis registry
 * (analyses/registry.h): gs_plot_store draws them in this order. Adding a
 * figure: its fig_NAME.c, one row here, its matplotlib twin as a cell of the
 * study notebook (notebooks-export/study.py) named in the row, and
 * docs/plots.md. */
typedef struct {
    unsigned analysis;         /* the registry row (GS_AN_*) it is drawn from; 0: the store's newest causal
                                * experiment of a kind (not a run's analysis: the lens) */
    unsigned also;             /* rows it reads besides (GS_AN_* bits) */
    int (*draw)(const plot_ctx *c, gs_plot_figure *fig);
    const char *notebook_cell; /* the id of its matplotlib twin in the study notebook; NULL: none yet */
    const char *when_undrawn;  /* said after "analysis 'X' has no figure" when X is stored but drew nothing */
    const char *reading;       /* one line for the report: what it shows and how to read it */
} gp_figure_row;
extern const gp_figure_row gp_figure_rows[];
extern const int gp_n_figure_rows;
/* The analyses (GS_AN_* bits) the report's summary table shows (plots/report.c). */
extern const unsigned gp_report_analyses;

/* An intervention's label: prefix, what, and its scope in parentheses (a head ablation stored without
 * heads_at zeroed before the norm); into out. */
const char *gp_ablation_label(const store_ablation_ref *r, const char *prefix, char *out, size_t size);
int fig_attention(const plot_ctx *c, gs_plot_figure *fig);
int fig_lens(const plot_ctx *c, gs_plot_figure *fig);
int gp_lens_figure(const plot_ctx *c, int64_t experiment);
int fig_logit_attribution(const plot_ctx *c, gs_plot_figure *fig);

/* Runs `gnuplot -e "fmt='FMT'; out='OUT'" NAME.gp` in dir with stderr
 * captured; anything on stderr (a warning) or a non-zero exit is an error
 * whose message holds gnuplot's first lines. */
int gp_render(const char *program, const char *dir, const char *name, const char *fmt, const char *out);
/* The path of program on PATH (or program itself if it has a /) into buf;
 * 0 when found and executable, -1 otherwise. */
int gp_find_program(const char *program, char *buf, size_t size);

/* Render r's figures into dir in each of formats (plots/plots.c): finds gnuplot when o->render, marks a
 * figure that failed (its error; r->n_failed) and keeps the first message in first_error. -1 only when
 * o->gnuplot names a program that is not there. */
int gp_render_figures(const char *dir, const gs_plot_opts *o, unsigned formats, gs_plot_result *r, char *first_error,
                      size_t fe_size);

/* The context of a figure drawn from an experiment rather than a run (plots/causal_plots.c): labelled
 * "KIND experiment N · MODEL's file name" (model_path may be NULL). */
void gp_experiment_context(plot_ctx *c, gs_plot_opts *o, store *st, const char *dir, const char *kind, int64_t experiment,
                           const char *model_path);
/* Render DIR/NAME.gp to NAME.png when gnuplot is on PATH; a line saying what was made into made. */
int gp_experiment_render(const plot_ctx *c, const char *name, char *made, size_t size);

/* report.md and report.html (plots/report.c). */
int gp_write_report(const plot_ctx *c, const gs_plot_result *r);

#endif
