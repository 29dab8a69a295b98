/* gpnscope lens: the logit lens over a window (analyses/causal/lens.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/lens.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "cli/causal_cli.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char help[] =
    "usage: gpnscope lens MODEL (--text TEXT | --tokens IDS) [--sites LIST] [--top K]\n"
    "                     [--tokenizer T] [--store OUT.db] [--plot DIR] [--json]\n\n"
    "The logit lens over a window: run the tokens from the zero state and decode each\n"
    "site's vector at each position through the model's output path (GPN: the decode\n"
    "norm, projection and tied embedding; a transformer: the final RMSNorm and head),\n"
    "printing its top K tokens with their logits. Position t is the step that read x_t;\n"
    "GPN's state.pred there predicts x_t, a residual stream x_{t+1} (docs/causal.md).\n\n"
    "  --text TEXT    the window as text (tokenized, no BOS)\n"
    "  --tokens IDS   the window as token ids, comma-separated\n"
    "  --sites LIST   comma-separated vector sites of the state's width (default: all of\n"
    "                 them, each layer's; gpnscope info MODEL lists them)\n"
    "  --top K        tokens per site and position, 1 to 100 (default 5)\n"
    "  --tokenizer T  to tokenize --text and print pieces (default $GPNSCOPE_TOKENIZER,\n"
    "                 else the source tree's third_party/llama2-tokenizer.json)\n"
    "  --store OUT.db store the lens (tables causal_experiments, lens_tokens)\n"
    "  --plot DIR     draw the lens as a heatmap: sites by positions, the top-1 token\n"
    "                 written in each cell, coloured by its logit (DIR/lens_heatmap.gp\n"
    "                 and .png; needs --store)\n"
    "  --json         one JSON object: per site, per position, the ids and logits\n";

static int parse_ids(const char *list, int V, int32_t **out) {
    int n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    int32_t *v = malloc((size_t)n * sizeof *v);
    if (!v) return gs_fail("out of memory");
    int k = 0;
    for (const char *p = list; *p;) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x >= V || (*end && *end != ',')) {
            free(v);
            return gs_fail("--tokens %s: token ids from 0 to %d, separated by commas", list, V - 1);
        }
        v[k++] = (int32_t)x;
        p = *end ? end + 1 : end;
    }
    if (!k) { free(v); return gs_fail("--tokens: give at least one id"); }
    *out = v;
    return k;
}

/* --sites LIST, each parsed once into the reference the lens captures: the
 * count, -1 for a list that does not split, -2 for a site the lens cannot
 * decode (gs_error() both) */
static int parse_sites(const gs_model *m, const char *list, probe_site_ref **out) {
    int n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    probe_site_ref *v = calloc((size_t)n, sizeof *v);
    if (!v) return gs_fail("out of memory");
    int k = 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[GS_LENS_SITE_NAME];
        if (len == 0 || len >= sizeof name) { free(v); return gs_fail("--sites %s: site names separated by commas", list); }
        memcpy(name, p, len);
        name[len] = 0;
        if (gs_lens_site(m, name, &v[k++])) { free(v); return -2; }
        p += len + (e ? 1 : 0);
    }
    *out = v;
    return k;
}

static const char *piece_of(const gs_tokenizer *tok, int32_t id, char *buf, size_t size) {
    const char *p = tok ? tokenizer_piece(tok, id) : NULL;
    if (p) return p;
    snprintf(buf, size, "%d", (int)id);
    return buf;
}

typedef struct {
    const char *text, *ids_list, *sites_list, *tok_path, *plot;
    long long top;
    int T, n_sites;
    int32_t *tokens;
    probe_site_ref *sites;
    gs_tokenizer *tok;
    gs_lens_result result;
    int64_t experiment; /* stored as; 0: not stored */
} lens_state;

static void lens_options(run_call *call, cli_opt *rows) {
    lens_state *s = call->state;
    s->top = 5;
    const cli_opt table[] = {
        {CLI_STRING("text", &s->text)},           {CLI_STRING("tokens", &s->ids_list)},
        {CLI_STRING("sites", &s->sites_list)},
        {CLI_INTEGER("top", &s->top, 1, 100, "a number of tokens from 1 to 100")},
        {CLI_STRING("tokenizer", &s->tok_path)}, {CLI_STRING("store", &call->out_path)},
        {CLI_FLAG("json", &call->json)},          {CLI_STRING("plot", &s->plot)},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int lens_check(run_call *call) {
    const lens_state *s = call->state;
    if (call->n_args != 1 || !s->text == !s->ids_list)
        return run_usage(call, call->n_args != 1 ? "give one MODEL" : "give --text or --tokens, one of them");
    if (s->plot && !call->out_path) {
        fprintf(stderr, "gpnscope lens: --plot draws from the stored lens: give --store too\n");
        return 2;
    }
    return 0;
}

/* the tokens and the sites, checked before anything is stored */
static int lens_prepare(run_call *call) {
    lens_state *s = call->state;
    const gs_model *m = call->model;
    int failed;
    s->tok = causal_tokenizer("lens", s->tok_path, m, s->text != NULL, &failed);
    if (failed) return 1;
    if (s->text) {
        size_t n;
        if (tokenizer_encode(s->tok, s->text, strlen(s->text), &s->tokens, &n)) return run_error(call, 1);
        s->T = (int)n;
        if (s->T == 0) {
            fprintf(stderr, "gpnscope lens: --text has no tokens\n");
            return 2;
        }
    } else if ((s->T = parse_ids(s->ids_list, m->cfg.V, &s->tokens)) < 0) {
        return run_error(call, 2);
    }
    s->n_sites = s->sites_list ? parse_sites(m, s->sites_list, &s->sites) : gs_lens_default_sites(m, &s->sites);
    return s->n_sites == -2 ? run_error(call, 1) : s->n_sites < 0 ? run_error(call, 2) : 0;
}

static int lens_run(run_call *call) {
    lens_state *s = call->state;
    return gs_lens_run(call->model, s->tokens, s->T, s->sites, s->n_sites, (int)s->top, &s->result);
}

/* the top tokens as one experiment (table lens_tokens) */
static int lens_write(run_call *call) {
    lens_state *s = call->state;
    const gs_lens_result *r = &s->result;
    if (!call->out) return 0;
    char settings[64];
    snprintf(settings, sizeof settings, "{\"top\": %d, \"tokens\": %d}", r->k, s->T);
    int64_t exp = store_causal_begin(call->out, "lens", call->model->path, call->model->hash, NULL, settings,
                                     GPNSCOPE_VERSION);
    int wr = exp < 0;
    for (int i = 0; i < r->n_sites && !wr; i++)
        for (int t = 0; t < s->T && !wr; t++)
            for (int j = 0; j < r->k && !wr; j++) {
                size_t at = ((size_t)i * s->T + t) * r->k + j;
                wr = store_put_lens(call->out, exp, r->sites[i], t, j, r->ids[at], r->logits[at],
                                    s->tok ? tokenizer_piece(s->tok, r->ids[at]) : NULL);
            }
    if (!wr) wr = store_causal_commit(call->out);
    if (wr) {
        store_causal_rollback(call->out);
        return -1;
    }
    s->experiment = exp;
    return 0;
}

static void lens_json(const run_call *call) {
    const lens_state *s = call->state;
    const gs_lens_result *r = &s->result;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "tokens", cJSON_CreateIntArray((const int *)s->tokens, s->T));
    cJSON *ss = cJSON_AddObjectToObject(o, "sites");
    for (int i = 0; i < r->n_sites; i++) {
        cJSON *ids = cJSON_CreateArray(), *lg = cJSON_CreateArray(), *x = cJSON_AddObjectToObject(ss, r->sites[i]);
        for (int t = 0; t < s->T; t++) {
            size_t at = ((size_t)i * s->T + t) * r->k;
            cJSON_AddItemToArray(ids, cJSON_CreateIntArray((const int *)r->ids + at, r->k));
            cJSON_AddItemToArray(lg, cJSON_CreateFloatArray(r->logits + at, r->k));
        }
        cJSON_AddItemToObject(x, "ids", ids);
        cJSON_AddItemToObject(x, "logits", lg);
    }
    if (s->experiment > 0) cJSON_AddNumberToObject(o, "experiment_id", (double)s->experiment);
    char *text = cJSON_PrintUnformatted(o);
    puts(text);
    free(text);
    cJSON_Delete(o);
}

static void lens_text(const run_call *call) {
    const lens_state *s = call->state;
    const gs_lens_result *r = &s->result;
    char buf[32];
    printf("row t: the step that read token t (shown after t); state.pred there is the prediction of token t "
           "itself, a residual stream's decode the prediction of token t + 1\n");
    for (int i = 0; i < r->n_sites; i++) {
        printf("\n%s: top %d of its decode per position\n", r->sites[i], r->k);
        for (int t = 0; t < s->T; t++) {
            printf("%5d %-14s", t, piece_of(s->tok, s->tokens[t], buf, sizeof buf));
            size_t at0 = ((size_t)i * s->T + t) * r->k;
            /* every logit equal (GPN's zero state at position 0): no ranking to print */
            if (r->k > 1 && r->logits[at0] == r->logits[at0 + r->k - 1]) {
                printf("  (every top-%d logit is %.2f: a tie, no prediction%s)\n", r->k, r->logits[at0],
                       r->logits[at0] == 0 ? "; the zero state" : "");
                continue;
            }
            for (int j = 0; j < r->k; j++) {
                size_t at = at0 + j;
                printf("  %s %.2f", piece_of(s->tok, r->ids[at], buf, sizeof buf), r->logits[at]);
            }
            printf("\n");
        }
    }
    if (s->experiment > 0)
        printf("stored as experiment %lld in %s (table lens_tokens)\n", (long long)s->experiment, call->out_path);
}

static int lens_draw(run_call *call) {
    const lens_state *s = call->state;
    if (!s->plot) return 0;
    char made[4096];
    if (gs_plot_lens(call->out, s->experiment, s->plot, made, sizeof made)) return -1;
    if (!call->json) printf("%s\n", made);
    return 0;
}

static void lens_release(run_call *call) {
    lens_state *s = call->state;
    gs_lens_result_free(&s->result);
    free(s->sites);
    free(s->tokens);
    tokenizer_free(s->tok);
}

static const run_command lens_command = {
    .name = "lens",
    .help = help,
    .state_size = sizeof(lens_state),
    .input = RUN_ON_MODEL,
    .options = lens_options,
    .check = lens_check,
    .prepare = lens_prepare,
    .causal_tables = 1,
    .run = lens_run,
    .write = lens_write,
    .print_json = lens_json,
    .print_text = lens_text,
    .draw = lens_draw,
    .release = lens_release,
};

int cmd_lens(int argc, char **argv) { return run_command_main(&lens_command, argc, argv); }
