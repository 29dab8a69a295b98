/* The Gated DeltaNet CPU backend: one token per sequence per step, batched.
 * Every projection is one matrix product over the batch (weights [out, in]):
 * at batch 1 a GEMV, which streams the weights at full bandwidth where
 * OpenBLAS's GEMM with M = 1 does not; above, split by output columns over
 * the engine's pool (engine/cpu/parallel_gemm.h), as GPN's step does. q, k
 * and v are one product where their weights lie side by side (they do in
 * every model the family's tensor specs lay out). The short convolutions, norms and the delta rule are loops
 * per sequence and head, in the order fla's naive recurrence computes them
 * (fla/ops/gated_delta_rule/naive.py). State per sequence: each layer's last
 * conv-1 inputs of q, k and v, each layer's per-head S (d_k x d_v), and the
 * logits of the last step (the prediction of this step's token). The
 * window path (gdn_window.c) runs the same row-wise pieces (gdn_cpu.h) over
 * whole windows. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/gdn/gdn_cpu.h"
#include "engine/arch/gdn/gdn_delta.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

static void cpu_free(void *impl) {
    gdn_cpu *e = impl;
    if (!e) return;
    gdn_window_free(e->win);
    free(e->arena);
    free(e->S);
    free(e->conv);
    free(e->carry);
    free(e->top1);
    free(e);
}

static void cpu_reset_seq(void *impl, int b) {
    gdn_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    size_t hs = (size_t)c->H * c->dk * c->dv;
    for (int l = 0; l < c->n_layers; l++) {
        memset(gdn_S_of(e, l) + b * hs, 0, hs * sizeof(float));
        memset(gdn_conv_of(e, l, b), 0, (size_t)(c->conv - 1) * e->C * sizeof(float));
    }
    for (int v = 0; v < c->V; v++) e->carry[(size_t)b * c->V + v] = NAN;
}

typedef struct {
    float *out;
    const float *x, *w;
    int n;
    float eps;
} rms_job;

static void rms_range(void *ctx, long r0, long r1) {
    const rms_job *j = ctx;
    int n = j->n;
    for (long r = r0; r < r1; r++) {
        const float *xr = j->x + r * n;
        float *o = j->out + r * n;
        double ss = 0.0;
        for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        float s = 1.0f / sqrtf((float)(ss / n) + j->eps);
        for (int i = 0; i < n; i++) o[i] = xr[i] * s * j->w[i];
    }
}

/* out = x / sqrt(mean(x^2) + eps) * w over rows of n (out may equal x), the
 * rows over the pool: at the window's B x T rows a serial pass left a core idle */
void gdn_rms_rows(float *out, const float *x, const float *w, long rows, int n, float eps) {
    rms_job j = {out, x, w, n, eps};
    gs_parallel_for(rows, gs_parallel_grain(n), rms_range, &j);
}

/* Y[B x out] = X[B x in] W^T for W stored [out, in] */
void gdn_proj(const gdn_cpu *e, float *Y, const float *X, const float *W, int B, int in, int out) {
    if (B == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, W, in, X, 1, 0.0f, Y, 1);
    else if (e->own_gemms) gs_gemm_parallel(Y, X, W, 1, NULL, B, in, out);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, X, in, W, in, 0.0f, Y, out);
}

/* The short causal depthwise convolution of one sequence's C channels, then
 * SiLU: y_c = silu(sum_j w_c[j] u_c(t - (K-1) + j)), the last tap on this
 * token, with the conv-1 inputs before it kept in `past` (zeros before the
 * window), which then shifts by one. The weight of channel c is w[c*K ..]. */
void gdn_conv_silu(float *y, float *past, const float *const w[3], const int off[3], int C, int Kc) {
    int keep = Kc - 1;
    for (int ch = 0; ch < C; ch++) {
        int part = ch >= off[2] ? 2 : ch >= off[1] ? 1 : 0;
        const float *wc = w[part] + (size_t)(ch - off[part]) * Kc;
        float u = y[ch], acc = wc[keep] * u;
        for (int j = 0; j < keep; j++) acc += wc[j] * past[(size_t)j * C + ch];
        for (int j = 0; j + 1 < keep; j++) past[(size_t)j * C + ch] = past[(size_t)(j + 1) * C + ch];
        if (keep) past[(size_t)(keep - 1) * C + ch] = u;
        y[ch] = acc;
    }
    silu_mul(y, y, NULL, C);
}

/* x / sqrt(sum(x^2) + 1e-6) per head of n (fla's l2norm inside the kernel), times scale */
void gdn_l2n_heads(float *x, long heads, int n, float scale) {
    for (long h = 0; h < heads; h++) {
        float *v = x + h * n;
        float ss = 0.0f;
        for (int i = 0; i < n; i++) ss += v[i] * v[i];
        float r = scale / sqrtf(ss + 1e-6f);
        for (int i = 0; i < n; i++) v[i] *= r;
    }
}

static void delta_read(float *restrict o, const float *restrict S, const float *restrict q, int dk, int dv) {
    for (int j = 0; j < dv; j++) o[j] = 0.0f;
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) o[j] += q[i] * S[(size_t)i * dv + j];
}


typedef struct {
    gdn_cpu *e;
    int l;
    const float *const *cw;
    const int *off;
} conv_job;

/* sequences [b0, b1): conv + SiLU over q | k | v, then the norms of q and k */
static void conv_range(void *ctx, long b0, long b1) {
    conv_job *j = ctx;
    const gs_config *c = &j->e->m->cfg;
    const gdn_rows *r = &j->e->r;
    for (long b = b0; b < b1; b++) {
        float *row = r->qkv + (size_t)b * j->e->C;
        gdn_conv_silu(row, gdn_conv_of(j->e, j->l, (int)b), j->cw, j->off, j->e->C, c->conv);
        gdn_l2n_heads(row, c->H, c->dk, 1.0f / sqrtf((float)c->dk));
        gdn_l2n_heads(row + j->e->K, c->H, c->dk, 1.0f);
    }
}

typedef struct {
    gdn_cpu *e;
    int l, hooked;
} delta_job;

/* (sequence, head) pairs [i0, i1): the write, and the read unless the state is hooked */
static void delta_range(void *ctx, long i0, long i1) {
    delta_job *j = ctx;
    gdn_cpu *e = j->e;
    const gdn_rows *r = &e->r;
    const gs_config *c = &e->m->cfg;
    int H = c->H, dk = c->dk, dv = c->dv, K = e->K;
    size_t hs = (size_t)dk * dv;
    for (long i = i0; i < i1; i++) {
        long b = i / H, hd = i % H;
        const float *row = r->qkv + (size_t)b * e->C;
        float *u = r->ffn_g + (size_t)i * dv; /* ffn_g (B x max(F, H d_v)) is free until the MLP */
        gdn_delta_step(gdn_S_of(e, j->l) + (size_t)i * hs, row + K + hd * dk, row + 2 * K + hd * dv, row + hd * dk, r->a[i],
                       r->beta[i], dk, dv, u, j->hooked ? NULL : r->o + (size_t)b * e->Vd + hd * dv);
    }
}

void gdn_attn_project(const gdn_cpu *e, const gdn_rows *r, int l, int B) {
    const gs_config *c = &e->m->cfg;
    const float *const *w = e->L[l].w;
    int D = c->d, H = c->H, K = e->K, Vd = e->Vd, C = e->C;
    gdn_rms_rows(r->x, r->h, w[GDN_ATTN_NORM], B, D, c->norm_eps);
    /* q | k | v side by side per row, so one conv pass covers all three */
    if (w[GDN_K] == w[GDN_Q] + (size_t)K * D && w[GDN_V] == w[GDN_K] + (size_t)K * D)
        gdn_proj(e, r->qkv, r->x, w[GDN_Q], B, D, C); /* one [C, D] matrix */
    else
        for (int p = 0; p < 3; p++) {
            int n = p == 2 ? Vd : K, at = p * K;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, n, D, 1.0f, r->x, D, w[GDN_Q + p], D, 0.0f,
                        r->qkv + at, C);
        }
    gdn_proj(e, r->a, r->x, w[GDN_A], B, D, H);
    gdn_proj(e, r->beta, r->x, w[GDN_B], B, D, H);
    gdn_proj(e, r->gate, r->x, w[GDN_G], B, D, Vd);
}

void gdn_attn_output(const gdn_cpu *e, const gdn_rows *r, int l, int B) {
    const gs_config *c = &e->m->cfg;
    const float *const *w = e->L[l].w;
    /* fla's FusedRMSNormGated: rms(o_h) w * silu(g) per head, one weight shared by the heads */
    gdn_rms_rows(r->o, r->o, w[GDN_ONORM], (long)B * c->H, c->dv, c->norm_eps);
    silu_mul_pooled(r->o, r->gate, r->o, (long)B * e->Vd);
    gdn_proj(e, r->attn_out, r->o, w[GDN_O], B, e->Vd, c->d);
}

static void attention(gdn_cpu *e, int l, int B) {
    const gs_config *c = &e->m->cfg;
    const gs_engine_host *h = e->host;
    const float *const *w = e->L[l].w;
    const gdn_rows *r = &e->r;
    int H = c->H, dk = c->dk, dv = c->dv, K = e->K, Vd = e->Vd, C = e->C;
    gdn_attn_project(e, r, l, B);
    const float *cw[3] = {w[GDN_QCONV], w[GDN_KCONV], w[GDN_VCONV]};
    int off[3] = {0, K, 2 * K};
    conv_job cj = {e, l, cw, off};
    gs_parallel_for(B, gs_parallel_grain((long)C * c->conv), conv_range, &cj);
    /* the kept inputs now end with x_t's: what the next step's convolution reads
     * (layer l's B rows are contiguous, (conv-1) x C each) */
    if (c->conv > 1) gs_fire(h, GDN_HOOK_CONV, l, gdn_conv_of(e, l, 0), B, (c->conv - 1) * C);
    /* the per-head sites are views of the q | k | v rows: gather each to B x n for its hook and back */
    static const gs_hook_point points[3] = {GDN_HOOK_Q, GDN_HOOK_K, GDN_HOOK_V};
    for (int p = 0; p < 3; p++) {
        if (!h->hook[points[p]]) continue;
        int n = p == 2 ? Vd : K;
        for (int b = 0; b < B; b++) memcpy(r->o + (size_t)b * n, r->qkv + (size_t)b * C + p * K, n * sizeof(float));
        gs_fire(h, points[p], l, r->o, B, n);
        for (int b = 0; b < B; b++) memcpy(r->qkv + (size_t)b * C + p * K, r->o + (size_t)b * n, n * sizeof(float));
    }
    for (long i = 0; i < (long)B * H; i++) r->beta[i] = gs_sigmoid(r->beta[i]);
    gs_fire(h, GDN_HOOK_BETA, l, r->beta, B, H);
    decay_forward(r->a, w[GDN_A_LOG], w[GDN_DT_BIAS], B, H); /* GPN+M's decay: alpha = exp(g) */
    gs_fire(h, GDN_HOOK_ALPHA, l, r->a, B, H);
    int hooked = h->hook[GDN_HOOK_STATE] != NULL;
    delta_job job = {e, l, hooked};
    gs_parallel_for((long)B * H, gs_parallel_grain((long)dk * dv), delta_range, &job);
    if (hooked) {
        float *S = gdn_S_of(e, l);
        size_t hs = (size_t)dk * dv;
        gs_fire(h, GDN_HOOK_STATE, l, S, B, (int)(H * hs));
        for (int b = 0; b < B; b++)
            for (int hd = 0; hd < H; hd++)
                delta_read(r->o + (size_t)b * Vd + hd * dv, S + ((size_t)b * H + hd) * hs,
                           r->qkv + (size_t)b * C + hd * dk, dk, dv);
    }
    gs_fire(h, GDN_HOOK_O, l, r->o, B, Vd);
    gdn_attn_output(e, r, l, B);
    gs_fire(h, GDN_HOOK_ATTN_OUT, l, r->attn_out, B, c->d);
}

void gdn_mlp(const gdn_cpu *e, const gdn_rows *r, int l, int B) {
    const gs_config *c = &e->m->cfg;
    const float *const *w = e->L[l].w;
    gdn_rms_rows(r->x, r->h, w[GDN_MLP_NORM], B, c->d, c->norm_eps);
    gdn_proj(e, r->ffn_g, r->x, w[GDN_GATE], B, c->d, c->f);
    gdn_proj(e, r->ffn_u, r->x, w[GDN_UP], B, c->d, c->f);
    silu_mul_pooled(r->ffn_g, r->ffn_g, r->ffn_u, (long)B * c->f); /* SwiGLU */
    gdn_proj(e, r->mlp_out, r->ffn_g, w[GDN_DOWN], B, c->f, c->d);
}

static int step_layers(void *impl, int B) {
    gdn_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    const gs_engine_host *h = e->host;
    const gdn_rows *r = &e->r;
    int D = c->d, V = c->V;
    long BD = (long)B * D;
    /* the prediction of x_t, made at the last step */
    memcpy(e->logits, e->carry, (size_t)B * V * sizeof(float));
    gs_fire(h, GS_HOOK_LOGITS, 0, e->logits, B, V);
    logits_stats_pooled(e->logits, h->tokens, B, V, e->nll, e->entropy, e->top1);
    for (int b = 0; b < B; b++)
        if (h->pos[b] == 0) e->nll[b] = e->entropy[b] = NAN, e->top1[b] = -1;
    gs_fire(h, GS_HOOK_NLL, 0, e->nll, B, 1);

    for (int b = 0; b < B; b++) memcpy(e->embed + (size_t)b * D, e->E + (size_t)h->tokens[b] * D, D * sizeof(float));
    gs_fire(h, GDN_HOOK_EMBED, 0, e->embed, B, D);
    memcpy(r->h, e->embed, BD * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        gs_fire(h, GDN_HOOK_RESID_PRE, l, r->h, B, D);
        attention(e, l, B);
        add_inplace(r->h, r->attn_out, BD);
        gs_fire(h, GDN_HOOK_RESID_MID, l, r->h, B, D);
        gdn_mlp(e, r, l, B);
        gs_fire(h, GDN_HOOK_MLP_OUT, l, r->mlp_out, B, D);
        add_inplace(r->h, r->mlp_out, BD);
        gs_fire(h, GDN_HOOK_RESID_POST, l, r->h, B, D);
    }
    memcpy(e->resid_post_last, r->h, BD * sizeof(float));
    gdn_rms_rows(r->final, r->h, e->norm_w, B, D, c->norm_eps);
    gs_fire(h, GDN_HOOK_LN_FINAL, 0, r->final, B, D);
    gdn_proj(e, e->carry, r->final, e->lm_head, B, D, V);
    return 0;
}

static int cpu_step(void *impl, int B) {
    return gs_gemm_pooled_step(B, &((gdn_cpu *)impl)->own_gemms, step_layers, impl);
}

/* name, out and site: the CPU defaults (engine/backend.h), filled in gdn_cpu_new */
static const gs_backend_i gdn_cpu_i = {.free = cpu_free, .reset_seq = cpu_reset_seq, .step = cpu_step, .window = gdn_cpu_window};

int gdn_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gs_config *c = &m->cfg;
    gs_tensor_spec *specs = malloc(GS_MAX_TENSORS * sizeof *specs);
    gdn_cpu *e = calloc(1, sizeof *e);
    if (!specs || !e) {
        free(specs);
        free(e);
        return gs_fail("out of memory for a Gated DeltaNet engine");
    }
    gs_tensor_specs(c, specs);
    e->m = m;
    e->host = host;
    e->max_batch = max_batch;
    e->K = c->H * c->dk;
    e->Vd = c->H * c->dv;
    e->C = 2 * e->K + e->Vd;
    e->E = m->block + specs[0].offset;
    for (int l = 0; l < c->n_layers; l++)
        for (int t = 0; t < GDN_PER_LAYER; t++) e->L[l].w[t] = m->block + specs[GDN_SPEC(l, t)].offset;
    e->norm_w = m->block + specs[GDN_SPEC(c->n_layers, 0)].offset;
    e->lm_head = m->block + specs[GDN_SPEC(c->n_layers, 1)].offset;
    free(specs);
    size_t B = (size_t)max_batch, D = (size_t)c->d, F = (size_t)c->f, H = (size_t)c->H;
    size_t wide = F > (size_t)e->Vd ? F : (size_t)e->Vd; /* ffn_g doubles as the delta rule's u (d_v) */
    size_t gath = (size_t)(e->K > e->Vd ? e->K : e->Vd); /* o doubles as the q / k hooks' B x K rows */
    size_t floats = B * (7 * D + (size_t)e->C + 2 * H + (size_t)e->Vd + gath + wide + F + (size_t)c->V + 2) + (size_t)e->C;
    e->arena = calloc(floats, sizeof(float));
    e->S = calloc((size_t)c->n_layers * B * H * c->dk * c->dv, sizeof(float));
    e->conv = calloc((size_t)c->n_layers * B * (size_t)(c->conv > 1 ? c->conv - 1 : 1) * e->C, sizeof(float));
    e->carry = malloc(B * c->V * sizeof(float));
    e->top1 = calloc(B, sizeof *e->top1);
    if (!e->arena || !e->S || !e->conv || !e->carry || !e->top1) {
        cpu_free(e);
        return gs_fail("out of memory for a Gated DeltaNet engine of batch %d", max_batch);
    }
    float *p = e->arena;
    float **vecs[] = {&e->r.h, &e->r.x, &e->embed, &e->resid_post_last, &e->r.attn_out, &e->r.mlp_out, &e->r.final};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++) *vecs[i] = p, p += B * D;
    e->r.qkv = p, p += B * e->C + e->C;
    e->r.a = p, p += B * H;
    e->r.beta = p, p += B * H;
    e->r.gate = p, p += B * e->Vd;
    e->r.o = p, p += B * gath;
    e->r.ffn_g = p, p += B * wide;
    e->r.ffn_u = p, p += B * F;
    e->logits = p, p += B * c->V;
    e->nll = p, p += B;
    e->entropy = p;
    for (int b = 0; b < max_batch; b++) cpu_reset_seq(e, b);
    /* s_pred: the last layer's resid_post (the state site's last layer); the
     * per-head decays are per layer, so the per-model alpha/beta rows are NULL */
    gs_step_out o = {e->nll, e->entropy, e->top1, e->resid_post_last, e->r.final, e->logits, NULL, NULL, NULL};
    *out = gs_cpu_backend(&gdn_cpu_i, e, o);
    out->site[GDN_HOOK_EMBED] = e->embed;
    out->site[GDN_HOOK_LN_FINAL] = e->r.final;
    return 0;
}
