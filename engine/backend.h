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
    gpn_hook_fn hook[GPN_HOOK_COUNT];
    void *hook_ctx[GPN_HOOK_COUNT];
} gs_engine_host;

static inline void gs_fire(const gs_engine_host *h, gpn_hook_point p, int layer, float *data, int B, int width) {
    if (!h->hook[p]) return;
    gpn_hook_event ev = {p, layer, B, width, data, h->tokens, h->pos};
    h->hook[p](h->hook_ctx[p], &ev);
}

typedef struct {
    const char *(*name)(const void *impl);
    void (*free)(void *impl);
    void (*reset_seq)(void *impl, int b);
    /* advance the first B sequences by host->tokens; 0 or -1 with gs_error() */
    int (*step)(void *impl, int B);
    gpn_step_out (*out)(const void *impl);
    /* the B rows of a (not per-layer) site's tensor from the last step, or
     * NULL where the backend did not keep it (take it with a hook instead) */
    const float *(*site)(const void *impl, gpn_hook_point p);
    /* what the step must make available (gpn_engine_set_outputs) */
    void (*set_outputs)(void *impl, int what, const unsigned char *rows);
} gs_backend_i;

typedef struct {
    const gs_backend_i *i;
    void *impl;
} gs_backend;

#endif
