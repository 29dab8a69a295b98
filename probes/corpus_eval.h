/* Perplexity of a model over a corpus's selected windows: each window is
 * one sequence started from the zero state (as the companion evaluates), B
 * windows per engine step. Mean NLL is over every token of every window
 * (docs/gpn-model.md: step t predicts x_t), or every token but each
 * window's first for a family with no prediction of it (a transformer's),
 * perplexity = exp(mean NLL).
 * Used by `gpnscope eval`; one sink of the runner (probes/runner.h). */
#ifndef GS_PROBES_CORPUS_EVAL_H
#define GS_PROBES_CORPUS_EVAL_H

#include <stdint.h>

#include "io/corpora/corpus.h"
#include "engine/engine.h"
#include "engine/model.h"

typedef struct {
    int64_t windows, tokens;
    double sum_nll, mean_nll, perplexity;
    double seconds, tokens_per_s;
    int windowed; /* 1: the engine's window path ran the windows (gs_engine_window), 0: token by token */
} corpus_eval_result;

/* Called after each batch; return non-zero to stop (the result then covers
 * the windows done so far and corpus_eval returns 1). */
typedef int (*corpus_eval_progress)(void *ctx, int64_t windows_done, int64_t windows_total, int64_t tokens_done, double seconds);

/* Returns 0 (all windows), 1 (stopped by the callback), or -1 with gs_error(). */
/* dev NULL: the CPU */
int corpus_eval(const gs_model *m, const gs_corpus *c, int batch, const gs_device *dev, corpus_eval_progress progress,
                void *ctx, corpus_eval_result *out);

#endif
