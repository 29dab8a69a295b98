/* A recorded run's first windows, opened to be re-run through the runner
 * (probes/runner.h) by the causal tools: its recorded tokens, its model (the
 * checkpoint it was recorded with), and the selection of windows and length,
 * checked (complete windows, ids in the model's vocabulary). */
#ifndef GS_ANALYSES_RERUN_H
#define GS_ANALYSES_RERUN_H

#include <stdint.h>

#include "engine/engine.h"
#include "engine/model.h"
#include "probes/runner.h"
#include "store/store.h"

typedef struct {
    store_run_info info;
    store_token_array tk;
    gs_model *m;
    int64_t W; /* windows selected: the first W */
    int T;     /* positions selected: the first T of each */
} gs_rerun;

/* windows <= 0: all; length <= 0: the run's, at most default_length (<= 0: no
 * bound). 0, or -1 with gs_error() (and r closed). */
int gs_rerun_open(store *st, int64_t run_id, int64_t windows, int length, int default_length, const char *model_path,
                  gs_rerun *r);
void gs_rerun_close(gs_rerun *r);
/* The runner's window source (runner_window_fn) over an open rerun (ctx). */
int gs_rerun_window(void *ctx, int64_t w, int32_t *tokens);
/* The selected windows through engine e into sink, one at a time (the
 * runner, reporting to progress): 0, or -1 with gs_error() and the store's
 * open transaction rolled back, so a stopped or failed re-run stores
 * nothing. */
int gs_rerun_run(store *st, gs_rerun *r, gs_engine *e, const runner_sink *sink, runner_progress_fn progress,
                 void *progress_ctx);

#endif
