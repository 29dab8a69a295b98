/* What every family's window path (gpn_engine_window) does alike around its
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
