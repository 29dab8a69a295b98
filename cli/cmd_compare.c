/* gpnscope compare STORE[:RUN[:SITE]] ...: the paper's three structures of
 * several runs (or sites, or layers) side by side, with bootstrap intervals
 * and verdicts; --out DIR adds figures, report.md / report.html and a
 * notebook. The work is in analyses/compare/compare.c (the table), plots/fig_compare.c
 * (figures and report) and notebooks-export/compare_notebook.c. */
#include "cli/cmd_compare.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/inputs.h"
#include "base/tmpfiles.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "notebooks-export/compare_notebook.h"
#include "plots/compare_plots.h"

static const char help[] =
    "usage: gpnscope compare STORE[:RUN[:SITE]] ... [--sites LIST] [--out DIR] [--json]\n"
    "                        [--allow-different-windows] [--boot N] [--seed N] [--max-states N]\n"
    "                        [--format png,svg,pdf] [--no-render] [--quiet]\n\n"
    "Put runs side by side: models of different families, checkpoints of one model, or sites of one\n"
    "model such as each layer's residual stream. For every row (one state site of one run) it\n"
    "measures the paper's three structures with analyze's own code, from the recorded rows (the\n"
    "stores are only read) and judges each by the findings' rules (docs/analyses.md, Findings):\n"
    "  1. default-token direction: ||s_bar|| / mean ||s|| (rule >= 0.25), the 8-batch cosine (>= 0.9),\n"
    "     |cos| with the top singular vector (>= 0.9);\n"
    "  2. content horizon: raw and centered lag cosines at the first lag and at the readable lags\n"
    "     nearest 1500 (raw) and 256 (centered), and h_0.02 (rule: c_1 >= 0.05, 10 <= h_0.02 < 1000);\n"
    "  3. memory pools, where the run recorded per-head decays for the row's layer (GPN+M's\n"
    "     mem.alpha, GDN's blocks.L.attn.alpha): present under both retention estimators, inconclusive\n"
    "     under one only or within Monte Carlo error, else not demonstrated, beside the rule's power on\n"
    "     the paper's pools (the likelihood ratio of two pools against one; docs/analyses.md).\n"
    "Each number comes with a 95% bootstrap interval over windows. docs/comparison.md explains the table.\n\n"
    "Operands:\n"
    "  STORE            the newest complete run of the store, its state site\n"
    "  STORE:RUN        run RUN\n"
    "  STORE:RUN:SITE   SITE of run RUN; SITE may be a pattern with * and ? (blocks.*.hook_resid_post:\n"
    "                   one row per layer); STORE::SITE takes the newest complete run\n"
    "Runs must have been recorded on the same token windows (the same token ids at every position;\n"
    "runs without token rows: the same corpus and window offsets), else compare stops and says which\n"
    "runs differ and where.\n\n"
    "  --sites LIST     comma-separated site patterns for operands without SITE (default: the run's\n"
    "                   state site, role 'state': GPN's state.pred, a layered model's last resid_post)\n"
    "  --out DIR        also write DIR/compare.json (the table with every curve), the figures overlaid\n"
    "                   per row (compare_*.gp, their data and images), DIR/report.md, DIR/report.html\n"
    "                   and DIR/compare.ipynb (created if missing; files of the same names replaced)\n"
    "  --json           print the table as JSON instead of text (rows, each with default_direction,\n"
    "                   content_horizon, memory_pools; numbers as {value, lo, hi})\n"
    "  --allow-different-windows  compare runs recorded on different windows anyway (the table says so)\n"
    "  --boot N         bootstrap resamples of the windows (200); 0: no intervals\n"
    "  --seed N         seed of the bootstrap, the random batches and retention's null draws (1)\n"
    "  --max-states N   states read per row, as analyze (16384); 0: all\n"
    "  --positions P    training (default): a row reads positions below its model's training length\n"
    "                   (data.seq_len of config.json beside the checkpoint, as gpnscope train writes it)\n"
    "                   when its windows are longer, since past it a model extrapolates; all: every\n"
    "                   recorded position. Each row says which it read, beside the run's perplexity by\n"
    "                   position\n"
    "  --format LIST    image formats for --out: png, svg, pdf (png)\n"
    "  --no-render      write the scripts, data and report under --out without running gnuplot\n"
    "  --quiet          no progress lines on stderr\n\n"
    "Exit status: 0, 1 on an error (one line), 2 on a usage error.\n";

void cli_compare_request_default(cli_compare_request *q) {
    memset(q, 0, sizeof *q);
    gs_compare_opts_default(&q->compare);
    gs_plot_opts_default(&q->plot);
}

static void say_progress(void *ctx, int row, int n_rows, const char *label) {
    (void)ctx;
    fprintf(stderr, "compare: row %d of %d: %s\n", row + 1, n_rows, label);
}

typedef struct {
    cli_compare_request q;
    FILE *out;       /* where the table goes */
    gs_compare c;
    int measured;    /* c holds a comparison */
    char *json_text; /* --json: the table as JSON */
} compare_state;

/* compare.json, the figures, the report and the notebook under --out:
 * 0, or -1 with gs_error() */
static int write_outputs(const compare_state *s, int json) {
    const cli_compare_request *q = &s->q;
    char path[4200];
    if (gs_mkdir_p(q->out_dir) != 0) return -1;
    gs_remove_stale_tmp(q->out_dir);
    char *text = gs_compare_json(&s->c, 1);
    if (!text) return -1;
    snprintf(path, sizeof path, "%s/compare.json", q->out_dir);
    int rc = gs_write_atomic(path, text);
    gs_plot_result r;
    if (rc == 0) rc = gs_plot_compare(q->out_dir, text, &q->plot, &r);
    free(text);
    if (rc != 0) return -1;
    snprintf(path, sizeof path, "%s/compare.ipynb", q->out_dir);
    if (gs_notebook_compare(path, "compare.json") != 0) return -1;
    if (json) return 0; /* stdout holds the JSON only */
    fprintf(s->out, "\nwrote %s/compare.json, %d figure%s (%s), %s/report.md, %s/report.html, %s/compare.ipynb\n",
            q->out_dir, r.n_figures, r.n_figures == 1 ? "" : "s",
            !q->plot.render ? "not rendered: --no-render" : r.gnuplot_found ? "rendered" : "gnuplot not found: not rendered",
            q->out_dir, q->out_dir, q->out_dir);
    if (r.notes[0]) fprintf(s->out, "notes:\n%s", r.notes);
    return 0;
}

/* the outputs checked against the stores before any work (base/inputs.h) */
static int check_outputs(const cli_compare_request *q, const gs_compare_operand *ops) {
    static const char *const outputs[] = {"compare.json", "compare.json.tmp", "compare.ipynb", "compare.ipynb.tmp"};
    for (int i = 0; q->out_dir && i < q->n_operands; i++)
        for (int k = 0; k < 3; k++) {
            char side[4200];
            snprintf(side, sizeof side, "%s%s", ops[i].store_path, k == 0 ? "" : k == 1 ? "-wal" : "-shm");
            if (gs_input_add(side)) return -1;
        }
    for (size_t k = 0; q->out_dir && k < sizeof outputs / sizeof *outputs; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", q->out_dir, outputs[k]);
        if (gs_output_check(path)) return -1;
    }
    return 0;
}

static int compare_check(run_call *call) {
    compare_state *s = call->state;
    if (call->n_args < 1) {
        fprintf(stderr, "gpnscope compare: no run given (want STORE[:RUN[:SITE]] ...; see gpnscope compare --help)\n");
        return 2;
    }
    s->q.operands = (const char *const *)call->args;
    s->q.n_operands = call->n_args;
    return 0;
}

static int compare_measure(run_call *call) {
    compare_state *s = call->state;
    const cli_compare_request *q = &s->q;
    gs_compare_operand *ops = calloc((size_t)q->n_operands, sizeof *ops);
    if (!ops) return gs_fail("out of memory");
    int rc = 0;
    for (int i = 0; i < q->n_operands && !rc; i++) rc = gs_compare_parse_operand(q->operands[i], &ops[i]);
    if (!rc) rc = check_outputs(q, ops);
    gs_compare_opts o = q->compare;
    if (!q->quiet) o.progress = say_progress;
    if (!rc) rc = gs_compare_run(ops, q->n_operands, &o, &s->c);
    free(ops);
    if (rc) return -1;
    s->measured = 1;
    if (call->json && !(s->json_text = gs_compare_json(&s->c, 0))) return -1;
    return 0;
}

static void compare_json(const run_call *call) {
    const compare_state *s = call->state;
    fprintf(s->out, "%s\n", s->json_text);
}

static void compare_text(const run_call *call) {
    compare_state *s = call->state;
    gs_compare_print(s->out, &s->c);
}

static int compare_draw(run_call *call) {
    const compare_state *s = call->state;
    return s->q.out_dir ? write_outputs(s, call->json) : 0;
}

static void compare_release(run_call *call) {
    compare_state *s = call->state;
    if (s->measured) gs_compare_free(&s->c);
    free(s->json_text);
}

/* --boot: 0 (no intervals) or 2..100000 resamples, one being no bootstrap */
static int boot_option(const char *cmd, const char *value, void *boot) {
    long long v = 1;
    const char *what = "0 or 2..100000 resamples";
    if (cli_int_option(cmd, "boot", value, 0, 100000, what, &v)) return 2;
    if (v == 1) {
        fprintf(stderr, "gpnscope %s: --boot wants %s, got '%s'\n", cmd, what, value);
        return 2;
    }
    *(int *)boot = (int)v;
    return 0;
}

static void compare_options(run_call *call, cli_opt *rows) {
    compare_state *s = call->state;
    cli_compare_request *q = &s->q;
    cli_compare_request_default(q);
    s->out = stdout;
    static const char *const positions[] = {"training", "all", NULL};
    const cli_opt table[] = {
        {CLI_STRING("sites", &q->compare.sites)},
        {CLI_STRING("out", &q->out_dir), .short_name = 'o'},
        {CLI_FLAG("json", &call->json)},
        {CLI_FLAG("allow-different-windows", &q->compare.allow_different_windows)},
        {CLI_CALL("boot", boot_option, &q->compare.boot)},
        {CLI_INTEGER("seed", &q->compare.seed, 0, INT64_MAX, "a seed >= 0")},
        {CLI_INTEGER("max-states", &q->compare.max_states, 0, INT64_MAX, "a count >= 0")},
        {CLI_CHOICE("positions", &q->compare.all_positions, positions, "'training' or 'all'")},
        {CLI_LIST("format", &q->plot.formats, gs_plot_parse_formats, "")},
        {CLI_CLEAR("no-render", &q->plot.render)},
        {CLI_FLAG("quiet", &q->quiet)},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static const run_command compare_command = {
    .name = "compare",
    .help = help,
    .state_size = sizeof(compare_state),
    .input = RUN_ON_ARGS,
    .options = compare_options,
    .check = compare_check,
    .run = compare_measure,
    .print_json = compare_json,
    .print_text = compare_text,
    .draw = compare_draw,
    .release = compare_release,
};

int cli_compare_run(const cli_compare_request *q, FILE *out) {
    compare_state s = {.q = *q, .out = out};
    run_call call = {.state = &s, .args = (char **)q->operands, .n_args = q->n_operands, .json = q->json};
    return run_command_call(&compare_command, &call);
}

int cmd_compare(int argc, char **argv) { return run_command_main(&compare_command, argc, argv); }
