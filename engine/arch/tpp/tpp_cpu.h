/* The Transformer++ CPU backend's state and the row-wise pieces of its
 * layers, shared by the token-by-token step (tpp_cpu.c) and the window path
 * (tpp_window.c), which runs the same pieces over B x T rows at once. Private
 * to engine/arch/tpp/. */
#ifndef GS_ENGINE_ARCH_TPP_CPU_H
#define GS_ENGINE_ARCH_TPP_CPU_H

#include <stdint.h>

#include "engine/arch/attention.h"
#include "engine/arch/tpp/tpp.h"

typedef struct {
    const float *norm_a, *W_q, *W_k, *W_v, *W_o, *norm_f, *w1, *w2;
} tpp_layer;

/* The per-row buffers of a layer: the step's hold B rows, the window's B x T'
 * (row b * n + t: token t of sequence b); cos and sin: each row's rotation,
 * Dh/2 floats a row. */
typedef struct {
    float *h, *xn, *q, *k, *v, *att, *out, *u, *g;
    float *cos, *sin;
} tpp_rows;

typedef struct tpp_window tpp_window; /* tpp_window.c's buffers, made on first use */

typedef struct {
    gs_attn_cpu a; /* first: the shared backend entries take this state; caches [pos][n_layers][d] */
    const gs_model *m;
    const gs_engine_host *host;
    const float *E, *norm;
    tpp_layer *layer;
    tpp_rows r;         /* the step's B rows (r.h is a.h) */
    float *pattern;     /* B x H x GS_PATTERN_KEYS: the pattern site's rows */
    float *pair_scores; /* max_batch x H rows of pair_stride: each (sequence, head) pair's weights */
    int pair_stride;
    int own_gemms; /* this step's products split over the pool (parallel_gemm.h) */
    tpp_window *win;
} tpp_cpu;

/* out = x W^T: gs_linear, or split over the pool while the step owns the GEMMs */
void tpp_linear(const tpp_cpu *e, float *out, const float *x, const float *W, int B, int n_in, int n_out);
/* the rotation of B x n rows: row b * n + t at position host->pos[b] + t0 + t */
void tpp_rope_tables(const tpp_cpu *e, const tpp_rows *r, int B, int n, int t0);
/* layer l over `rows` rows of r: xn = rms(h), q, k, v and RoPE on q and k;
 * the MLP of h into out (xn, u, g its scratch), with the vectorized SiLU
 * when fast_silu (the window's; the step keeps glibc's expf, so what it
 * records stays as it was, bit for bit). The norms run on the pool. No hooks
 * fire here: the step fires them. */
void tpp_attn_project(const tpp_cpu *e, const tpp_rows *r, int l, int rows);
void tpp_mlp(const tpp_cpu *e, const tpp_rows *r, int l, int rows, int fast_silu);

/* the backend's window entry (engine/backend.h) and its buffers' release */
int tpp_cpu_window(void *impl, const int32_t *tokens, int B, int T, float *nll);
void tpp_window_free(tpp_window *w);

#endif
