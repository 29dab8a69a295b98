/* gpnscope ablate: causal interventions on a recorded run (analyses/causal/ablation.h). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/ablation.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/run_command.h"

static const char help[] =
    "usage: gpnscope ablate FILE --what WHAT [--run N] [--scope decode|carry] [--windows K]\n"
    "                       [--heads-at before-norm|after-norm] [--batch B] [--model M]\n"
    "                       [--controls N] [--seed S] [--device D] [--json]\n\n"
    "Re-run a recorded run's model over its windows with an intervention, store the\n"
    "per-token NLL under it (table ablation_tokens, view ablation_effects) and report\n"
    "perplexity with and without and the change, the mean NLL change, and the NLL\n"
    "change by position bucket (1 alone, 2-16, 17-128, 129-512, 513+), each with a\n"
    "95% t-interval over documents (over windows when the vocabulary has no BOS/EOS),\n"
    "beside matched random controls: for a direction, random directions of the same\n"
    "norm (isotropic, and drawn from the recorded states' spread); for heads and pools,\n"
    "random head sets of the same size; and the effect beyond the controls' mean.\n\n"
    "  --what WHAT     none (a control that changes nothing)\n"
    "                  mean-direction:subtract   s <- s - s_bar\n"
    "                  mean-direction:project    remove s's component along s_bar\n"
    "                  heads:0,3,7               zero these memory heads' reads (every layer)\n"
    "                  pool:fast | pool:slow     the heads of that retention pool\n"
    "                  each-head                 every head alone, one after another\n"
    "                  (mean-direction and pools need `gpnscope analyze` first)\n"
    "  --run N         the run (default: the newest complete run; an unfinished one only\n"
    "                  when named, and not while it is being recorded)\n"
    "  --scope S       mean-direction only: decode (only the decoded state, default) or\n"
    "                  carry (the state carried to the next token too)\n"
    "  --heads-at A    heads and pools: before-norm (default) zeroes the reads before the\n"
    "                  read's joint RMSNorm, which rescales the surviving heads up;\n"
    "                  after-norm zeroes them at the norm's output, the others unchanged\n"
    "  --windows K|all the run's first K windows, 1 to the run's count (default all)\n"
    "  --batch B       1 to 4096; default: the run's recording batch and layout (the\n"
    "                  first K windows run in the recording's full batches), so that\n"
    "                  --what none gives exactly the recorded NLL\n"
    "  --model FILE    the run's checkpoint, if it moved (its sha256 must match)\n"
    "  --controls N    random draws per control kind, 0 to 64 (default 3; each-head: 0);\n"
    "                  each draw is one more run over the windows\n"
    "  --seed S        seed of the controls' draws (default 1)\n"
    "  --device D      cpu (default), cuda or cuda:N; on another device than the\n"
    "                  recording's, --what none differs from the run by float rounding\n"
    "  --precision P   CUDA GEMMs: auto, f32, tf32 or bf16 (docs/cuda.md)\n"
    "  --json          one JSON object (a list for each-head)\n";

static void print_row(const gs_ablation *a, int header) {
    if (header) {
        printf("%-26s %-11s %9s %9s %9s %21s %8s %19s   dNLL by position", "intervention", "scope/heads",
               "ppl base", "ppl abl", "change", "95% CI of change", "dNLL", "95% CI of dNLL");
        for (int k = 0; k < ABLATION_BUCKETS; k++) printf("%s %s", k ? " /" : "", gs_ablation_bucket_names[k]);
        printf("\n");
    }
    printf("%-26s %-11s %9.3f %9.3f %+9.3f [%+9.3f, %+9.3f] %+8.4f [%+8.4f, %+8.4f]  ", a->what,
           a->scope[0] ? a->scope : a->heads_at[0] ? a->heads_at : "-", a->ppl_base, a->ppl_ablated, a->delta_ppl,
           a->ci_low, a->ci_high, a->delta_nll, a->delta_nll_lo, a->delta_nll_hi);
    for (int k = 0; k < ABLATION_BUCKETS; k++) {
        if (a->bucket_tokens[k]) printf(" %+.4f [%+.4f, %+.4f]", a->bucket_delta_nll[k], a->bucket_lo[k], a->bucket_hi[k]);
        else printf("       -");
    }
    printf("\n");
    for (int k = 0; k < a->n_controls; k++) {
        const gs_ablation_control *c = &a->control[k];
        printf("  control %-10s %d draws: dNLL %+.4f (sd %.4f, %+.4f to %+.4f), ppl %+.3f; effect beyond it %+.4f "
               "[%+.4f, %+.4f], %.1fx the control\n",
               gs_control_names[c->kind], c->n, c->mean, c->sd, c->min, c->max, c->delta_ppl_mean, c->excess,
               c->excess_lo, c->excess_hi, c->mean != 0 ? a->delta_nll / c->mean : NAN);
    }
}

static void add_num(cJSON *o, const char *k, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static cJSON *to_json(const gs_ablation *a) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "what", a->what);
    if (a->scope[0]) cJSON_AddStringToObject(o, "scope", a->scope);
    cJSON_AddNumberToObject(o, "windows", (double)a->n_windows);
    cJSON_AddNumberToObject(o, "tokens", (double)a->n_tokens);
    cJSON_AddNumberToObject(o, "ppl_base", a->ppl_base);
    cJSON_AddNumberToObject(o, "ppl_ablated", a->ppl_ablated);
    cJSON_AddNumberToObject(o, "delta_ppl", a->delta_ppl);
    if (a->heads_at[0]) cJSON_AddStringToObject(o, "heads_at", a->heads_at);
    add_num(o, "delta_ppl_ci_low", a->ci_low);
    add_num(o, "delta_ppl_ci_high", a->ci_high);
    cJSON_AddNumberToObject(o, "delta_nll", a->delta_nll);
    add_num(o, "delta_nll_ci_low", a->delta_nll_lo);
    add_num(o, "delta_nll_ci_high", a->delta_nll_hi);
    cJSON_AddStringToObject(o, "interval", "t over documents, df = units - 1");
    cJSON_AddStringToObject(o, "units", a->by_document ? "documents" : "windows");
    cJSON_AddNumberToObject(o, "n_units", (double)a->n_units);
    cJSON *ctl = cJSON_AddObjectToObject(o, "controls");
    for (int k = 0; k < a->n_controls; k++) {
        const gs_ablation_control *c = &a->control[k];
        cJSON *x = cJSON_AddObjectToObject(ctl, gs_control_names[c->kind]);
        cJSON_AddNumberToObject(x, "draws", c->n);
        cJSON_AddItemToObject(x, "delta_nll", cJSON_CreateDoubleArray(c->delta_nll, c->n));
        add_num(x, "delta_nll_mean", c->mean);
        add_num(x, "delta_nll_sd", c->sd);
        add_num(x, "delta_ppl_mean", c->delta_ppl_mean);
        add_num(x, "excess_delta_nll", c->excess);
        add_num(x, "excess_ci_low", c->excess_lo);
        add_num(x, "excess_ci_high", c->excess_hi);
    }
    cJSON *b = cJSON_AddObjectToObject(o, "delta_nll_by_position");
    cJSON *bl = cJSON_AddObjectToObject(o, "delta_nll_by_position_ci_low");
    cJSON *bh = cJSON_AddObjectToObject(o, "delta_nll_by_position_ci_high");
    for (int k = 0; k < ABLATION_BUCKETS; k++)
        if (a->bucket_tokens[k]) {
            cJSON_AddNumberToObject(b, gs_ablation_bucket_names[k], a->bucket_delta_nll[k]);
            add_num(bl, gs_ablation_bucket_names[k], a->bucket_lo[k]);
            add_num(bh, gs_ablation_bucket_names[k], a->bucket_hi[k]);
        }
    cJSON_AddNumberToObject(o, "analysis_id", (double)a->analysis_id);
    return o;
}

typedef struct {
    gs_ablate_opts opts;
    int controls_given, each_head;
    int n; /* ablations to run: 1, or each-head's heads */
    cJSON *list; /* --json: every ablation's object */
} ablate_state;

static void ablate_options(run_call *call, cli_opt *rows) {
    ablate_state *a = call->state;
    gs_ablate_opts *o = &a->opts;
    gs_ablate_opts_default(o);
    o->code_version = GPNSCOPE_VERSION;
    const cli_opt table[] = {
        {CLI_STRING("what", &o->what)},
        {CLI_INTEGER("run", &call->run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_STRING("scope", &o->scope)},
        /* the upper bound is the run's own count, checked once it is known */
        {CLI_WINDOWS(&o->windows, 1, "a number of windows >= 1, or all")},
        {CLI_INTEGER("batch", &o->batch, 1, 4096, "a batch between 1 and 4096")},
        {CLI_STRING("model", &o->model_path)},
        {CLI_INTEGER("seed", &o->seed, 0, INT64_MAX, "a non-negative integer")},
        {CLI_FLAG("json", &call->json)},
        {CLI_STRING("device", &o->device)},
        {CLI_STRING("precision", &o->precision)},
        {CLI_STRING("heads-at", &o->heads_at)},
        {CLI_INTEGER("controls", &o->controls, 0, 64, "a number of draws from 0 to 64"), .seen = &a->controls_given},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int ablate_check(run_call *call) {
    const gs_ablate_opts *o = &((ablate_state *)call->state)->opts;
    if (!o->what) return run_usage(call, "--what is required");
    if (strcmp(o->scope, "decode") && strcmp(o->scope, "carry")) {
        fprintf(stderr, "gpnscope ablate: --scope %s: decode or carry\n", o->scope);
        return 2;
    }
    if (strcmp(o->heads_at, "before-norm") && strcmp(o->heads_at, "after-norm")) {
        fprintf(stderr, "gpnscope ablate: --heads-at %s: before-norm or after-norm\n", o->heads_at);
        return 2;
    }
    return 0;
}

/* --windows against the run's count; each-head's heads */
static int ablate_prepare(run_call *call) {
    ablate_state *a = call->state;
    store_run_info ri;
    if (store_run_get(call->st, call->run, &ri) != 0) return run_error(call, 1);
    if (a->opts.windows > 0 && ri.windows_done > 0 && a->opts.windows > ri.windows_done) {
        fprintf(stderr, "gpnscope ablate: --windows %lld: run %lld has %lld recorded windows (--windows all takes every one)\n",
                (long long)a->opts.windows, call->run, (long long)ri.windows_done);
        return 2;
    }
    a->each_head = !strcmp(a->opts.what, "each-head");
    if (a->each_head && !a->controls_given) a->opts.controls = 0; /* the other heads are each head's comparison */
    a->n = 1;
    if (a->each_head && (a->n = gs_ablation_heads(call->st, call->run)) < 0) return run_error(call, 1);
    if (call->json && !(a->list = cJSON_CreateArray())) {
        gs_fail("out of memory");
        return run_error(call, 1);
    }
    return 0;
}

/* One ablation, or every head's one after another; the text rows are printed
 * as each ends, so a long each-head sweep shows its heads as it goes. */
static int ablate_run(run_call *call) {
    ablate_state *a = call->state;
    for (int h = 0; h < a->n; h++) {
        char what[64];
        if (a->each_head) {
            snprintf(what, sizeof what, "heads:%d", h);
            a->opts.what = what;
        }
        gs_ablation r;
        if (gs_ablate(call->st, call->run, &a->opts, &r)) return -1;
        if (call->json) cJSON_AddItemToArray(a->list, to_json(&r));
        else print_row(&r, h == 0);
    }
    return 0;
}

static void ablate_json(const run_call *call) {
    const ablate_state *a = call->state;
    const cJSON *out = a->each_head ? a->list : cJSON_GetArrayItem(a->list, 0);
    char *s = cJSON_PrintUnformatted(out);
    puts(s);
    free(s);
}

static void ablate_release(run_call *call) { cJSON_Delete(((ablate_state *)call->state)->list); }

static const run_command ablate_command = {
    .name = "ablate",
    .help = help,
    .state_size = sizeof(ablate_state),
    .input = RUN_ON_STORE,
    .options = ablate_options,
    .check = ablate_check,
    .prepare = ablate_prepare,
    .run = ablate_run,
    .print_json = ablate_json,
    .release = ablate_release,
};

int cmd_ablate(int argc, char **argv) { return run_command_main(&ablate_command, argc, argv); }
