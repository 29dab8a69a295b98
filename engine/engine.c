/* The engine every caller sees: what all backends share (tokens, positions,
 * hooks, the batch) and dispatch through the backend's function table. The
 * family table (engine/arch/) says which backend runs a model on a device. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/backend.h"

struct gpn_engine {
    const gpn_model *m;
    int max_batch;
    gs_engine_host host;
    gs_backend be;
};

gpn_engine *gpn_engine_new(const gpn_model *m, int max_batch) { return gpn_engine_new_on(m, max_batch, NULL); }

gpn_engine *gpn_engine_new_on(const gpn_model *m, int max_batch, const gpn_device *dev) {
    if (max_batch < 1) { gs_fail("batch size must be at least 1 (got %d)", max_batch); return NULL; }
    const gs_family *f = gs_family_of(&m->cfg);
    if (!f) { gs_fail("no engine for architecture %d", (int)m->cfg.arch); return NULL; }
    int cuda = dev && dev->kind == GPN_DEVICE_CUDA;
    if (cuda && !f->new_cuda) { gs_fail("the %s family has no CUDA engine yet: use --device cpu", f->name); return NULL; }
    gpn_engine *e = calloc(1, sizeof *e);
    if (!e) { gs_fail("out of memory"); return NULL; }
    e->m = m;
    e->max_batch = max_batch;
    e->host.tokens = calloc((size_t)max_batch, sizeof *e->host.tokens);
    e->host.pos = calloc((size_t)max_batch, sizeof *e->host.pos);
    if (!e->host.tokens || !e->host.pos) {
        gs_fail("out of memory for an engine of batch %d", max_batch);
        gpn_engine_free(e);
        return NULL;
    }
    if ((cuda ? f->new_cuda(m, max_batch, dev, &e->host, &e->be) : f->new_cpu(m, max_batch, &e->host, &e->be)) != 0) {
        gpn_engine_free(e);
        return NULL;
    }
    return e;
}

void gpn_engine_free(gpn_engine *e) {
    if (!e) return;
    if (e->be.i) e->be.i->free(e->be.impl);
    free(e->host.tokens);
    free(e->host.pos);
    free(e);
}

/* the three accessors with a default for a NULL entry (engine/backend.h) */
const char *gpn_engine_device_name(const gpn_engine *e) { return e->be.i->name ? e->be.i->name(e->be.impl) : "cpu"; }

void gpn_engine_set_outputs(gpn_engine *e, int what, const unsigned char *rows) {
    if (e->be.i->set_outputs) e->be.i->set_outputs(e->be.impl, what, rows);
}

void gpn_engine_reset(gpn_engine *e) {
    for (int b = 0; b < e->max_batch; b++) gpn_engine_reset_seq(e, b);
}

void gpn_engine_reset_seq(gpn_engine *e, int b) {
    e->host.pos[b] = 0;
    e->be.i->reset_seq(e->be.impl, b);
}

void gpn_engine_set_hook(gpn_engine *e, gpn_hook_point p, gpn_hook_fn fn, void *ctx) {
    if (p >= GPN_HOOK_COUNT) return;
    e->host.hook[p] = fn;
    e->host.hook_ctx[p] = ctx;
}

const gpn_model *gpn_engine_model(const gpn_engine *e) { return e->m; }
int gpn_engine_max_batch(const gpn_engine *e) { return e->max_batch; }

int gpn_engine_step(gpn_engine *e, const int32_t *tokens, int B) {
    const gpn_config *c = &e->m->cfg;
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

int gpn_engine_has_window(const gpn_engine *e) { return e->be.i->window != NULL; }

int gpn_engine_window(gpn_engine *e, const int32_t *tokens, int B, int T, float *nll) {
    const gpn_config *c = &e->m->cfg;
    if (!e->be.i->window) return gs_fail("this engine (%s) has no window path: step it token by token", gpn_engine_device_name(e));
    for (int p = 0; p < GPN_HOOK_COUNT; p++)
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

gpn_step_out gpn_engine_out(const gpn_engine *e) { return e->be.i->out ? e->be.i->out(e->be.impl) : e->be.out; }

const float *gpn_engine_site(const gpn_engine *e, gpn_hook_point p) {
    if (e->be.i->site) return e->be.i->site(e->be.impl, p);
    return (unsigned)p < GPN_HOOK_COUNT ? e->be.site[p] : NULL;
}
