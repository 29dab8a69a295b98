/* Windows in lockstep, the one loop behind record, eval, ablate and the demo:
 * B windows at a time (B = the engine's batch), each from the zero state,
 * one token per step for T steps. Sinks see each batch's tokens, may set up
 * each step (what the engine must output), read the engine after each step,
 * and close each batch (a store commits there). Between batches a progress
 * callback may stop the run, and so may a stop flag (a signal handler's). */
#ifndef GS_PROBES_RUNNER_H
#define GS_PROBES_RUNNER_H

#include <signal.h>
#include <stdint.h>

#include "engine/engine.h"

/* The T tokens of window w (0-based within the run's selection). */
typedef int (*runner_window_fn)(void *ctx, int64_t w, int32_t *tokens);

/* Every callback may be NULL. tokens: the batch, nb rows of T. A non-zero
 * return stops the run with that error (gs_error() set). */
typedef struct {
    void *ctx;
    int (*begin)(void *ctx, int64_t w0, int nb, const int32_t *tokens);
    int (*before_step)(void *ctx, gs_engine *e, int64_t w0, int nb, int t);
    int (*after_step)(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens);
    int (*end)(void *ctx, int64_t w0, int nb);
    /* with runner_opts.whole_windows on an engine with a window path: called
     * once per batch in place of before_step and after_step, with nll the NLL
     * of every token (nb rows of T, gs_engine_window's) */
    int (*after_window)(void *ctx, gs_engine *e, int64_t w0, int nb, const int32_t *tokens, const float *nll);
} runner_sink;

/* After each batch: windows done so far (of the whole selection) and the
 * total; a non-zero return stops the run after that batch. */
typedef int (*runner_progress_fn)(void *ctx, int64_t windows_done, int64_t windows_total);

typedef struct {
    gs_engine *engine;
    int T;
    int64_t first, total;       /* run windows [first, total) */
    runner_window_fn window;
    void *window_ctx;
    /* NULL, or the real tokens of window w (window_ctx): each batch then runs
     * only as many steps as its longest window has (per-document windows
     * padded to T: the steps past every one would record nothing) */
    int64_t (*window_len)(void *ctx, int64_t w);
    runner_progress_fn progress;
    void *progress_ctx;
    const volatile sig_atomic_t *stop; /* checked between batches */
    /* 1: run each batch as one gs_engine_window (no hooks, only the NLL)
     * where the engine has a window path, else step as always; every sink
     * must then have after_window */
    int whole_windows;
} runner_opts;

/* Returns 0 when every window ran, 1 when stopped by the progress callback
 * or the stop flag, -1 with gs_error(). *done (may be NULL): the end of the
 * last complete batch, so [first, *done) ran completely. */
int runner_run(const runner_opts *o, const runner_sink *sinks, int n_sinks, int64_t *done);

/* A window source over a corpus (ctx: the gs_corpus), and its windows' real tokens. */
int runner_corpus_window(void *ctx, int64_t w, int32_t *tokens);
int64_t runner_corpus_window_len(void *ctx, int64_t w);

#endif
