#include "probes/runner.h"

#include <stdlib.h>

#include "base/error.h"
#include "io/corpora/corpus.h"

/* every sink's callback fn, in order; the first failure stops the run */
#define EACH_SINK(fn, ...)                                                                                             \
    for (int i = 0; i < n_sinks; i++)                                                                                  \
        if (sinks[i].fn && sinks[i].fn(sinks[i].ctx, __VA_ARGS__)) {                                                   \
            rc = -1;                                                                                                   \
            goto out;                                                                                                  \
        }

int runner_run(const runner_opts *o, const runner_sink *sinks, int n_sinks, int64_t *done) {
    gs_engine *e = o->engine;
    int B = gs_engine_max_batch(e), T = o->T;
    if (done) *done = o->first;
    if (T < 1) return gs_fail("windows of %d tokens: at least 1", T);
    int32_t *tokens = malloc((size_t)B * (size_t)T * sizeof *tokens), *step = malloc((size_t)B * sizeof *step);
    int windowed = o->whole_windows && gs_engine_has_window(e);
    float *nll = windowed ? malloc((size_t)B * (size_t)T * sizeof *nll) : NULL;
    int rc = 0;
    if (!tokens || !step || (windowed && !nll)) { rc = gs_fail("out of memory for %d windows of %d tokens", B, T); goto out; }
    for (int64_t w0 = o->first; w0 < o->total; w0 += B) {
        if (o->stop && *o->stop) { rc = 1; break; }
        int nb = o->total - w0 < B ? (int)(o->total - w0) : B;
        for (int b = 0; b < nb; b++)
            if (o->window(o->window_ctx, w0 + b, tokens + (size_t)b * T)) { rc = -1; goto out; }
        EACH_SINK(begin, w0, nb, tokens)
        gs_engine_reset(e);
        int steps = T; /* the batch's longest window, when the windows say */
        if (o->window_len) {
            steps = 0;
            for (int b = 0; b < nb; b++) {
                int64_t n = o->window_len(o->window_ctx, w0 + b);
                if (n > steps) steps = n < T ? (int)n : T;
            }
        }
        if (windowed) {
            if (gs_engine_window(e, tokens, nb, T, nll)) {
                rc = gs_fail_context("windows %lld-%lld: ", (long long)w0, (long long)(w0 + nb - 1));
                goto out;
            }
            EACH_SINK(after_window, e, w0, nb, tokens, nll)
        }
        for (int t = 0; !windowed && t < steps; t++) {
            for (int b = 0; b < nb; b++) step[b] = tokens[(size_t)b * T + t];
            EACH_SINK(before_step, e, w0, nb, t)
            if (gs_engine_step(e, step, nb)) {
                rc = gs_fail_context("windows %lld-%lld, token %d: ", (long long)w0, (long long)(w0 + nb - 1), t);
                goto out;
            }
            EACH_SINK(after_step, e, w0, nb, t, tokens)
        }
        EACH_SINK(end, w0, nb)
        if (done) *done = w0 + nb;
        if (o->progress && o->progress(o->progress_ctx, w0 + nb, o->total)) { rc = w0 + nb < o->total; break; }
    }
out:
    free(tokens);
    free(step);
    free(nll);
    return rc;
}

int runner_corpus_window(void *ctx, int64_t w, int32_t *tokens) { return corpus_window((const gs_corpus *)ctx, w, tokens); }
int64_t runner_corpus_window_len(void *ctx, int64_t w) { return corpus_window_len((const gs_corpus *)ctx, w); }
