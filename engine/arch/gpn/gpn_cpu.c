/* The CPU backend of GPN / GPN+M (engine/backend.h): the step of
 * docs/gpn-model.md with every projection one SGEMM over the batch and the
 * memory write and read per-sequence loops over heads, on the worker pool. */
#include "engine/arch/gpn/gpn_family.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/backend.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

typedef struct gpn_cpu {
    const gs_model *m;
    const gs_engine_host *host; /* tokens, positions, hooks */
    const int32_t *tokens;      /* = host->tokens */
    int max_batch;
    float *arena; /* every buffer below points into this one allocation */
    /* carried state: s, M, and the keys of the next write with their k M,
     * which the last step made from its s (the next step's prev; write_memory) */
    float *s, *M, *k, *pred;
    /* step scratch */
    float *c, *xn, *xr, *tmp_d, *k_next, *v, *beta, *alpha, *q, *o, *on, *g, *mem, *u, *h, *ffn, *pg;
    float *s_pred, *s_decode, *z, *logits, *emb, *fg, *s_ground, *mem_norm, *nll, *entropy;
    int32_t *top1;
    int own_gemms; /* this step's GEMMs split over the pool (parallel_gemm.h) */
} gpn_cpu;


/* After a reset (s = prev = 0, M = 0) the next step's keys are those of a
 * zero state, relu-l2n(0 W_k + b_k), and k M is 0. */
static void reset_carried_keys(gpn_cpu *e, int b) {
    const gs_config *c = &e->m->cfg;
    if (c->arch != GS_ARCH_GPN_M) return;
    int hk = c->H * c->dk, hv = c->H * c->dv;
    memcpy(e->k + (size_t)b * hk, e->m->p.write_W_k_b, (size_t)hk * sizeof(float));
    relu_l2norm_heads(e->k + (size_t)b * hk, 1, c->H, c->dk);
    memset(e->pred + (size_t)b * hv, 0, (size_t)hv * sizeof(float));
}

static void cpu_free(void *impl) {
    gpn_cpu *e = impl;
    if (!e) return;
    free(e->arena);
    free(e->top1);
    free(e);
}

static const gs_backend_i gpn_cpu_i;

int gpn_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gs_config *c = &m->cfg;
    gpn_cpu *e = calloc(1, sizeof *e);
    if (!e || !(e->top1 = calloc((size_t)max_batch, sizeof *e->top1))) {
        free(e);
        return gs_fail("out of memory for an engine of batch %d", max_batch);
    }
    e->m = m;
    e->host = host;
    e->tokens = host->tokens;
    e->max_batch = max_batch;
    long B = max_batch, d = c->d, H = c->H, hk = (long)c->H * c->dk, hv = (long)c->H * c->dv;
    long mem = H * c->dk * (long)c->dv;
    struct { float **p; long n; } bufs[] = {
        {&e->s, B * d},       {&e->M, B * mem},     {&e->k, B * hk},    {&e->pred, B * hv},     {&e->c, B * d},
        {&e->xn, B * d},      {&e->xr, B * d},      {&e->tmp_d, B * d}, {&e->k_next, B * hk},   {&e->v, B * hv},
        {&e->beta, B * H},    {&e->alpha, B * H}, {&e->q, B * hk},        {&e->o, B * hv},
        {&e->on, B * hv},     {&e->g, B * hv},    {&e->mem, B * d},       {&e->u, B * 2 * c->f},
        {&e->h, B * c->f},    {&e->ffn, B * d},   {&e->pg, B * d},        {&e->s_pred, B * d},
        {&e->s_decode, B * d}, {&e->z, B * c->e}, {&e->logits, B * c->V}, {&e->emb, B * c->e},
        {&e->fg, B * d},      {&e->s_ground, B * d}, {&e->mem_norm, B * H}, {&e->nll, B},
        {&e->entropy, B},
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) total += (size_t)((bufs[i].n + 15) & ~15L);
    e->arena = calloc(total ? total : 1, sizeof(float));
    if (!e->arena) {
        cpu_free(e);
        return gs_fail("out of memory for an engine of batch %d (%zu MB)", max_batch, total * 4 >> 20);
    }
    size_t off = 0;
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        *bufs[i].p = e->arena + off;
        off += (size_t)((bufs[i].n + 15) & ~15L);
    }
    for (int b = 0; b < max_batch; b++) reset_carried_keys(e, b); /* the state starts at zero */
    /* the buffers that hold a site's values after a step (per-layer sites are
     * overwritten layer by layer: those go through hooks); GPN has no memory */
    int has_mem = c->arch == GS_ARCH_GPN_M;
    const float *alpha = has_mem ? e->alpha : NULL, *beta = has_mem ? e->beta : NULL;
    const float *mem_norm = has_mem ? e->mem_norm : NULL;
    gs_step_out o = {e->nll, e->entropy, e->top1, e->s_pred, e->s_ground, e->logits, alpha, beta, mem_norm};
    *out = gs_cpu_backend(&gpn_cpu_i, e, o);
    out->site[GS_HOOK_S_PRED] = e->s_pred;
    out->site[GS_HOOK_S_GROUND] = e->s_ground;
    out->site[GS_HOOK_FUSE_GATE] = e->fg;
    out->site[GS_HOOK_MEM_ALPHA] = alpha;
    out->site[GS_HOOK_MEM_BETA] = beta;
    out->site[GS_HOOK_MEM_NORM] = mem_norm;
    return 0;
}

static void cpu_reset_seq(void *impl, int b) {
    gpn_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    size_t mem = (size_t)c->H * c->dk * c->dv;
    memset(e->s + (size_t)b * c->d, 0, (size_t)c->d * sizeof(float));
    if (mem) memset(e->M + (size_t)b * mem, 0, mem * sizeof(float));
    reset_carried_keys(e, b);
}

static inline void fire(gpn_cpu *e, gs_hook_point p, int layer, float *data, int B, int width) {
    gs_fire(e->host, p, layer, data, B, width);
}

/* The per-sequence memory loops and the logits statistics are split over the
 * engine's worker threads by sequence (engine/cpu/parallel.h), in parts of
 * gs_parallel_grain's ~256 KB of memory or logits, and so are the row-wise
 * ops of a step (each a few ms at the paper's size and batch 256; below the
 * grain they stay on the caller): the norms through rmsnorm_forward_pooled,
 * the rest here. */
typedef enum { ROWS_SIGMOID, ROWS_SWIGLU, ROWS_TIMES_SILU, ROWS_RELU_L2N_HEADS } rows_kind;
typedef struct {
    rows_kind kind;
    float *out;
    const float *x;
    int n, heads;
} rows_job;

static void rows_range(void *ctx, long b0, long b1) {
    const rows_job *j = ctx;
    long n = j->n, r = b1 - b0;
    switch (j->kind) {
    case ROWS_SIGMOID: sigmoid_inplace(j->out + b0 * n, r * n); break;
    case ROWS_SWIGLU: swiglu_forward(j->out + b0 * n, j->x + b0 * 2 * n, (int)r, j->n); break;
    case ROWS_TIMES_SILU:
        for (long i = b0 * n; i < b1 * n; i++) j->out[i] *= gs_silu(j->x[i]);
        break;
    case ROWS_RELU_L2N_HEADS: relu_l2norm_heads(j->out + b0 * n, (int)r, j->heads, n / j->heads); break;
    }
}

/* out = op(x) for B rows of n (ROWS_SWIGLU: x rows of 2n) */
static void rows(rows_kind kind, float *out, const float *x, int B, int n) {
    rows_job j = {kind, out, x, n, 1};
    gs_parallel_for(B, gs_parallel_grain(kind == ROWS_SWIGLU ? 2L * n : n), rows_range, &j);
}

/* x = l2n(relu(x)) per head, for B rows of H heads of dk */
static void relu_l2n_rows(float *x, int B, int H, int dk) {
    rows_job j = {ROWS_RELU_L2N_HEADS, x, NULL, H * dk, H};
    gs_parallel_for(B, gs_parallel_grain((long)H * dk), rows_range, &j);
}

/* out[B x n] = in[B x k] @ W (+ bias): at batch 1 OpenBLAS's own GEMV, which
 * streams the weights on all its threads; up to GPN_POOL_GEMMS_FROM_BATCH
 * OpenBLAS's own threaded SGEMM; above, on the pool */
static void project(const gpn_cpu *e, float *out, const float *in, const float *W, const float *bias, int B, int k,
                    int n) {
    if (e->own_gemms)
        gs_gemm_parallel(out, in, W, 0, bias, B, k, n);
    else
        matmul_forward(out, in, W, bias, B, k, n);
}

/* gate: out = sig(rms(x, w) @ K + b); tmp holds B*n floats */
static void gate(const gpn_cpu *e, float *out, float *tmp, const float *x, const float *w, const float *K,
                 const float *b, int B, int n) {
    rmsnorm_forward_pooled(tmp, x, w, B, n);
    project(e, out, tmp, K, b, B, n, n);
    rows(ROWS_SIGMOID, out, NULL, B, n);
}

/* Layer i's read query from state c (normed input kept in xr for the gate). */
static void read_query(gpn_cpu *e, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &e->m->cfg;
    int hk = c->H * c->dk;
    rmsnorm_forward_pooled(e->xr, e->c, lp->read_norm_w, B, c->d);
    project(e, e->q, e->xr, lp->read_W_q_k, lp->read_W_q_b, B, c->d, hk);
    relu_l2n_rows(e->q, B, c->H, c->dk);
    fire(e, GS_HOOK_MEM_Q, layer, e->q, B, hk);
}

/* the memory loops, one sequence per item */
typedef struct {
    gpn_cpu *e;
    int write;      /* 1: write + layer-0 read; 0: a later layer's read */
    int keys_moved; /* a hook may have changed this step's keys: pred is not k M */
} memory_job;

static void memory_range(void *ctx, long b0, long b1) {
    const memory_job *job = ctx;
    gpn_cpu *e = job->e;
    const gs_config *c = &e->m->cfg;
    int H = c->H, hk = H * c->dk, hv = H * c->dv;
    size_t mem = (size_t)hk * c->dv;
    for (long b = b0; b < b1; b++) {
        if (!job->write) {
            memory_read(e->o + b * hv, e->q + b * hk, e->M + b * mem, H, c->dk, c->dv);
            continue;
        }
        memory_pass p = {.M = e->M + b * mem, .k = e->k + b * hk, .v = e->v + b * hv, .alpha = e->alpha + b * H,
                         .beta = e->beta + b * H, .pred = job->keys_moved ? NULL : e->pred + b * hv,
                         .q = e->q + b * hk, .o = e->o + b * hv, .k_next = e->k_next + b * hk,
                         .pred_next = e->pred + b * hv, .norms = e->mem_norm + b * H};
        memory_write_read(&p, H, c->dk, c->dv);
        memcpy(e->k + b * hk, e->k_next + b * hk, (size_t)hk * sizeof(float)); /* the next step's keys */
    }
}

static void logits_range(void *ctx, long b0, long b1) {
    gpn_cpu *e = ctx;
    int V = e->m->cfg.V;
    logits_stats(e->logits + b0 * V, e->tokens + b0, (int)(b1 - b0), V, e->nll + b0, e->entropy + b0, e->top1 + b0);
}

/* Step 1 of gpn-model.md: one delta-rule write per token into each sequence's
 * memory. Its keys come from rms(prev), and prev is the last step's s: the
 * last step made them, with k M, from the same rms(s) that gives this step's
 * values (reset_carried_keys for a fresh sequence). This step makes the next
 * step's, so the write is one pass over M (memory_write_read). Layer 0 reads
 * from state s, which is known before the write, so its read is done in the
 * same pass (e->c must equal s). */
static void write_memory(gpn_cpu *e, int B) {
    const gs_config *c = &e->m->cfg;
    const gpn_params *p = &e->m->p;
    int d = c->d, H = c->H, hk = H * c->dk, hv = H * c->dv;
    rmsnorm_forward_pooled(e->xn, e->s, p->write_norm_w, B, d); /* b = rms(s), the next step's a */
    project(e, e->v, e->xn, p->write_W_v_k, NULL, B, d, hv);
    project(e, e->beta, e->xn, p->write_W_beta_k, NULL, B, d, H);
    sigmoid_inplace(e->beta, (long)B * H);
    project(e, e->alpha, e->xn, p->write_W_a_k, NULL, B, d, H);
    decay_forward(e->alpha, p->write_A_log, p->write_dt_bias, B, H);
    project(e, e->k_next, e->xn, p->write_W_k_k, p->write_W_k_b, B, d, hk);
    relu_l2n_rows(e->k_next, B, H, c->dk);
    fire(e, GS_HOOK_MEM_STATE, 0, e->M, B, H * c->dk * c->dv);
    fire(e, GS_HOOK_MEM_K, 0, e->k, B, hk);
    fire(e, GS_HOOK_MEM_V, 0, e->v, B, hv);
    fire(e, GS_HOOK_MEM_ALPHA, 0, e->alpha, B, H);
    fire(e, GS_HOOK_MEM_BETA, 0, e->beta, B, H);
    read_query(e, &p->layers[0], 0, B);
    /* a hook on the keys or on M may have changed them: the k M the last step
     * made for this write is then found again from what the hooks left */
    memory_job job = {e, 1, e->host->hook[GS_HOOK_MEM_K] != NULL || e->host->hook[GS_HOOK_MEM_STATE] != NULL};
    gs_parallel_for(B, gs_parallel_grain((long)hk * c->dv), memory_range, &job);
    fire(e, GS_HOOK_MEM_NORM, 0, e->mem_norm, B, H);
}

/* The memory read of layer i from state c: (silu(r Wg) * rms(o)) Wo, with
 * r = rms(c). Layer 0's query and raw read o were made during the write. */
static void read_memory(gpn_cpu *e, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, hv = c->H * c->dv;
    if (layer > 0) {
        read_query(e, lp, layer, B);
        memory_job job = {e, 0, 0};
        gs_parallel_for(B, gs_parallel_grain((long)c->H * c->dk * c->dv), memory_range, &job);
    }
    fire(e, GS_HOOK_MEM_HEADS, layer, e->o, B, hv);
    project(e, e->g, e->xr, lp->read_W_gate_k, NULL, B, d, hv);
    rmsnorm_forward_pooled(e->on, e->o, lp->read_out_norm_w, B, hv);
    rows(ROWS_TIMES_SILU, e->on, e->g, B, hv);
    fire(e, GS_HOOK_MEM_GATED, layer, e->on, B, hv);
    project(e, e->mem, e->on, lp->read_W_o_k, NULL, B, hv, d);
    fire(e, GS_HOOK_MEM_READ, layer, e->mem, B, d);
}

/* One layer: c <- gate(c; pg) * c + ffn(c) + mem(c), all from the same c. */
static void run_layer(gpn_cpu *e, const gpn_layer_params *lp, int layer, int B) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, f = c->f;
    int has_mem = c->arch == GS_ARCH_GPN_M;
    if (has_mem) read_memory(e, lp, layer, B);
    rmsnorm_forward_pooled(e->xn, e->c, lp->ffn_norm_w, B, d);
    project(e, e->u, e->xn, lp->ffn_w1, NULL, B, d, 2 * f);
    rows(ROWS_SWIGLU, e->h, e->u, B, f);
    project(e, e->ffn, e->h, lp->ffn_w2, NULL, B, f, d);
    fire(e, GS_HOOK_FFN_OUT, layer, e->ffn, B, d);
    gate(e, e->pg, e->tmp_d, e->c, lp->pg_norm_w, lp->pg_gate_k, lp->pg_gate_b, B, d);
    fire(e, GS_HOOK_PRED_GATE, layer, e->pg, B, d);
    for (long i = 0; i < (long)B * d; i++) e->c[i] = gs_layer_update(e->pg[i], e->c[i], e->ffn[i], has_mem ? e->mem[i] : 0.0f);
}

/* One step on the CPU for tokens already in e->tokens. */
static void step_on_pool(gpn_cpu *e, int B) {
    const gs_config *c = &e->m->cfg;
    const gpn_params *p = &e->m->p;
    int d = c->d;
    long Bd = (long)B * d;
    memcpy(e->c, e->s, (size_t)Bd * sizeof(float));
    if (c->arch == GS_ARCH_GPN_M) write_memory(e, B);
    for (int i = 0; i < c->n_layers; i++) run_layer(e, &p->layers[i], i, B);
    memcpy(e->s_pred, e->c, (size_t)Bd * sizeof(float));
    fire(e, GS_HOOK_S_PRED, 0, e->s_pred, B, d);

    /* decode: logits = (rms(s, w) @ P + bias) @ E^T; a decode-only hook sees a copy */
    const float *to_decode = e->s_pred;
    if (e->host->hook[GS_HOOK_S_DECODE]) {
        memcpy(e->s_decode, e->s_pred, (size_t)Bd * sizeof(float));
        fire(e, GS_HOOK_S_DECODE, 0, e->s_decode, B, d);
        to_decode = e->s_decode;
    }
    rmsnorm_forward_pooled(e->xn, to_decode, p->decode_norm_w, B, d);
    project(e, e->z, e->xn, p->decode_proj_k, c->decoder_bias ? p->decode_bias : NULL, B, d, c->e);
    if (e->own_gemms)
        gs_gemm_parallel(e->logits, e->z, p->embedding, 1, NULL, B, c->e, c->V);
    else if (B == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, c->V, c->e, 1.0f, p->embedding, c->e, e->z, 1, 0.0f, e->logits, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, c->V, c->e, 1.0f, e->z, c->e, p->embedding, c->e, 0.0f,
                    e->logits, c->V);
    fire(e, GS_HOOK_LOGITS, 0, e->logits, B, c->V);
    gs_parallel_for(B, gs_parallel_grain(c->V), logits_range, e);
    fire(e, GS_HOOK_NLL, 0, e->nll, B, 1);

    /* ground: s = gate(s_pred; fg) * s_pred + rms(E[x], w) @ F */
    gate(e, e->fg, e->tmp_d, e->s_pred, p->fg_norm_w, p->fg_gate_k, p->fg_gate_b, B, d);
    fire(e, GS_HOOK_FUSE_GATE, 0, e->fg, B, d);
    for (int b = 0; b < B; b++) memcpy(e->emb + (size_t)b * c->e, p->embedding + (size_t)e->tokens[b] * c->e, (size_t)c->e * sizeof(float));
    rmsnorm_forward_pooled(e->emb, e->emb, p->fuse_norm_w, B, c->e);
    project(e, e->s_ground, e->emb, p->fuse_proj_k, NULL, B, c->e, d);
    for (long i = 0; i < Bd; i++) e->s_ground[i] += e->fg[i] * e->s_pred[i];
    fire(e, GS_HOOK_S_GROUND, 0, e->s_ground, B, d);

    memcpy(e->s, e->s_ground, (size_t)Bd * sizeof(float));
}

/* The pool takes the step's GEMMs from this batch up; below it OpenBLAS's
 * own threads run them. Measured on the project's 2-core Zen
 * (docs/performance.md, 2026-12-03): there OpenBLAS's single-threaded SGEMM
 * at 16-32 rows runs at about half its per-core rate at 64, so the column
 * split (one single-threaded SGEMM a part) ran the paper's GPN+M at batch
 * 16 / 32 at 0.46 / 0.67 of its GEMM-only rate, OpenBLAS's threads at
 * 0.84-0.85 / 0.85; at 48 and 64 the two were level (and on the earlier machine the
 * pool won at 64, where OpenBLAS's spinning workers took the cores from the
 * memory loops). */
#define GPN_POOL_GEMMS_FROM_BATCH 48

static int cpu_step(void *impl, int B) {
    gpn_cpu *e = impl;
    int restore = 0;
    e->own_gemms = B >= GPN_POOL_GEMMS_FROM_BATCH && gs_gemm_threads_begin(&restore);
    step_on_pool(e, B);
    gs_gemm_threads_end(restore);
    e->own_gemms = 0;
    return 0;
}

int gs_step_gemms(const gs_config *c, gs_gemm_shape *s) {
    int n = 0, d = c->d, hk = c->H * c->dk, hv = c->H * c->dv, has_mem = c->arch == GS_ARCH_GPN_M;
    if (has_mem) {
        s[n++] = (gs_gemm_shape){d, hk}; /* keys, values, write strength, decay */
        s[n++] = (gs_gemm_shape){d, hv};
        s[n++] = (gs_gemm_shape){d, c->H};
        s[n++] = (gs_gemm_shape){d, c->H};
    }
    for (int l = 0; l < c->n_layers; l++) {
        if (has_mem) {
            s[n++] = (gs_gemm_shape){d, hk}; /* query, read gate, read output */
            s[n++] = (gs_gemm_shape){d, hv};
            s[n++] = (gs_gemm_shape){hv, d};
        }
        s[n++] = (gs_gemm_shape){d, 2 * c->f}; /* FFN in, out, predict gate */
        s[n++] = (gs_gemm_shape){c->f, d};
        s[n++] = (gs_gemm_shape){d, d};
    }
    s[n++] = (gs_gemm_shape){d, c->e};    /* decode */
    s[n++] = (gs_gemm_shape){c->e, c->V}; /* logits */
    s[n++] = (gs_gemm_shape){d, d};       /* fuse gate */
    s[n++] = (gs_gemm_shape){c->e, d};    /* grounding projection */
    return n;
}

/* name, out and site: the CPU defaults (engine/backend.h), filled in gpn_cpu_new */
static const gs_backend_i gpn_cpu_i = {.free = cpu_free, .reset_seq = cpu_reset_seq, .step = cpu_step};
