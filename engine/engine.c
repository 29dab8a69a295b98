/* The engine every caller sees: what all backends share (tokens, positions,
 * hooks, the batch) and dispatch through the backend's function table. The
 * family table (engine/arch/) says which backend runs a model on a device. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/backend.h"

struct gs_engine {
    const gs_model *m;
    int max_batch;
    gs_engine_host host;
    gs_backend be;
};

gs_engine *gs_engine_new(const gs_model *m, int max_batch) { return gs_engine_new_on(m, max_batch, NULL); }

gs_engine *gs_engine_new_on(const gs_model *m, int max_batch, const gs_device *dev) {
    if (max_batch < 1) { gs_fail("batch size must be at least 1 (got %d)", max_batch); return NULL; }
    const gs_family *f = gs_family_of(&m->cfg);
    if (!f) { gs_fail("no engine for architecture %d", (int)m->cfg.arch); return NULL; }
    int cuda = dev && dev->kind == GS_DEVICE_CUDA;
    if (cuda && !f->new_cuda) { gs_fail("the %s family has no CUDA engine yet: use --device cpu", f->name); return NULL; }
    gs_engine *e = calloc(1, sizeof *e);
    if (!e) { gs_fail("out of memory"); return NULL; }
    e->m = m;
    e->max_batch = max_batch;
    e->host.tokens = calloc((size_t)max_batch, sizeof *e->host.tokens);
    e->host.pos = calloc((size_t)max_batch, sizeof *e->host.pos);
    if (!e->host.tokens || !e->host.pos) {
        gs_fail("out of memory for an engine of batch %d", max_batch);
        gs_engine_free(e);
        return NULL;
    }
    if ((cuda ? f->new_cuda(m, max_batch, dev, &e->host, &e->be) : f->new_cpu(m, max_batch, &e->host, &e->be)) != 0) {
        gs_engine_free(e);
        return NULL;
    }
    return e;
}

void gs_engine_free(gs_engine *e) {
    if (!e) return;
    if (e->be.i) e->be.i->free(e->be.impl);
    free(e->host.tokens);
    free(e->host.pos);
    free(e);
}

/* the three accessors with a default for a NULL entry (engine/backend.h) */
const char *gs_engine_device_name(const gs_engine *e) { return e->be.i->name ? e->be.i->name(e->be.impl) : "cpu"; }

void gs_engine_set_outputs(gs_engine *e, int what, const unsigned char *rows) {
    if (e->be.i->set_outputs) e->be.i->set_outputs(e->be.impl, what, rows);
}

void gs_engine_reset(gs_engine *e) {
    for (int b = 0; b < e->max_batch; b++) gs_engine_reset_seq(e, b);
}

void gs_engine_reset_seq(gs_engine *e, int b) {
    e->host.pos[b] = 0;
    e->be.i->reset_seq(e->be.impl, b);
}

void gs_engine_set_hook(gs_engine *e, gs_hook_point p, gs_hook_fn fn, void *ctx) {
    if (p >= GS_HOOK_COUNT) return;
    e->host.hook[p] = fn;
    e->host.hook_ctx[p] = ctx;
}

const gs_model *gs_engine_model(const gs_engine *e) { return e->m; }
int gs_engine_max_batch(const gs_engine *e) { return e->max_batch; }

int gs_engine_step(gs_engine *e, const int32_t *tokens, int B) {
    const gs_config *c = &e->m->cfg;
    if (B < 1 || B > e->max_batch) return gs_fail("batch of %d sequences, engine built for 1..%d", B, e->max_batch);
    for (int b = 0; b < B; b++) {
        if (tokens[b] < 0 || tokens[b] >= c->V)
            return gs_fail("token id %d (sequence %d) is outside the vocabulary 0..%d", tokens[b], b, c->V - 1);
        e->host.tokens[b] = tokens[b];
    }
    if (e->be.i->step(e->be.impl, B)) return -1;
    for (int b = 0; b < B; b++) e->host.pos[b]++;
    return 0;
}

int gs_engine_has_window(const gs_engine *e) { return e->be.i->window != NULL; }

int gs_engine_window(gs_engine *e, const int32_t *tokens, int B, int T, float *nll) {
    const gs_config *c = &e->m->cfg;
    if (!e->be.i->window) return gs_fail("this engine (%s) has no window path: step it token by token", gs_engine_device_name(e));
    for (int p = 0; p < GS_HOOK_COUNT; p++)
        if (e->host.hook[p]) return gs_fail("a window runs without hooks, and hook point %d is set: step instead", p);
    if (B < 1 || B > e->max_batch) return gs_fail("batch of %d sequences, engine built for 1..%d", B, e->max_batch);
    if (T < 1) return gs_fail("a window of %d tokens: at least 1", T);
    for (long i = 0; i < (long)B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= c->V)
            return gs_fail("token id %d (sequence %ld, token %ld) is outside the vocabulary 0..%d", tokens[i], i / T, i % T,
                           c->V - 1);
    if (e->be.i->window(e->be.impl, tokens, B, T, nll)) return -1;
    for (int b = 0; b < B; b++) e->host.pos[b] += T;
    return 0;
}

gs_step_out gs_engine_out(const gs_engine *e) { return e->be.i->out ? e->be.i->out(e->be.impl) : e->be.out; }

const float *gs_engine_site(const gs_engine *e, gs_hook_point p) {
    if (e->be.i->site) return e->be.i->site(e->be.impl, p);
    return (unsigned)p < GS_HOOK_COUNT ? e->be.site[p] : NULL;
}
