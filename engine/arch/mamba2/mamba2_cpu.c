/* The Mamba-2 CPU backend: one token per sequence per step, batched, in the
 * order of mamba_ssm's Mamba2.step() (mamba_ssm/modules/mamba2.py). in_proj
 * and out_proj are one matrix product over the batch (a GEMV at batch 1, else
 * split by output columns over the engine's pool, as GDN's step does); the
 * convolution, the SSM update and read, and the gated norm are loops per
 * sequence (and head). State per sequence: each layer's last conv-1 inputs
 * of x | B | C, each layer's per-head SSM state (head_dim x d_state), and the
 * logits of the last step (the prediction of this step's token). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/mamba2/mamba2.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

typedef struct {
    const gs_model *m;
    const gs_engine_host *host;
    mamba2_opts o;
    int max_batch, Di, Cd, R, GN; /* d_inner, conv channels, in_proj rows, n_groups * d_state */
    int own_gemms;                /* this step's products split over the pool (parallel_gemm.h) */
    const float *E, *norm_f, *head;
    const float *w[GS_MAX_LAYERS][M2_PER_LAYER];
    /* carried per sequence */
    float *S;     /* layers x max_batch x H x head_dim x d_state */
    float *conv;  /* layers x max_batch x (conv-1) x Cd, oldest input first */
    float *carry; /* max_batch x V: lm_head of the last step's final norm */
    /* this step */
    float *h, *u, *zxbcdt, *x, *Bm, *Cm, *dt, *a, *y, *out, *final, *embed, *resid_last, *logits, *nll, *entropy;
    int32_t *top1;
    float *arena;
} m2_cpu;

static float *state_of(const m2_cpu *e, int l) {
    const gs_config *c = &e->m->cfg;
    return e->S + (size_t)l * e->max_batch * c->H * c->dv * c->dk;
}

static float *conv_of(const m2_cpu *e, int l, int b) {
    return e->conv + ((size_t)l * e->max_batch + b) * (size_t)(e->m->cfg.conv - 1) * e->Cd;
}

static void cpu_free(void *impl) {
    m2_cpu *e = impl;
    if (!e) return;
    free(e->arena);
    free(e->S);
    free(e->conv);
    free(e->carry);
    free(e->top1);
    free(e);
}

static void cpu_reset_seq(void *impl, int b) {
    m2_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    size_t hs = (size_t)c->H * c->dv * c->dk;
    for (int l = 0; l < c->n_layers; l++) {
        memset(state_of(e, l) + b * hs, 0, hs * sizeof(float));
        memset(conv_of(e, l, b), 0, (size_t)(c->conv - 1) * e->Cd * sizeof(float));
    }
    for (int v = 0; v < c->V; v++) e->carry[(size_t)b * c->V + v] = NAN;
}

/* out = x / sqrt(mean(x^2) + eps) * w over rows of n (out may equal x) */
static void rms_rows(float *out, const float *x, const float *w, long rows, int n, float eps) {
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        double ss = 0.0;
        for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        float s = 1.0f / sqrtf((float)(ss / n) + eps);
        for (int i = 0; i < n; i++) out[r * n + i] = xr[i] * s * w[i];
    }
}

/* Y[B x out] = X[B x in] W^T for W stored [out, in] */
static void proj(const m2_cpu *e, float *Y, const float *X, const float *W, int B, int in, int out) {
    if (B == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, W, in, X, 1, 0.0f, Y, 1);
    else if (e->own_gemms) gs_gemm_parallel(Y, X, W, 1, NULL, B, in, out);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, X, in, W, in, 0.0f, Y, out);
}

typedef struct {
    m2_cpu *e;
    int l;
} layer_job;

/* sequences [b0, b1): the causal depthwise convolution of xBC with its bias,
 * then SiLU, y_c = silu(b_c + sum_j w_c[j] u_c(t - (K-1) + j)), the last tap
 * on this token; the kept inputs shift by one */
static void conv_range(void *ctx, long b0, long b1) {
    const layer_job *j = ctx;
    const m2_cpu *e = j->e;
    int K = e->m->cfg.conv, keep = K - 1, Cd = e->Cd;
    const float *w = e->w[j->l][M2_CONV_W], *bias = e->w[j->l][M2_CONV_B];
    for (long b = b0; b < b1; b++) {
        float *xbc = e->zxbcdt + (size_t)b * e->R + e->Di, *past = conv_of(e, j->l, (int)b);
        for (int ch = 0; ch < Cd; ch++) {
            const float *wc = w + (size_t)ch * K;
            float in = xbc[ch], acc = bias[ch] + wc[keep] * in;
            for (int k = 0; k < keep; k++) acc += wc[k] * past[(size_t)k * Cd + ch];
            for (int k = 0; k + 1 < keep; k++) past[(size_t)k * Cd + ch] = past[(size_t)(k + 1) * Cd + ch];
            if (keep) past[(size_t)(keep - 1) * Cd + ch] = in;
            xbc[ch] = acc;
        }
        silu_mul(xbc, xbc, NULL, Cd);
    }
}

/* (sequence, head) pairs [i0, i1): h = a h + dt x B^T, head h reading group h / (H / G) */
static void update_range(void *ctx, long i0, long i1) {
    const layer_job *j = ctx;
    const m2_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    int H = c->H, P = c->dv, N = c->dk, per = H / e->o.n_groups;
    for (long i = i0; i < i1; i++) {
        long b = i / H, hd = i % H;
        float *S = state_of(e, j->l) + (size_t)i * P * N;
        const float *x = e->x + (size_t)b * e->Di + hd * P, *B = e->Bm + (size_t)b * e->GN + (hd / per) * N;
        float a = e->a[i], dt = e->dt[i];
        for (int p = 0; p < P; p++) {
            float dx = dt * x[p];
            float *row = S + (size_t)p * N;
            for (int n = 0; n < N; n++) row[n] = a * row[n] + dx * B[n];
        }
    }
}

/* (sequence, head) pairs [i0, i1): y = h C + D x */
static void read_range(void *ctx, long i0, long i1) {
    const layer_job *j = ctx;
    const m2_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    int H = c->H, P = c->dv, N = c->dk, per = H / e->o.n_groups;
    const float *D = e->w[j->l][M2_D];
    for (long i = i0; i < i1; i++) {
        long b = i / H, hd = i % H;
        const float *S = state_of(e, j->l) + (size_t)i * P * N;
        const float *x = e->x + (size_t)b * e->Di + hd * P, *C = e->Cm + (size_t)b * e->GN + (hd / per) * N;
        float *y = e->y + (size_t)b * e->Di + hd * P;
        for (int p = 0; p < P; p++) {
            float acc = 0.0f;
            for (int n = 0; n < N; n++) acc += S[(size_t)p * N + n] * C[n];
            y[p] = acc + D[hd] * x[p];
        }
    }
}

/* mamba_ssm's gated RMSNorm, norm_before_gate=False: y silu(z) normalised per
 * group of d_inner / G channels, times the weight (in place on y) */
static void gated_norm(const m2_cpu *e, int l, int B) {
    const gs_config *c = &e->m->cfg;
    int G = e->o.n_groups, n = e->Di / G;
    for (int b = 0; b < B; b++) {
        float *y = e->y + (size_t)b * e->Di;
        silu_mul(y, e->zxbcdt + (size_t)b * e->R, y, e->Di);
        for (int g = 0; g < G; g++) rms_rows(y + (size_t)g * n, y + (size_t)g * n, e->w[l][M2_GNORM] + (size_t)g * n, 1, n,
                                             c->norm_eps);
    }
}

static void mixer(m2_cpu *e, int l, int B) {
    const gs_config *c = &e->m->cfg;
    const gs_engine_host *h = e->host;
    const float *const *w = e->w[l];
    int H = c->H, Di = e->Di, GN = e->GN, R = e->R;
    layer_job job = {e, l};
    rms_rows(e->u, e->h, w[M2_NORM], B, c->d, c->norm_eps);
    proj(e, e->zxbcdt, e->u, w[M2_IN_PROJ], B, c->d, R); /* z | xBC | dt per row */
    gs_parallel_for(B, gs_parallel_grain((long)e->Cd * c->conv), conv_range, &job);
    /* the kept inputs now end with x_t's (layer l's B rows are contiguous, (conv-1) x Cd each) */
    if (c->conv > 1) gs_fire(h, M2_HOOK_CONV, l, conv_of(e, l, 0), B, (c->conv - 1) * e->Cd);
    for (int b = 0; b < B; b++) {
        const float *xbc = e->zxbcdt + (size_t)b * R + Di;
        memcpy(e->x + (size_t)b * Di, xbc, (size_t)Di * sizeof(float));
        memcpy(e->Bm + (size_t)b * GN, xbc + Di, (size_t)GN * sizeof(float));
        memcpy(e->Cm + (size_t)b * GN, xbc + Di + GN, (size_t)GN * sizeof(float));
    }
    gs_fire(h, M2_HOOK_X, l, e->x, B, Di);
    gs_fire(h, M2_HOOK_B, l, e->Bm, B, GN);
    gs_fire(h, M2_HOOK_C, l, e->Cm, B, GN);
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < H; hd++) {
            float v = e->zxbcdt[(size_t)b * R + Di + e->Cd + hd] + w[M2_DT_BIAS][hd];
            float sp = v > 20.0f ? v : log1pf(expf(v)); /* softplus, exact in float above 20 */
            e->dt[(size_t)b * H + hd] = fminf(fmaxf(sp, e->o.dt_min), e->o.dt_max);
        }
    gs_fire(h, M2_HOOK_DT, l, e->dt, B, H);
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < H; hd++) e->a[(size_t)b * H + hd] = expf(-expf(w[M2_A_LOG][hd]) * e->dt[(size_t)b * H + hd]);
    gs_fire(h, M2_HOOK_DECAY, l, e->a, B, H);
    long grain = gs_parallel_grain((long)c->dv * c->dk);
    gs_parallel_for((long)B * H, grain, update_range, &job);
    gs_fire(h, M2_HOOK_STATE, l, state_of(e, l), B, H * c->dv * c->dk);
    gs_parallel_for((long)B * H, grain, read_range, &job);
    gs_fire(h, M2_HOOK_Y, l, e->y, B, Di);
    gated_norm(e, l, B);
    proj(e, e->out, e->y, w[M2_OUT_PROJ], B, Di, c->d);
    gs_fire(h, M2_HOOK_MIXER_OUT, l, e->out, B, c->d);
}

static int step_layers(void *impl, int B) {
    m2_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    const gs_engine_host *h = e->host;
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
    gs_fire(h, GS_HOOK_EMBED, 0, e->embed, B, D);
    memcpy(e->h, e->embed, BD * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        gs_fire(h, GS_HOOK_RESID_PRE, l, e->h, B, D);
        mixer(e, l, B);
        add_inplace(e->h, e->out, BD);
        gs_fire(h, GS_HOOK_RESID_POST, l, e->h, B, D);
    }
    memcpy(e->resid_last, e->h, BD * sizeof(float));
    rms_rows(e->final, e->h, e->norm_f, B, D, c->norm_eps);
    gs_fire(h, GS_HOOK_FINAL_NORM, 0, e->final, B, D);
    proj(e, e->carry, e->final, e->head, B, D, V);
    return 0;
}

static int cpu_step(void *impl, int B) { return gs_gemm_pooled_step(B, &((m2_cpu *)impl)->own_gemms, step_layers, impl); }

/* name, out and site: the CPU defaults (engine/backend.h), filled in mamba2_cpu_new */
static const gs_backend_i m2_cpu_i = {.free = cpu_free, .reset_seq = cpu_reset_seq, .step = cpu_step};

int mamba2_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out) {
    const gs_config *c = &m->cfg;
    gs_tensor_spec *specs = malloc(GS_MAX_TENSORS * sizeof *specs);
    m2_cpu *e = calloc(1, sizeof *e);
    if (!specs || !e) {
        free(specs);
        free(e);
        return gs_fail("out of memory for a Mamba-2 engine");
    }
    int n = gs_tensor_specs(c, specs);
    e->m = m;
    e->host = host;
    e->o = mamba2_opts_of(c);
    e->max_batch = max_batch;
    e->Di = mamba2_inner(c);
    e->Cd = mamba2_conv_dim(c);
    e->R = e->Di + e->Cd + c->H;
    e->GN = e->o.n_groups * c->dk;
    e->E = m->block + specs[0].offset;
    for (int l = 0; l < c->n_layers; l++)
        for (int t = 0; t < M2_PER_LAYER; t++) e->w[l][t] = m->block + specs[M2_SPEC(l, t)].offset;
    e->norm_f = m->block + specs[M2_SPEC(c->n_layers, 0)].offset;
    e->head = e->o.tied ? e->E : m->block + specs[n - 1].offset;
    free(specs);
    size_t B = (size_t)max_batch, D = (size_t)c->d, H = (size_t)c->H, Di = (size_t)e->Di, GN = (size_t)e->GN;
    size_t floats = B * (7 * D + (size_t)e->R + 2 * Di + 2 * GN + 2 * H + (size_t)c->V + 2);
    e->arena = calloc(floats, sizeof(float));
    e->S = calloc((size_t)c->n_layers * B * H * c->dv * c->dk, sizeof(float));
    e->conv = calloc((size_t)c->n_layers * B * (size_t)(c->conv > 1 ? c->conv - 1 : 1) * e->Cd, sizeof(float));
    e->carry = malloc(B * c->V * sizeof(float));
    e->top1 = calloc(B, sizeof *e->top1);
    if (!e->arena || !e->S || !e->conv || !e->carry || !e->top1) {
        cpu_free(e);
        return gs_fail("out of memory for a Mamba-2 engine of batch %d", max_batch);
    }
    float *p = e->arena;
    float **vecs[] = {&e->h, &e->u, &e->out, &e->final, &e->embed, &e->resid_last};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++) *vecs[i] = p, p += B * D;
    e->zxbcdt = p, p += B * e->R;
    e->x = p, p += B * Di;
    e->y = p, p += B * Di;
    e->Bm = p, p += B * GN;
    e->Cm = p, p += B * GN;
    e->dt = p, p += B * H;
    e->a = p, p += B * H;
    e->logits = p, p += B * c->V;
    e->nll = p, p += B;
    e->entropy = p;
    for (int b = 0; b < max_batch; b++) cpu_reset_seq(e, b);
    /* s_pred: the last layer's resid_post (the state site's last layer); the
     * per-head decays are per layer, so the per-model alpha/beta rows are NULL */
    gs_step_out o = {e->nll, e->entropy, e->top1, e->resid_last, e->final, e->logits, NULL, NULL, NULL};
    *out = gs_cpu_backend(&m2_cpu_i, e, o);
    out->site[GS_HOOK_EMBED] = e->embed;
    out->site[GS_HOOK_FINAL_NORM] = e->final;
    return 0;
}
