#include "engine/corpus_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "engine/engine.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int corpus_eval(const gpn_model *m, const gpn_corpus *c, int batch, const gpn_device *dev, corpus_eval_progress progress,
                void *ctx, corpus_eval_result *out) {
    memset(out, 0, sizeof *out);
    if (batch < 1) return gs_fail("batch must be at least 1 (got %d)", batch);
    int64_t W = corpus_n_windows(c), T = corpus_seq_len(c);
    if (batch > W) batch = (int)W;
    gpn_engine *e = gpn_engine_new_on(m, batch, dev);
    if (e) gpn_engine_set_outputs(e, 0, NULL); /* the NLL is all an evaluation reads */
    if (!e) return -1;
    int32_t *win = malloc((size_t)batch * (size_t)T * sizeof *win);
    int32_t *step = malloc((size_t)batch * sizeof *step);
    if (!win || !step) { free(win); free(step); gpn_engine_free(e); return gs_fail("out of memory for %d windows of %lld tokens", batch, (long long)T); }
    double t0 = now(), sum = 0;
    int rc = 0;
    int64_t done = 0;
    while (done < W && rc == 0) {
        int nb = W - done < batch ? (int)(W - done) : batch;
        for (int b = 0; b < nb && rc == 0; b++) rc = corpus_window(c, done + b, win + (size_t)b * T);
        if (rc) break;
        gpn_engine_reset(e);
        double batch_sum = 0;
        for (int64_t t = 0; t < T && rc == 0; t++) {
            for (int b = 0; b < nb; b++) step[b] = win[(size_t)b * T + t];
            if (gpn_engine_step(e, step, nb)) { rc = gs_fail_context("window %lld, token %lld: ", (long long)corpus_window_index(c, done), (long long)t); break; }
            const float *nll = gpn_engine_out(e).nll;
            for (int b = 0; b < nb; b++) batch_sum += nll[b];
        }
        if (rc) break;
        sum += batch_sum;
        done += nb;
        out->windows = done;
        out->tokens = done * T;
        if (progress && progress(ctx, done, W, done * T, now() - t0)) rc = 1;
    }
    out->seconds = now() - t0;
    out->sum_nll = sum;
    if (out->tokens) {
        out->mean_nll = sum / (double)out->tokens;
        out->perplexity = exp(out->mean_nll);
        out->tokens_per_s = out->seconds > 0 ? (double)out->tokens / out->seconds : 0;
    }
    free(win);
    free(step);
    gpn_engine_free(e);
    return rc;
}
