/* gs_api_run: B windows through the runner (probes/runner.h), each request a
 * handler of a probe set (probes/probes.h): its hook, then its capture. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "base/error.h"
#include "probes/probes.h"
#include "probes/runner.h"

typedef struct run_state run_state;

typedef struct {
    const gs_api_request *r;
    const gs_site *site;
    int layer;                     /* -1: every layer (a hook only) */
    char name[GS_API_NAME_MAX];    /* with the layer spelled out */
    run_state *run;
} request;

struct run_state {
    const int32_t *tokens;
    int B, T, t, V;
    float *logits, *nll;
    int failed; /* a hook returned non-zero: no more hooks, and the step loop stops */
};

static void on_event(void *ctx, const gs_hook_event *ev) {
    request *q = ctx;
    run_state *s = q->run;
    if (s->failed) return;
    if (q->r->hook) {
        char name[GS_API_NAME_MAX];
        if (q->layer < 0) gs_site_format(q->site, ev->layer, name, sizeof name);
        int rc = q->r->hook(q->r->ctx, q->layer < 0 ? name : q->name, ev->layer, s->t, ev->data, ev->B, ev->width);
        if (rc) {
            s->failed = 1;
            gs_fail("the hook on %s at position %d returned %d", q->layer < 0 ? name : q->name, s->t, rc);
            return;
        }
    }
    if (q->r->out)
        for (int b = 0; b < ev->B; b++)
            memcpy(q->r->out + ((size_t)b * s->T + s->t) * ev->width, ev->data + (size_t)b * ev->width,
                   (size_t)ev->width * sizeof(float));
}

static int window(void *ctx, int64_t w, int32_t *tokens) {
    run_state *s = ctx;
    memcpy(tokens, s->tokens + (size_t)w * s->T, (size_t)s->T * sizeof *tokens);
    return 0;
}

static int before_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t) {
    (void)e, (void)w0, (void)nb;
    ((run_state *)ctx)->t = t;
    return 0;
}

static int after_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)w0, (void)tokens;
    run_state *s = ctx;
    if (s->failed) return -1;
    gs_step_out out = gs_engine_out(e);
    for (int b = 0; b < nb; b++) {
        if (s->nll) s->nll[(size_t)b * s->T + t] = out.nll[b];
        if (s->logits)
            memcpy(s->logits + ((size_t)b * s->T + t) * s->V, out.logits + (size_t)b * s->V, (size_t)s->V * sizeof(float));
    }
    return 0;
}

/* every request's site, checked before any work */
static int plan(const gs_api_model *a, const gs_api_request *req, int n_req, request *q, run_state *s) {
    for (int i = 0; i < n_req; i++) {
        q[i] = (request){.r = &req[i], .run = s};
        if (!req[i].site) return gs_fail("request %d names no site", i);
        if (probe_parse_site(&a->m->cfg, req[i].site, &q[i].site, &q[i].layer)) return -1;
        if (q[i].layer < 0 && req[i].out) return gs_fail("a capture of '%s' needs one layer, not '*'", req[i].site);
        if (!req[i].out && !req[i].hook) return gs_fail("request %d on '%s' has neither a hook nor a buffer", i, req[i].site);
        if (q[i].layer >= 0) gs_site_format(q[i].site, q[i].layer, q[i].name, sizeof q[i].name);
    }
    return 0;
}

/* the model's engine for B sequences: the last run's when it had the same batch */
static gs_engine *engine_for(gs_api_model *a, int B) {
    if (a->engine && gs_engine_max_batch(a->engine) == B) return a->engine;
    gs_engine_free(a->engine);
    return a->engine = gs_engine_new(a->m, B);
}

int gs_api_run(gs_api_model *a, const int32_t *tokens, int B, int T, const gs_api_request *req, int n_req,
               float *logits, float *nll) {
    const gs_config *c = &a->m->cfg;
    if (!tokens || B < 1 || T < 1) return gs_fail("a batch of %d windows of %d tokens: both at least 1", B, T);
    if (n_req < 0 || (n_req && !req)) return gs_fail("%d requests", n_req);
    for (size_t i = 0; i < (size_t)B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= c->V)
            return gs_fail("token %d at window %zu, position %zu: the vocabulary is 0..%d", tokens[i], i / (size_t)T,
                           i % (size_t)T, c->V - 1);
    const gs_site *lg = gs_site_of_role(a->f, c, GS_ROLE_LOGITS);
    run_state s = {.tokens = tokens, .B = B, .T = T, .V = lg ? gs_site_width(lg, c) : c->V, .logits = logits, .nll = nll};
    request *q = calloc((size_t)n_req + 1, sizeof *q);
    if (!q) return gs_fail("out of memory for %d requests", n_req);
    int rc = plan(a, req, n_req, q, &s);
    gs_engine *e = rc ? NULL : engine_for(a, B);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    if (!rc && !ps) rc = -1;
    for (int i = 0; i < n_req && !rc; i++) rc = probe_add(ps, req[i].site, on_event, &q[i]);
    if (!rc) {
        gs_engine_set_outputs(e, logits ? GS_OUT_LOGITS : 0, NULL);
        runner_sink sink = {.ctx = &s, .before_step = before_step, .after_step = after_step};
        runner_opts ro = {.engine = e, .T = T, .first = 0, .total = B, .window = window, .window_ctx = &s};
        rc = runner_run(&ro, &sink, 1, NULL) ? -1 : 0;
    }
    probe_set_free(ps);
    free(q);
    return rc;
}
