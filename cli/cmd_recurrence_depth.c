/* gpnscope recurrence-depth FILE: how far back each layer's attention
 * reaches, from a run's recorded attention patterns (analyses/causal/recurrence_depth.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyses/causal/recurrence_depth.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"

static const char *help =
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

int cmd_recurrence_depth(int argc, char **argv) {
    long long run = 0;
    int json = 0;
    const cli_opt opts[] = {{CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (1 or more)")}, {CLI_FLAG("json", &json)}, {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"recurrence-depth", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc - 1) {
        fputs(help, stderr);
        return 2;
    }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_WRITE);
    if (!st) {
        fprintf(stderr, "gpnscope recurrence-depth: %s\n", gs_error());
        return 1;
    }
    store_lock *lock = NULL;
    if (cli_pick_run("recurrence-depth", st, &run, &lock) != 0) {
        store_close(st);
        return 1;
    }
    gs_recurrence_depth r;
    int rc = 0;
    if (gs_recurrence_depth_compute(st, run, &r) != 0) {
        fprintf(stderr, "gpnscope recurrence-depth: %s: %s\n", path, gs_error());
        rc = 1;
    } else if (gs_recurrence_depth_write(st, run, &r, GPNSCOPE_VERSION) != 0) {
        fprintf(stderr, "gpnscope recurrence-depth: writing results to %s: %s\n", path, gs_error());
        rc = 1;
    } else if (json) {
        print_json(&r, run);
    } else {
        gs_recurrence_depth_print(stdout, &r);
    }
    gs_recurrence_depth_free(&r); /* compute cleared it, also on failure */
    store_close(st);
    store_lock_release(lock);
    return rc;
}
