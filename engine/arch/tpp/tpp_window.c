/* The Transformer++'s window path (the standard prefill): B sequences
 * advanced by T tokens each, layer by layer over all B x T rows, for
 * evaluations that read only the NLL. Every projection is one GEMM of B x T
 * rows (the step's are GEMMs of B rows, as many times over as there are
 * tokens); the row-wise pieces are the step's own (tpp_cpu.h), RoPE at each
 * row's own position. Each row's k and v go to its sequence's cache, then
 * causal attention runs per (sequence, head, block of TPP_QUERY_BLOCK
 * queries) on the pool: the block's scores over the cache up to its last
 * position as one SGEMM, the causal mask and the step's softmax per row, and
 * the weighted values as one more SGEMM (the step's are two GEMVs per token).
 *
 * Windows whose rows pass the buffers' budget (TPP_WINDOW_BYTES, or
 * tpp_window_set_rows) run in pieces of T' tokens of every sequence, one
 * after another exactly as steps would: each piece's keys and values are in
 * the cache when the next reads them, and its last logits are carried. The
 * passes, logits and NLLs are made as every window path makes them
 * (engine/arch/window_pass.h); the last row's logits become `pending`, which
 * the next step reports. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/tpp/tpp_cpu.h"
#include "engine/arch/window_pass.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

/* the row buffers' budget: at the paper's shape (d 768, FFN 2816, 64 per
 * head) a row of a pass takes 9.5 KB, so 256 MB hold 28,000 rows; a piece
 * takes at least one token of every sequence whatever the budget */
#define TPP_WINDOW_BYTES (256L << 20)
/* The pieces around the attention (norms, projections, RoPE, the MLP, the
 * residual adds, the final norm) run on blocks of GS_WINDOW_ROW_BLOCK rows,
 * so only h, q, the attention's output and the rotations take a pass's
 * B x T' rows (2,368 floats a row at the paper's shape instead of 13,888):
 * pieces are then six times as long, and each pass rereads the caches (each
 * position's key and value rows of a head: 256 bytes every 36 KB) six times
 * less often. */
/* queries per attention block: the scores scratch is this many rows of the cache's length */
#define TPP_QUERY_BLOCK 64

static long budget_rows; /* tpp_window_set_rows; 0: TPP_WINDOW_BYTES' worth */

void tpp_window_set_rows(long rows) { budget_rows = rows > 0 ? rows : 0; }

struct tpp_window {
    gs_window_buffers b; /* the pass's B x T' rows, the blocks' */
    tpp_rows r;
};

void tpp_window_free(tpp_window *w) {
    if (!w) return;
    gs_window_buffers_free(&w->b);
    free(w);
}

/* a pass's row: h, q, att; cos, sin. A block's row: xn, k, v, out; u (gate | value), g */
static size_t row_floats(const gs_config *c) { return 3 * (size_t)c->d + (size_t)c->dk; }
static size_t block_row_floats(const gs_config *c) { return 4 * (size_t)c->d + 3 * (size_t)c->f; }

/* buffers for `rows` rows, kept from the last call when large enough */
static int reserve(tpp_cpu *e, long rows) {
    const gs_config *c = &e->m->cfg;
    if (!e->win && !(e->win = calloc(1, sizeof *e->win))) return gs_fail("out of memory for a Transformer++ window");
    tpp_window *w = e->win;
    size_t R = (size_t)rows, D = (size_t)c->d, half = (size_t)c->dk / 2, RB = GS_WINDOW_ROW_BLOCK;
    int made = gs_window_buffers_reserve(&w->b, rows, R * row_floats(c) + RB * block_row_floats(c), c->V, "Transformer++");
    if (made <= 0) return made;
    float *p = w->b.arena;
    float **pass[] = {&w->r.h, &w->r.q, &w->r.att};
    for (size_t i = 0; i < sizeof pass / sizeof *pass; i++) *pass[i] = p, p += R * D;
    w->r.cos = p, p += R * half;
    w->r.sin = p, p += R * half;
    float **block[] = {&w->r.xn, &w->r.k, &w->r.v, &w->r.out};
    for (size_t i = 0; i < sizeof block / sizeof *block; i++) *block[i] = p, p += RB * D;
    w->r.u = p, p += RB * 2 * (size_t)c->f;
    w->r.g = p;
    return 0;
}

typedef struct {
    tpp_cpu *e;
    int B, t0, n;      /* the pass: tokens [t0, t0 + n) of B sequences */
    int l;             /* the layer */
    int blocks, keys;  /* query blocks per sequence in the pass; the most keys a block reads */
    int out_of_memory; /* an attention task found no scratch */
} window_job;

/* (sequence, head, query block) triples [i0, i1): the block's causal
 * attention over its sequence's cache, the cache's positions 0 .. the
 * block's last (every row of the block masked to its own position) */
static void attend_range(void *ctx, long i0, long i1) {
    window_job *j = ctx;
    const tpp_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    const tpp_rows *r = &e->win->r;
    int d = c->d, H = c->H, Dh = c->dk, L = c->n_layers, n = j->n;
    float scale = 1.0f / sqrtf((float)Dh);
    float *S = malloc((size_t)TPP_QUERY_BLOCK * j->keys * sizeof *S);
    if (!S) { j->out_of_memory = 1; return; }
    for (long i = i0; i < i1; i++) {
        int blk = (int)(i % j->blocks), hd = (int)(i / j->blocks % H), b = (int)(i / j->blocks / H);
        int t0 = blk * TPP_QUERY_BLOCK, m = n - t0 < TPP_QUERY_BLOCK ? n - t0 : TPP_QUERY_BLOCK;
        int first = (int)(e->host->pos[b] + j->t0 + t0), keys = first + m; /* the block's first query's position */
        size_t row = (size_t)b * n + t0, head = (size_t)j->l * d + (size_t)hd * Dh;
        const float *K = e->a.cache[b].k + head, *Vc = e->a.cache[b].v + head;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, keys, Dh, scale, r->q + row * d + hd * Dh, d, K, L * d,
                    0.0f, S, keys);
        for (int q = 0; q < m; q++) { /* query q sees positions 0 .. first + q */
            float *p = S + (size_t)q * keys;
            softmax_rows(p, first + q + 1);
            memset(p + first + q + 1, 0, (size_t)(m - q - 1) * sizeof *p);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, Dh, keys, 1.0f, S, keys, Vc, L * d, 0.0f,
                    r->att + row * d + hd * Dh, d);
    }
    free(S);
}

/* the rows [r0, r0 + GS_WINDOW_ROW_BLOCK) as the step's pieces (tpp_cpu.h) take
 * them: the pass's buffers from row r0, a block's temporaries as they are */
static tpp_rows block_at(const tpp_cpu *e, long r0) {
    const gs_config *c = &e->m->cfg;
    tpp_rows b = e->win->r;
    float **const at[] = {&b.h, &b.q, &b.att, &b.cos, &b.sin};
    gs_window_offset(at, (const long[]){c->d, c->d, c->d, c->dk / 2, c->dk / 2}, 5, r0);
    return b;
}

static int layer(window_job *j, int l) {
    tpp_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    int d = c->d, L = c->n_layers, B = j->B, n = j->n, R = B * n;
    j->l = l;
    for (int r0 = 0; r0 < R; r0 += GS_WINDOW_ROW_BLOCK) {
        tpp_rows blk = block_at(e, r0);
        int rows = gs_window_block_len(R, r0);
        tpp_attn_project(e, &blk, l, rows);
        for (int i = 0; i < rows; i++) { /* row r0 + i: token t of sequence b, into its cache */
            int b = (r0 + i) / n, t = (r0 + i) % n;
            size_t at = ((size_t)(e->host->pos[b] + j->t0 + t) * L + l) * d;
            memcpy(e->a.cache[b].k + at, blk.k + (size_t)i * d, (size_t)d * sizeof(float));
            memcpy(e->a.cache[b].v + at, blk.v + (size_t)i * d, (size_t)d * sizeof(float));
        }
    }
    /* on the pool while the window owns the GEMMs, else on the caller (OpenBLAS's own threads), as the step's pairs */
    long items = (long)B * c->H * j->blocks;
    /* a few tasks per thread: each mallocs its block's scores (64 x the cache's length) */
    long per = items / (4L * gs_parallel_threads());
    gs_parallel_for(items, e->own_gemms ? (per > 1 ? per : 1) : items, attend_range, j);
    if (j->out_of_memory) return gs_fail("out of memory for the window's attention scores over %d positions", j->keys);
    for (int r0 = 0; r0 < R; r0 += GS_WINDOW_ROW_BLOCK) {
        tpp_rows blk = block_at(e, r0);
        int rows = gs_window_block_len(R, r0);
        tpp_linear(e, blk.out, blk.att, e->layer[l].W_o, rows, d, d);
        add_inplace(blk.h, blk.out, (long)rows * d);
        tpp_mlp(e, &blk, l, rows, 1);
        add_inplace(blk.h, blk.out, (long)rows * d);
    }
    return 0;
}

/* the tied head over rows of the last residual: the final norm into a
 * block's buffer, then the embedding's transpose */
static void tied_head(const void *ctx, float *logits, const float *h, int rows) {
    const tpp_cpu *e = ctx;
    rmsnorm_forward_pooled(e->win->r.xn, h, e->norm, rows, e->m->cfg.d);
    tpp_linear(e, logits, e->win->r.xn, e->E, rows, e->m->cfg.d, e->m->cfg.V);
}

/* one pass: tokens [t0, t0 + n) of every sequence */
static int pass(void *ctx, const gs_window_run *run) {
    window_job *j = ctx;
    tpp_cpu *e = j->e;
    tpp_window *w = e->win;
    const gs_config *c = &e->m->cfg;
    int B = run->B, n = run->n, D = c->d;
    j->B = B, j->t0 = run->t0, j->n = n;
    gs_window_embed(run, e->E, D, w->r.h);
    j->blocks = (n + TPP_QUERY_BLOCK - 1) / TPP_QUERY_BLOCK;
    j->keys = 0;
    for (int b = 0; b < B; b++)
        if (e->host->pos[b] + j->t0 + n > j->keys) j->keys = (int)(e->host->pos[b] + j->t0 + n);
    tpp_rope_tables(e, &w->r, B, n, j->t0);
    for (int l = 0; l < c->n_layers; l++)
        if (layer(j, l)) return -1;
    gs_window_report(run, w->r.h, D, c->V, e->a.pending, tied_head, e);
    return 0;
}

/* tokens per pass: the whole window when its rows fit the budget, else whole
 * query blocks of it, else (a budget under one block of every sequence) what
 * fits, at least one token */
int tpp_window_piece(const gs_config *c, int B, int T) {
    long rows = budget_rows ? budget_rows : TPP_WINDOW_BYTES / (long)(row_floats(c) * sizeof(float));
    long fit = rows / B;
    return fit >= T ? T : fit < TPP_QUERY_BLOCK ? (fit < 1 ? 1 : (int)fit) : (int)(fit - fit % TPP_QUERY_BLOCK);
}

int tpp_cpu_window(void *impl, const int32_t *tokens, int B, int T, float *nll) {
    tpp_cpu *e = impl;
    const gs_config *c = &e->m->cfg;
    /* every position the window writes has room in its sequence's cache (and the step's weights row its length) */
    for (int b = 0; b < B; b++)
        if (gs_kv_reserve(&e->a.cache[b], b, e->host->pos[b] + T - 1, (size_t)c->n_layers * c->d, &e->a.scores,
                          &e->a.scores_cap))
            return -1;
    int piece = tpp_window_piece(c, B, T);
    if (reserve(e, (long)B * piece)) return -1;
    window_job j = {e, B, 0, 0, 0, 0, 0, 0};
    gs_window_run run = {tokens, nll, B, T, piece, e->host->pos, &e->win->b.io, pass, &j, 0, 0};
    return gs_window_run_passes(&run, &e->own_gemms);
}
