#include "probes/corpus_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/engine.h"
#include "engine/arch/family.h"
#include "probes/runner.h"

typedef struct {
    double sum;
    const gs_corpus *c;
    corpus_eval_progress progress;
    void *ctx;
    double t0;
    int64_t T;
    int first; /* the family predicts the first token (gs_family.predicts_first_token) */
} eval_sink;

static int add_nll(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)w0, (void)tokens;
    eval_sink *s = ctx;
    if (t == 0 && !s->first) return 0; /* no prediction of a window's first token */
    const float *nll = gs_engine_out(e).nll;
    for (int b = 0; b < nb; b++) s->sum += nll[b];
    return 0;
}

/* the same sums from a whole window's NLLs (gs_engine_window), in the same order */
static int add_window_nll(void *ctx, gs_engine *e, int64_t w0, int nb, const int32_t *tokens, const float *nll) {
    (void)e, (void)w0, (void)tokens;
    eval_sink *s = ctx;
    for (int t = s->first ? 0 : 1; t < s->T; t++)
        for (int b = 0; b < nb; b++) s->sum += nll[(size_t)b * s->T + t];
    return 0;
}

static int report(void *ctx, int64_t done, int64_t total) {
    eval_sink *s = ctx;
    return s->progress && s->progress(s->ctx, done, total, done * s->T, gs_now() - s->t0);
}

int corpus_eval(const gs_model *m, const gs_corpus *c, int batch, const gs_device *dev, corpus_eval_progress progress,
                void *ctx, corpus_eval_result *out) {
    memset(out, 0, sizeof *out);
    if (batch < 1) return gs_fail("batch must be at least 1 (got %d)", batch);
    int64_t W = corpus_n_windows(c), T = corpus_seq_len(c);
    if (batch > W) batch = (int)W;
    gs_engine *e = gs_engine_new_on(m, batch, dev);
    if (!e) return -1;
    gs_engine_set_outputs(e, 0, NULL); /* the NLL is all an evaluation reads */
    const gs_family *f = gs_family_of(&m->cfg);
    eval_sink s = {0, c, progress, ctx, gs_now(), T, f ? f->predicts_first_token : 1};
    runner_sink sink = {.ctx = &s, .after_step = add_nll, .after_window = add_window_nll};
    /* the NLL is all an evaluation reads, so a backend's window path may run
     * it (GDN's: chunked, docs/performance.md); GPNSCOPE_EVAL_STEP=1 keeps
     * the token-by-token step, which tests compare it with */
    const char *force_step = getenv("GPNSCOPE_EVAL_STEP");
    runner_opts ro = {.engine = e, .T = (int)T, .first = 0, .total = W, .window = runner_corpus_window,
                      .window_ctx = (void *)c, .progress = report, .progress_ctx = &s,
                      .whole_windows = !(force_step && *force_step && strcmp(force_step, "0"))};
    int64_t done = 0;
    int rc = runner_run(&ro, &sink, 1, &done);
    out->windows = done;
    out->windowed = ro.whole_windows && gs_engine_has_window(e);
    out->tokens = done * (s.first ? T : T - 1);
    out->seconds = gs_now() - s.t0;
    out->sum_nll = s.sum;
    if (out->tokens) {
        out->mean_nll = s.sum / (double)out->tokens;
        out->perplexity = exp(out->mean_nll);
        out->tokens_per_s = out->seconds > 0 ? (double)out->tokens / out->seconds : 0;
    }
    gs_engine_free(e);
    return rc;
}
