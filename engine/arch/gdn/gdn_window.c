/* GDN's window path: B sequences advanced by T tokens each, layer by layer
 * over all B x T rows, for evaluations that read only the NLL. Every
 * projection is one GEMM of B x T rows (the step's are GEMMs of B rows, as
 * many times over as there are tokens), the short convolution runs along
 * each sequence's time, and the delta rule runs chunkwise per (sequence,
 * head) (gdn_chunk.h): the state is read and written once per GDN_CHUNK
 * tokens where the step sweeps it twice per token. The row-wise pieces are
 * the step's own (gdn_cpu.h). Windows whose rows pass GDN_WINDOW_BYTES
 * run in pieces, the carried state passing from one to the next, so the
 * buffers stay bounded; the passes, the logits and the NLLs are made as
 * every window path makes them (engine/arch/window_pass.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/gdn/gdn_chunk.h"
#include "engine/arch/gdn/gdn_cpu.h"
#include "engine/arch/window_pass.h"
#include "engine/cpu/kernel_math.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/parallel_gemm.h"

/* the row buffers' budget: at the paper's shape a row of a pass takes about
 * 27 KB, so 256 MB hold 9,600 rows; a pass takes at least one chunk of every
 * sequence whatever the budget (450 MB at batch 256 there) */
#define GDN_WINDOW_BYTES (256L << 20)
static long budget_rows; /* gdn_window_set_rows; 0: GDN_WINDOW_BYTES' worth */

void gdn_window_set_rows(long rows) { budget_rows = rows > 0 ? rows : 0; }

/* The pieces around the delta rule (the projections, norms, gates, SwiGLU,
 * the residual adds, the final norm) run on blocks of GS_WINDOW_ROW_BLOCK
 * rows, so only h, q | k | v, a, beta, the gate and o (what the convolution
 * and the delta rule need whole) take a pass's B x T rows, and the block's
 * temporaries (x, attn_out, mlp_out, the MLP's two, final) a block's: a
 * pass's row is 6,924 floats at the paper's shape instead of 13,068. */

struct gdn_window {
    gs_window_buffers b; /* the pass's B x T' rows, the blocks' */
    gdn_rows r; /* h, qkv, a, beta, gate and o for the pass's rows; the rest a block's */
    float *convT; /* this layer's conv weights by tap: convT[j * C + ch] */
};

void gdn_window_free(gdn_window *w) {
    if (!w) return;
    gs_window_buffers_free(&w->b);
    free(w);
}

/* floats per row of the pass (h, q | k | v, a, beta, gate, o) and per row of a block */
static size_t row_floats(const gs_config *c) {
    size_t K = (size_t)c->H * c->dk, Vd = (size_t)c->H * c->dv;
    return (size_t)c->d + (2 * K + Vd) + 2 * (size_t)c->H + 2 * Vd;
}

static size_t block_row_floats(const gdn_cpu *e) {
    const gs_config *c = &e->m->cfg;
    return 4 * (size_t)c->d + 2 * (size_t)c->f;
}

/* buffers for `rows` rows, kept from the last call when large enough */
static int reserve(gdn_cpu *e, long rows) {
    const gs_config *c = &e->m->cfg;
    if (!e->win && !(e->win = calloc(1, sizeof *e->win))) return gs_fail("out of memory for a Gated DeltaNet window");
    gdn_window *w = e->win;
    size_t R = (size_t)rows, D = (size_t)c->d, RB = GS_WINDOW_ROW_BLOCK;
    size_t convT = (size_t)e->C * (size_t)c->conv;
    int made = gs_window_buffers_reserve(&w->b, rows, R * row_floats(c) + RB * block_row_floats(e) + convT, c->V,
                                         "Gated DeltaNet");
    if (made <= 0) return made;
    float *p = w->b.arena;
    w->r.h = p, p += R * D;
    w->r.qkv = p, p += R * e->C;
    w->r.a = p, p += R * c->H;
    w->r.beta = p, p += R * c->H;
    w->r.gate = p, p += R * e->Vd;
    w->r.o = p, p += R * e->Vd;
    float **block[] = {&w->r.x, &w->r.attn_out, &w->r.mlp_out, &w->r.final};
    for (size_t i = 0; i < sizeof block / sizeof *block; i++) *block[i] = p, p += RB * D;
    w->r.ffn_g = p, p += RB * c->f;
    w->r.ffn_u = p, p += RB * c->f;
    w->convT = p;
    return 0;
}

typedef struct {
    gdn_cpu *e;
    int B, n;          /* the pass's sequences and tokens of each */
    int l;             /* the layer */
    int out_of_memory; /* a convolution or delta-rule task found no scratch */
} window_job;

/* the rows [r0, r0 + GS_WINDOW_ROW_BLOCK) as the step's pieces (gdn_cpu.h) take
 * them: the pass's buffers from row r0, a block's temporaries as they are */
static gdn_rows block_at(const gdn_cpu *e, long r0) {
    const gs_config *c = &e->m->cfg;
    gdn_rows b = e->win->r;
    float **const at[] = {&b.h, &b.qkv, &b.a, &b.beta, &b.gate, &b.o};
    const long width[] = {c->d, e->C, c->H, c->H, e->Vd, e->Vd};
    gs_window_offset(at, width, 6, r0);
    return b;
}

/* layer l's q | k | v conv weights (the step's layout, channel-major) by tap, for loops along the channels */
static void transpose_conv(gdn_cpu *e, int l) {
    const float *const *w = e->L[l].w;
    const float *cw[3] = {w[GDN_QCONV], w[GDN_KCONV], w[GDN_VCONV]};
    int off[3] = {0, e->K, 2 * e->K}, Kc = e->m->cfg.conv, C = e->C;
    for (int ch = 0; ch < C; ch++) {
        int part = ch >= off[2] ? 2 : ch >= off[1] ? 1 : 0;
        for (int j = 0; j < Kc; j++) e->win->convT[(size_t)j * C + ch] = cw[part][(size_t)(ch - off[part]) * Kc + j];
    }
}

/* The step's convolution + SiLU (gdn_conv_silu) over n rows of one sequence
 * at once, each output summed in the step's order; from the last row back,
 * so the earlier rows are still inputs when a row is overwritten. `past`
 * (conv-1 rows, oldest first) then holds the last inputs, as n steps leave it. */
static void conv_sequence(float *rows, int n, float *past, const float *wT, int C, int Kc, float *kept) {
    int keep = Kc - 1;
    for (int j = 0; j < keep; j++) {
        int src = n - keep + j; /* the input that becomes kept row j: a row of this pass or of the old past */
        memcpy(kept + (size_t)j * C, src >= 0 ? rows + (size_t)src * C : past + (size_t)(keep + src) * C,
               (size_t)C * sizeof(float));
    }
    for (int t = n - 1; t >= 0; t--) {
        float *y = rows + (size_t)t * C;
        const float *wl = wT + (size_t)keep * C;
        for (int ch = 0; ch < C; ch++) y[ch] *= wl[ch];
        for (int j = 0; j < keep; j++) {
            int s = t - keep + j;
            const float *x = s >= 0 ? rows + (size_t)s * C : past + (size_t)(keep + s) * C, *wj = wT + (size_t)j * C;
            for (int ch = 0; ch < C; ch++) y[ch] += wj[ch] * x[ch];
        }
        silu_mul(y, y, NULL, C);
    }
    memcpy(past, kept, (size_t)keep * C * sizeof(float));
}

/* sequences [b0, b1): the convolution along the pass's n tokens, then the norms of q and k */
static void conv_range(void *ctx, long b0, long b1) {
    window_job *j = ctx;
    gdn_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    int keep = c->conv - 1;
    float *kept = keep > 0 ? malloc((size_t)keep * e->C * sizeof *kept) : NULL;
    if (keep > 0 && !kept) { j->out_of_memory = 1; return; }
    for (long b = b0; b < b1; b++) {
        float *rows = e->win->r.qkv + (size_t)b * j->n * e->C;
        conv_sequence(rows, j->n, gdn_conv_of(e, j->l, (int)b), e->win->convT, e->C, c->conv, kept);
        for (int t = 0; t < j->n; t++) {
            gdn_l2n_heads(rows + (size_t)t * e->C, c->H, c->dk, 1.0f / sqrtf((float)c->dk));
            gdn_l2n_heads(rows + (size_t)t * e->C + e->K, c->H, c->dk, 1.0f);
        }
    }
    free(kept);
}

/* (sequence, head) pairs [i0, i1): the chunked delta rule over the pass's tokens */
static void delta_range(void *ctx, long i0, long i1) {
    window_job *j = ctx;
    gdn_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    const gdn_rows *r = &e->win->r;
    int H = c->H, dk = c->dk, dv = c->dv, n = j->n;
    float *scratch = malloc(gdn_chunk_scratch_floats(dk, dv) * sizeof *scratch);
    if (!scratch) { j->out_of_memory = 1; return; }
    for (long i = i0; i < i1; i++) {
        long b = i / H, hd = i % H;
        const float *rows = r->qkv + (size_t)b * n * e->C;
        gdn_chunk_io io = {rows + hd * dk, rows + e->K + hd * dk, rows + 2 * e->K + hd * dv,
                           r->a + (size_t)b * n * H + hd, r->beta + (size_t)b * n * H + hd, e->C, e->C, e->C, H,
                           r->o + (size_t)b * n * e->Vd + hd * dv, e->Vd};
        gdn_chunk_run(gdn_S_of(e, j->l) + (size_t)i * dk * dv, &io, n, dk, dv, scratch);
    }
    free(scratch);
}

static int layer(window_job *j, int l) {
    gdn_cpu *e = j->e;
    const gs_config *c = &e->m->cfg;
    const gdn_rows *r = &e->win->r;
    const float *const *w = e->L[l].w;
    long R = (long)j->B * j->n;
    int H = c->H, D = c->d;
    j->l = l;
    for (long r0 = 0; r0 < R; r0 += GS_WINDOW_ROW_BLOCK) {
        gdn_rows b = block_at(e, r0);
        gdn_attn_project(e, &b, l, gs_window_block_len(R, r0));
    }
    transpose_conv(e, l);
    gs_parallel_for(j->B, 1, conv_range, j);
    /* the step's sigmoid and decay, the decay kept as its log g (alpha = exp(g)) for the chunks' sums */
    for (long i = 0; i < R * H; i++) {
        int hd = (int)(i % H);
        r->beta[i] = gs_sigmoid(r->beta[i]);
        r->a[i] = -expf(w[GDN_A_LOG][hd]) * gs_softplus(r->a[i] + w[GDN_DT_BIAS][hd]);
    }
    /* a few tasks per thread, not one per pair: each task mallocs a third of
     * a MB of scratch and is one hand-off of the pool */
    long pairs = (long)j->B * H, per = pairs / (4L * gs_parallel_threads());
    gs_parallel_for(pairs, per > 1 ? per : 1, delta_range, j);
    if (j->out_of_memory) return gs_fail("out of memory for the window's scratch");
    for (long r0 = 0; r0 < R; r0 += GS_WINDOW_ROW_BLOCK) {
        gdn_rows b = block_at(e, r0);
        int n = gs_window_block_len(R, r0);
        gdn_attn_output(e, &b, l, n);
        add_inplace(b.h, b.attn_out, (long)n * D);
        gdn_mlp(e, &b, l, n);
        add_inplace(b.h, b.mlp_out, (long)n * D);
    }
    return 0;
}

/* the head over rows of the last residual: the final norm into a block's
 * buffer, then lm_head (gs_window_report's blocks fit one: the assert above) */
static void lm_head(const void *ctx, float *logits, const float *h, int rows) {
    const gdn_cpu *e = ctx;
    const gs_config *c = &e->m->cfg;
    gdn_rms_rows(e->win->r.final, h, e->norm_w, rows, c->d, c->norm_eps);
    gdn_proj(e, logits, e->win->r.final, e->lm_head, rows, c->d, c->V);
}

/* one pass: tokens [t0, t0 + n) of every sequence */
static int pass(void *ctx, const gs_window_run *run) {
    window_job *j = ctx;
    gdn_cpu *e = j->e;
    gdn_window *w = e->win;
    const gs_config *c = &e->m->cfg;
    int D = c->d;
    j->B = run->B, j->n = run->n;
    gs_window_embed(run, e->E, D, w->r.h);
    for (int l = 0; l < c->n_layers; l++)
        if (layer(j, l)) return -1;
    gs_window_report(run, w->r.h, D, c->V, e->carry, lm_head, e);
    return 0;
}

/* tokens per pass: the whole window when its rows fit the budget, else whole
 * chunks of it, at least one chunk (or the whole window when shorter) */
int gdn_window_piece(const gs_config *c, int B, int T) {
    long rows = budget_rows ? budget_rows : GDN_WINDOW_BYTES / (long)(row_floats(c) * sizeof(float));
    long fit = rows / B;
    return fit >= T ? T : fit < GDN_CHUNK ? (T < GDN_CHUNK ? T : GDN_CHUNK) : (int)(fit - fit % GDN_CHUNK);
}

int gdn_cpu_window(void *impl, const int32_t *tokens, int B, int T, float *nll) {
    gdn_cpu *e = impl;
    /* tokens per pass: the whole window when its rows fit the budget, else whole chunks of it */
    int piece = gdn_window_piece(&e->m->cfg, B, T);
    if (reserve(e, (long)B * piece)) return -1;
    window_job j = {e, B, 0, 0, 0};
    gs_window_run run = {tokens, nll, B, T, piece, e->host->pos, &e->win->b.io, pass, &j, 0, 0};
    return gs_window_run_passes(&run, &e->own_gemms);
}
