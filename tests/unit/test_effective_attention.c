/* Exact effective attention (analyses/causal/effective_attention.h):
 * 1. closed forms on a one-head memory with known keys: orthogonal keys
 *    (no key removal, so the exact weights are the decay products and the
 *    heuristic equals them), and one key written twice, where the second
 *    write removes part of the first: a_{1,0} = beta_0 (alpha_1 - beta_1) k.q
 *    for GPN+M and beta_0 alpha_1 (1 - beta_1) k.q for GDN;
 * 2. the engine: sum_j a_{t,j} v_j equals the engine's own read (captured
 *    at the read site) to 1e-5 of its norm on every head, layer and step of
 *    the GPN+M fixture, a random three-layer GPN+M and the GDN fixture;
 * 3. top keys and the mass they hold. */
#include "analyses/causal/effective_attention.h"
#include "base/error.h"
#include "base/prng.h"
#include "engine/model.h"
#include "testlib.h"

#define T_MAX 40

static const gs_delta_memory gpnm_rule = {0, 0, 0, 0, 0, 0, 0, 0};
static const gs_delta_memory gdn_rule = {0, 0, 0, 0, 0, 0, 1, 1};

/* a one-head trace of T steps with the given keys (dk = 3, dv = 2) */
typedef struct {
    gs_delta_trace tr;
    float q[T_MAX * 3], k[T_MAX * 3], v[T_MAX * 2], alpha[T_MAX], beta[T_MAX], read[T_MAX * 2];
} toy;

static void toy_init(toy *x, const gs_delta_memory *rule, int T) {
    memset(x, 0, sizeof *x);
    x->tr = (gs_delta_trace){T, 1, 3, 2, 1, 1, rule, x->q, x->read, x->k, x->v, x->alpha, x->beta};
}

static void closed_forms(void) {
    double a[T_MAX * T_MAX], h[T_MAX * T_MAX];
    const float alpha[3] = {0.9f, 0.7f, 0.6f}, beta[3] = {0.5f, 0.8f, 0.3f};
    /* orthogonal keys e0, e1, e2; query q at every step */
    const float q[3] = {0.3f, -0.5f, 0.8f};
    for (int r = 0; r < 2; r++) {
        toy x;
        toy_init(&x, r ? &gdn_rule : &gpnm_rule, 3);
        for (int t = 0; t < 3; t++) {
            x.k[t * 3 + t] = 1.0f;
            x.alpha[t] = alpha[t];
            x.beta[t] = beta[t];
            memcpy(x.q + t * 3, q, sizeof q);
        }
        gs_delta_weights(&x.tr, 0, 0, a, h);
        double worst = 0.0;
        for (int t = 0; t < 3; t++)
            for (int j = 0; j <= t; j++) {
                double want = beta[j] * q[j];
                for (int i = j + 1; i <= t; i++) want *= alpha[i];
                worst = fmax(worst, fabs(a[t * 3 + j] - want) + fabs(h[t * 3 + j] - want));
            }
        CHECK(worst < 1e-7, "%s, orthogonal keys: weights off the decay products by %g", r ? "GDN" : "GPN+M", worst);
        CHECK(a[0 * 3 + 1] == 0.0 && a[0 * 3 + 2] == 0.0, "no weight on later keys");
    }
    /* one key written twice: the second write removes beta_1 of the first */
    for (int r = 0; r < 2; r++) {
        toy x;
        toy_init(&x, r ? &gdn_rule : &gpnm_rule, 2);
        const float k[3] = {0.6f, 0.8f, 0.0f};
        for (int t = 0; t < 2; t++) {
            memcpy(x.k + t * 3, k, sizeof k);
            memcpy(x.q + t * 3, q, sizeof q);
            x.alpha[t] = alpha[t];
            x.beta[t] = beta[t];
        }
        gs_delta_weights(&x.tr, 0, 0, a, h);
        double kq = 0.6 * 0.3 - 0.8 * 0.5;
        double a1 = (double)beta[1] * kq;
        double a0 = r ? (double)beta[0] * alpha[1] * (1.0 - beta[1]) * kq : (double)beta[0] * (alpha[1] - beta[1]) * kq;
        double h0 = (double)beta[0] * alpha[1] * kq;
        CHECK(fabs(a[1 * 2 + 1] - a1) < 1e-7 && fabs(a[1 * 2 + 0] - a0) < 1e-7,
              "%s, repeated key: a = (%g, %g), closed form (%g, %g)", r ? "GDN" : "GPN+M", a[2], a[3], a0, a1);
        CHECK(fabs(h[1 * 2 + 0] - h0) < 1e-7, "heuristic keeps the first write whole: %g, want %g", h[2], h0);
    }
}

typedef struct {
    double worst;   /* max relative read error over heads, layers, steps */
    double heur;    /* max relative read error of the heuristic */
    int windows;
} engine_check;

static int check_window(void *ctx, int64_t w, const gs_delta_trace *tr) {
    (void)w;
    engine_check *c = ctx;
    double *a = malloc((size_t)tr->T * tr->T * sizeof *a), *h = malloc((size_t)tr->T * tr->T * sizeof *h);
    for (int l = 0; l < tr->n_layers; l++)
        for (int hd = 0; hd < tr->H; hd++) {
            gs_delta_weights(tr, l, hd, a, h);
            for (int t = 0; t < tr->T; t++) {
                gs_delta_query_stats s;
                gs_delta_query_stats_of(tr, l, hd, a, h, t, &s);
                c->worst = fmax(c->worst, s.read_error);
                c->heur = fmax(c->heur, s.heuristic_error);
            }
        }
    free(a);
    free(h);
    c->windows++;
    return 0;
}

static int token_window(void *ctx, int64_t w, int32_t *tokens) {
    const int *V = ctx;
    uint64_t r = (uint64_t)w + 7;
    for (int t = 0; t < T_MAX; t++) tokens[t] = (int32_t)(gs_splitmix64(&r) % (uint64_t)*V);
    return 0;
}

static void engine_reads(const char *what, gs_model *m) {
    if (!m) { CHECK(0, "%s: %s", what, gs_error()); return; }
    gs_engine *e = gs_engine_new(m, 3);
    engine_check c = {0};
    gs_delta_capture *cap = e ? gs_delta_capture_new(e, T_MAX, check_window, &c) : NULL;
    CHECK(cap, "%s: %s", what, gs_error());
    if (cap) {
        runner_sink sink = gs_delta_capture_sink(cap);
        runner_opts ro = {.engine = e, .T = T_MAX, .first = 0, .total = 5, .window = token_window, .window_ctx = &m->cfg.V};
        CHECK(runner_run(&ro, &sink, 1, NULL) == 0, "%s: %s", what, gs_error());
        CHECK(c.windows == 5, "%s: %d windows", what, c.windows);
        CHECK(c.worst < 1e-5, "%s: sum_j a_tj v_j is %g (relative) from the engine's read", what, c.worst);
        printf("%s: exact read error %.2e, heuristic's %.3f (max over heads, layers, steps)\n", what, c.worst, c.heur);
        /* the fixtures' keys overlap: the heuristic must not match the read (else this test cannot tell) */
        CHECK(c.heur > 1e-3, "%s: the heuristic reproduces the read too (%g): the check is blind", what, c.heur);
    }
    gs_delta_capture_free(cap);
    gs_engine_free(e);
    gs_model_free(m);
}

static void top_keys(void) {
    double w[4 * 4] = {0};
    double row[4] = {0.1, -0.6, 0.2, 0.1};
    memcpy(w + 3 * 4, row, sizeof row);
    int keys[4];
    double mass;
    int n = gs_delta_top_keys(w, 4, 3, 2, keys, &mass);
    CHECK(n == 2 && keys[0] == 1 && keys[1] == 2, "top 2: %d keys %d %d", n, keys[0], keys[1]);
    CHECK(fabs(mass - 0.8) < 1e-12, "mass %g, want 0.8", mass);
    n = gs_delta_top_keys(w, 4, 3, 3, keys, &mass);
    CHECK(n == 3 && keys[2] == 3, "ties go to the later key: %d", keys[2]);
    n = gs_delta_top_keys(w, 4, 0, 5, keys, &mass);
    CHECK(n == 1 && keys[0] == 0 && mass == 1.0, "query 0 has one key (%d, mass %g)", n, mass);
}

int main(void) {
    closed_forms();
    top_keys();
    engine_reads("GPN+M fixture", gs_model_load(fixture("reference/gpnm1.weights.safetensors")));
    gs_config c3 = {.arch = GS_ARCH_GPN_M, .n_layers = 3, .d = 24, .e = 16, .f = 32, .H = 4, .dk = 6, .dv = 5, .V = 50};
    engine_reads("random 3-layer GPN+M", gs_model_random(&c3, 3));
    engine_reads("GDN fixture", gs_model_load(fixture("reference/gdn2.weights.safetensors")));
    gs_config c1 = {.arch = GS_ARCH_GPN, .n_layers = 1, .d = 8, .e = 8, .f = 8, .V = 10};
    CHECK(gs_delta_memory_of(&c1) == NULL && strstr(gs_error(), "no delta-rule memory"), "GPN: %s", gs_error());
    return test_summary();
}
