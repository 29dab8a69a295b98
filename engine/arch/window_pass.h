/* What every family's window path (gs_engine_window) does alike around its
 * layers: B sequences (rows of T in the caller's tokens and NLLs) run in
 * passes of `piece` tokens of every sequence, one after another as steps
 * would, with the GEMMs on the engine's pool; each pass gathers its tokens
 * and their embeddings, and once the family has made the final norm, each
 * sequence's first token of the pass is predicted by the logits carried in
 * (as the step reads its carry or pending, NaN at a sequence's position 0),
 * row (b, t) predicts token t + 1, and each sequence's last row becomes the
 * carry. The logits are made GS_WINDOW_LM_BLOCK rows at a time (B x T x V
 * floats at once would be gigabytes). Used by engine/arch/gdn/gdn_window.c
 * and engine/arch/tpp/tpp_window.c. */
#ifndef GS_ENGINE_ARCH_WINDOW_PASS_H
#define GS_ENGINE_ARCH_WINDOW_PASS_H

#include <stddef.h>
#include <stdint.h>

#define GS_WINDOW_LM_BLOCK 256

/* the buffers every window path needs beside its family's rows */
typedef struct {
    long rows;                     /* tokens tok holds */
    int32_t *tok;                  /* the pass's tokens: B rows of n */
    float *logits, *nll, *entropy; /* GS_WINDOW_LM_BLOCK rows of V, and one each */
    int32_t *targets, *top1;       /* GS_WINDOW_LM_BLOCK each */
} gs_window_rows;

/* room for `rows` tokens, kept from the last call when large enough; 0, or -1 with gs_error() */
int gs_window_rows_reserve(gs_window_rows *w, long rows, int V);
void gs_window_rows_free(gs_window_rows *w);

/* A window path's buffers: the rows above and one arena of floats that the
 * family carves into its own rows (a pass's B x T' and a block's). */
typedef struct {
    long rows; /* tokens they hold */
    gs_window_rows io;
    float *arena;
} gs_window_buffers;

/* room for `rows` tokens and an arena of `floats`: 0 when the last call's
 * are large enough (the family's carving stands), 1 when new (carve them),
 * -1 with gs_error() ("out of memory for a FAMILY window of N rows") */
int gs_window_buffers_reserve(gs_window_buffers *b, long rows, size_t floats, int V, const char *family);
void gs_window_buffers_free(gs_window_buffers *b);

/* The pieces of a layer that need no whole pass (norms, projections, MLPs)
 * run on blocks of this many rows, so only what the family's sequence-wide
 * work reads (GDN's convolution and delta rule, the Transformer's attention)
 * takes a pass's rows, and pieces are longer within the same budget.
 * Measured on GDN's window at the paper's shape: blocks of 1024 rows as
 * fast as whole passes, of 256 about 6% slower (the column-split GEMMs). */
#define GS_WINDOW_ROW_BLOCK 1024
_Static_assert(GS_WINDOW_LM_BLOCK <= GS_WINDOW_ROW_BLOCK, "a head's block takes its final norm in a row block's buffer");

/* the rows of the block starting at r0 of R */
static inline int gs_window_block_len(long R, long r0) {
    return R - r0 < GS_WINDOW_ROW_BLOCK ? (int)(R - r0) : GS_WINDOW_ROW_BLOCK;
}

/* the n buffers at[i] (rows of width[i] floats) moved to their row r0: a
 * block's view of a pass's rows */
static inline void gs_window_offset(float **const at[], const long width[], int n, long r0) {
    for (int i = 0; i < n; i++) *at[i] += r0 * width[i];
}

typedef struct gs_window_run gs_window_run;
struct gs_window_run {
    const int32_t *tokens; /* the caller's: B rows of T */
    float *nll;            /* the caller's: B rows of T */
    int B, T, piece;       /* tokens per pass */
    const int64_t *pos;    /* each sequence's position at the window's start */
    gs_window_rows *w;
    /* the family's layers over the pass (w->tok filled), ending with gs_window_report; 0 or -1 */
    int (*pass)(void *ctx, const gs_window_run *run);
    void *ctx;
    int t0, n; /* the pass being run: tokens [t0, t0 + n) of every sequence */
};

/* every pass in turn, the GEMMs on the pool while *own_gemms says so
 * (gs_gemm_pooled_step over B x piece rows); 0, or the first pass's -1 */
int gs_window_run_passes(gs_window_run *run, int *own_gemms);
/* h = E[tok] over the pass's B x n rows of D */
void gs_window_embed(const gs_window_run *run, const float *E, int D, float *h);
/* the pass's NLLs into the caller's nll from x (B x n rows of D: the final
 * norm's output, or the last residual where head applies the norm itself,
 * as GDN's does per block) through head (logits[rows x V] = the head of
 * x[rows x D], rows <= GS_WINDOW_LM_BLOCK); carry: B rows of V, the logits
 * carried in, then each sequence's last row's */
void gs_window_report(const gs_window_run *run, const float *x, int D, int V, float *carry,
                      void (*head)(const void *ctx, float *logits, const float *x, int rows), const void *head_ctx);

#endif
