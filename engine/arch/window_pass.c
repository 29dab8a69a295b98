/* The window paths' shared passes, gathers and NLLs (window_pass.h). */
#include "engine/arch/window_pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/cpu/ops.h"
#include "engine/cpu/parallel_gemm.h"

void gs_window_rows_free(gs_window_rows *w) {
    free(w->tok);
    free(w->logits);
    free(w->targets);
    free(w->top1);
    memset(w, 0, sizeof *w);
}

int gs_window_rows_reserve(gs_window_rows *w, long rows, int V) {
    if (w->rows >= rows) return 0;
    gs_window_rows_free(w);
    size_t S = GS_WINDOW_LM_BLOCK;
    w->tok = malloc((size_t)rows * sizeof *w->tok);
    w->logits = malloc((S * (size_t)V + 2 * S) * sizeof *w->logits);
    w->targets = malloc(S * sizeof *w->targets);
    w->top1 = malloc(S * sizeof *w->top1);
    if (!w->tok || !w->logits || !w->targets || !w->top1) {
        gs_window_rows_free(w);
        return gs_fail("out of memory for a window of %ld tokens", rows);
    }
    w->nll = w->logits + S * (size_t)V;
    w->entropy = w->nll + S;
    w->rows = rows;
    return 0;
}

void gs_window_buffers_free(gs_window_buffers *b) {
    free(b->arena);
    gs_window_rows_free(&b->io);
    memset(b, 0, sizeof *b);
}

int gs_window_buffers_reserve(gs_window_buffers *b, long rows, size_t floats, int V, const char *family) {
    if (b->arena && b->rows >= rows) return 0;
    gs_window_buffers_free(b);
    b->arena = malloc(floats * sizeof(float));
    if (!b->arena || gs_window_rows_reserve(&b->io, rows, V)) {
        gs_window_buffers_free(b);
        return gs_fail("out of memory for a %s window of %ld rows", family, rows);
    }
    b->rows = rows;
    return 1;
}

static int passes(void *ctx, int rows) {
    gs_window_run *run = ctx;
    (void)rows;
    for (run->t0 = 0; run->t0 < run->T; run->t0 += run->piece) {
        run->n = run->T - run->t0 < run->piece ? run->T - run->t0 : run->piece;
        for (int b = 0; b < run->B; b++)
            memcpy(run->w->tok + (size_t)b * run->n, run->tokens + (size_t)b * run->T + run->t0,
                   (size_t)run->n * sizeof *run->tokens);
        if (run->pass(run->ctx, run)) return -1;
    }
    return 0;
}

int gs_window_run_passes(gs_window_run *run, int *own_gemms) {
    long rows = (long)run->B * run->piece;
    return gs_gemm_pooled_step(rows > 1 << 30 ? 1 << 30 : (int)rows, own_gemms, passes, run);
}

void gs_window_embed(const gs_window_run *run, const float *E, int D, float *h) {
    for (long i = 0; i < (long)run->B * run->n; i++)
        memcpy(h + i * D, E + (size_t)run->w->tok[i] * D, (size_t)D * sizeof(float));
}

/* the NLL of nb rows of logits against w->targets, into the caller's nll at the given offsets (skipped where < 0) */
static void scatter_nll(const gs_window_run *run, const float *logits, int nb, int V, const long *at) {
    const gs_window_rows *w = run->w;
    logits_stats_pooled(logits, w->targets, nb, V, w->nll, w->entropy, w->top1);
    for (int i = 0; i < nb; i++)
        if (at[i] >= 0) run->nll[at[i]] = w->nll[i];
}

void gs_window_report(const gs_window_run *run, const float *x, int D, int V, float *carry,
                      void (*head)(const void *ctx, float *logits, const float *x, int rows), const void *head_ctx) {
    const gs_window_rows *w = run->w;
    int B = run->B, n = run->n, blk = GS_WINDOW_LM_BLOCK;
    long R = (long)B * n, at[GS_WINDOW_LM_BLOCK];
    /* the pass's first token of each sequence, from the carried logits */
    for (int b0 = 0; b0 < B; b0 += blk) {
        int nb = B - b0 < blk ? B - b0 : blk;
        for (int i = 0; i < nb; i++) {
            int b = b0 + i;
            w->targets[i] = w->tok[(size_t)b * n];
            at[i] = (long)b * run->T + run->t0;
            if (run->pos[b] + run->t0 == 0) run->nll[at[i]] = NAN, at[i] = -1;
        }
        scatter_nll(run, carry + (size_t)b0 * V, nb, V, at);
    }
    /* row (b, t) predicts token t + 1 of sequence b; the last row of each sequence becomes its carry */
    for (long r0 = 0; r0 < R; r0 += blk) {
        int nb = R - r0 < blk ? (int)(R - r0) : blk;
        head(head_ctx, w->logits, x + r0 * D, nb);
        for (int i = 0; i < nb; i++) {
            long row = r0 + i, b = row / n, t = row % n;
            if (t + 1 < n) {
                w->targets[i] = w->tok[row + 1];
                at[i] = b * run->T + run->t0 + t + 1;
            } else {
                memcpy(carry + b * V, w->logits + (size_t)i * V, (size_t)V * sizeof(float));
                w->targets[i] = 0, at[i] = -1;
            }
        }
        scatter_nll(run, w->logits, nb, V, at);
    }
}
