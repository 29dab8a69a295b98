/* Probe horizon (analyses.md section 4): how far back a state still holds the
 * identity of a token, measured with ridge probes.
 *
 * Positions follow the engine: the state at position t has read tokens
 * x_0 .. x_{t-1}, so lag k = 1 is the token read last (t - 1).
 *
 * For each lag k of the grid: a ridge regression (with intercept, i.e. on
 * centered states and centered targets) from the state s_t to the embedding
 * row E[x_{t-k}], fitted on the training windows at every position t >= k;
 * held-out windows are decoded to the embedding row nearest in cosine and
 * scored by top-1 accuracy. Documents go to training or held-out as a whole
 * (by a seeded hash of the document's first window id, so the split does not
 * depend on the order of the stream): windows cut from one document share
 * its text, and a split by window lets the probe learn held-out text (on the
 * demo: lag-1 accuracy 0.92 and horizon 16 by window, 0.73 and 6 without a
 * shared document). Documents are found from BOS/EOS (analyses/documents.h);
 * without them, or with a single document, windows are split and
 * by_document says so. Baseline: the frequency of the most frequent token
 * among the same held-out targets (the best any constant guess can do there).
 *
 * Rule: lag k passes when acc_k - b_k > z * se_k (z = 2) and acc_k > b_k,
 * where se_k is dependence-aware: the cluster-robust (CR2) standard error of
 * acc_k - b_k with blocks of `block` consecutive positions of a held-out
 * window as the units (the analytic counterpart of a block bootstrap;
 * positions next to each other share most of what the state has read), never
 * below the binomial sqrt(b(1-b)/n), which assumes independent positions;
 * with several splits, se_k = sqrt(block se^2 + sd over splits of
 * (acc - b)^2): the probe's own variance and the split's. The reported
 * numbers are the first split's (seed); each split's own horizon gives the
 * spread (min, median, max). The probe horizon is
 * the largest grid lag before the first lag that fails; 0 when lag 1 fails.
 * Right-censored when no lag fails (then it is the last lag) or when the run
 * ends at a lag without enough positions to measure. */
#ifndef GS_ANALYSES_PROBE_H
#define GS_ANALYSES_PROBE_H

#include <stdint.h>

#include "analyses/states.h"
#include "store/store.h"

/* The token sequences of the windows: window id[i] holds
 * tokens[start[i] .. start[i+1]) at positions 0, 1, ...; a state at
 * position t needs tokens up to t - 1. */
typedef struct {
    int64_t n_windows;
    const int64_t *window;
    const int64_t *start;
    const int32_t *tokens;
} gs_tokens;

/* A run's token rows, compacted per window (each cut at its first missing
 * token): run_probe.c reads them for the probe. */
typedef struct {
    gs_tokens t;
    int64_t *win, *start;
    int32_t *tok;
} gs_probe_tokens;
int gs_probe_read_tokens(store *st, int64_t run, gs_probe_tokens *o);
void gs_probe_tokens_free(gs_probe_tokens *o);

typedef struct {
    int max_lag;       /* last grid lag (256); grid 1 2 3 4 6 8 12 16 24 ... (x2 and x1.5 steps) */
    double test_frac;  /* share of windows held out (0.2; at least one window each side) */
    double ridge;      /* lambda = ridge * trace(centered Gram) / d (1e-2) */
    int64_t max_test;  /* held-out positions scored per lag, evenly subsampled (2048; 0: all) */
    double z;          /* standard errors above baseline (2) */
    int block;         /* positions per block of the standard error (64) */
    int32_t bos, eos;  /* document boundary tokens, -1: none known (split by window) */
    int splits;        /* splits (seeds seed, seed+1, ...; 5): the horizon's spread, and the
                          variance over splits added to the rule's standard error */
    uint64_t seed;
} gs_probe_opts;

void gs_probe_opts_default(gs_probe_opts *o);

typedef struct {
    int n_lags;
    int *lags;
    double *acc, *baseline, *se;   /* n_lags; se: the block standard error the rule uses */
    double *se_binomial;           /* n_lags: sqrt(b(1-b)/n), for comparison */
    double *se_block;              /* n_lags: the block standard error of this split */
    double *sd_splits;             /* n_lags: sd of acc - b over the splits (NaN with one) */
    int64_t *n_train, *n_test;     /* positions used */
    int *majority;                 /* held-out majority token per lag */
    int *measured, *pass;
    int64_t n_train_windows, n_test_windows;
    int by_document;               /* 1: split by document; 0: by window (no boundaries, or one document) */
    int64_t n_train_docs, n_test_docs;
    double z;
    int horizon;                   /* largest passing lag before the first failure; 0 none */
    int n_splits, split_horizon[64];   /* each split's own horizon (block SE only) */
    int horizon_min, horizon_median, horizon_max;
    int censored;
    char rule[400];
} gs_probe;

/* E: the embedding (V x e, float32, e.g. the model's). */
int gs_probe_run(const gs_states *s, const gs_tokens *tok, const float *E, int V, int e, const gs_probe_opts *o,
                 gs_probe *p);
void gs_probe_free(gs_probe *p);

/* The default grid: 1 2 3 4 6 8 12 16 ... up to max_lag (included). */
int *gs_probe_lags(int max_lag, int *n_out);

/* ---- the steps of one split, shared by the in-memory pass (gs_probe_run)
 * and the pass over the shards of an MPI recording (analyses/state/probe_shards.c),
 * which gathers the same sums from streamed states ---- */

/* The lag grid and the per-lag arrays of p (zeroed). 0, or -1. */
int gs_probe_begin(gs_probe *p, const gs_probe_opts *o);

/* The ridge fit of one lag from its sums over the nk training rows, all
 * taken about a centering point c: G = sum (x-c)(x-c)^T (upper triangle,
 * overwritten: centered in place), sumx = sum (x-c), XtY = sum (x-c) y^T
 * (d x e, overwritten with W), ysum = sum y (e, overwritten with ybar).
 * mu (d) gets sumx / nk. A held-out x is then decoded from
 * ybar + (x - c - mu) W. 0, or -1 with gs_error(). */
int gs_probe_fit(double *G, const double *sumx, int64_t nk, int d, int e, double ridge, double *XtY, double *ysum,
                 double *mu);

/* The nearest embedding row in cosine of predicted targets. */
typedef struct {
    int d, e, V;
    const float *E;
    float *einv;    /* V: 1 / |E_v| (0: a zero row, never chosen) */
    double *y;      /* rows x e */
    float *yf, *scores;
    int cap;        /* rows per call */
} gs_probe_decoder;
int gs_probe_decoder_init(gs_probe_decoder *dc, const float *E, int V, int e, int d, int cap);
void gs_probe_decoder_free(gs_probe_decoder *dc);
/* rows: b <= cap rows of x - c - mu (b x d); best[r]: the decoded token (-1: none) */
void gs_probe_decode(gs_probe_decoder *dc, const double *rows, int b, const double *W, const double *ybar, int *best);

/* One lag's numbers from its held-out tallies: hit of n_test decoded right,
 * n_majority of them the majority token maj, and the blocks' sums of
 * hit - [y == maj] (bs) and sizes (bn), nb blocks in (window, position)
 * order. */
void gs_probe_lag_result(gs_probe *p, int li, int64_t hit, int64_t n_test, int64_t n_majority, int maj,
                         const double *bs, const double *bn, int64_t nb);
/* The horizon and the rule's text, after the last lag. */
void gs_probe_end(gs_probe *p, const gs_probe_opts *o);

/* The splits (seeds seed, seed + 1, ...) of a probe run by `one`, combined
 * as gs_probe_run does: the first split's numbers, the standard error with
 * the variance over splits added, each split's horizon. */
typedef int (*gs_probe_split_fn)(void *ctx, const gs_probe_opts *o, gs_probe *p);
int gs_probe_over_splits(gs_probe_split_fn one, void *ctx, const gs_probe_opts *o, gs_probe *p);

#endif
