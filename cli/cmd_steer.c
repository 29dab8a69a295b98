/* gpnscope steer: add c u to the state and measure NLL and top-1 (analyses/causal/steering.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/direction.h"
#include "analyses/causal/steering.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "cli/causal_cli.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char help[] =
    "usage: gpnscope steer MODEL --corpus C --direction D --c LIST [--from STORE] [--run N]\n"
    "                      [--from-position P] [--scope carry|decode] [--seq-len T] [--windows K]\n"
    "                      [--skip K] [--tokenizer F] [--batch B] [--store OUT.db] [--plot DIR]\n"
    "                      [--max-steps N] [--json]\n\n"
    "Add c u to the model's state at every step (or from position P on), u the direction D\n"
    "scaled to length 1, for each c of the list, over held-out windows of the corpus; report\n"
    "the mean NLL and its change from the unsteered run, the share of tokens whose top-1\n"
    "prediction changed, and the most frequent top-1 predictions under steering. The\n"
    "mean state norm at the site is printed beside, the scale c is in.\n\n"
    "  --corpus C        token shards, JSONL or text (docs/corpora.md)\n"
    "  --direction D     s_bar, pc1 (centered) or top_sv (uncentered top singular vector;\n"
    "                    a store's geometry analysis), ANALYSIS:KEY (a vector\n"
    "                    a store's analysis holds, e.g. geometry:dim_std), or FILE.npy (d floats,\n"
    "                    e.g. a probe's weights)\n"
    "  --from STORE      the store whose analyses hold D (the newest such analysis)\n"
    "  --run N           with --from: that run's analysis\n"
    "  --c LIST          coefficients, comma-separated, up to 64 (e.g. -8,-4,0,4,8)\n"
    "  --from-position P steer positions P and later, and count only them (default 0)\n"
    "  --scope S         carry (default): the state that is decoded and carried (GPN's\n"
    "                    state.pred; a layered family's last hook_resid_post); decode: GPN's\n"
    "                    state.decode, the decoded copy only (the recurrence unsteered)\n"
    "  --seq-len T       tokens per window (default 128)\n"
    "  --windows K       windows (default 16), after --skip K windows (default 0)\n"
    "  --tokenizer F     for text and JSONL corpora (default $GPNSCOPE_TOKENIZER, else\n"
    "                    the source tree's third_party/llama2-tokenizer.json)\n"
    "  --batch B         windows per batch, 1 to 4096 (default 16)\n"
    "  --store OUT.db    store the curve (tables causal_experiments, steer_results); default:\n"
    "                    the --from store, so the study's notebook, report and view show it\n"
    "  --plot DIR        draw it (DIR/steer_curve.gp and .png; needs --store)\n"
    "  --json            one JSON object\n"
    "  --max-steps N     the most token steps to run (default 2000000, as patch's); a larger\n"
    "                    sweep is refused before it starts\n"
    "Runs on the CPU: 1 + (number of c) passes over the windows, each windows x seq-len\n"
    "token steps; the plan is printed on stderr before it starts, with progress on a\n"
    "terminal. See docs/causal.md.\n";

static cJSON *point_json(const gs_steer_point *p, const gs_tokenizer *tok) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "c", p->c);
    cJSON_AddNumberToObject(x, "tokens", (double)p->n_tokens);
    cJSON_AddNumberToObject(x, "nll", p->nll);
    cJSON_AddNumberToObject(x, "delta_nll", p->delta_nll);
    cJSON_AddNumberToObject(x, "top1_changed", p->top1_changed);
    cJSON *top = cJSON_AddArrayToObject(x, "top_tokens");
    for (int k = 0; k < p->n_top; k++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "id", p->top_id[k]);
        const char *piece = tok ? tokenizer_piece(tok, p->top_id[k]) : NULL;
        if (piece) cJSON_AddStringToObject(t, "piece", piece);
        cJSON_AddNumberToObject(t, "share", p->top_share[k]);
        cJSON_AddItemToArray(top, t);
    }
    return x;
}

typedef struct {
    const char *corpus_path, *direction, *from, *tok_path, *plot, *c_list, *scope;
    long long seq_len, windows, skip, from_pos, max_steps;
    int batch, n_c;
    double cs[GS_STEER_MAX_C];
    gs_tokenizer *tok;
    gs_corpus *corpus;
    float *u;                /* the direction, unit length */
    gs_steer_result *result;
    int64_t experiment;      /* stored as; 0: not stored */
} steer_state;

static void steer_options(run_call *call, cli_opt *rows) {
    steer_state *s = call->state;
    s->scope = "carry";
    s->seq_len = 128;
    s->windows = 16;
    s->max_steps = 2000000;
    s->batch = 16;
    const cli_opt table[] = {
        /* what to steer with, and how much */
        {CLI_STRING("corpus", &s->corpus_path)}, {CLI_STRING("direction", &s->direction)},
        {CLI_STRING("from", &s->from)},
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_STRING("c", &s->c_list)}, {CLI_STRING("scope", &s->scope)},
        {CLI_INTEGER("from-position", &s->from_pos, 0, 1 << 24, "a position >= 0")},
        /* the windows */
        {CLI_INTEGER("seq-len", &s->seq_len, 1, 1 << 20, "a window length >= 1")},
        {CLI_INTEGER("windows", &s->windows, 1, INT64_MAX, "a number of windows >= 1")},
        {CLI_INTEGER("skip", &s->skip, 0, INT64_MAX, "a number of windows >= 0")},
        {CLI_INTEGER("batch", &s->batch, 1, 4096, "a batch between 1 and 4096")},
        /* the outputs */
        {CLI_STRING("tokenizer", &s->tok_path)}, {CLI_STRING("store", &call->out_path)},
        {CLI_STRING("plot", &s->plot)}, {CLI_FLAG("json", &call->json)},
        {CLI_INTEGER("max-steps", &s->max_steps, 1, INT64_MAX, "a number of token steps (a positive integer)")},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int steer_check(run_call *call) {
    steer_state *s = call->state;
    if (call->n_args != 1 || !s->corpus_path || !s->direction || !s->c_list)
        return run_usage(call, call->n_args != 1 ? "give one MODEL" : !s->corpus_path ? "--corpus is required"
                               : !s->direction ? "--direction is required" : "--c is required");
    if (strcmp(s->scope, "carry") && strcmp(s->scope, "decode")) {
        fprintf(stderr, "gpnscope steer: --scope %s: carry or decode\n", s->scope);
        return 2;
    }
    /* the study's store, where its notebook, report and view look */
    if (!call->out_path && s->from) call->out_path = causal_default_store("steer", s->from);
    if (s->plot && !call->out_path) {
        fprintf(stderr, "gpnscope steer: --plot draws from the stored curve: give --store too\n");
        return 2;
    }
    s->n_c = causal_numbers("steer", "c", s->c_list, s->cs, GS_STEER_MAX_C);
    return s->n_c < 0 ? 2 : 0;
}

/* the tokenizer, corpus and direction, and the plan checked against the
 * budget before any work (the corpus may hold fewer windows than asked) */
static int steer_prepare(run_call *call) {
    steer_state *s = call->state;
    const gs_model *m = call->model;
    int failed;
    if (!(s->result = calloc(1, sizeof *s->result))) return gs_fail("out of memory"), run_error(call, 1);
    corpus_format fmt = corpus_detect(s->corpus_path);
    s->tok = causal_tokenizer("steer", s->tok_path, m, fmt != CORPUS_SHARDS, &failed);
    if (failed) return 1;
    corpus_options co;
    corpus_options_default(&co);
    co.seq_len = s->seq_len;
    co.windows = s->windows;
    co.skip = s->skip;
    co.vocab_size = m->cfg.V;
    if (!(s->corpus = corpus_open(s->corpus_path, s->tok, &co))) return run_error(call, 1);
    if (!(s->u = malloc((size_t)m->cfg.d * sizeof *s->u))) return gs_fail("out of memory"), run_error(call, 1);
    store *src = NULL;
    if (s->from && !(src = store_open(s->from, 0))) return run_error(call, 1);
    int loaded = gs_direction_load(s->direction, src, call->run, m->cfg.d, s->u);
    store_close(src);
    if (loaded) return run_error(call, 1);
    int64_t n_win = corpus_n_windows(s->corpus), steps = (int64_t)(s->n_c + 1) * n_win * s->seq_len;
    char plan[256];
    snprintf(plan, sizeof plan, "%d coefficient%s + the unsteered run: %d passes of %lld window%s x %lld tokens = %lld "
             "token steps", s->n_c, s->n_c == 1 ? "" : "s", s->n_c + 1, (long long)n_win, n_win == 1 ? "" : "s",
             s->seq_len, (long long)steps);
    if (causal_plan_check("steer", plan, (long long)steps, s->max_steps,
                          "give fewer --c, --windows or a shorter --seq-len"))
        return 1;
    return 0;
}

static int64_t steer_passes(const run_call *call) { return ((const steer_state *)call->state)->n_c + 1; }

static int steer_run(run_call *call) {
    steer_state *s = call->state;
    gs_steer_opts o = {.u = s->u, .c = s->cs, .n_c = s->n_c, .from = (int)s->from_pos,
                       .decode_only = !strcmp(s->scope, "decode"), .batch = s->batch,
                       .progress = progress_callback, .progress_ctx = &call->bar};
    return gs_steer_run(call->model, s->corpus, &o, s->result);
}

/* the curve as one experiment (tables causal_experiments, steer_results) */
static int steer_write(run_call *call) {
    steer_state *s = call->state;
    const gs_steer_result *r = s->result;
    if (!call->out) return 0;
    cJSON *set = cJSON_CreateObject();
    cJSON_AddStringToObject(set, "direction", s->direction);
    cJSON_AddStringToObject(set, "site", r->site);
    cJSON_AddStringToObject(set, "scope", s->scope);
    cJSON_AddNumberToObject(set, "from_position", (double)s->from_pos);
    cJSON_AddNumberToObject(set, "seq_len", (double)s->seq_len);
    cJSON_AddNumberToObject(set, "windows", (double)r->windows);
    cJSON_AddNumberToObject(set, "skip", (double)s->skip);
    cJSON_AddNumberToObject(set, "baseline_nll", r->baseline_nll);
    cJSON_AddNumberToObject(set, "state_norm", r->state_norm);
    char *settings = cJSON_PrintUnformatted(set);
    cJSON_Delete(set);
    int64_t exp = store_causal_begin(call->out, "steer", call->model->path, call->model->hash, s->corpus_path,
                                     settings, GPNSCOPE_VERSION);
    free(settings);
    int wr = exp < 0;
    for (int k = 0; k < r->n && !wr; k++) {
        const gs_steer_point *p = &r->point[k];
        cJSON *x = point_json(p, s->tok);
        char *tj = cJSON_PrintUnformatted(cJSON_GetObjectItem(x, "top_tokens"));
        cJSON_Delete(x);
        wr = store_put_steer(call->out, exp, p->c, p->n_tokens, p->nll, p->delta_nll, p->top1_changed, tj);
        free(tj);
    }
    if (!wr) wr = store_causal_commit(call->out);
    if (wr) {
        store_causal_rollback(call->out);
        return -1;
    }
    s->experiment = exp;
    return 0;
}

static void steer_json(const run_call *call) {
    const steer_state *s = call->state;
    const gs_steer_result *r = s->result;
    cJSON *all = cJSON_CreateObject();
    cJSON_AddStringToObject(all, "site", r->site);
    cJSON_AddStringToObject(all, "direction", s->direction);
    cJSON_AddNumberToObject(all, "windows", (double)r->windows);
    cJSON_AddNumberToObject(all, "tokens", (double)r->n_tokens);
    cJSON_AddNumberToObject(all, "from_position", (double)s->from_pos);
    cJSON_AddNumberToObject(all, "baseline_nll", r->baseline_nll);
    cJSON_AddNumberToObject(all, "state_norm", r->state_norm);
    cJSON *pts = cJSON_AddArrayToObject(all, "points");
    for (int k = 0; k < r->n; k++) cJSON_AddItemToArray(pts, point_json(&r->point[k], s->tok));
    if (call->out) cJSON_AddNumberToObject(all, "experiment_id", (double)s->experiment);
    char *text = cJSON_PrintUnformatted(all);
    puts(text);
    free(text);
    cJSON_Delete(all);
}

static void steer_text(const run_call *call) {
    const steer_state *s = call->state;
    const gs_steer_result *r = s->result;
    printf("steering %s along %s (unit length; mean ||s|| there %.4g), %lld windows, %lld tokens from position %lld\n",
           r->site, s->direction, r->state_norm, (long long)r->windows, (long long)r->n_tokens, s->from_pos);
    printf("unsteered NLL %.4f\n%10s %9s %9s %8s   most frequent top-1 predictions\n", r->baseline_nll, "c", "NLL",
           "change", "top-1 chg");
    for (int k = 0; k < r->n; k++) {
        const gs_steer_point *p = &r->point[k];
        printf("%10.4g %9.4f %+9.4f %8.3f  ", p->c, p->nll, p->delta_nll, p->top1_changed);
        for (int j = 0; j < p->n_top; j++) {
            const char *piece = s->tok ? tokenizer_piece(s->tok, p->top_id[j]) : NULL;
            if (piece) printf(" %s %.2f", piece, p->top_share[j]);
            else printf(" %d %.2f", (int)p->top_id[j], p->top_share[j]);
        }
        printf("\n");
    }
    if (s->experiment > 0)
        printf("stored as experiment %lld in %s (table steer_results)\n", (long long)s->experiment, call->out_path);
}

static int steer_draw(run_call *call) {
    const steer_state *s = call->state;
    if (!s->plot) return 0;
    char made[4096];
    if (gs_plot_steer(call->out, s->experiment, s->plot, made, sizeof made)) return -1;
    if (!call->json) printf("%s\n", made);
    return 0;
}

static void steer_release(run_call *call) {
    steer_state *s = call->state;
    free(s->result);
    free(s->u);
    corpus_free(s->corpus);
    tokenizer_free(s->tok);
}

static const run_command steer_command = {
    .name = "steer",
    .help = help,
    .state_size = sizeof(steer_state),
    .input = RUN_ON_MODEL,
    .options = steer_options,
    .check = steer_check,
    .prepare = steer_prepare,
    .causal_tables = 1,
    .progress_unit = "runs",
    .planned = steer_passes,
    .run = steer_run,
    .done = steer_passes,
    .write = steer_write,
    .print_json = steer_json,
    .print_text = steer_text,
    .draw = steer_draw,
    .release = steer_release,
};

int cmd_steer(int argc, char **argv) { return run_command_main(&steer_command, argc, argv); }
