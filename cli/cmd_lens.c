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
#include "cli/options.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char *help =
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

static int parse_sites(const char *list, char (**out)[GS_LENS_SITE_NAME]) {
    int n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    char (*v)[GS_LENS_SITE_NAME] = calloc((size_t)n, sizeof *v);
    if (!v) return gs_fail("out of memory");
    int k = 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0 || len >= GS_LENS_SITE_NAME) { free(v); return gs_fail("--sites %s: site names separated by commas", list); }
        memcpy(v[k++], p, len);
        p += len + (e ? 1 : 0);
    }
    *out = v;
    return k;
}

static const char *piece_of(const gpn_tokenizer *tok, int32_t id, char *buf, size_t size) {
    const char *p = tok ? tokenizer_piece(tok, id) : NULL;
    if (p) return p;
    snprintf(buf, size, "%d", (int)id);
    return buf;
}

int cmd_lens(int argc, char **argv) {
    const char *text = NULL, *ids_list = NULL, *sites_list = NULL, *tok_path = NULL, *out = NULL, *plot = NULL;
    long long top = 5;
    int json = 0;
    const cli_opt opts[] = {
        {CLI_STRING("text", &text)},           {CLI_STRING("tokens", &ids_list)}, {CLI_STRING("sites", &sites_list)},
        {CLI_INTEGER("top", &top, 1, 100, "a number of tokens from 1 to 100")},
        {CLI_STRING("tokenizer", &tok_path)}, {CLI_STRING("store", &out)},      {CLI_FLAG("json", &json)},
        {CLI_STRING("plot", &plot)},           {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"lens", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (argc - optind != 1 || !text == !ids_list) {
        fprintf(stderr, "gpnscope lens: %s (see gpnscope lens --help)\n",
                argc - optind != 1 ? "give one MODEL" : "give --text or --tokens, one of them");
        return 2;
    }
    if (plot && !out) {
        fprintf(stderr, "gpnscope lens: --plot draws from the stored lens: give --store too\n");
        return 2;
    }
    int rc = 1, failed, T = 0, n_sites = 0;
    int32_t *tokens = NULL;
    char (*sites)[GS_LENS_SITE_NAME] = NULL;
    gs_lens_result r = {0};
    store *st = NULL;
    gpn_model *m = gpn_model_load(argv[optind]);
    gpn_tokenizer *tok = NULL;
    if (m && gs_family_require_lm(&m->cfg, argv[optind], "lens")) gpn_model_free(m), m = NULL;
    if (!m) { fprintf(stderr, "gpnscope lens: %s\n", gs_error()); return 1; }
    tok = causal_tokenizer("lens", tok_path, m, text != NULL, &failed);
    if (failed) goto done;
    if (text) {
        size_t n;
        if (tokenizer_encode(tok, text, strlen(text), &tokens, &n)) { fprintf(stderr, "gpnscope lens: %s\n", gs_error()); goto done; }
        T = (int)n;
        if (T == 0) { fprintf(stderr, "gpnscope lens: --text has no tokens\n"); rc = 2; goto done; }
    } else if ((T = parse_ids(ids_list, m->cfg.V, &tokens)) < 0) {
        fprintf(stderr, "gpnscope lens: %s\n", gs_error());
        rc = 2;
        goto done;
    }
    n_sites = sites_list ? parse_sites(sites_list, &sites) : gs_lens_default_sites(m, &sites);
    if (n_sites < 0) { fprintf(stderr, "gpnscope lens: %s\n", gs_error()); rc = 2; goto done; }
    if (gs_lens_run(m, tokens, T, sites, n_sites, (int)top, &r)) { fprintf(stderr, "gpnscope lens: %s\n", gs_error()); goto done; }
    int64_t exp = 0;
    char buf[32];
    if (out) {
        if (!(st = causal_store("lens", out))) goto done;
        char settings[64];
        snprintf(settings, sizeof settings, "{\"top\": %d, \"tokens\": %d}", r.k, T);
        exp = store_causal_begin(st, "lens", m->path, m->hash, NULL, settings, GPNSCOPE_VERSION);
        int wr = exp < 0;
        for (int i = 0; i < r.n_sites && !wr; i++)
            for (int t = 0; t < T && !wr; t++)
                for (int j = 0; j < r.k && !wr; j++) {
                    size_t at = ((size_t)i * T + t) * r.k + j;
                    wr = store_put_lens(st, exp, r.sites[i], t, j, r.ids[at], r.logits[at], tok ? tokenizer_piece(tok, r.ids[at]) : NULL);
                }
        if (!wr) wr = store_causal_commit(st);
        if (wr) { store_causal_rollback(st); fprintf(stderr, "gpnscope lens: %s\n", gs_error()); goto done; }
    }
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "tokens", cJSON_CreateIntArray((const int *)tokens, T));
        cJSON *ss = cJSON_AddObjectToObject(o, "sites");
        for (int i = 0; i < r.n_sites; i++) {
            cJSON *ids = cJSON_CreateArray(), *lg = cJSON_CreateArray(), *x = cJSON_AddObjectToObject(ss, r.sites[i]);
            for (int t = 0; t < T; t++) {
                size_t at = ((size_t)i * T + t) * r.k;
                cJSON_AddItemToArray(ids, cJSON_CreateIntArray((const int *)r.ids + at, r.k));
                cJSON_AddItemToArray(lg, cJSON_CreateFloatArray(r.logits + at, r.k));
            }
            cJSON_AddItemToObject(x, "ids", ids);
            cJSON_AddItemToObject(x, "logits", lg);
        }
        if (exp > 0) cJSON_AddNumberToObject(o, "experiment_id", (double)exp);
        char *s = cJSON_PrintUnformatted(o);
        puts(s);
        free(s);
        cJSON_Delete(o);
    } else {
        printf("row t: the step that read token t (shown after t); state.pred there is the prediction of token t "
               "itself, a residual stream's decode the prediction of token t + 1\n");
        for (int i = 0; i < r.n_sites; i++) {
            printf("\n%s: top %d of its decode per position\n", r.sites[i], r.k);
            for (int t = 0; t < T; t++) {
                printf("%5d %-14s", t, piece_of(tok, tokens[t], buf, sizeof buf));
                size_t at0 = ((size_t)i * T + t) * r.k;
                /* every logit equal (GPN's zero state at position 0): no ranking to print */
                if (r.k > 1 && r.logits[at0] == r.logits[at0 + r.k - 1]) {
                    printf("  (every top-%d logit is %.2f: a tie, no prediction%s)\n", r.k, r.logits[at0],
                           r.logits[at0] == 0 ? "; the zero state" : "");
                    continue;
                }
                for (int j = 0; j < r.k; j++) {
                    size_t at = at0 + j;
                    printf("  %s %.2f", piece_of(tok, r.ids[at], buf, sizeof buf), r.logits[at]);
                }
                printf("\n");
            }
        }
        if (exp > 0) printf("stored as experiment %lld in %s (table lens_tokens)\n", (long long)exp, out);
    }
    if (plot) {
        char made[4096];
        if (gs_plot_lens(st, exp, plot, made, sizeof made)) { fprintf(stderr, "gpnscope lens: %s\n", gs_error()); goto done; }
        if (!json) printf("%s\n", made);
    }
    rc = 0;
done:
    gs_lens_result_free(&r);
    free(sites);
    free(tokens);
    store_close(st);
    tokenizer_free(tok);
    gpn_model_free(m);
    return rc;
}
