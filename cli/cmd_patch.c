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
#include "cli/run_command.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char help[] =
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

static int parse_components(const gs_model *m, const char *list, const float *u, const char *u_name,
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
                            const gs_patch_pairs *p, const gs_tokenizer *tok) {
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

static int64_t save(store *st, const gs_model *m, const char *pairs_path, const char *settings,
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

typedef struct {
    const char *components, *direction, *from, *tok_path, *plot;
    long long max_steps;
    int batch, have_u, n;
    gs_tokenizer *tok;
    gs_patch_pairs pairs;
    gs_patch_component *comps;
    gs_patch_opts opts;
    gs_patch_result result;
    float *u;           /* the direction, when one is patched along */
    int64_t experiment; /* stored as; 0: not stored */
} patch_state;

static void patch_options(run_call *call, cli_opt *rows) {
    patch_state *s = call->state;
    s->direction = "s_bar";
    s->max_steps = 2000000;
    s->batch = 64;
    const cli_opt table[] = {
        {CLI_STRING("components", &s->components)}, {CLI_STRING("direction", &s->direction)},
        {CLI_STRING("from", &s->from)},
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_STRING("tokenizer", &s->tok_path)},
        {CLI_INTEGER("batch", &s->batch, 1, 4096, "a batch between 1 and 4096")},
        {CLI_STRING("store", &call->out_path)}, {CLI_STRING("plot", &s->plot)}, {CLI_FLAG("json", &call->json)},
        {CLI_INTEGER("max-steps", &s->max_steps, 1, INT64_MAX, "a number of token steps (a positive integer)")},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int patch_check(run_call *call) {
    patch_state *s = call->state;
    if (call->n_args != 2)
        return run_usage(call, call->n_args < 2 ? "give a MODEL and a PAIRS.jsonl file" : "one MODEL and one PAIRS.jsonl only");
    /* the study's store, where its notebook, report and view look */
    if (!call->out_path && s->from) call->out_path = causal_default_store("patch", s->from);
    if (s->plot && !call->out_path) {
        fprintf(stderr, "gpnscope patch: --plot draws from the stored sweep: give --store too\n");
        return 2;
    }
    return 0;
}

/* the pairs, the direction and the components, and the plan checked
 * against the budget before any work */
static int patch_prepare(run_call *call) {
    patch_state *s = call->state;
    const gs_model *m = call->model;
    int failed;
    s->have_u = strcmp(s->direction, "none") != 0;
    s->tok = causal_tokenizer("patch", s->tok_path, m, 0, &failed);
    if (failed) return 1;
    if (gs_patch_pairs_load(call->args[1], s->tok, m->cfg.V, &s->pairs)) return run_error(call, 1);
    s->opts.batch = s->batch;
    if (s->have_u) {
        if (!(s->u = malloc((size_t)m->cfg.d * sizeof *s->u))) return gs_fail("out of memory"), run_error(call, 1);
        store *src = NULL;
        if (s->from && !(src = store_open(s->from, 0))) return run_error(call, 1);
        int computed = !s->from && !strcmp(s->direction, "s_bar");
        int rc = computed ? gs_patch_mean_state(m, &s->pairs, &s->opts, s->u)
                          : gs_direction_load(s->direction, src, call->run, m->cfg.d, s->u);
        store_close(src);
        if (rc) return run_error(call, 1);
    }
    int n = s->components ? parse_components(m, s->components, s->u, s->direction, &s->comps)
                          : gs_patch_default_components(m, s->u, s->direction, &s->comps);
    if (n < 0) return run_error(call, 2);
    s->n = n;
    const gs_patch_pairs *p = &s->pairs;
    int64_t passes = 2 + (int64_t)n * (p->T + 1), steps = passes * p->n * (p->T + 1);
    char plan[256];
    snprintf(plan, sizeof plan, "%d component%s x %d positions (+ 'all'): %lld passes of %d steps over %d pair%s = %lld "
             "token steps", n, n == 1 ? "" : "s", p->T, (long long)passes, p->T + 1, p->n, p->n == 1 ? "" : "s",
             (long long)steps);
    if (causal_plan_check("patch", plan, (long long)steps, s->max_steps, "patch fewer --components or shorter prompts"))
        return 1;
    return 0;
}

static int64_t patch_passes(const run_call *call) {
    const patch_state *s = call->state;
    return 2 + (int64_t)s->n * (s->pairs.T + 1);
}

/* the sweep; a pair whose LD does not move between clean and corrupted has no score */
static int patch_run(run_call *call) {
    patch_state *s = call->state;
    s->opts.progress = progress_callback;
    s->opts.progress_ctx = &call->bar;
    if (gs_patch_run(call->model, &s->pairs, s->comps, s->n, &s->opts, &s->result)) return -1;
    const gs_patch_result *r = &s->result;
    int flat = 0;
    for (int i = 0; i < r->n_pairs; i++) flat += r->ld_clean[i] == r->ld_corrupted[i];
    if (flat == r->n_pairs)
        return gs_fail("%s: every pair's clean and corrupted prompts give the same logit difference (LD_clean - "
                       "LD_corrupted = 0%s), so no score can be normalised: make the prompts differ where the answer "
                       "depends on them",
                       call->args[1], s->pairs.n == 1 ? "" : " for all of them");
    if (flat)
        fprintf(stderr, "note: %d of %d pairs give the same logit difference clean and corrupted: they have no score and "
                        "are left out of the means\n", flat, r->n_pairs);
    return 0;
}

static int patch_write(run_call *call) {
    patch_state *s = call->state;
    if (!call->out) return 0;
    char *settings = patch_settings(s->have_u ? s->direction : "none", s->from, s->batch, s->n, &s->pairs, s->tok);
    if (!settings) return gs_fail("out of memory");
    s->experiment = save(call->out, call->model, call->args[1], settings, &s->result, s->comps);
    free(settings);
    return s->experiment < 0 ? -1 : 0;
}

static void patch_json(const run_call *call) {
    const patch_state *s = call->state;
    print_json(&s->result, s->comps, s->experiment);
}

static void patch_text(const run_call *call) {
    const patch_state *s = call->state;
    print_table(&s->result, s->comps, &s->pairs);
    if (s->experiment > 0) printf("stored as experiment %lld in %s (view patch_summary)\n", (long long)s->experiment,
                                  call->out_path);
}

static int patch_draw(run_call *call) {
    const patch_state *s = call->state;
    if (!s->plot) return 0;
    char made[4096];
    if (gs_plot_patch(call->out, s->experiment, s->plot, made, sizeof made) < 0) return -1;
    if (!call->json) printf("%s\n", made);
    return 0;
}

static void patch_release(run_call *call) {
    patch_state *s = call->state;
    gs_patch_result_free(&s->result);
    gs_patch_components_free(s->comps, s->n);
    gs_patch_pairs_free(&s->pairs);
    free(s->u);
    tokenizer_free(s->tok);
}

static const run_command patch_command = {
    .name = "patch",
    .help = help,
    .state_size = sizeof(patch_state),
    .input = RUN_ON_MODEL,
    .options = patch_options,
    .check = patch_check,
    .prepare = patch_prepare,
    .causal_tables = 1,
    .progress_unit = "runs",
    .planned = patch_passes,
    .run = patch_run,
    .done = patch_passes,
    .write = patch_write,
    .print_json = patch_json,
    .print_text = patch_text,
    .draw = patch_draw,
    .release = patch_release,
};

int cmd_patch(int argc, char **argv) { return run_command_main(&patch_command, argc, argv); }
