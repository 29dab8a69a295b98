/* The Recurrent Transformer CPU backend: one position per sequence per step,
 * which is how the reference loop runs anyway (the recurrence makes position
 * t wait for position t - 1's output in every layer). Each projection is one
 * GEMM over the batch (weights [out, in], GEMV for one sequence); attention
 * reads each sequence's cache of recurrent keys and values plus the diagonal
 * key and value of this position, which are never cached. A sequence's logits
 * wait in `pending` until the next step reports them. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/attention.h"
#include "engine/arch/rt/rt.h"
#include "engine/cpu/ops.h"

typedef struct {
    const float *attn_norm, *ff_norm, *q_norm, *k_norm, *q_proj, *kv_proj, *attn_out, *ff_proj, *ff_out;
} rt_layer;

typedef struct {
    gs_attn_cpu a; /* first: the shared backend entries take this state; caches K_j, V_j as [pos][n_layers][d] */
    const gs_model *m;
    const gs_engine_host *host;
    const float *wte, *ln_f, *head;
    rt_layer *layer;
    float *xn, *q, *kv, *k0, *v0, *att, *out, *u, *g;
    float *kr, *vr;   /* B x d: this step's recurrent key and value */
    float *pattern;   /* B x H x GS_PATTERN_KEYS */
    float *diag;      /* B x H: weight on the diagonal key */
    float *slope;     /* H: ALiBi slopes */
} rt_cpu;

void rt_layer_norm(float *out, const float *x, const float *w, int B, int n, float eps) {
    for (int b = 0; b < B; b++) {
        const float *r = x + (size_t)b * n;
        float *o = out + (size_t)b * n;
        double mean = 0, var = 0;
        for (int i = 0; i < n; i++) mean += r[i];
        mean /= n;
        for (int i = 0; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
        double inv = 1.0 / sqrt(var / n + eps); /* biased variance, as F.layer_norm */
        for (int i = 0; i < n; i++) o[i] = (float)((r[i] - mean) * inv) * w[i];
    }
}

/* clip_qkv: clamp_(-c, c), as the source does to q and to kv before the norms */
static void clip(float *x, long n, float c) {
    if (c <= 0) return;
    for (long i = 0; i < n; i++) x[i] = x[i] > c ? c : x[i] < -c ? -c : x[i];
}

/* kv rows [k; v] of 2d into k and v (B x d each) */
static void split(const float *kv, float *k, float *v, int B, int d) {
    for (int b = 0; b < B; b++) {
        memcpy(k + (size_t)b * d, kv + (size_t)b * 2 * d, (size_t)d * sizeof(float));
        memcpy(v + (size_t)b * d, kv + (size_t)b * 2 * d + d, (size_t)d * sizeof(float));
    }
}

/* OLMo's Activation on B rows of ff_proj's f outputs into g (f, or f / 2 for
 * SwiGLU, whose chunk(2) puts the value first and the gate second) */
static void activate(float *g, const float *u, int B, int f, int act) {
    if (act == RT_ACT_SWIGLU) {
        int half = f / 2;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < half; i++) {
                float x = u[(size_t)b * f + i], gate = u[(size_t)b * f + half + i];
                g[(size_t)b * half + i] = gate / (1.0f + expf(-gate)) * x;
            }
        return;
    }
    for (long i = 0; i < (long)B * f; i++)
        g[i] = act == RT_ACT_RELU ? (u[i] > 0 ? u[i] : 0.0f) : 0.5f * u[i] * (1.0f + erff(u[i] * (float)M_SQRT1_2));
}

static void cpu_free(void *impl) {
    rt_cpu *e = impl;
    if (!e) return;
    gs_attn_cpu_release(&e->a);
    free(e->layer);
    free(e);
}

/* Head hd of sequence b: softmax over keys j = 0..t (t its position) of
 * q . key_j / sqrt(dh) - slope (t - j), with key_j = K_j of layer l's cache
 * for j < t and the diagonal key k0 for j = t; into p, returns t + 1. */
static int weights(const rt_cpu *e, int l, int b, int hd, float *p) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, Dh = c->dk, L = c->n_layers, t = (int)e->host->pos[b];
    const float *q = e->q + (size_t)b * d + (size_t)hd * Dh, *k0 = e->k0 + (size_t)b * d + (size_t)hd * Dh;
    float scale = 1.0f / sqrtf((float)Dh);
    if (t > 0)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, t, Dh, scale, e->a.cache[b].k + (size_t)l * d + (size_t)hd * Dh, L * d, q,
                    1, 0.0f, p, 1);
    p[t] = cblas_sdot(Dh, q, 1, k0, 1) * scale;
    for (int j = 0; j <= t; j++) p[j] -= e->slope[hd] * (float)(t - j); /* ALiBi: 0 on the diagonal */
    gs_softmax_inplace(p, t + 1);
    return t + 1;
}

/* Every head's read a V. With a hook on the pattern, the weights are first
 * computed into the site's window, the hook runs, and the read takes the
 * window's weights as the hook left them (recomputed rather than kept, as
 * Transformer++ does). The diagonal share is the weight the read used on k0. */
static void attend(rt_cpu *e, int l, int B) {
    const gs_config *c = &e->m->cfg;
    int d = c->d, H = c->H, Dh = c->dk, L = c->n_layers, P = GS_PATTERN_KEYS;
    int hooked = e->host->hook[RT_HOOK_PATTERN] != NULL;
    if (hooked) {
        for (int b = 0; b < B; b++)
            for (int hd = 0; hd < H; hd++) {
                int n = weights(e, l, b, hd, e->a.scores);
                gs_pattern_window(e->pattern + ((size_t)b * H + hd) * P, e->a.scores, n, P);
            }
        gs_fire(e->host, RT_HOOK_PATTERN, l, e->pattern, B, H * P);
    }
    for (int b = 0; b < B; b++) {
        const float *Vc = e->a.cache[b].v + (size_t)l * d;
        for (int hd = 0; hd < H; hd++) {
            float *o = e->att + (size_t)b * d + (size_t)hd * Dh, *p = e->a.scores;
            int n = weights(e, l, b, hd, p);
            if (hooked) gs_pattern_apply(p, e->pattern + ((size_t)b * H + hd) * P, n, P);
            const float *v0 = e->v0 + (size_t)b * d + (size_t)hd * Dh;
            for (int i = 0; i < Dh; i++) o[i] = p[n - 1] * v0[i];
            if (n > 1) cblas_sgemv(CblasRowMajor, CblasTrans, n - 1, Dh, 1.0f, Vc + (size_t)hd * Dh, L * d, p, 1, 1.0f, o, 1);
            e->diag[(size_t)b * H + hd] = p[n - 1];
        }
    }
    gs_fire(e->host, RT_HOOK_DIAG, l, e->diag, B, H);
}

/* One layer at this step's positions: attention over the recurrent memory,
 * the MLP, then the layer's own output written to the memory. */
static void layer_step(rt_cpu *e, int l, int B) {
    const gs_engine_host *host = e->host;
    const gs_config *c = &e->m->cfg;
    const rt_layer *w = &e->layer[l];
    int d = c->d, f = c->f, fo = c->activation == RT_ACT_SWIGLU ? c->f / 2 : c->f;
    long Bd = (long)B * d;
    gs_fire(host, GS_HOOK_RESID_PRE, l, e->a.h, B, d);
    rt_layer_norm(e->xn, e->a.h, w->attn_norm, B, d, c->norm_eps);
    gs_linear(e->q, e->xn, w->q_proj, B, d, d);
    gs_linear(e->kv, e->xn, w->kv_proj, B, d, 2 * d);
    clip(e->q, Bd, c->clip_qkv);
    clip(e->kv, 2 * Bd, c->clip_qkv);
    split(e->kv, e->k0, e->v0, B, d);
    if (c->qk_norm) {
        rt_layer_norm(e->q, e->q, w->q_norm, B, d, c->norm_eps);
        rt_layer_norm(e->k0, e->k0, w->k_norm, B, d, c->norm_eps);
    }
    gs_fire(host, GS_HOOK_ATTN_Q, l, e->q, B, d);
    gs_fire(host, GS_HOOK_ATTN_K, l, e->k0, B, d);
    gs_fire(host, GS_HOOK_ATTN_V, l, e->v0, B, d);
    attend(e, l, B);
    gs_linear(e->out, e->att, w->attn_out, B, d, d);
    gs_fire(host, GS_HOOK_ATTN_OUT, l, e->out, B, d);
    add_inplace(e->a.h, e->out, Bd);
    gs_fire(host, GS_HOOK_RESID_MID, l, e->a.h, B, d);
    rt_layer_norm(e->xn, e->a.h, w->ff_norm, B, d, c->norm_eps);
    gs_linear(e->u, e->xn, w->ff_proj, B, d, f);
    activate(e->g, e->u, B, f, c->activation);
    gs_linear(e->out, e->g, w->ff_out, B, fo, d);
    gs_fire(host, GS_HOOK_FFN_OUT, l, e->out, B, d);
    add_inplace(e->a.h, e->out, Bd);
    gs_fire(host, GS_HOOK_RESID_POST, l, e->a.h, B, d);
    /* the memory: the output as the hooks left it, through attn_norm and kv_proj */
    rt_layer_norm(e->xn, e->a.h, w->attn_norm, B, d, c->norm_eps);
    gs_linear(e->kv, e->xn, w->kv_proj, B, d, 2 * d);
    clip(e->kv, 2 * Bd, c->clip_qkv);
    split(e->kv, e->kr, e->vr, B, d);
    if (c->qk_norm) rt_layer_norm(e->kr, e->kr, w->k_norm, B, d, c->norm_eps);
    gs_fire(host, RT_HOOK_K_REC, l, e->kr, B, d);
    gs_fire(host, RT_HOOK_V_REC, l, e->vr, B, d);
    /* the cache keeps them as the hooks left them, so an edit reaches every later position */
    for (int b = 0; b < B; b++) {
        size_t at = ((size_t)host->pos[b] * c->n_layers + l) * d;
        memcpy(e->a.cache[b].k + at, e->kr + (size_t)b * d, (size_t)d * sizeof(float));
        memcpy(e->a.cache[b].v + at, e->vr + (size_t)b * d, (size_t)d * sizeof(float));
    }
}

static int cpu_step(void *impl, int B) {
    rt_cpu *e = impl;
    const gs_engine_host *host = e->host;
    const gs_config *c = &e->m->cfg;
    int d = c->d, V = c->V;
    if (gs_attn_cpu_begin(&e->a, host, B, V, d, (size_t)c->n_layers * d, e->wte)) return -1;
    for (int l = 0; l < c->n_layers; l++) layer_step(e, l, B);
    rt_layer_norm(e->a.fin, e->a.h, e->ln_f, B, d, c->norm_eps);
    gs_fire(host, GS_HOOK_FINAL_NORM, 0, e->a.fin, B, d);
    gs_linear(e->a.pending, e->a.fin, e->head, B, d, V); /* untied head: reported at the next step */
    return 0;
}

/* name, out and site: the CPU defaults (engine/backend.h), filled by gs_attn_cpu_backend */
static const gs_backend_i rt_cpu_i = {.free = cpu_free, .reset_seq = gs_attn_cpu_reset_seq, .step = cpu_step};

int rt_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gs_config *c = &m->cfg;
    size_t B = (size_t)max_batch, d = (size_t)c->d, V = (size_t)c->V, f = (size_t)c->f, H = (size_t)c->H;
    size_t P = H * GS_PATTERN_KEYS;
    size_t floats = B * (13 * d + 2 * f + 2 * V + 2 + P + H) + H;
    rt_cpu *e = calloc(1, sizeof *e);
    if (!e || gs_attn_cpu_alloc(&e->a, max_batch, floats) || !(e->layer = calloc((size_t)c->n_layers, sizeof *e->layer))) {
        cpu_free(e);
        return gs_fail("out of memory for a Recurrent Transformer engine of batch %d", max_batch);
    }
    e->m = m;
    e->host = host;
    e->wte = gs_table_tensor(m, &rt_tensors, RT_WTE, 0);
    e->ln_f = gs_table_tensor(m, &rt_tensors, RT_LN_F, 0);
    e->head = gs_table_tensor(m, &rt_tensors, RT_HEAD, 0);
    for (int l = 0; l < c->n_layers; l++) {
        rt_layer *w = &e->layer[l];
        const float **slot[] = {&w->attn_norm, &w->q_norm, &w->k_norm, &w->q_proj, &w->kv_proj,
                                &w->attn_out,  &w->ff_norm, &w->ff_proj, &w->ff_out};
        /* in table order; q_norm, k_norm: NULL without attention_layer_norm */
        for (int i = 0; i < 9; i++) *slot[i] = gs_table_tensor(m, &rt_tensors, RT_ATTN_NORM + i, l);
    }
    float *p = e->a.arena;
    float **bufs[] = {&e->a.emb, &e->a.h, &e->xn, &e->q, &e->k0, &e->v0, &e->att, &e->out, &e->a.fin, &e->kr, &e->vr};
    for (int i = 0; i < 11; i++) *bufs[i] = p, p += B * d;
    e->kv = p, p += B * 2 * d;
    e->u = p, p += B * f;
    e->g = p, p += B * f;
    p = gs_attn_cpu_carve_outputs(&e->a, p, B, V);
    e->pattern = p, p += B * P;
    e->diag = p, p += B * H;
    e->slope = p;
    /* alibi_attention_bias in float32: m_h = h * (alibi_bias_max / n_heads), slope 1 / 2^m_h */
    for (int h = 0; h < c->H; h++) e->slope[h] = 1.0f / powf(2.0f, (float)(h + 1) * (c->alibi_bias_max / (float)c->H));
    *out = gs_attn_cpu_backend(&rt_cpu_i, e, &e->a);
    return 0;
}
