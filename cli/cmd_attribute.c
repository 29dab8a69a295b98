/* gpnscope attribute: direct logit attribution of a recorded GPN / GPN+M run
 * (analyses/causal/logit_attribution.h). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/logit_attribution.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/run_command.h"

static const char help[] =
    "usage: gpnscope attribute FILE [--run N] [--windows K] [--length T] [--model M] [--json]\n\n"
    "Direct logit attribution for GPN and GPN+M: re-run a recorded run's model over its\n"
    "first windows and split each predicted state into the parts the step forms it from,\n"
    "  carry          the gated carry of the previous predicted state, G_0 fg_{t-1} s^p_{t-1}\n"
    "  ground         the grounded input path, G_0 rms(E[x_{t-1}]) F\n"
    "  ffn (layer)    each layer's FFN output, times the predict gates of the layers after it\n"
    "  mem (layer, head)  each memory head's share of the read, times the same gates\n"
    "(G_l: the product of the predict gates of layers l and after), all read at the\n"
    "engine's sites; decode each through the output head with the decode norm's scale\n"
    "FROZEN from the full state (so the parts add up to the logit; a part decoded alone\n"
    "would be normed by its own scale), and attribute the recorded token's logit to them.\n"
    "'bias' is the decoder bias's share; 'residual' is the engine's logit minus the sum\n"
    "of the parts, float rounding, measured at every position.\n\n"
    "Stored under analysis 'logit_attribution' (docs/causal.md, docs/sql.md): table\n"
    "logit_attribution, one row per (window, position, part, layer, head); scalars\n"
    "PART.mean and PART.mean_abs (e.g. mem.L0.h3.mean), residual_max, residual_rel.\n"
    "`gpnscope plot FILE` draws the per-part means.\n\n"
    "  --run N        the run (default: the newest complete run)\n"
    "  --windows K    the run's first K windows (default 4)\n"
    "  --length T     the first T positions of each window (default: all)\n"
    "  --model FILE   the run's checkpoint, if it moved (its sha256 must match)\n"
    "  --json         the per-part summaries as one JSON object\n";

static void part_name(const gs_dla_part *p, char *out, size_t size) {
    if (p->head >= 0) snprintf(out, size, "%s.L%d.h%d", p->part, p->layer, p->head);
    else if (p->layer >= 0) snprintf(out, size, "%s.L%d", p->part, p->layer);
    else snprintf(out, size, "%s", p->part);
}

typedef struct {
    gs_dla_opts opts;
    gs_dla_result result;
} attribute_state;

static void attribute_options(run_call *call, cli_opt *rows) {
    gs_dla_opts *o = &((attribute_state *)call->state)->opts;
    gs_dla_opts_default(o);
    o->code_version = GPNSCOPE_VERSION;
    const cli_opt table[] = {
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_INTEGER("windows", &o->windows, 1, 1 << 20, "a number of windows >= 1")},
        {CLI_INTEGER("length", &o->length, 1, 1 << 20, "a number of positions >= 1")},
        {CLI_STRING("model", &o->model_path)},
        {CLI_FLAG("json", &call->json)},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int64_t attribute_planned(const run_call *call) { return ((const attribute_state *)call->state)->opts.windows; }

static int attribute_analysis(run_call *call) {
    attribute_state *a = call->state;
    a->opts.progress = progress_callback;
    a->opts.progress_ctx = &call->bar;
    return gs_logit_attribution(call->st, call->run, &a->opts, &a->result);
}

static int64_t attribute_done(const run_call *call) { return ((const attribute_state *)call->state)->result.windows; }

static void attribute_json(const run_call *call) {
    const gs_dla_result *r = &((const attribute_state *)call->state)->result;
    char name[48];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "analysis_id", (double)r->analysis_id);
    cJSON_AddNumberToObject(j, "windows", (double)r->windows);
    cJSON_AddNumberToObject(j, "tokens", (double)r->tokens);
    cJSON_AddNumberToObject(j, "residual_max", r->residual_max);
    cJSON_AddNumberToObject(j, "residual_rel", r->residual_rel);
    cJSON *parts = cJSON_AddObjectToObject(j, "parts");
    for (int i = 0; i < r->n_parts; i++) {
        part_name(&r->part[i], name, sizeof name);
        cJSON *x = cJSON_AddObjectToObject(parts, name);
        cJSON_AddNumberToObject(x, "mean", r->part[i].mean);
        cJSON_AddNumberToObject(x, "mean_abs", r->part[i].mean_abs);
    }
    char *s = cJSON_PrintUnformatted(j);
    puts(s);
    free(s);
    cJSON_Delete(j);
}

static void attribute_text(const run_call *call) {
    const gs_dla_result *r = &((const attribute_state *)call->state)->result;
    char name[48];
    printf("run %lld: %lld tokens of %lld windows; the decode norm's scale frozen from the full state; stored in "
           "analysis_values with analysis_id %lld (docs/causal.md)\n",
           call->run, (long long)r->tokens, (long long)r->windows, (long long)r->analysis_id);
    printf("%-16s %12s %12s\n", "part", "mean logit", "mean |logit|");
    for (int i = 0; i < r->n_parts; i++) {
        part_name(&r->part[i], name, sizeof name);
        printf("%-16s %+12.4f %12.4f\n", name, r->part[i].mean, r->part[i].mean_abs);
    }
    printf("residual (logit - sum of parts): at most %.3g, %.3g of the mean |logit| %.4g\n", r->residual_max,
           r->residual_rel, r->logit_mean_abs);
}

static const run_command attribute_command = {
    .name = "attribute",
    .help = help,
    .state_size = sizeof(attribute_state),
    .options = attribute_options,
    .progress_unit = "windows",
    .planned = attribute_planned,
    .run = attribute_analysis,
    .done = attribute_done,
    .print_json = attribute_json,
    .print_text = attribute_text,
};

int cmd_attribute(int argc, char **argv) { return run_command_main(&attribute_command, argc, argv); }
