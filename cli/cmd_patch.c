/* gpnscope patch: state patching through the recurrence (analyses/causal/patching.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/direction.h"
#include "analyses/causal/patching.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "cli/causal_cli.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char *help =
    "usage: gpnscope patch MODEL PAIRS.jsonl [--components LIST] [--direction D] [--from STORE]\n"
    "                      [--run N] [--tokenizer T] [--batch B] [--store OUT.db] [--plot DIR] [--json]\n\n"
    "Run each pair's clean and corrupted prompt; then, for every component and every\n"
    "position p, run the corrupted prompt again with that component of its state after\n"
    "x_p replaced by the clean run's, and let the recurrence continue from there. Report\n"
    "the logit difference LD = logit(answer) - logit(foil) of the prediction after the\n"
    "prompt as the score (LD - LD_corrupted) / (LD_clean - LD_corrupted): 0 is the\n"
    "corrupted run, 1 the clean one. Printed: the mean score over pairs per component\n"
    "and position, and column 'all' (the component patched at every position).\n\n"
    "PAIRS.jsonl: one object a line, {\"clean\": ..., \"corrupted\": ..., \"answer\": ...,\n"
    "\"foil\": ...}; prompts are text (tokenized) or arrays of token ids, every prompt the\n"
    "same number of tokens; answer and foil one token each (an id, a piece such as\n"
    "\"\\u2581cat\", or a text of one token). Blank lines and lines starting with # are skipped.\n\n"
    "  --components L  comma-separated (default: state, each memory head, and dir:D; for\n"
    "                  a layered family each layer's blocks.{i}.hook_resid_post and dir:D,\n"
    "                  GDN state first):\n"
    "                  state      the whole carried state (GPN: state.ground; GPN+M also\n"
    "                             the memory and the next write's keys; GDN: every layer's\n"
    "                             attn.state and attn.conv_state, and the last residual;\n"
    "                             not Transformer++, whose KV cache holds every position)\n"
    "                  head:H     memory head H's matrix (GPN+M)\n"
    "                  dir        the state's component along the direction D\n"
    "                  site:NAME  one site at the position, e.g. site:blocks.1.hook_resid_post\n"
    "  --direction D   s_bar (default), pc1, ANALYSIS:KEY (a vector a store's analysis\n"
    "                  holds, e.g. geometry:dim_std), FILE.npy (e.g. a probe's weights),\n"
    "                  or none; s_bar without --from is the mean of the clean prompts'\n"
    "                  carried states\n"
    "  --from STORE    the store whose analyses hold the direction (newest analysis)\n"
    "  --run N         with --from: that run's analysis\n"
    "  --tokenizer T   for text prompts (default $GPNSCOPE_TOKENIZER, else the source\n"
    "                  tree's third_party/llama2-tokenizer.json)\n"
    "  --batch B       pairs per batch, 1 to 4096 (default 64); every run uses the same\n"
    "  --store OUT.db  store the sweep (tables causal_experiments, patch_baselines,\n"
    "                  patch_results, view patch_summary; created if missing); default:\n"
    "                  the --from store, so the study's notebook, report and view show it\n"
    "  --plot DIR      draw the heatmap of mean scores, positions labelled by the first\n"
    "                  pair's clean prompt (DIR/patch_heatmap.gp and .png; needs a store)\n"
    "  --json          one JSON object\n"
    "  --max-steps N   the most token steps to run (default 2000000: minutes for the\n"
    "                  shipped models on two cores); a larger sweep is refused before\n"
    "                  it starts\n"
    "Runs on the CPU: 2 + components x (T + 1) passes over the pairs, each pass pairs x\n"
    "(T + 1) token steps; the plan is printed on stderr before it starts, with progress\n"
    "on a terminal. A pair whose clean and corrupted prompts give the same logit difference\n"
    "has no score (nothing to normalise) and is left out of the means. See docs/causal.md.\n";

static int parse_components(const gpn_model *m, const char *list, const float *u, const char *u_name,
                            gs_patch_component **out) {
    int cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    gs_patch_component *c = calloc((size_t)cap, sizeof *c);
    if (!c) return gs_fail("out of memory");
    int n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char name[128];
        if (!strcmp(t, "dir")) snprintf(name, sizeof name, "dir:%s", u_name);
        else snprintf(name, sizeof name, "%s", t);
        if (gs_patch_parse_component(m, name, u, &c[n])) {
            free(copy);
            gs_patch_components_free(c, n);
            return -1;
        }
        n++;
    }
    free(copy);
    if (!n) {
        free(c);
        return gs_fail("--components: name at least one");
    }
    *out = c;
    return n;
}

static void print_table(const gs_patch_result *r, const gs_patch_component *c, const gs_patch_pairs *p) {
    double lc = 0, lk = 0;
    for (int i = 0; i < r->n_pairs; i++) { lc += r->ld_clean[i]; lk += r->ld_corrupted[i]; }
    printf("%d pairs of %d tokens; mean logit difference answer - foil: clean %.4f, corrupted %.4f\n", p->n, p->T,
           lc / r->n_pairs, lk / r->n_pairs);
    printf("mean score (0 = corrupted, 1 = clean) by component and position:\n%-32s", "component");
    for (int q = 0; q < r->n_positions; q++) {
        if (q < r->T) printf(" %6d", q);
        else printf(" %6s", "all");
    }
    printf("\n");
    for (int k = 0; k < r->n_components; k++) {
        printf("%-32s", c[k].name);
        for (int q = 0; q < r->n_positions; q++) printf(" %6.3f", r->mean_score[(size_t)k * r->n_positions + q]);
        printf("\n");
    }
}

static void add_num(cJSON *o, const char *k, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static void print_json(const gs_patch_result *r, const gs_patch_component *c, int64_t exp) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pairs", r->n_pairs);
    cJSON_AddNumberToObject(o, "tokens", r->T);
    cJSON_AddItemToObject(o, "ld_clean", cJSON_CreateDoubleArray(r->ld_clean, r->n_pairs));
    cJSON_AddItemToObject(o, "ld_corrupted", cJSON_CreateDoubleArray(r->ld_corrupted, r->n_pairs));
    cJSON *comps = cJSON_AddArrayToObject(o, "components");
    for (int k = 0; k < r->n_components; k++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "component", c[k].name);
        cJSON *ms = cJSON_AddArrayToObject(x, "mean_score"), *ld = cJSON_AddArrayToObject(x, "logit_diff");
        for (int q = 0; q < r->n_positions; q++) {
            double v = r->mean_score[(size_t)k * r->n_positions + q];
            cJSON_AddItemToArray(ms, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
            cJSON_AddItemToArray(ld, cJSON_CreateDoubleArray(r->ld + ((size_t)k * r->n_positions + q) * r->n_pairs, r->n_pairs));
        }
        cJSON_AddItemToArray(comps, x);
    }
    cJSON_AddStringToObject(o, "positions", "0..tokens-1, then all");
    if (exp > 0) cJSON_AddNumberToObject(o, "experiment_id", (double)exp);
    else add_num(o, "experiment_id", NAN);
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
}

/* The experiment's settings (a JSON object, malloc'd). clean_tokens: the
 * first pair's clean prompt as pieces ("#ID" without a tokenizer), the
 * labels of the heatmap's positions. */
static char *patch_settings(const char *direction, const char *from, int batch, int n_components,
                            const gs_patch_pairs *p, const gpn_tokenizer *tok) {
    cJSON *o = cJSON_CreateObject(), *toks = cJSON_CreateArray();
    if (!o || !toks) {
        cJSON_Delete(o);
        cJSON_Delete(toks);
        return NULL;
    }
    cJSON_AddStringToObject(o, "direction", direction);
    cJSON_AddStringToObject(o, "from", from ? from : "");
    cJSON_AddNumberToObject(o, "batch", batch);
    cJSON_AddNumberToObject(o, "components", n_components);
    for (int t = 0; t < p->T; t++) {
        char id[24];
        const char *piece = tok ? tokenizer_piece(tok, p->clean[t]) : NULL;
        snprintf(id, sizeof id, "#%d", (int)p->clean[t]);
        cJSON_AddItemToArray(toks, cJSON_CreateString(piece ? piece : id));
    }
    cJSON_AddItemToObject(o, "clean_tokens", toks);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static int64_t save(store *st, const gpn_model *m, const char *pairs_path, const char *settings,
                    const gs_patch_result *r, const gs_patch_component *c) {
    int64_t exp = store_causal_begin(st, "patch", m->path, m->hash, pairs_path, settings, GPNSCOPE_VERSION);
    if (exp < 0) return -1;
    int rc = 0;
    for (int i = 0; i < r->n_pairs && !rc; i++) rc = store_put_patch_baseline(st, exp, i, r->ld_clean[i], r->ld_corrupted[i]);
    for (int k = 0; k < r->n_components && !rc; k++)
        for (int q = 0; q < r->n_positions && !rc; q++)
            for (int i = 0; i < r->n_pairs && !rc; i++) {
                size_t at = ((size_t)k * r->n_positions + q) * r->n_pairs + i;
                rc = store_put_patch(st, exp, k, c[k].name, q < r->T ? q : -1, i, r->ld[at], r->score[at]);
            }
    if (!rc) rc = store_causal_commit(st);
    if (rc) {
        store_causal_rollback(st);
        return -1;
    }
    return exp;
}

int cmd_patch(int argc, char **argv) {
    const char *components = NULL, *direction = "s_bar", *from = NULL, *tok_path = NULL, *out = NULL, *plot = NULL;
    long long run = 0, max_steps = 2000000;
    int json = 0, batch = 64;
    const cli_opt opts[] = {
        {CLI_STRING("components", &components)}, {CLI_STRING("direction", &direction)}, {CLI_STRING("from", &from)},
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_STRING("tokenizer", &tok_path)},
        {CLI_INTEGER("batch", &batch, 1, 4096, "a batch between 1 and 4096")},
        {CLI_STRING("store", &out)},             {CLI_STRING("plot", &plot)},           {CLI_FLAG("json", &json)},
        {CLI_INTEGER("max-steps", &max_steps, 1, INT64_MAX, "a number of token steps (a positive integer)")},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"patch", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (argc - optind != 2) {
        fprintf(stderr, "gpnscope patch: %s (see gpnscope patch --help)\n",
                argc - optind < 2 ? "give a MODEL and a PAIRS.jsonl file" : "one MODEL and one PAIRS.jsonl only");
        return 2;
    }
    if (!out && from) out = causal_default_store("patch", from); /* the study's, where its notebook, report and view look */
    if (plot && !out) {
        fprintf(stderr, "gpnscope patch: --plot draws from the stored sweep: give --store too\n");
        return 2;
    }
    const char *model_path = argv[optind], *pairs_path = argv[optind + 1];
    int rc = 1, failed, n = 0, have_u = strcmp(direction, "none") != 0;
    gpn_model *m = gpn_model_load(model_path);
    gpn_tokenizer *tok = NULL;
    store *src = NULL, *st = NULL;
    gs_patch_pairs pairs = {0};
    gs_patch_component *comps = NULL;
    gs_patch_result res = {0};
    float *u = NULL;
    if (m && gs_family_require_lm(&m->cfg, model_path, "patch")) gpn_model_free(m), m = NULL;
    if (!m) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); return 1; }
    tok = causal_tokenizer("patch", tok_path, m, 0, &failed);
    if (failed) goto done;
    if (gs_patch_pairs_load(pairs_path, tok, m->cfg.V, &pairs)) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); goto done; }
    gs_patch_opts o = {.batch = batch};
    if (have_u) {
        if (!(u = malloc((size_t)m->cfg.d * sizeof *u))) { fprintf(stderr, "gpnscope patch: out of memory\n"); goto done; }
        if (from && !(src = store_open(from, 0))) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); goto done; }
        int computed = !from && !strcmp(direction, "s_bar");
        if (computed ? gs_patch_mean_state(m, &pairs, &o, u) : gs_direction_load(direction, src, run, m->cfg.d, u)) {
            fprintf(stderr, "gpnscope patch: %s\n", gs_error());
            goto done;
        }
    }
    n = components ? parse_components(m, components, u, direction, &comps)
                   : gs_patch_default_components(m, u, direction, &comps);
    if (n < 0) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); rc = 2; goto done; }
    /* the plan, checked against the budget before any work */
    int64_t passes = 2 + (int64_t)n * (pairs.T + 1), steps = passes * pairs.n * (pairs.T + 1);
    char plan[256];
    snprintf(plan, sizeof plan, "%d component%s x %d positions (+ 'all'): %lld passes of %d steps over %d pair%s = %lld "
             "token steps", n, n == 1 ? "" : "s", pairs.T, (long long)passes, pairs.T + 1, pairs.n, pairs.n == 1 ? "" : "s",
             (long long)steps);
    if (causal_plan_check("patch", plan, (long long)steps, max_steps, "patch fewer --components or shorter prompts"))
        goto done;
    if (out && !(st = causal_store("patch", out))) goto done;
    progress pg;
    progress_start(&pg, "patch", "runs", 2 + (int64_t)n * (pairs.T + 1));
    o.progress = progress_callback;
    o.progress_ctx = &pg;
    int r = gs_patch_run(m, &pairs, comps, n, &o, &res);
    progress_end(&pg, 2 + (int64_t)n * (pairs.T + 1));
    if (r) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); goto done; }
    int flat = 0; /* pairs whose LD does not move between clean and corrupted: no score */
    for (int i = 0; i < res.n_pairs; i++) flat += res.ld_clean[i] == res.ld_corrupted[i];
    if (flat == res.n_pairs) {
        fprintf(stderr, "gpnscope patch: %s: every pair's clean and corrupted prompts give the same logit difference "
                        "(LD_clean - LD_corrupted = 0%s), so no score can be normalised: make the prompts differ where "
                        "the answer depends on them\n",
                pairs_path, pairs.n == 1 ? "" : " for all of them");
        goto done;
    }
    if (flat)
        fprintf(stderr, "note: %d of %d pairs give the same logit difference clean and corrupted: they have no score and "
                        "are left out of the means\n", flat, res.n_pairs);
    int64_t exp = 0;
    if (st) {
        char *settings = patch_settings(have_u ? direction : "none", from, batch, n, &pairs, tok);
        if (!settings) { fprintf(stderr, "gpnscope patch: out of memory\n"); goto done; }
        exp = save(st, m, pairs_path, settings, &res, comps);
        free(settings);
        if (exp < 0) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); goto done; }
    }
    if (json) print_json(&res, comps, exp);
    else {
        print_table(&res, comps, &pairs);
        if (exp > 0) printf("stored as experiment %lld in %s (view patch_summary)\n", (long long)exp, out);
    }
    if (plot) {
        char made[4096];
        int pr = gs_plot_patch(st, exp, plot, made, sizeof made);
        if (pr < 0) { fprintf(stderr, "gpnscope patch: %s\n", gs_error()); goto done; }
        if (!json) printf("%s\n", made);
    }
    rc = 0;
done:
    gs_patch_result_free(&res);
    gs_patch_components_free(comps, n > 0 ? n : 0);
    gs_patch_pairs_free(&pairs);
    free(u);
    store_close(src);
    store_close(st);
    tokenizer_free(tok);
    gpn_model_free(m);
    return rc;
}
