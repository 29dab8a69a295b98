/* The Elman CPU backend: per step, logits = S E^T and the NLL statistics,
 * then S <- tanh(S W^T + E[x] U^T + b), over the batch with CBLAS. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/elman/elman.h"
#include "engine/cpu/ops.h"

typedef struct {
    const gs_model *m;
    const gs_engine_host *host;
    const float *E, *W, *U, *b;
    float *arena, *s, *s_pred, *x, *s_next, *logits, *nll, *entropy;
    int32_t *top1;
} elman_cpu;

static void cpu_free(void *impl) {
    elman_cpu *e = impl;
    if (!e) return;
    free(e->arena);
    free(e->top1);
    free(e);
}

static void cpu_reset_seq(void *impl, int b) {
    elman_cpu *e = impl;
    memset(e->s + (size_t)b * e->m->cfg.d, 0, (size_t)e->m->cfg.d * sizeof(float));
}

static int cpu_step(void *impl, int B) {
    elman_cpu *e = impl;
    const gs_engine_host *h = e->host;
    int d = e->m->cfg.d, V = e->m->cfg.V;
    memcpy(e->s_pred, e->s, (size_t)B * d * sizeof(float));
    gs_fire(h, GS_HOOK_S_PRED, 0, e->s_pred, B, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, V, d, 1.0f, e->s_pred, d, e->E, d, 0.0f, e->logits, V);
    gs_fire(h, GS_HOOK_LOGITS, 0, e->logits, B, V);
    logits_stats(e->logits, h->tokens, B, V, e->nll, e->entropy, e->top1);
    gs_fire(h, GS_HOOK_NLL, 0, e->nll, B, 1);
    for (int b = 0; b < B; b++) {
        memcpy(e->x + (size_t)b * d, e->E + (size_t)h->tokens[b] * d, (size_t)d * sizeof(float));
        memcpy(e->s_next + (size_t)b * d, e->b, (size_t)d * sizeof(float));
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, d, d, 1.0f, e->s_pred, d, e->W, d, 1.0f, e->s_next, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, d, d, 1.0f, e->x, d, e->U, d, 1.0f, e->s_next, d);
    for (long i = 0; i < (long)B * d; i++) e->s_next[i] = tanhf(e->s_next[i]);
    gs_fire(h, GS_HOOK_S_GROUND, 0, e->s_next, B, d);
    memcpy(e->s, e->s_next, (size_t)B * d * sizeof(float));
    return 0;
}

/* name, out and site: the CPU defaults (engine/backend.h), filled in elman_cpu_new */
static const gs_backend_i elman_cpu_i = {.free = cpu_free, .reset_seq = cpu_reset_seq, .step = cpu_step};

int elman_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    int d = m->cfg.d, V = m->cfg.V;
    size_t B = (size_t)max_batch, floats = B * (4 * (size_t)d + (size_t)V + 2);
    elman_cpu *e = calloc(1, sizeof *e);
    if (!e || !(e->arena = calloc(floats, sizeof(float))) || !(e->top1 = calloc(B, sizeof *e->top1))) {
        cpu_free(e);
        return gs_fail("out of memory for an Elman engine of batch %d", max_batch);
    }
    e->m = m;
    e->host = host;
    e->E = gs_table_tensor(m, &elman_tensors, ELMAN_EMBED, 0);
    e->W = gs_table_tensor(m, &elman_tensors, ELMAN_W, 0);
    e->U = gs_table_tensor(m, &elman_tensors, ELMAN_U, 0);
    e->b = gs_table_tensor(m, &elman_tensors, ELMAN_B, 0);
    float *p = e->arena;
    e->s = p, p += B * d;
    e->s_pred = p, p += B * d;
    e->x = p, p += B * d;
    e->s_next = p, p += B * d;
    e->logits = p, p += B * V;
    e->nll = p, p += B;
    e->entropy = p;
    gs_step_out o = {e->nll, e->entropy, e->top1, e->s_pred, e->s_next, e->logits, NULL, NULL, NULL};
    *out = gs_cpu_backend(&elman_cpu_i, e, o);
    out->site[GS_HOOK_S_PRED] = e->s_pred;
    out->site[GS_HOOK_S_GROUND] = e->s_next;
    return 0;
}
