/* The probe horizon on planted states that hold exactly the last K tokens:
 * s_t = m + sum_{j=1..K} P_j E[x_{t-j}] + noise, tokens uniform. Probes at
 * lags <= K decode well above the majority baseline, lags beyond K do not,
 * so the probe horizon is K. Also: determinism, the lag grid, bad input. */
#include <math.h>

#include "analyses/state/probe.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

enum { D = 64, EMB = 8, V = 16, K = 4, NW = 20, T = 200 };

typedef struct {
    owned_states o;
    int64_t win[NW], start[NW + 1];
    int32_t tokens[NW * T];
    float E[V * EMB];
    gs_tokens tok;
} planted;

static void make(planted *p, gs_rng *rng) {
    owned_alloc(&p->o, NW, T, D);
    for (int i = 0; i < V * EMB; i++) p->E[i] = (float)gs_rng_normal(rng);
    double P[K][D][EMB], m[D];
    for (int j = 0; j < K; j++)
        for (int a = 0; a < D; a++)
            for (int b = 0; b < EMB; b++) P[j][a][b] = gs_rng_normal(rng) / sqrt(EMB);
    for (int a = 0; a < D; a++) m[a] = 3 * gs_rng_normal(rng);
    for (int w = 0; w < NW; w++) {
        p->win[w] = 100 + w;
        p->start[w] = (int64_t)w * T;
        for (int t = 0; t < T; t++) p->tokens[w * T + t] = (int32_t)(gs_rng_uniform(rng) * V);
        for (int t = 0; t < T; t++) {
            float *s = p->o.x + ((int64_t)w * T + t) * D;
            for (int a = 0; a < D; a++) {
                double v = m[a] + 0.3 * gs_rng_normal(rng);
                for (int j = 1; j <= K && t - j >= 0; j++) {
                    const float *e = p->E + p->tokens[w * T + t - j] * EMB;
                    for (int b = 0; b < EMB; b++) v += P[j - 1][a][b] * e[b];
                }
                s[a] = (float)v;
            }
        }
    }
    p->start[NW] = (int64_t)NW * T;
    p->tok.n_windows = NW;
    p->tok.window = p->win;
    p->tok.start = p->start;
    p->tok.tokens = p->tokens;
}

int main(void) {
    int n;
    int *l = gs_probe_lags(256, &n);
    int want_grid[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
    CHECK(l && n == 16 && !memcmp(l, want_grid, sizeof want_grid), "probe grid (%d lags)", n);
    free(l);
    l = gs_probe_lags(10, &n);
    CHECK(l && n == 7 && l[5] == 8 && l[6] == 10, "grid ends at max_lag");
    free(l);

    static planted p;
    gs_rng rng = {12};
    make(&p, &rng);
    gs_probe_opts o;
    gs_probe_opts_default(&o);
    o.max_lag = 32;
    gs_probe r;
    int rc = gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r);
    CHECK(rc == 0, "%s", gs_error());
    if (rc == 0) {
        CHECK(r.n_test_windows == 4 && r.n_train_windows == 16, "split by window: %lld / %lld",
              (long long)r.n_test_windows, (long long)r.n_train_windows);
        for (int i = 0; i < r.n_lags; i++) {
            if (r.lags[i] <= K)
                CHECK(r.pass[i] && r.acc[i] > 0.8, "lag %d: accuracy %.3f vs baseline %.3f", r.lags[i], r.acc[i],
                      r.baseline[i]);
            else
                CHECK(!r.pass[i] && r.acc[i] < 0.2, "lag %d (beyond K): accuracy %.3f vs baseline %.3f", r.lags[i],
                      r.acc[i], r.baseline[i]);
            CHECK(r.measured[i] && r.n_test[i] == 4LL * (T - r.lags[i]) && r.n_train[i] == 16LL * (T - r.lags[i]),
                  "positions at lag %d: %lld / %lld", r.lags[i], (long long)r.n_test[i], (long long)r.n_train[i]);
        }
        CHECK(r.horizon == K && !r.censored, "probe horizon %d (planted %d)", r.horizon, K);
        CHECK(strstr(r.rule, "standard errors") != NULL, "rule stated");
        /* deterministic */
        gs_probe r2;
        CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r2) == 0, "%s", gs_error());
        CHECK(!memcmp(r.acc, r2.acc, sizeof(double) * r.n_lags), "same seed, same accuracies");
        gs_probe_free(&r2);
        /* a subsample of held-out positions and another split */
        o.max_test = 100;
        o.seed = 5;
        CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r2) == 0, "%s", gs_error());
        CHECK(r2.n_test[0] == 100 && r2.horizon == K, "subsampled: %lld scored, horizon %d", (long long)r2.n_test[0],
              r2.horizon);
        gs_probe_free(&r2);
        gs_probe_free(&r);
    }
    /* no lag fails up to K: censored */
    gs_probe_opts_default(&o);
    o.max_lag = 3;
    CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r) == 0 && r.horizon == 3 && r.censored, "censored at 3");
    gs_probe_free(&r);
    /* a lag beyond every window: not measured, a lower bound */
    o.max_lag = 300;
    CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r) == 0 && r.horizon == K && !r.censored, "horizon with a long grid");
    CHECK(!r.measured[r.n_lags - 1], "lag 300 not measured in windows of 200");
    gs_probe_free(&r);

    /* bad input */
    gs_probe_opts_default(&o);
    gs_states one = p.o.s;
    one.n = T; /* a single window */
    CHECK(gs_probe_run(&one, &p.tok, p.E, V, EMB, &o, &r) == -1 && strstr(gs_error(), "at least 2 windows"), "%s",
          gs_error());
    gs_tokens short_tok = p.tok;
    short_tok.n_windows = NW - 1;
    CHECK(gs_probe_run(&p.o.s, &short_tok, p.E, V, EMB, &o, &r) == -1 && strstr(gs_error(), "no tokens for window 119"),
          "%s", gs_error());
    p.tokens[5] = V;
    CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r) == -1 && strstr(gs_error(), "outside the vocabulary"), "%s",
          gs_error());
    p.tokens[5] = 0;
    p.o.x[7] = NAN;
    CHECK(gs_probe_run(&p.o.s, &p.tok, p.E, V, EMB, &o, &r) == -1 && strstr(gs_error(), "non-finite"), "%s",
          gs_error());
    owned_free(&p.o);
    return test_summary();
}
