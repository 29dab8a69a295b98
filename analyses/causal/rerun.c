/* Opening a recorded run to re-run it (analyses/causal/rerun.h). */
#include "analyses/causal/rerun.h"

#include <string.h>

#include "analyses/causal/ablation.h"
#include "analyses/analyze.h"
#include "base/error.h"

void gs_rerun_close(gs_rerun *r) {
    gs_model_free(r->m);
    r->m = NULL;
    store_token_array_free(&r->tk);
}

int gs_rerun_open(store *st, int64_t run_id, int64_t windows, int length, int default_length, const char *model_path,
                  gs_rerun *r) {
    memset(r, 0, sizeof *r);
    if (store_run_get(st, run_id, &r->info) || store_read_tokens(st, run_id, &r->tk)) return -1;
    const store_token_array *tk = &r->tk;
    if (tk->n_windows < 1 || tk->n_positions < 1) {
        gs_fail("run %lld has no recorded tokens", (long long)run_id);
        goto fail;
    }
    r->W = windows > 0 && windows < tk->n_windows ? windows : tk->n_windows;
    r->T = length > 0 ? length
                      : (int)(default_length > 0 && tk->n_positions > default_length ? default_length : tk->n_positions);
    if (r->T > tk->n_positions) {
        gs_fail("--length %d: run %lld's windows have %lld positions", r->T, (long long)run_id, (long long)tk->n_positions);
        goto fail;
    }
    if (!(r->m = gs_analysis_load_model(&r->info, model_path))) goto fail;
    for (int64_t i = 0; i < r->W * tk->n_positions; i++) {
        int32_t id = tk->token_id[i];
        if (i % tk->n_positions >= r->T || (id >= 0 && id < r->m->cfg.V)) continue;
        gs_fail("run %lld: window %d, position %lld: %s", (long long)run_id, tk->window_ids[i / tk->n_positions],
                (long long)(i % tk->n_positions),
                id < 0 ? "no token (the window is incomplete, or a per-document run's document ends there): use "
                         "fewer --windows or a shorter --length"
                       : "a token id outside the model's vocabulary (the run's tokens are not this model's)");
        goto fail;
    }
    return 0;
fail:
    gs_rerun_close(r);
    return -1;
}

int gs_rerun_window(void *ctx, int64_t w, int32_t *tokens) {
    const gs_rerun *r = ctx;
    memcpy(tokens, r->tk.token_id + w * r->tk.n_positions, (size_t)r->T * sizeof *tokens);
    return 0;
}

int gs_rerun_run(store *st, gs_rerun *r, gs_engine *e, const runner_sink *sink, runner_progress_fn progress,
                 void *progress_ctx) {
    runner_opts ro = {.engine = e, .T = r->T, .first = 0, .total = r->W, .window = gs_rerun_window, .window_ctx = r,
                      .progress = progress, .progress_ctx = progress_ctx};
    int run = runner_run(&ro, sink, 1, NULL);
    if (run == 0) return 0;
    if (run > 0) gs_fail("stopped before the last window: nothing stored");
    store_rollback(st);
    return -1;
}
