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
 * scored by top-1 accuracy. Windows go to training or held-out as a whole
 * (by a seeded hash of the window id, so the split does not depend on the
 * order of the stream). Baseline: the frequency of the most frequent token
 * among the same held-out targets (the best any constant guess can do there).
 *
 * Rule: lag k passes when acc_k > b_k + z * sqrt(b_k (1 - b_k) / n_k) with
 * z = 2 (two binomial standard errors) and acc_k > b_k. The probe horizon is
 * the largest grid lag before the first lag that fails; 0 when lag 1 fails.
 * Right-censored when no lag fails (then it is the last lag) or when the run
 * ends at a lag without enough positions to measure. */
#ifndef GS_ANALYSES_PROBE_H
#define GS_ANALYSES_PROBE_H

#include <stdint.h>

#include "analyses/states.h"

/* The token sequences of the windows: window id[i] holds
 * tokens[start[i] .. start[i+1]) at positions 0, 1, ...; a state at
 * position t needs tokens up to t - 1. */
typedef struct {
    int64_t n_windows;
    const int64_t *window;
    const int64_t *start;
    const int32_t *tokens;
} gs_tokens;

typedef struct {
    int max_lag;       /* last grid lag (256); grid 1 2 3 4 6 8 12 16 24 ... (x2 and x1.5 steps) */
    double test_frac;  /* share of windows held out (0.2; at least one window each side) */
    double ridge;      /* lambda = ridge * trace(centered Gram) / d (1e-2) */
    int64_t max_test;  /* held-out positions scored per lag, evenly subsampled (2048; 0: all) */
    double z;          /* standard errors above baseline (2) */
    uint64_t seed;
} gs_probe_opts;

void gs_probe_opts_default(gs_probe_opts *o);

typedef struct {
    int n_lags;
    int *lags;
    double *acc, *baseline, *se;   /* n_lags */
    int64_t *n_train, *n_test;     /* positions used */
    int *majority;                 /* held-out majority token per lag */
    int *measured, *pass;
    int64_t n_train_windows, n_test_windows;
    double z;
    int horizon;                   /* largest passing lag before the first failure; 0 none */
    int censored;
    char rule[256];
} gs_probe;

/* E: the embedding (V x e, float32, e.g. the model's). */
int gs_probe_run(const gs_states *s, const gs_tokens *tok, const float *E, int V, int e, const gs_probe_opts *o,
                 gs_probe *p);
void gs_probe_free(gs_probe *p);

/* The default grid: 1 2 3 4 6 8 12 16 ... up to max_lag (included). */
int *gs_probe_lags(int max_lag, int *n_out);

#endif
