/* The Transformer++ CPU backend: incremental decoding, one position per
 * sequence per step. Every projection is one matrix product over the batch
 * (weights [out, in], so B^T): a GEMV at batch 1 (gs_linear), above it split
 * by output columns over the engine's pool (engine/cpu/parallel_gemm.h, as
 * GPN's step). Attention is a loop over sequences (or their head ranges) on
 * that pool, two GEMVs per head over blocks of the sequence's KV cache. The cache grows as positions advance; a
 * sequence's logits wait in `pending` until the next step reports them.
 * Whole windows (prefill) run in tpp_window.c on the same row-wise pieces
 * (tpp_cpu.h). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/tpp/tpp_cpu.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

static void cpu_free(void *impl) {
    tpp_cpu *e = impl;
    if (!e) return;
    gs_attn_cpu_release(&e->a);
    tpp_window_free(e->win);
    free(e->layer);
    free(e->pair_scores);
    free(e);
}

/* RoPE as the source: freq_i = 1 / 10000^(i / half) and the angle pos * freq_i,
 * both in float32 as torch computes its cache, so long windows round alike. */
void tpp_rope_tables(const tpp_cpu *e, const tpp_rows *r, int B, int n, int t0) {
    int half = e->m->cfg.dk / 2;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < n; t++) {
            float p = (float)(e->host->pos[b] + t0 + t);
            size_t row = ((size_t)b * n + t) * half;
            for (int i = 0; i < half; i++) {
                float freq = 1.0f / powf(10000.0f, (float)i / (float)half);
                float angle = p * freq;
                r->cos[row + i] = cosf(angle);
                r->sin[row + i] = sinf(angle);
            }
        }
}

/* x * [c, c] + [-x2, x1] * [s, s] on each head of each row (x1, x2 its halves) */
static void rope_apply(const tpp_cpu *e, const tpp_rows *r, float *x, int rows) {
    int H = e->m->cfg.H, Dh = e->m->cfg.dk, half = Dh / 2;
    for (int b = 0; b < rows; b++)
        for (int hd = 0; hd < H; hd++) {
            float *y = x + (size_t)b * H * Dh + (size_t)hd * Dh;
            const float *c = r->cos + (size_t)b * half, *s = r->sin + (size_t)b * half;
            for (int i = 0; i < half; i++) {
                float x1 = y[i], x2 = y[i + half];
                y[i] = x1 * c[i] - x2 * s[i];
                y[i + half] = x2 * c[i] + x1 * s[i];
            }
        }
}

/* The cache is position-major with the layers interleaved (attention.h): a
 * layer's rows lie L x d floats apart (36 KB at the paper's shape), so one
 * head's sweep over 2048 positions reads 256 bytes from each of 2048 pages,
 * and twelve heads one after another went over the same pages twelve times.
 * The heads of a (sequence, head range) task therefore take their cache in
 * blocks of TPP_KEY_BLOCK positions, every head reading its slice of a
 * block's rows before the next block, while those pages are recent (in the
 * TLB, their neighbouring lines fetched): 18% less time a token at batch 1
 * and context 2048, blocks of 64 the best of 32-256 (docs/performance.md). */
#define TPP_KEY_BLOCK 64

/* Heads [h0, h1) of sequence b: each head's causal softmax weights over its
 * cache (positions 0..pos, this one included), scaled by 1/sqrt(Dh), into
 * its pair row; returns their number. */
static int weights(const tpp_cpu *e, int l, int b, int h0, int h1) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, H = c->H, Dh = c->dk, L = c->n_layers;
    int n = (int)e->host->pos[b] + 1;
    const float *K = e->a.cache[b].k + (size_t)l * d;
    float scale = 1.0f / sqrtf((float)Dh), *rows = e->pair_scores + (size_t)b * H * e->pair_stride;
    for (int j0 = 0; j0 < n; j0 += TPP_KEY_BLOCK) {
        int m = n - j0 < TPP_KEY_BLOCK ? n - j0 : TPP_KEY_BLOCK;
        for (int hd = h0; hd < h1; hd++)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, m, Dh, scale, K + (size_t)j0 * L * d + (size_t)hd * Dh, L * d,
                        e->r.q + (size_t)b * d + (size_t)hd * Dh, 1, 0.0f, rows + (size_t)hd * e->pair_stride + j0, 1);
    }
    for (int hd = h0; hd < h1; hd++) gs_softmax_inplace(rows + (size_t)hd * e->pair_stride, n);
    return n;
}

/* Heads [h0, h1) of sequence b: each head's weights (its pair row, n of
 * them) times its values, into the attention's output, block by block as
 * weights() reads the keys */
static void read_values(const tpp_cpu *e, int l, int b, int h0, int h1, int n) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, H = c->H, Dh = c->dk, L = c->n_layers;
    const float *Vc = e->a.cache[b].v + (size_t)l * d, *rows = e->pair_scores + (size_t)b * H * e->pair_stride;
    for (int j0 = 0; j0 < n; j0 += TPP_KEY_BLOCK) {
        int m = n - j0 < TPP_KEY_BLOCK ? n - j0 : TPP_KEY_BLOCK;
        for (int hd = h0; hd < h1; hd++)
            cblas_sgemv(CblasRowMajor, CblasTrans, m, Dh, 1.0f, Vc + (size_t)j0 * L * d + (size_t)hd * Dh, L * d,
                        rows + (size_t)hd * e->pair_stride + j0, 1, j0 ? 1.0f : 0.0f,
                        e->r.att + (size_t)b * d + (size_t)hd * Dh, 1);
    }
}

/* Causal softmax attention of each sequence's query over its cache. With a
 * hook on the pattern site, every head's weights are computed first into the
 * site's window (TPP_HOOK_PATTERN), the hook runs, and the read then takes
 * the window's weights as the hook left them: the weights are recomputed
 * rather than kept past the step. Without a hook the pattern costs nothing.
 * Each (sequence, head) pair has its own row of weights; the tasks are a
 * sequence's heads in `groups` ranges, on the pool (enough of them for a few
 * a thread); at batch 1 they stay on the caller (OpenBLAS's GEMVs there may
 * use its own threads). */
typedef struct {
    tpp_cpu *e;
    int l, hooked, fill_pattern; /* fill_pattern: only the site's window, no read */
    int groups;                  /* head ranges per sequence */
} attend_job;

static void attend_range(void *ctx, long i0, long i1) {
    const attend_job *j = ctx;
    tpp_cpu *e = j->e;
    int H = e->m->cfg.H, P = GS_PATTERN_KEYS;
    for (long i = i0; i < i1; i++) {
        int b = (int)(i / j->groups), g = (int)(i % j->groups);
        int h0 = g * H / j->groups, h1 = (g + 1) * H / j->groups;
        int n = weights(e, j->l, b, h0, h1);
        for (int hd = h0; hd < h1; hd++) {
            float *p = e->pair_scores + ((size_t)b * H + hd) * e->pair_stride, *row = e->pattern + ((size_t)b * H + hd) * P;
            if (j->fill_pattern) gs_pattern_window(row, p, n, P);
            else if (j->hooked) gs_pattern_apply(p, row, n, P);
        }
        if (!j->fill_pattern) read_values(e, j->l, b, h0, h1, n);
    }
}

static void attend(tpp_cpu *e, int l, int B) {
    int H = e->m->cfg.H, threads = gs_parallel_threads();
    /* whole sequences when there are a few a thread, else each split into head ranges */
    int groups = e->own_gemms && B < 4 * threads ? (4 * threads + B - 1) / B : 1;
    if (groups > H) groups = H;
    long tasks = (long)B * groups, grain = e->own_gemms ? 1 : tasks;
    int hooked = e->host->hook[TPP_HOOK_PATTERN] != NULL;
    if (hooked) {
        attend_job fill = {e, l, 1, 1, groups};
        gs_parallel_for(tasks, grain, attend_range, &fill);
        gs_fire(e->host, TPP_HOOK_PATTERN, l, e->pattern, B, H * GS_PATTERN_KEYS);
    }
    attend_job read = {e, l, hooked, 0, groups};
    gs_parallel_for(tasks, grain, attend_range, &read);
}

void tpp_linear(const tpp_cpu *e, float *out, const float *x, const float *W, int B, int n_in, int n_out) {
    if (e->own_gemms) gs_gemm_parallel(out, x, W, 1, NULL, B, n_in, n_out);
    else gs_linear(out, x, W, B, n_in, n_out);
}

void tpp_attn_project(const tpp_cpu *e, const tpp_rows *r, int l, int rows) {
    const tpp_layer *w = &e->layer[l];
    int d = e->m->cfg.d;
    rmsnorm_forward_pooled(r->xn, r->h, w->norm_a, rows, d);
    tpp_linear(e, r->q, r->xn, w->W_q, rows, d, d);
    tpp_linear(e, r->k, r->xn, w->W_k, rows, d, d);
    tpp_linear(e, r->v, r->xn, w->W_v, rows, d, d);
    rope_apply(e, r, r->q, rows);
    rope_apply(e, r, r->k, rows);
}

void tpp_mlp(const tpp_cpu *e, const tpp_rows *r, int l, int rows, int fast_silu) {
    const tpp_layer *w = &e->layer[l];
    int d = e->m->cfg.d, f = e->m->cfg.f;
    rmsnorm_forward_pooled(r->xn, r->h, w->norm_f, rows, d);
    tpp_linear(e, r->u, r->xn, w->w1, rows, d, 2 * f);
    if (fast_silu) swiglu_forward_pooled(r->g, r->u, rows, f);
    else swiglu_forward(r->g, r->u, rows, f);
    tpp_linear(e, r->out, r->g, w->w2, rows, f, d);
}

static int step_layers(void *impl, int B) {
    tpp_cpu *e = impl;
    const gs_engine_host *host = e->host;
    const gs_config *c = &e->m->cfg;
    int d = c->d, V = c->V, L = c->n_layers;
    long Bd = (long)B * d;
    if (gs_attn_cpu_begin(&e->a, host, B, V, d, (size_t)L * d, e->E)) return -1;
    if (e->a.scores_cap > e->pair_stride) { /* every pair's row as long as the longest cache's weights */
        float *s = realloc(e->pair_scores, (size_t)e->a.max_batch * c->H * e->a.scores_cap * sizeof *s);
        if (!s) return gs_fail("out of memory for attention weights over %d positions", e->a.scores_cap);
        e->pair_scores = s;
        e->pair_stride = e->a.scores_cap;
    }
    const tpp_rows *r = &e->r;
    tpp_rope_tables(e, r, B, 1, 0);
    for (int l = 0; l < L; l++) {
        gs_fire(host, GS_HOOK_RESID_PRE, l, r->h, B, d);
        tpp_attn_project(e, r, l, B);
        gs_fire(host, GS_HOOK_ATTN_Q, l, r->q, B, d);
        gs_fire(host, GS_HOOK_ATTN_K, l, r->k, B, d);
        gs_fire(host, GS_HOOK_ATTN_V, l, r->v, B, d);
        /* the cache keeps k and v as the hooks left them, so an edit persists */
        for (int b = 0; b < B; b++) {
            size_t at = ((size_t)host->pos[b] * L + l) * d;
            memcpy(e->a.cache[b].k + at, r->k + (size_t)b * d, (size_t)d * sizeof(float));
            memcpy(e->a.cache[b].v + at, r->v + (size_t)b * d, (size_t)d * sizeof(float));
        }
        attend(e, l, B);
        tpp_linear(e, r->out, r->att, e->layer[l].W_o, B, d, d);
        gs_fire(host, GS_HOOK_ATTN_OUT, l, r->out, B, d);
        add_inplace(r->h, r->out, Bd);
        gs_fire(host, GS_HOOK_RESID_MID, l, r->h, B, d);
        tpp_mlp(e, r, l, B, 0);
        gs_fire(host, GS_HOOK_FFN_OUT, l, r->out, B, d);
        add_inplace(r->h, r->out, Bd);
        gs_fire(host, GS_HOOK_RESID_POST, l, r->h, B, d);
    }
    rmsnorm_forward(e->a.fin, e->a.h, e->norm, B, d);
    gs_fire(host, GS_HOOK_FINAL_NORM, 0, e->a.fin, B, d);
    tpp_linear(e, e->a.pending, e->a.fin, e->E, B, d, V); /* tied head: reported at the next step */
    return 0;
}

static int cpu_step(void *impl, int B) {
    return gs_gemm_pooled_step(B, &((tpp_cpu *)impl)->own_gemms, step_layers, impl);
}

/* name, out and site: the CPU defaults (engine/backend.h), filled by gs_attn_cpu_backend */
static const gs_backend_i tpp_cpu_i = {
    .free = cpu_free, .reset_seq = gs_attn_cpu_reset_seq, .step = cpu_step, .window = tpp_cpu_window};

int tpp_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gs_config *c = &m->cfg;
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
    e->E = gs_table_tensor(m, &tpp_tensors, TPP_EMBED, 0);
    e->norm = gs_table_tensor(m, &tpp_tensors, TPP_NORM, 0);
    for (int l = 0; l < c->n_layers; l++) {
        tpp_layer *w = &e->layer[l];
        const float **slot[] = {&w->norm_a, &w->W_q, &w->W_k, &w->W_v, &w->W_o, &w->norm_f, &w->w1, &w->w2};
        for (int i = 0; i < 8; i++) *slot[i] = gs_table_tensor(m, &tpp_tensors, TPP_ATTN_NORM + i, l);
    }
    float *p = e->a.arena;
    float **bufs[] = {&e->a.emb, &e->a.h, &e->r.xn, &e->r.q, &e->r.k, &e->r.v, &e->r.att, &e->r.out, &e->a.fin};
    for (int i = 0; i < 9; i++) *bufs[i] = p, p += B * d;
    e->r.h = e->a.h;
    e->r.u = p, p += B * 2 * f;
    e->r.g = p, p += B * f;
    p = gs_attn_cpu_carve_outputs(&e->a, p, B, V);
    e->r.cos = p, p += B * half;
    e->r.sin = p, p += B * half;
    e->pattern = p;
    *out = gs_attn_cpu_backend(&tpp_cpu_i, e, &e->a);
    return 0;
}
