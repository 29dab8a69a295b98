/* The Gated DeltaNet CPU backend's state and the row-wise pieces of its
 * layers, shared by the token-by-token step (gdn_cpu.c) and the window path
 * (gdn_window.c), which runs the same pieces over B x T rows at once. Private
 * to engine/arch/gdn/. */
#ifndef GS_ENGINE_ARCH_GDN_CPU_H
#define GS_ENGINE_ARCH_GDN_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "engine/arch/gdn/gdn.h"
#include "engine/backend.h"

typedef struct {
    const float *w[GDN_PER_LAYER];
} gdn_layer;

/* The per-row buffers of a layer: the step's hold B rows, the window's B x T */
typedef struct {
    float *h, *x, *attn_out, *mlp_out, *final;
    float *qkv, *a, *beta, *gate, *o, *ffn_g, *ffn_u;
} gdn_rows;

typedef struct gdn_window gdn_window; /* gdn_window.c's buffers, made on first use */

typedef struct {
    const gs_model *m;
    const gs_engine_host *host;
    int max_batch, K, Vd, C; /* K = H d_k, Vd = H d_v, C = 2K + Vd conv channels */
    int own_gemms;           /* this step's products split over the pool (parallel_gemm.h) */
    const float *E, *norm_w, *lm_head;
    gdn_layer L[GS_MAX_LAYERS];
    /* carried per sequence */
    float *S;        /* layers x max_batch x H x d_k x d_v */
    float *conv;     /* layers x max_batch x (conv-1) x C, oldest input first */
    float *carry;    /* max_batch x V: lm_head of the last step's final norm */
    /* this step */
    gdn_rows r;
    float *embed, *resid_post_last, *logits, *nll, *entropy;
    int32_t *top1;
    float *arena;
    gdn_window *win;
} gdn_cpu;

static inline float *gdn_S_of(const gdn_cpu *e, int l) {
    const gs_config *c = &e->m->cfg;
    return e->S + (size_t)l * e->max_batch * c->H * c->dk * c->dv;
}

static inline float *gdn_conv_of(const gdn_cpu *e, int l, int b) {
    int keep = e->m->cfg.conv - 1;
    return e->conv + ((size_t)l * e->max_batch + b) * keep * e->C;
}

/* out = x / sqrt(mean(x^2) + eps) * w over rows of n (out may equal x) */
void gdn_rms_rows(float *out, const float *x, const float *w, long rows, int n, float eps);
/* Y[B x out] = X[B x in] W^T for W stored [out, in] */
void gdn_proj(const gdn_cpu *e, float *Y, const float *X, const float *W, int B, int in, int out);
/* one token's short convolution + SiLU of a sequence's C channels, `past` its kept inputs */
void gdn_conv_silu(float *y, float *past, const float *const w[3], const int off[3], int C, int Kc);
/* x / sqrt(sum(x^2) + 1e-6) per head of n, times scale */
void gdn_l2n_heads(float *x, long heads, int n, float scale);
/* layer l over B rows of r: the attention norm and the q | k | v, a, b and g
 * projections; the gated output norm of r->o and the o projection; the MLP
 * from r->h to r->mlp_out. No hooks fire here: the step fires them. */
void gdn_attn_project(const gdn_cpu *e, const gdn_rows *r, int l, int B);
void gdn_attn_output(const gdn_cpu *e, const gdn_rows *r, int l, int B);
void gdn_mlp(const gdn_cpu *e, const gdn_rows *r, int l, int B);

/* the backend's window entry (engine/backend.h) and its buffers' release */
int gdn_cpu_window(void *impl, const int32_t *tokens, int B, int T, float *nll);
void gdn_window_free(gdn_window *w);

#endif
