/* The CUDA backend of GPN / GPN+M (engine/backend.h): a thin adapter over the
 * device step (engine/cuda/cuda_engine.h, a plugin opened on first use). */
#include <stdlib.h>

#include "base/error.h"
#include "engine/arch/gpn/gpn_family.h"
#include "engine/backend.h"
#include "engine/cuda/cuda_engine.h"

typedef struct {
    gpn_cuda *g;
    const gs_engine_host *host;
    gs_step_out out; /* pinned host buffers of the last step */
    int outputs;
    const unsigned char *rows;
} gpn_cuda_backend;

static void fire(void *ctx, gs_hook_point p, int layer, float *host, int B, int width) {
    gs_fire(((const gpn_cuda_backend *)ctx)->host, p, layer, host, B, width);
}

/* the hook mask below is 32 bits: more hook points need a wider one */
_Static_assert(GS_HOOK_COUNT <= 32, "cuda_step's hook mask holds 32 hook points");

static int cuda_step(void *impl, int B) {
    gpn_cuda_backend *c = impl;
    unsigned mask = 0;
    if (c->host->hook[GS_HOOK_MEM_STATE]) /* the memory stays on the device */
        return gs_fail("mem.state: the CUDA engine does not expose the memory to hooks; use the CPU engine");
    for (int p = 0; p < GS_HOOK_COUNT; p++)
        if (c->host->hook[p]) mask |= 1u << p;
    return gpn_cuda_step(c->g, c->host->tokens, B, mask, fire, c, c->outputs, c->rows, &c->out);
}

static void cuda_free(void *impl) {
    gpn_cuda_backend *c = impl;
    if (!c) return;
    gpn_cuda_free(c->g);
    free(c);
}

static void cuda_reset_seq(void *impl, int b) { gpn_cuda_reset_seq(((gpn_cuda_backend *)impl)->g, b); }
static gs_step_out cuda_out(const void *impl) { return ((const gpn_cuda_backend *)impl)->out; }
static const char *cuda_name(const void *impl) { return gpn_cuda_name(((const gpn_cuda_backend *)impl)->g); }

static const float *cuda_site(const void *impl, gs_hook_point p) {
    const gs_step_out *o = &((const gpn_cuda_backend *)impl)->out;
    switch (p) {
    case GS_HOOK_S_PRED: return o->s_pred;
    case GS_HOOK_S_GROUND: return o->s_ground;
    case GS_HOOK_LOGITS: return o->logits;
    case GS_HOOK_NLL: return o->nll;
    case GS_HOOK_MEM_ALPHA: return o->alpha;
    case GS_HOOK_MEM_BETA: return o->beta;
    case GS_HOOK_MEM_NORM: return o->mem_norm;
    default: return NULL;
    }
}

static void cuda_set_outputs(void *impl, int what, const unsigned char *rows) {
    gpn_cuda_backend *c = impl;
    c->outputs = what;
    c->rows = rows;
}

static const gs_backend_i gpn_cuda_i = {cuda_name, cuda_free, cuda_reset_seq, cuda_step,
                                        cuda_out,  cuda_site, cuda_set_outputs, NULL}; /* no window path */

int gpn_cuda_backend_new(const gs_model *m, int max_batch, const gs_device *dev, const gs_engine_host *host,
                         gs_backend *out) {
    gpn_cuda_backend *c = calloc(1, sizeof *c);
    if (!c) return gs_fail("out of memory");
    c->host = host;
    c->outputs = GS_OUT_ALL;
    if (!(c->g = gpn_cuda_new(m, max_batch, dev->index, dev->precision))) {
        free(c);
        return -1;
    }
    *out = (gs_backend){.i = &gpn_cuda_i, .impl = c}; /* its own out and site: each step hands back its buffers */
    return 0;
}
