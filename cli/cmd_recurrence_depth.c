/* gpnscope recurrence-depth FILE: how far back each layer's attention
 * reaches, from a run's recorded attention patterns (analyses/causal/recurrence_depth.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyses/causal/recurrence_depth.h"
#include "cli/commands.h"
#include "cli/run_command.h"

static const char help[] =
    "usage: gpnscope recurrence-depth FILE [--run N] [--json]\n\n"
    "How far back each layer's attention reaches, per layer and head, from the attention\n"
    "pattern sites a run recorded (record --sites blocks.0.attn.hook_pattern,...; each keeps\n"
    "a head's weights on its 64 most recent keys). For the Recurrent Transformer the key at\n"
    "lag k >= 1 is the layer's own output k positions back and lag 0 the diagonal key made\n"
    "from its input. Averaged over every recorded position:\n"
    "  mean_lag       sum_k w_k k / sum_k w_k over the kept keys\n"
    "  recurrent_lag  the same over the recurrent keys only (k >= 1)\n"
    "  diag_share     the weight on the diagonal key (1 - it: on the layer's own outputs)\n"
    "  kept_mass      the weight on the kept keys (1 while a position has < 64 keys)\n"
    "  deep_share     the share of positions whose older keys took weight: there the lags\n"
    "                 are lower bounds\n"
    "The results are written to the store as analysis 'recurrence_depth' (scalars\n"
    "L{i}.h{h}.NAME, series L{i}.h{h}.lag_weight: the mean weight at each lag).\n"
    "Definitions: docs/analyses.md.\n\n"
    "  --run N   the run (default: the newest complete run)\n"
    "  --json    print one JSON object instead of the table\n";

static void print_json(const gs_recurrence_depth *r, long long run) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", (double)run);
    cJSON_AddNumberToObject(o, "keys", r->keys);
    cJSON *layers = cJSON_AddArrayToObject(o, "heads");
    for (int i = 0; i < r->n_layers * r->n_heads; i++) {
        const gs_recurrence_head *h = &r->heads[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "layer", h->layer);
        cJSON_AddNumberToObject(x, "head", h->head);
        cJSON_AddNumberToObject(x, "rows", (double)h->rows);
        const struct { const char *k; double v; } f[] = {{"mean_lag", h->mean_lag}, {"recurrent_lag", h->recurrent_lag},
                                                         {"diag_share", h->diag_share}, {"kept_mass", h->kept_mass},
                                                         {"deep_share", h->deep_share}};
        for (int k = 0; k < 5; k++)
            if (isnan(f[k].v)) cJSON_AddNullToObject(x, f[k].k);
            else cJSON_AddNumberToObject(x, f[k].k, f[k].v);
        cJSON_AddItemToObject(x, "lag_weight", cJSON_CreateDoubleArray(h->lag_weight, r->keys));
        cJSON_AddItemToArray(layers, x);
    }
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
}

static void depth_options(run_call *call, cli_opt *rows) {
    const cli_opt table[] = {
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (1 or more)")}, {CLI_FLAG("json", &call->json)}, {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int depth_compute(run_call *call) { return gs_recurrence_depth_compute(call->st, call->run, call->state); }

static int depth_write(run_call *call) {
    return gs_recurrence_depth_write(call->st, call->run, call->state, GPNSCOPE_VERSION);
}

static void depth_json(const run_call *call) { print_json(call->state, call->run); }

static void depth_text(const run_call *call) { gs_recurrence_depth_print(stdout, call->state); }

/* compute cleared it, also on failure */
static void depth_release(run_call *call) { gs_recurrence_depth_free(call->state); }

static const run_command depth_command = {
    .name = "recurrence-depth",
    .help = help,
    .state_size = sizeof(gs_recurrence_depth),
    .options = depth_options,
    .usage_prints_help = 1,
    .run = depth_compute,
    .write = depth_write,
    .print_json = depth_json,
    .print_text = depth_text,
    .release = depth_release,
};

int cmd_recurrence_depth(int argc, char **argv) { return run_command_main(&depth_command, argc, argv); }
