/* The Transformer++ CPU backend: incremental decoding, one position per
 * sequence per step. Every projection is one matrix product over the batch
 * (weights [out, in], so B^T): a GEMV at batch 1 (gs_linear), above it split
 * by output columns over the engine's pool (engine/cpu/parallel_gemm.h, as
 * GPN's step). Attention is a loop over (sequence, head) pairs on that pool,
 * each two GEMVs over the sequence's KV cache. The cache grows as positions advance; a
 * sequence's logits wait in `pending` until the next step reports them. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/attention.h"
#include "engine/arch/tpp/tpp.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

typedef struct {
    const float *norm_a, *W_q, *W_k, *W_v, *W_o, *norm_f, *w1, *w2;
} tpp_layer;

typedef struct {
    gs_attn_cpu a; /* first: the shared backend entries take this state; caches [pos][n_layers][d] */
    const gpn_model *m;
    const gs_engine_host *host;
    const float *E, *norm;
    tpp_layer *layer;
    float *xn, *q, *k, *v, *att, *out, *u, *g;
    float *cos, *sin; /* B x Dh/2: this step's rotation of each sequence */
    float *pattern;   /* B x H x GS_PATTERN_KEYS: the pattern site's rows */
    float *pair_scores; /* max_batch x H rows of pair_stride: each (sequence, head) pair's weights */
    int pair_stride;
    int own_gemms;    /* this step's products split over the pool (parallel_gemm.h) */
} tpp_cpu;

static const float *tensor(const gpn_model *m, const gpn_tensor_spec *specs, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(specs[i].name, name)) return m->block + specs[i].offset;
    return NULL;
}

static void cpu_free(void *impl) {
    tpp_cpu *e = impl;
    if (!e) return;
    gs_attn_cpu_release(&e->a);
    free(e->layer);
    free(e->pair_scores);
    free(e);
}

/* RoPE as the source: freq_i = 1 / 10000^(i / half) and the angle pos * freq_i,
 * both in float32 as torch computes its cache, so long windows round alike. */
static void rope_tables(tpp_cpu *e, int B) {
    int half = e->m->cfg.dk / 2;
    for (int b = 0; b < B; b++) {
        float p = (float)e->host->pos[b];
        for (int i = 0; i < half; i++) {
            float freq = 1.0f / powf(10000.0f, (float)i / (float)half);
            float angle = p * freq;
            e->cos[(size_t)b * half + i] = cosf(angle);
            e->sin[(size_t)b * half + i] = sinf(angle);
        }
    }
}

/* x * [c, c] + [-x2, x1] * [s, s] on each head of each row (x1, x2 its halves) */
static void rope_apply(const tpp_cpu *e, float *x, int B) {
    int H = e->m->cfg.H, Dh = e->m->cfg.dk, half = Dh / 2;
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < H; hd++) {
            float *r = x + (size_t)b * H * Dh + (size_t)hd * Dh;
            const float *c = e->cos + (size_t)b * half, *s = e->sin + (size_t)b * half;
            for (int i = 0; i < half; i++) {
                float x1 = r[i], x2 = r[i + half];
                r[i] = x1 * c[i] - x2 * s[i];
                r[i + half] = x2 * c[i] + x1 * s[i];
            }
        }
}

/* Head hd of sequence b's causal softmax weights over its cache (positions
 * 0..pos, this one included), scaled by 1/sqrt(Dh), into p; returns their
 * number. */
static int weights(const tpp_cpu *e, int l, int b, int hd, float *p) {
    const gpn_config *c = &e->m->cfg;
    int d = c->d, Dh = c->dk, L = c->n_layers;
    int n = (int)e->host->pos[b] + 1;
    const float *K = e->a.cache[b].k + (size_t)l * d + (size_t)hd * Dh;
    const float *q = e->q + (size_t)b * d + (size_t)hd * Dh;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, Dh, 1.0f / sqrtf((float)Dh), K, L * d, q, 1, 0.0f, p, 1);
    gs_softmax_inplace(p, n);
    return n;
}

/* Causal softmax attention of each sequence's query over its cache. With a
 * hook on the pattern site, every head's weights are computed first into the
 * site's window (TPP_HOOK_PATTERN), the hook runs, and the read then takes
 * the window's weights as the hook left them: the weights are recomputed
 * rather than kept past the step. Without a hook the pattern costs nothing.
 * Each (sequence, head) pair has its own row of weights, so the pairs run on
 * the pool; at batch 1 they stay on the caller (OpenBLAS's GEMVs there may
 * use its own threads). */
typedef struct {
    tpp_cpu *e;
    int l, hooked, fill_pattern; /* fill_pattern: only the site's window, no read */
} attend_job;

static void attend_range(void *ctx, long i0, long i1) {
    const attend_job *j = ctx;
    tpp_cpu *e = j->e;
    const gpn_config *c = &e->m->cfg;
    int d = c->d, H = c->H, Dh = c->dk, L = c->n_layers, P = GS_PATTERN_KEYS;
    for (long i = i0; i < i1; i++) {
        int b = (int)(i / H), hd = (int)(i % H);
        float *p = e->pair_scores + (size_t)i * e->pair_stride, *row = e->pattern + (size_t)i * P;
        int n = weights(e, j->l, b, hd, p);
        if (j->fill_pattern) {
            gs_pattern_window(row, p, n, P);
            continue;
        }
        if (j->hooked) gs_pattern_apply(p, row, n, P);
        const float *Vc = e->a.cache[b].v + (size_t)j->l * d + (size_t)hd * Dh;
        cblas_sgemv(CblasRowMajor, CblasTrans, n, Dh, 1.0f, Vc, L * d, p, 1, 0.0f, e->att + (size_t)b * d + (size_t)hd * Dh, 1);
    }
}

static void attend(tpp_cpu *e, int l, int B) {
    int H = e->m->cfg.H;
    long pairs = (long)B * H, grain = e->own_gemms ? 1 : pairs;
    int hooked = e->host->hook[TPP_HOOK_PATTERN] != NULL;
    if (hooked) {
        attend_job fill = {e, l, 1, 1};
        gs_parallel_for(pairs, grain, attend_range, &fill);
        gs_fire(e->host, TPP_HOOK_PATTERN, l, e->pattern, B, H * GS_PATTERN_KEYS);
    }
    attend_job read = {e, l, hooked, 0};
    gs_parallel_for(pairs, grain, attend_range, &read);
}

/* out = x W^T: gs_linear, or split over the pool while the step owns the GEMMs */
static void linear(const tpp_cpu *e, float *out, const float *x, const float *W, int B, int n_in, int n_out) {
    if (e->own_gemms) gs_gemm_parallel(out, x, W, 1, NULL, B, n_in, n_out);
    else gs_linear(out, x, W, B, n_in, n_out);
}

static void add(float *h, const float *x, long n) {
    for (long i = 0; i < n; i++) h[i] += x[i];
}

static int step_layers(void *impl, int B) {
    tpp_cpu *e = impl;
    const gs_engine_host *host = e->host;
    const gpn_config *c = &e->m->cfg;
    int d = c->d, V = c->V, f = c->f, L = c->n_layers;
    long Bd = (long)B * d;
    if (gs_attn_cpu_begin(&e->a, host, B, V, d, (size_t)L * d, e->E)) return -1;
    if (e->a.scores_cap > e->pair_stride) { /* every pair's row as long as the longest cache's weights */
        float *s = realloc(e->pair_scores, (size_t)e->a.max_batch * c->H * e->a.scores_cap * sizeof *s);
        if (!s) return gs_fail("out of memory for attention weights over %d positions", e->a.scores_cap);
        e->pair_scores = s;
        e->pair_stride = e->a.scores_cap;
    }
    rope_tables(e, B);
    for (int l = 0; l < L; l++) {
        const tpp_layer *w = &e->layer[l];
        gs_fire(host, GPN_HOOK_RESID_PRE, l, e->a.h, B, d);
        rmsnorm_forward(e->xn, e->a.h, w->norm_a, B, d);
        linear(e, e->q, e->xn, w->W_q, B, d, d);
        linear(e, e->k, e->xn, w->W_k, B, d, d);
        linear(e, e->v, e->xn, w->W_v, B, d, d);
        rope_apply(e, e->q, B);
        rope_apply(e, e->k, B);
        gs_fire(host, GPN_HOOK_ATTN_Q, l, e->q, B, d);
        gs_fire(host, GPN_HOOK_ATTN_K, l, e->k, B, d);
        gs_fire(host, GPN_HOOK_ATTN_V, l, e->v, B, d);
        /* the cache keeps k and v as the hooks left them, so an edit persists */
        for (int b = 0; b < B; b++) {
            size_t at = ((size_t)host->pos[b] * L + l) * d;
            memcpy(e->a.cache[b].k + at, e->k + (size_t)b * d, (size_t)d * sizeof(float));
            memcpy(e->a.cache[b].v + at, e->v + (size_t)b * d, (size_t)d * sizeof(float));
        }
        attend(e, l, B);
        linear(e, e->out, e->att, w->W_o, B, d, d);
        gs_fire(host, GPN_HOOK_ATTN_OUT, l, e->out, B, d);
        add(e->a.h, e->out, Bd);
        gs_fire(host, GPN_HOOK_RESID_MID, l, e->a.h, B, d);
        rmsnorm_forward(e->xn, e->a.h, w->norm_f, B, d);
        linear(e, e->u, e->xn, w->w1, B, d, 2 * f);
        swiglu_forward(e->g, e->u, B, f);
        linear(e, e->out, e->g, w->w2, B, f, d);
        gs_fire(host, GPN_HOOK_FFN_OUT, l, e->out, B, d);
        add(e->a.h, e->out, Bd);
        gs_fire(host, GPN_HOOK_RESID_POST, l, e->a.h, B, d);
    }
    rmsnorm_forward(e->a.fin, e->a.h, e->norm, B, d);
    gs_fire(host, GPN_HOOK_FINAL_NORM, 0, e->a.fin, B, d);
    linear(e, e->a.pending, e->a.fin, e->E, B, d, V); /* tied head: reported at the next step */
    return 0;
}

static int cpu_step(void *impl, int B) {
    return gs_gemm_pooled_step(B, &((tpp_cpu *)impl)->own_gemms, step_layers, impl);
}

/* name, out and site: the CPU defaults (engine/backend.h), filled by gs_attn_cpu_backend */
static const gs_backend_i tpp_cpu_i = {.free = cpu_free, .reset_seq = gs_attn_cpu_reset_seq, .step = cpu_step};

int tpp_cpu_new(const gpn_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gpn_config *c = &m->cfg;
    size_t B = (size_t)max_batch, d = (size_t)c->d, V = (size_t)c->V, f = (size_t)c->f, half = (size_t)c->dk / 2;
    size_t P = (size_t)c->H * GS_PATTERN_KEYS;
    size_t floats = B * (9 * d + 3 * f + 2 * V + 2 + 2 * half + P);
    tpp_cpu *e = calloc(1, sizeof *e);
    if (!e || gs_attn_cpu_alloc(&e->a, max_batch, floats) || !(e->layer = calloc((size_t)c->n_layers, sizeof *e->layer))) {
        cpu_free(e);
        return gs_fail("out of memory for a Transformer++ engine of batch %d", max_batch);
    }
    e->m = m;
    e->host = host;
    gpn_tensor_spec specs[GPN_MAX_TENSORS];
    int n = gpn_tensor_specs(c, specs);
    e->E = tensor(m, specs, n, "embedding.weight");
    e->norm = tensor(m, specs, n, "norm.weight");
    for (int l = 0; l < c->n_layers; l++) {
        char name[48];
        const float **slot[] = {&e->layer[l].norm_a, &e->layer[l].W_q, &e->layer[l].W_k, &e->layer[l].W_v,
                                &e->layer[l].W_o,    &e->layer[l].norm_f, &e->layer[l].w1, &e->layer[l].w2};
        const char *suffix[] = {"attn.norm", "attn.W_q", "attn.W_k", "attn.W_v", "attn.W_o", "ffn.norm", "ffn.w1", "ffn.w2"};
        for (int i = 0; i < 8; i++) {
            snprintf(name, sizeof name, "blocks.%d.%s.weight", l, suffix[i]);
            *slot[i] = tensor(m, specs, n, name);
        }
    }
    float *p = e->a.arena;
    float **bufs[] = {&e->a.emb, &e->a.h, &e->xn, &e->q, &e->k, &e->v, &e->att, &e->out, &e->a.fin};
    for (int i = 0; i < 9; i++) *bufs[i] = p, p += B * d;
    e->u = p, p += B * 2 * f;
    e->g = p, p += B * f;
    p = gs_attn_cpu_carve_outputs(&e->a, p, B, V);
    e->cos = p, p += B * half;
    e->sin = p, p += B * half;
    e->pattern = p;
    *out = gs_attn_cpu_backend(&tpp_cpu_i, e, &e->a);
    return 0;
}
