/* gpnscope attention: exact effective attention of a recorded run's
 * delta-rule heads (analyses/causal/attention_run.h). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/attention_run.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/run_command.h"

static const char help[] =
    "usage: gpnscope attention FILE [--run N] [--windows K] [--length T] [--heads LIST]\n"
    "                          [--layers LIST] [--top-k K] [--full-upto T] [--model M] [--max-work N]\n"
    "                          [--json]\n\n"
    "Exact effective attention of delta-rule memory heads (GPN+M's memory, Gated\n"
    "DeltaNet's heads in every layer): re-run a recorded run's model over its first\n"
    "windows, capture q, k, v, alpha, beta and the read at the engine's own sites, and\n"
    "write each read o_t = sum_j a_tj v_j as weights on the earlier writes,\n"
    "  a_tj = beta_j k_j^T A_{j+1} ... A_t q_t,  A_i = alpha_i I - beta_i k_i k_i^T (GPN+M)\n"
    "                                           A_i = alpha_i (I - beta_i k_i k_i^T) (GDN)\n"
    "by carrying each query backwards through the transitions. Beside them the\n"
    "heuristic that drops key removal (TransformerLens's for Gated DeltaNet),\n"
    "h_tj = beta_j k_j^T q_t alpha_{j+1} ... alpha_t, and per head how far it is from\n"
    "the exact weights. Every query checks sum_j a_tj v_j against the engine's read.\n\n"
    "Cost: O(T^2 d_k) per head, layer and window (plus O(T^2 d_v) for the check) and\n"
    "16 T^2 bytes of scratch: bound it with --windows, --length, --heads, --layers. The\n"
    "plan is printed on stderr before the work, with progress on a terminal.\n\n"
    "Stored under analysis 'attention' (docs/causal.md, docs/sql.md): attention_queries\n"
    "(per query: the top-k keys' share of sum_j |a_tj|, the heuristic's distance, the\n"
    "read check), attention_topk (per query its top-k keys with exact and heuristic\n"
    "weights; view attention_top_text adds the tokens), attention_matrices (the whole\n"
    "T x T matrices when T <= --full-upto), and per head the summaries as scalars\n"
    "L{layer}.h{head}.heuristic_l1, .heuristic_read_error, .read_error_max, .topk_mass, .queries,\n"
    ".queries_excluded (query 0 and all-zero weights, left out of the means).\n"
    "`gpnscope plot FILE` draws the heatmaps of the first window.\n\n"
    "  --run N         the run (default: the newest complete run)\n"
    "  --windows K     the run's first K windows (default 4)\n"
    "  --length T      the first T positions of each window (default: the run's, at most 512)\n"
    "  --heads LIST    heads, e.g. 0,3,5 (default: every head)\n"
    "  --layers LIST   layers, e.g. 0,1 (default: every layer)\n"
    "  --top-k K       keys kept per query, 1 to 4096 (default 8)\n"
    "  --full-upto T   store the whole matrices when the length is at most T (default\n"
    "                  128; 0: never); they take 8 T^2 bytes per head, layer and window\n"
    "  --model FILE    the run's checkpoint, if it moved (its sha256 must match)\n"
    "  --max-work N    the most multiply-adds to plan, windows x (layer, head) pairs x\n"
    "                  T^2 (1.5 d_k + d_v) (default 5e10: minutes on two cores);\n"
    "                  a larger plan is refused before it starts\n"
    "  --json          the per-head summaries as one JSON object\n";

static void print_plan(void *ctx, const char *text) {
    (void)ctx;
    fprintf(stderr, "attention: %s\n", text);
}

static void print_json(const gs_attention_result *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "analysis_id", (double)r->analysis_id);
    cJSON_AddNumberToObject(o, "windows", (double)r->windows);
    cJSON_AddNumberToObject(o, "length", r->T);
    cJSON_AddNumberToObject(o, "top_k", r->top_k);
    cJSON_AddBoolToObject(o, "full_matrices", r->full);
    cJSON *heads = cJSON_AddArrayToObject(o, "heads");
    for (int i = 0; i < r->n_heads; i++) {
        const gs_attention_head *h = &r->head[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "layer", h->layer);
        cJSON_AddNumberToObject(x, "head", h->head);
        cJSON_AddNumberToObject(x, "queries", (double)h->queries);
        cJSON_AddNumberToObject(x, "queries_excluded", (double)h->excluded);
        cJSON_AddNumberToObject(x, "heuristic_l1", h->heuristic_l1);
        cJSON_AddNumberToObject(x, "heuristic_read_error", h->heuristic_error);
        cJSON_AddNumberToObject(x, "read_error_max", h->read_error_max);
        cJSON_AddNumberToObject(x, "topk_mass", h->topk_mass);
        cJSON_AddItemToArray(heads, x);
    }
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
}

typedef struct {
    gs_attention_opts opts;
    gs_attention_result result;
} attention_state;

static void attention_options(run_call *call, cli_opt *rows) {
    gs_attention_opts *o = &((attention_state *)call->state)->opts;
    gs_attention_opts_default(o);
    o->code_version = GPNSCOPE_VERSION;
    const cli_opt table[] = {
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_INTEGER("windows", &o->windows, 1, 1 << 20, "a number of windows >= 1")},
        {CLI_INTEGER("length", &o->length, 1, 8192, "a number of positions from 1 to 8192")},
        {CLI_STRING("heads", &o->heads)},
        {CLI_STRING("layers", &o->layers)},
        {CLI_INTEGER("top-k", &o->top_k, 1, 4096, "a number of keys from 1 to 4096")},
        {CLI_INTEGER("full-upto", &o->full_upto, 0, 8192, "a length from 0 (never) to 8192")},
        {CLI_STRING("model", &o->model_path)},
        {CLI_INTEGER("max-work", &o->max_work, 1, INT64_MAX, "a number of multiply-adds (a positive integer)")},
        {CLI_FLAG("json", &call->json)},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int64_t attention_planned(const run_call *call) { return ((const attention_state *)call->state)->opts.windows; }

static int attention_analysis(run_call *call) {
    attention_state *a = call->state;
    a->opts.progress = progress_callback;
    a->opts.progress_ctx = &call->bar;
    a->opts.plan = print_plan;
    return gs_attention_run(call->st, call->run, &a->opts, &a->result);
}

static int64_t attention_done(const run_call *call) { return ((const attention_state *)call->state)->result.windows; }

static void attention_json(const run_call *call) { print_json(&((const attention_state *)call->state)->result); }

static void attention_text(const run_call *call) {
    const gs_attention_result *r = &((const attention_state *)call->state)->result;
    printf("run %lld: %lld windows of %d positions, top %d keys per query%s; stored in tables attention_queries, "
           "attention_topk%s with analysis_id %lld (docs/causal.md; gpnscope plot draws it)\n",
           call->run, (long long)r->windows, r->T, r->top_k, r->full ? ", full matrices stored" : "",
           r->full ? ", attention_matrices" : "", (long long)r->analysis_id);
    printf("%-8s %9s %9s %14s %16s %14s %12s\n", "head", "queries", "excluded", "heuristic L1", "heuristic read",
           "exact read", "top-k mass");
    for (int i = 0; i < r->n_heads; i++) {
        const gs_attention_head *h = &r->head[i];
        char name[24];
        snprintf(name, sizeof name, "L%d.h%d", h->layer, h->head);
        printf("%-8s %9lld %9lld %14.4f %16.4f %14.2e %12.4f\n", name, (long long)h->queries, (long long)h->excluded,
               h->heuristic_l1, h->heuristic_error, h->read_error_max, h->topk_mass);
    }
    printf("heuristic L1: mean over queries of sum_j |h_tj - a_tj| / sum_j |a_tj|; heuristic read: mean\n"
           "||sum_j h_tj v_j - o_t|| / ||o_t||; exact read: the largest such error of the exact weights;\n"
           "the means leave out the excluded queries: query 0 and any whose exact weights are all zero\n");
}

static const run_command attention_command = {
    .name = "attention",
    .help = help,
    .state_size = sizeof(attention_state),
    .options = attention_options,
    .progress_unit = "windows",
    .planned = attention_planned,
    .run = attention_analysis,
    .done = attention_done,
    .print_json = attention_json,
    .print_text = attention_text,
};

int cmd_attention(int argc, char **argv) { return run_command_main(&attention_command, argc, argv); }
