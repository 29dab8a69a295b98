/* Backends behind one function table (ggml's ggml_backend_i is the model):
 * a family (engine/arch/) provides, per device, a backend that runs its step;
 * engine.c holds what every backend shares and dispatches through the table,
 * so no caller tests for a device or an architecture. */
#ifndef GS_ENGINE_BACKEND_H
#define GS_ENGINE_BACKEND_H

#include <stdint.h>

#include "engine/engine.h"
#include "engine/hooks.h"

/* What the engine owns and a backend reads: this step's tokens (checked
 * against the vocabulary), each sequence's position (the engine advances it
 * after a step), and the hooks to fire. */
typedef struct {
    int32_t *tokens;
    int64_t *pos;
    gs_hook_fn hook[GS_HOOK_COUNT];
    void *hook_ctx[GS_HOOK_COUNT];
} gs_engine_host;

static inline void gs_fire(const gs_engine_host *h, gs_hook_point p, int layer, float *data, int B, int width) {
    if (!h->hook[p]) return;
    gs_hook_event ev = {p, layer, B, width, data, h->tokens, h->pos};
    h->hook[p](h->hook_ctx[p], &ev);
}

/* The entries a backend may leave NULL take the CPU backends' shared answer,
 * which the engine reads through one accessor each (engine/engine.c):
 * name NULL: "cpu"; out / site NULL: the gs_backend's `out` and `site`,
 * filled once when the backend is made (a CPU backend's buffers stay put).
 * A backend that learns its buffers at each step (CUDA's) fills these. */
typedef struct {
    const char *(*name)(const void *impl);
    void (*free)(void *impl);
    void (*reset_seq)(void *impl, int b);
    /* advance the first B sequences by host->tokens; 0 or -1 with gs_error() */
    int (*step)(void *impl, int B);
    gs_step_out (*out)(const void *impl);
    /* the B rows of a (not per-layer) site's tensor from the last step, or
     * NULL where the backend did not keep it (take it with a hook instead) */
    const float *(*site)(const void *impl, gs_hook_point p);
    /* what the step must make available (gs_engine_set_outputs) */
    void (*set_outputs)(void *impl, int what, const unsigned char *rows);
    /* advance the first B sequences by T tokens each (tokens: B rows of T)
     * with no hooks set, leaving every carried state as T steps would, and
     * write each token's NLL to nll (B rows of T; NaN where the step's is):
     * gs_engine_window. NULL where the backend has no such path. */
    int (*window)(void *impl, const int32_t *tokens, int B, int T, float *nll);
} gs_backend_i;

typedef struct {
    const gs_backend_i *i;
    void *impl;
    /* read where i->out / i->site are NULL: the buffers every step leaves
     * its outputs in, and per hook point the (not per-layer) site's rows,
     * NULL where the backend does not keep that site */
    gs_step_out out;
    const float *site[GS_HOOK_COUNT];
} gs_backend;

/* A CPU backend's handle (table i, state impl) with the defaults filled:
 * `out` as given, and logits and nll kept as sites, as every family keeps
 * them; the family then adds its own sites to .site. */
static inline gs_backend gs_cpu_backend(const gs_backend_i *i, void *impl, gs_step_out out) {
    gs_backend be = {.i = i, .impl = impl, .out = out};
    be.site[GS_HOOK_LOGITS] = out.logits;
    be.site[GS_HOOK_NLL] = out.nll;
    return be;
}

#endif
