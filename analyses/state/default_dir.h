/* The mean direction and its default-token distribution (analyses.md
 * section 2). Needs the geometry result (s_bar, norms, the top singular
 * vector) and makes one more pass over the states for the batch means and the
 * running-mean emergence curve. The decode is the model's own: rms with
 * decode_norm_w, @ decode_proj_k (+ decode_bias), @ embedding^T, in float32
 * exactly as the engine computes logits. */
#ifndef GS_ANALYSES_DEFAULT_DIR_H
#define GS_ANALYSES_DEFAULT_DIR_H

#include <stdint.h>

#include "analyses/documents.h"
#include "analyses/state/geometry.h"
#include "analyses/states.h"
#include "engine/model.h"

#define GS_TOPK 10

typedef struct {
    int n_batches; /* 8 */
    uint64_t seed; /* the random batches of rows (1) */
    /* unigram counts of the model's training corpus (V values), when known: the paper's Spearman is
     * against these; NULL: not measured */
    const double *train_unigram;
    int64_t train_unigram_len;
    int boot; /* resamples of the bootstrap over windows behind the intervals (200); 0: none */
    /* the windows' documents (gs_doc_map_read): the 8-batch cosine over batches that share no document
     * beside the consecutive one; NULL: unknown (doc_note says so) */
    const gs_doc_map *docs;
} gs_default_opts;

void gs_default_opts_default(gs_default_opts *o);

typedef struct {
    int d;
    int64_t n, n_windows;
    double mean_norm;   /* ||s_bar|| */
    double norm_ratio;  /* ||s_bar|| / mean ||s|| */
    /* cross-batch stability: cosines between the means of disjoint batches */
    int n_batches;
    int batches_by_window;  /* 1: whole windows per batch; 0: fewer windows than batches, rows split in order */
    int stability_valid;    /* 0 when there are fewer states than batches */
    int n_pairs;
    double *batch_cos;      /* n_pairs, (0,1), (0,2), ... */
    double stab_mean, stab_std;  /* std over the pairs, with n_pairs - 1 */
    /* 95% bootstrap intervals over windows (NaN: none; interval_note says why): the 8-batch cosine's
     * resamples each batch's own windows (a batch keeps its windows' count and place), the norm ratio's and
     * the top-SV cosine's all windows (gs_resample_counts, as compare's other intervals; one draw for both);
     * they need 2 windows a batch (16). The top-SV cosine's also needs each window's d x d second moment
     * kept (top_sv_note says when it is not) */
    double stab_lo, stab_hi, norm_ratio_lo, norm_ratio_hi, top_sv_lo, top_sv_hi;
    int boot;
    char interval_note[96];
    char top_sv_note[96];  /* why the top-SV cosine has no interval when the others have one; "" otherwise */
    /* the 8-batch cosine over batches that share no document (issue 39.2: consecutive windows are often
     * one document, whose own offset enters one batch and not the others): the i-th document of the pass's
     * windows (window order) goes to batch i mod 8, so neighbouring documents fall in different batches; its
     * interval resamples each batch's own documents. It needs 2 documents a batch (16): then it decides the
     * 8-batch test (doc_valid), else the consecutive batches do; doc_note says which, and why, in one line */
    int doc_valid;
    int64_t n_docs;         /* documents among the pass's windows (0: unknown) */
    double doc_mean, doc_lo, doc_hi;
    char doc_note[200];
    /* the same over 8 batches of rows assigned at random (seeded): no window is split off from the
     * rest, so this shows how much of the spread above is between windows */
    int random_valid;
    double rand_mean, rand_std;
    /* default tokens through the model's decode (has_decode = 0 without a model) */
    int has_decode, V;
    float *logits_bar;      /* V */
    int top[GS_TOPK];
    int has_unigram, spearman_defined;
    double spearman;        /* logits_bar vs the recorded corpus's unigram counts, average ranks for ties */
    int has_train_unigram, spearman_train_defined;
    double spearman_train;  /* the same against the training corpus's counts (the paper's comparison) */
    float *logits_emb;      /* V: E e_bar */
    int top_emb[GS_TOPK];
    int emb_overlap;        /* |top ∩ top_emb| */
    double emb_cos;         /* cos(logits_emb, logits_bar) */
    /* emergence: mean over windows of cos(m_t, s_bar), m_t = mean of a window's first t states */
    int64_t emerg_len;
    double *emergence;      /* emerg_len: entry t-1 for t states */
    int64_t *emergence_n;   /* windows contributing to each entry */
    int has_t10, has_t100;
    double emerg_t10, emerg_t100;
    /* alignment with the first right singular vector of the uncentered states (the paper's test): >= 0, as
     * the vector's sign is chosen towards s_bar; its interval is top_sv_lo, top_sv_hi above */
    double top_sv_cos;
    /* and with the centered PC1; ||s_bar||^2 / lambda_1 > 1 makes the uncentered test pass almost by construction */
    double pc1_cos, mean_norm2_over_lambda1;
} gs_default_dir;

/* The pass over the states as sums (docs/scale.md: they add up over the
 * shards of an MPI job): per batch of whole windows and per random batch of
 * rows, the sum of the states and their count; per step t of a window, the
 * sum over windows of cos(m_t, s_bar) and how many windows reach t. */
typedef struct {
    int d, n_batches;
    int64_t n, n_windows;      /* states and windows added */
    double *bsum, *rsum;       /* n_batches x d */
    int64_t *bcount, *rcount;  /* n_batches */
    int64_t cap;               /* the longest window added */
    double *emergence;         /* cap */
    int64_t *emergence_n;      /* cap */
    /* per window of the whole pass (window w at row w), for the bootstrap; NULL when it cannot have one */
    int64_t win_total;
    double *wsum, *wnorm;      /* win_total x d sums of states, win_total sums of their norms */
    double *wgram;             /* win_total x d x d: each window's sum of x x^T (upper triangle), for the top-SV
                                * cosine's interval; NULL when too large to keep (more than 2^24 doubles) */
    double *xbuf;              /* a window's states in double, for the sums above (cap x d) */
    int64_t *wid;              /* win_total: each window's id, for its document (with wsum) */
} gs_default_sums;

/* n_windows: the whole pass's (the geometry's) */
int gs_default_sums_init(gs_default_sums *s, int d, int64_t n_windows, const gs_default_opts *o);
void gs_default_sums_free(gs_default_sums *s);
/* Adds src's states, whose first window is window win0 of the whole pass and
 * first state its state row0 (0, 0 for one pass over everything); g is the
 * whole pass's geometry (its mean, n and n_windows are all that is read). */
int gs_default_dir_accumulate(gs_state_source *src, const gs_geometry *g, const gs_default_opts *o, int64_t win0,
                              int64_t row0, gs_default_sums *s);
/* From the sums of the whole pass; frees s (its emergence arrays pass to r). */
int gs_default_dir_finish(gs_default_sums *s, const gs_geometry *g, const gs_model *m, const double *unigram,
                          int64_t unigram_len, const gs_default_opts *o, gs_default_dir *r);

/* m may be NULL (no decode); unigram (V counts) may be NULL. */
int gs_default_dir_run(gs_state_source *src, const gs_geometry *g, const gs_model *m, const double *unigram,
                       int64_t unigram_len, const gs_default_opts *o, gs_default_dir *out);
void gs_default_dir_free(gs_default_dir *r);

/* logits = decode(s) @ E^T for one state (float32, the engine's ops) */
int gs_decode_logits(const gs_model *m, const double *s, float *logits);

#endif
