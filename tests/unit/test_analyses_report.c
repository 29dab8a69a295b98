/* The summary table: every part present with the paper's column, token text
 * through the callback, no NaN or infinity printed; and gs_states_load, the
 * in-memory copy the probe works on (whole windows under a row budget). */
#include <math.h>
#include <stdio.h>

#include "analyses/report.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

static const char *tok_text(void *ctx, int id) {
    static char buf[32];
    snprintf(buf, sizeof buf, "%s%d", (const char *)ctx, id);
    return buf;
}

int main(void) {
    enum { D = 8, NW = 10, T = 64, H = 4, V = 12 };
    gs_rng rng = {17};
    owned_states o;
    owned_alloc(&o, NW, T, D);
    double z[D];
    for (int w = 0; w < NW; w++) {
        for (int j = 0; j < D; j++) z[j] = gs_rng_normal(&rng);
        for (int t = 0; t < T; t++)
            for (int j = 0; j < D; j++) {
                z[j] = 0.7 * z[j] + 0.7 * gs_rng_normal(&rng);
                o.x[((int64_t)w * T + t) * D + j] = (float)(5 + j + z[j]);
            }
    }
    gs_geometry g;
    gs_default_dir dd;
    gs_horizons h;
    gs_retention rt;
    gs_probe pr;
    gs_config c = {0};
    c.arch = GS_ARCH_GPN; c.n_layers = 1; c.d = D; c.e = D; c.f = 1; c.V = V;
    gs_model *m = gs_model_new(&c);
    for (int j = 0; j < D; j++) { m->p.decode_norm_w[j] = 1; m->p.decode_proj_k[j * D + j] = 1; }
    for (int i = 0; i < V * D; i++) m->p.embedding[i] = (float)gs_rng_normal(&rng);
    double uni[V];
    for (int v = 0; v < V; v++) uni[v] = v;
    int ok = gs_geometry_run(owned_source(&o), NULL, &g) == 0;
    ok = ok && gs_default_dir_run(owned_source(&o), &g, m, uni, V, NULL, &dd) == 0;
    ok = ok && gs_horizons_run(owned_source(&o), NULL, &h) == 0;
    float *alpha = malloc(sizeof(float) * NW * T * H), *beta = malloc(sizeof(float) * NW * T * H);
    int64_t ws[NW + 1];
    for (int w = 0; w <= NW; w++) ws[w] = (int64_t)w * T;
    for (int64_t i = 0; i < (int64_t)NW * T * H; i++) {
        alpha[i] = (float)(i % H < 2 ? 0.5 : 0.95);
        beta[i] = 0.5f;
    }
    ok = ok && gs_retention_run(alpha, beta, ws, NW, H, NULL, &rt) == 0;
    int32_t toks[NW * T];
    int64_t wid[NW], start[NW + 1];
    for (int i = 0; i < NW * T; i++) toks[i] = (int32_t)(gs_rng_uniform(&rng) * V);
    for (int w = 0; w < NW; w++) { wid[w] = 100 + w; start[w] = (int64_t)w * T; }
    start[NW] = (int64_t)NW * T;
    gs_tokens tk = {NW, wid, start, toks};
    gs_probe_opts po;
    gs_probe_opts_default(&po);
    po.max_lag = 8;
    ok = ok && gs_probe_run(&o.s, &tk, m->p.embedding, V, D, &po, &pr) == 0;
    CHECK(ok, "%s", gs_error());
    if (ok) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gs_report rep = {&g, &dd, &h, &rt, &pr, tok_text, "tok"};
        gs_report_print(f, &rep);
        fclose(f);
        CHECK(strstr(buf, "1. Geometry") && strstr(buf, "2. The mean direction") && strstr(buf, "3. Horizons") &&
                  strstr(buf, "Memory horizon") && strstr(buf, "4. Probe horizon"),
              "all sections");
        CHECK(strstr(buf, "1131 and 2099 of 2496") && strstr(buf, "0.988 +- 0.005") && strstr(buf, "6 heads at 1-3"),
              "paper column");
        CHECK(strstr(buf, "\"tok") != NULL, "token text through the callback");
        CHECK(!strstr(buf, "nan") && !strstr(buf, "inf"), "no NaN or infinity printed:\n%s", buf);
        CHECK(strstr(buf, "rule:") != NULL, "probe rule printed");
        if (getenv("GS_SHOW_REPORT")) fputs(buf, stdout);
        free(buf);
        /* report with parts missing */
        f = open_memstream(&buf, &len);
        gs_report part = {&g, NULL, NULL, NULL, NULL, NULL, NULL};
        gs_report_print(f, &part);
        fclose(f);
        CHECK(strstr(buf, "Geometry") && !strstr(buf, "Horizons"), "partial report");
        free(buf);
        gs_geometry_free(&g);
        gs_default_dir_free(&dd);
        gs_horizons_free(&h);
        gs_retention_free(&rt);
        gs_probe_free(&pr);
    }
    CHECK(gs_nearest_lag(h.lags, 0, 5) == -1, "empty grid");

    /* gs_states_load: whole windows under a budget */
    gs_states s;
    CHECK(gs_states_load(owned_source(&o), 150, &s) == 0 && s.n == 128 && s.window[127] == 101, "budget 150 -> %lld rows",
          (long long)s.n);
    CHECK(!memcmp(s.x, o.x, sizeof(float) * 128 * D) && s.pos[64] == 0, "rows copied");
    gs_states_free(&s);
    CHECK(gs_states_load(owned_source(&o), 0, &s) == 0 && s.n == NW * T, "no budget: everything");
    gs_states_free(&s);
    CHECK(gs_states_load(owned_source(&o), 10, &s) == 0 && s.n == 10, "one window larger than the budget is cut");
    gs_states_free(&s);

    free(alpha);
    free(beta);
    gs_model_free(m);
    owned_free(&o);
    return test_summary();
}
