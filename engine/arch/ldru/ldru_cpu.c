/* The MLP-LDRU CPU backend: the streaming form of the tree (ldru.h). Per
 * sequence a binary counter of completed subtrees; a step pushes x_t's leaf
 * and merges level by level over the batch, firing "tree.level.{i}" on the
 * nodes each level completes (NaN rows where a sequence completes none, so
 * sequences at different positions share a step), then finishes each stack
 * into the prefix state and classifies it. There is no next-token
 * prediction: nll is NaN and top1 -1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/ldru/ldru.h"

typedef struct {
    const gs_model *m;
    const gs_engine_host *host;
    ldru_weights w;
    int max_batch;
    ldru_stack *stack; /* max_batch */
    float *nodes;      /* max_batch x LDRU_MAX_LEVELS x d, the stacks' storage */
    float *level[2];   /* max_batch x d: the nodes the current and the next level complete */
    float *prefix, *logits, *nll, *entropy, *scratch;
    int32_t *top1;
    unsigned char *merging;
    float *arena;
} ldru_cpu;

static void cpu_free(void *impl) {
    ldru_cpu *e = impl;
    if (!e) return;
    free(e->arena);
    free(e->stack);
    free(e->top1);
    free(e->merging);
    free(e);
}

static void cpu_reset_seq(void *impl, int b) {
    ldru_cpu *e = impl;
    e->stack[b].n = 0, e->stack[b].depth = 0;
}

static void fill_nan(float *x, int n) {
    for (int i = 0; i < n; i++) x[i] = NAN;
}

static int cpu_step(void *impl, int B) {
    ldru_cpu *e = impl;
    const gs_engine_host *h = e->host;
    int d = e->w.d, C = e->w.C;
    float *cur = e->level[0], *next = e->level[1];
    for (int b = 0; b < B; b++) {
        if (e->stack[b].n >= LDRU_MAX_LENGTH) return gs_fail("sequence %d is longer than %d symbols", b, LDRU_MAX_LENGTH);
        memcpy(cur + (size_t)b * d, e->w.t[LDRU_EMBED] + (size_t)h->tokens[b] * d, (size_t)d * sizeof(float));
        e->merging[b] = 1;
    }
    /* level L's completed node of sequence b merges with the stack's level-L
     * node when there is one, else is pushed; every site level fires, all NaN
     * above the highest completed one, so no capture keeps an older step's */
    for (int L = 0, any = 1; any || L < e->m->cfg.n_layers; L++) {
        if (L < e->m->cfg.n_layers) gs_fire(h, LDRU_HOOK_NODE, L, cur, B, d);
        any = 0;
        for (int b = 0; b < B; b++) {
            ldru_stack *s = &e->stack[b];
            float *out = next + (size_t)b * d;
            if (!e->merging[b]) { fill_nan(out, d); continue; }
            if (s->depth && s->level[s->depth - 1] == L) {
                ldru_combine(&e->w, s->node + (size_t)(s->depth - 1) * d, cur + (size_t)b * d, 1, out, e->scratch);
                s->depth--;
                any = 1;
            } else {
                memcpy(s->node + (size_t)s->depth * d, cur + (size_t)b * d, (size_t)d * sizeof(float));
                s->level[s->depth++] = L;
                e->merging[b] = 0;
                fill_nan(out, d);
            }
        }
        float *t = cur;
        cur = next, next = t;
    }
    for (int b = 0; b < B; b++) {
        e->stack[b].n++;
        ldru_finish(&e->w, &e->stack[b], e->prefix + (size_t)b * d, e->scratch);
    }
    gs_fire(h, LDRU_HOOK_PREFIX, 0, e->prefix, B, d);
    for (int b = 0; b < B; b++) ldru_classify(&e->w, e->prefix + (size_t)b * d, e->logits + (size_t)b * C);
    gs_fire(h, GS_HOOK_LOGITS, 0, e->logits, B, C);
    for (int b = 0; b < B; b++) e->nll[b] = e->entropy[b] = NAN, e->top1[b] = -1;
    return 0;
}

/* name, out and site: the CPU defaults (engine/backend.h), filled in ldru_cpu_new */
static const gs_backend_i ldru_cpu_i = {.free = cpu_free, .reset_seq = cpu_reset_seq, .step = cpu_step};

int ldru_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    ldru_cpu *e = calloc(1, sizeof *e);
    if (!e) return gs_fail("out of memory for an LDRU engine");
    ldru_weights_bind(&m->cfg, m->block, &e->w);
    size_t B = (size_t)max_batch, d = e->w.d;
    size_t floats = B * LDRU_MAX_LEVELS * d + 3 * B * d + B * (size_t)e->w.C + 2 * B + 2 * d + ldru_scratch_floats(&e->w);
    if (!(e->arena = calloc(floats, sizeof(float))) || !(e->stack = calloc(B, sizeof *e->stack)) ||
        !(e->top1 = calloc(B, sizeof *e->top1)) || !(e->merging = calloc(B, 1))) {
        cpu_free(e);
        return gs_fail("out of memory for an LDRU engine of batch %d", max_batch);
    }
    e->m = m, e->host = host, e->max_batch = max_batch;
    float *p = e->arena;
    e->nodes = p, p += B * LDRU_MAX_LEVELS * d;
    e->level[0] = p, p += B * d;
    e->level[1] = p, p += B * d;
    e->prefix = p, p += B * d;
    e->logits = p, p += B * e->w.C;
    e->nll = p, p += B;
    e->entropy = p, p += B;
    e->scratch = p;
    for (size_t b = 0; b < B; b++) e->stack[b].node = e->nodes + b * LDRU_MAX_LEVELS * d;
    gs_step_out o = {e->nll, e->entropy, e->top1, e->prefix, e->prefix, e->logits, NULL, NULL, NULL};
    *out = gs_cpu_backend(&ldru_cpu_i, e, o);
    out->site[LDRU_HOOK_PREFIX] = e->prefix;
    return 0;
}
