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
#include "cli/options.h"
#include "cli/progress.h"
#include "plots/causal_plots.h"
#include "store/experiments.h"

static const char *help =
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

static cJSON *point_json(const gs_steer_point *p, const gpn_tokenizer *tok) {
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

int cmd_steer(int argc, char **argv) {
    const char *corpus_path = NULL, *direction = NULL, *from = NULL, *tok_path = NULL, *out = NULL, *plot = NULL,
               *c_list = NULL, *scope = "carry";
    long long run = 0, seq_len = 128, windows = 16, skip = 0, from_pos = 0, max_steps = 2000000;
    int json = 0, batch = 16;
    const cli_opt opts[] = {
        /* what to steer with, and how much */
        {CLI_STRING("corpus", &corpus_path)}, {CLI_STRING("direction", &direction)}, {CLI_STRING("from", &from)},
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_STRING("c", &c_list)}, {CLI_STRING("scope", &scope)},
        {CLI_INTEGER("from-position", &from_pos, 0, 1 << 24, "a position >= 0")},
        /* the windows */
        {CLI_INTEGER("seq-len", &seq_len, 1, 1 << 20, "a window length >= 1")},
        {CLI_INTEGER("windows", &windows, 1, INT64_MAX, "a number of windows >= 1")},
        {CLI_INTEGER("skip", &skip, 0, INT64_MAX, "a number of windows >= 0")},
        {CLI_INTEGER("batch", &batch, 1, 4096, "a batch between 1 and 4096")},
        /* the outputs */
        {CLI_STRING("tokenizer", &tok_path)}, {CLI_STRING("store", &out)}, {CLI_STRING("plot", &plot)},
        {CLI_FLAG("json", &json)},
        {CLI_INTEGER("max-steps", &max_steps, 1, INT64_MAX, "a number of token steps (a positive integer)")},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"steer", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (argc - optind != 1 || !corpus_path || !direction || !c_list) {
        fprintf(stderr, "gpnscope steer: %s (see gpnscope steer --help)\n",
                argc - optind != 1 ? "give one MODEL" : !corpus_path ? "--corpus is required"
                : !direction ? "--direction is required" : "--c is required");
        return 2;
    }
    if (strcmp(scope, "carry") && strcmp(scope, "decode")) {
        fprintf(stderr, "gpnscope steer: --scope %s: carry or decode\n", scope);
        return 2;
    }
    if (!out && from) out = causal_default_store("steer", from); /* the study's, where its notebook, report and view look */
    if (plot && !out) {
        fprintf(stderr, "gpnscope steer: --plot draws from the stored curve: give --store too\n");
        return 2;
    }
    double cs[GS_STEER_MAX_C];
    int n_c = causal_numbers("steer", "c", c_list, cs, GS_STEER_MAX_C);
    if (n_c < 0) return 2;
    int rc = 1, failed;
    gpn_model *m = gpn_model_load(argv[optind]);
    gpn_tokenizer *tok = NULL;
    gpn_corpus *corpus = NULL;
    store *src = NULL, *st = NULL;
    float *u = NULL;
    gs_steer_result *r = calloc(1, sizeof *r);
    if (m && gs_family_require_lm(&m->cfg, argv[optind], "steer")) gpn_model_free(m), m = NULL;
    if (!m || !r) { fprintf(stderr, "gpnscope steer: %s\n", m ? "out of memory" : gs_error()); goto done; }
    corpus_format fmt = corpus_detect(corpus_path);
    tok = causal_tokenizer("steer", tok_path, m, fmt != CORPUS_SHARDS, &failed);
    if (failed) goto done;
    corpus_options co;
    corpus_options_default(&co);
    co.seq_len = seq_len;
    co.windows = windows;
    co.skip = skip;
    co.vocab_size = m->cfg.V;
    if (!(corpus = corpus_open(corpus_path, tok, &co))) { fprintf(stderr, "gpnscope steer: %s\n", gs_error()); goto done; }
    if (!(u = malloc((size_t)m->cfg.d * sizeof *u))) { fprintf(stderr, "gpnscope steer: out of memory\n"); goto done; }
    if (from && !(src = store_open(from, 0))) { fprintf(stderr, "gpnscope steer: %s\n", gs_error()); goto done; }
    if (gs_direction_load(direction, src, run, m->cfg.d, u)) { fprintf(stderr, "gpnscope steer: %s\n", gs_error()); goto done; }
    /* the plan, checked against the budget before any work (the corpus may hold fewer windows than asked) */
    int64_t n_win = corpus_n_windows(corpus), steps = (int64_t)(n_c + 1) * n_win * seq_len;
    char plan[256];
    snprintf(plan, sizeof plan, "%d coefficient%s + the unsteered run: %d passes of %lld window%s x %lld tokens = %lld "
             "token steps", n_c, n_c == 1 ? "" : "s", n_c + 1, (long long)n_win, n_win == 1 ? "" : "s", seq_len,
             (long long)steps);
    if (causal_plan_check("steer", plan, (long long)steps, max_steps, "give fewer --c, --windows or a shorter --seq-len"))
        goto done;
    if (out && !(st = causal_store("steer", out))) goto done;
    progress pg;
    progress_start(&pg, "steer", "runs", n_c + 1);
    gs_steer_opts o = {.u = u, .c = cs, .n_c = n_c, .from = (int)from_pos, .decode_only = !strcmp(scope, "decode"),
                       .batch = batch, .progress = progress_callback, .progress_ctx = &pg};
    int sr = gs_steer_run(m, corpus, &o, r);
    progress_end(&pg, n_c + 1);
    if (sr) { fprintf(stderr, "gpnscope steer: %s\n", gs_error()); goto done; }
    int64_t exp = 0;
    cJSON *all = cJSON_CreateObject();
    cJSON_AddStringToObject(all, "site", r->site);
    cJSON_AddStringToObject(all, "direction", direction);
    cJSON_AddNumberToObject(all, "windows", (double)r->windows);
    cJSON_AddNumberToObject(all, "tokens", (double)r->n_tokens);
    cJSON_AddNumberToObject(all, "from_position", (double)from_pos);
    cJSON_AddNumberToObject(all, "baseline_nll", r->baseline_nll);
    cJSON_AddNumberToObject(all, "state_norm", r->state_norm);
    cJSON *pts = cJSON_AddArrayToObject(all, "points");
    for (int k = 0; k < r->n; k++) cJSON_AddItemToArray(pts, point_json(&r->point[k], tok));
    if (st) {
        cJSON *set = cJSON_CreateObject();
        cJSON_AddStringToObject(set, "direction", direction);
        cJSON_AddStringToObject(set, "site", r->site);
        cJSON_AddStringToObject(set, "scope", scope);
        cJSON_AddNumberToObject(set, "from_position", (double)from_pos);
        cJSON_AddNumberToObject(set, "seq_len", (double)seq_len);
        cJSON_AddNumberToObject(set, "windows", (double)r->windows);
        cJSON_AddNumberToObject(set, "skip", (double)skip);
        cJSON_AddNumberToObject(set, "baseline_nll", r->baseline_nll);
        cJSON_AddNumberToObject(set, "state_norm", r->state_norm);
        char *settings = cJSON_PrintUnformatted(set);
        cJSON_Delete(set);
        exp = store_causal_begin(st, "steer", m->path, m->hash, corpus_path, settings, GPNSCOPE_VERSION);
        free(settings);
        int wr = exp < 0;
        for (int k = 0; k < r->n && !wr; k++) {
            cJSON *top = cJSON_GetObjectItem(cJSON_GetArrayItem(pts, k), "top_tokens");
            char *tj = cJSON_PrintUnformatted(top);
            const gs_steer_point *p = &r->point[k];
            wr = store_put_steer(st, exp, p->c, p->n_tokens, p->nll, p->delta_nll, p->top1_changed, tj);
            free(tj);
        }
        if (!wr) wr = store_causal_commit(st);
        if (wr) {
            store_causal_rollback(st);
            fprintf(stderr, "gpnscope steer: %s\n", gs_error());
            cJSON_Delete(all);
            goto done;
        }
        cJSON_AddNumberToObject(all, "experiment_id", (double)exp);
    }
    if (json) {
        char *s = cJSON_PrintUnformatted(all);
        puts(s);
        free(s);
    } else {
        printf("steering %s along %s (unit length; mean ||s|| there %.4g), %lld windows, %lld tokens from position %lld\n",
               r->site, direction, r->state_norm, (long long)r->windows, (long long)r->n_tokens, from_pos);
        printf("unsteered NLL %.4f\n%10s %9s %9s %8s   most frequent top-1 predictions\n", r->baseline_nll, "c", "NLL",
               "change", "top-1 chg");
        for (int k = 0; k < r->n; k++) {
            const gs_steer_point *p = &r->point[k];
            printf("%10.4g %9.4f %+9.4f %8.3f  ", p->c, p->nll, p->delta_nll, p->top1_changed);
            for (int j = 0; j < p->n_top; j++) {
                const char *piece = tok ? tokenizer_piece(tok, p->top_id[j]) : NULL;
                if (piece) printf(" %s %.2f", piece, p->top_share[j]);
                else printf(" %d %.2f", (int)p->top_id[j], p->top_share[j]);
            }
            printf("\n");
        }
        if (exp > 0) printf("stored as experiment %lld in %s (table steer_results)\n", (long long)exp, out);
    }
    cJSON_Delete(all);
    if (plot) {
        char made[4096];
        if (gs_plot_steer(st, exp, plot, made, sizeof made)) { fprintf(stderr, "gpnscope steer: %s\n", gs_error()); goto done; }
        if (!json) printf("%s\n", made);
    }
    rc = 0;
done:
    free(r);
    free(u);
    store_close(src);
    store_close(st);
    corpus_free(corpus);
    tokenizer_free(tok);
    gpn_model_free(m);
    return rc;
}
