/* A probe split that does not leak. Planted corpus: 10 documents of 4
 * windows each (BOS = token 0 opens every document); each document has a
 * favourite token (half its tokens) and a "theme" vector added to every
 * state in it, besides the last K = 3 tokens the state truly holds. A probe
 * trained on windows of the held-out windows' own documents learns
 * theme -> favourite and "decodes" tokens at any lag: split by window, the
 * horizon runs to the end of the grid. Split by document (the default when
 * BOS/EOS are known) the held-out themes are unseen and the horizon is the
 * planted K. Also: the block standard error is never below the binomial one,
 * and the splits' horizons are reported with their spread. */
#include <math.h>

#include "analyses/state/probe.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

enum { D = 48, EMB = 8, V = 16, K = 3, NDOC = 10, WPD = 4, NW = NDOC * WPD, T = 160 };

static owned_states st;
static int64_t win[NW], start[NW + 1];
static int32_t tokens[NW * T];
static float E[V * EMB];

static void make(void) {
    gs_rng r = {21};
    owned_alloc(&st, NW, T, D);
    for (int i = 0; i < V * EMB; i++) E[i] = (float)gs_rng_normal(&r);
    static double P[K][D][EMB], theme[NDOC][D];
    for (int j = 0; j < K; j++)
        for (int a = 0; a < D; a++)
            for (int b = 0; b < EMB; b++) P[j][a][b] = gs_rng_normal(&r) / sqrt(EMB);
    for (int g = 0; g < NDOC; g++)
        for (int a = 0; a < D; a++) theme[g][a] = 0.5 * gs_rng_normal(&r);
    for (int w = 0; w < NW; w++) {
        int g = w / WPD;
        win[w] = 100 + w; /* owned_alloc numbers windows from 100 */
        start[w] = (int64_t)w * T;
        for (int t = 0; t < T; t++) {
            int32_t x = gs_rng_uniform(&r) < 0.5 ? (int32_t)(1 + g % (V - 1)) : (int32_t)(1 + gs_rng_uniform(&r) * (V - 1));
            tokens[w * T + t] = (w % WPD == 0 && t == 0) ? 0 : x; /* BOS opens each document */
        }
        for (int t = 0; t < T; t++) {
            float *s = st.x + ((int64_t)w * T + t) * D;
            for (int a = 0; a < D; a++) {
                double v = theme[g][a] + 0.3 * gs_rng_normal(&r);
                for (int j = 1; j <= K && t - j >= 0; j++) {
                    const float *e = E + tokens[w * T + t - j] * EMB;
                    for (int b = 0; b < EMB; b++) v += P[j - 1][a][b] * e[b];
                }
                s[a] = (float)v;
            }
        }
    }
    start[NW] = (int64_t)NW * T;
}

int main(void) {
    make();
    gs_tokens tok = {NW, win, start, tokens};
    gs_probe_opts o;
    gs_probe_opts_default(&o);
    o.max_lag = 32;
    gs_probe leaky, doc;
    /* by window: no boundary tokens given */
    int ok = gs_probe_run(&st.s, &tok, E, V, EMB, &o, &leaky) == 0;
    CHECK(ok, "%s", gs_error());
    o.bos = 0;
    ok = ok && gs_probe_run(&st.s, &tok, E, V, EMB, &o, &doc) == 0;
    CHECK(ok, "%s", gs_error());
    if (!ok) return test_summary();
    int last = leaky.n_lags - 1;
    printf("by window: horizon %d (splits %d-%d), lag %d acc %.3f vs %.3f; by document: horizon %d (splits %d-%d), "
           "lag %d acc %.3f vs %.3f, %lld/%lld documents\n",
           leaky.horizon, leaky.horizon_min, leaky.horizon_max, leaky.lags[last], leaky.acc[last], leaky.baseline[last],
           doc.horizon, doc.horizon_min, doc.horizon_max, doc.lags[last], doc.acc[last], doc.baseline[last],
           (long long)doc.n_test_docs, (long long)doc.n_train_docs);
    CHECK(!leaky.by_document && doc.by_document, "split units: window, then document");
    CHECK(doc.n_test_docs == 2 && doc.n_train_docs == 8 && doc.n_test_windows == 2 * WPD,
          "whole documents held out: %lld documents, %lld windows", (long long)doc.n_test_docs, (long long)doc.n_test_windows);
    CHECK(leaky.horizon == 32 && leaky.acc[last] > leaky.baseline[last] + 0.2,
          "the leaky split decodes far beyond K: horizon %d, lag 32 acc %.3f vs %.3f", leaky.horizon, leaky.acc[last],
          leaky.baseline[last]);
    CHECK(doc.horizon == K, "split by document: horizon %d, planted %d", doc.horizon, K);
    CHECK(doc.horizon_min == K && doc.horizon_max == K && doc.n_splits == 5, "every document split: %d-%d over %d",
          doc.horizon_min, doc.horizon_max, doc.n_splits);
    int se_ok = 1;
    for (int i = 0; i < doc.n_lags; i++)
        se_ok &= !doc.measured[i] || (doc.se[i] >= doc.se_block[i] && doc.se_block[i] >= doc.se_binomial[i]);
    CHECK(se_ok, "se >= block se >= binomial se");
    gs_probe_free(&leaky);
    gs_probe_free(&doc);
    owned_free(&st);
    return test_summary();
}
