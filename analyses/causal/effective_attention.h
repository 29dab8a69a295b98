/* Exact effective attention of delta-rule memory heads (issue #22, item 1).
 *
 * A delta-rule head's read at step t is a sum over the step's and earlier
 * writes: o_t = M_t^T q_t = sum_{j<=t} a_{t,j} v_j, with
 *     a_{t,j} = beta_j k_j^T A_{j+1} A_{j+2} ... A_t q_t
 * where A_i is write i's transition of the memory, in the engine's own
 * orientation (M is d_k x d_v, M_i = A_i M_{i-1} + beta_i k_i v_i^T):
 *     GPN+M  M_i = alpha_i M_{i-1} + beta_i k_i (v_i - M_{i-1}^T k_i)^T   A_i = alpha_i I - beta_i k_i k_i^T
 *     GDN    S_i = alpha_i S_{i-1}; then the delta rule on the decayed S    A_i = alpha_i (I - beta_i k_i k_i^T)
 * The A_i are symmetric, so the weights of one query follow by carrying the
 * query backwards: r = q_t; for j = t, t-1, ..., 0: a_{t,j} = beta_j k_j.r,
 * then r <- A_j r. That is O(t d_k) per query, O(T^2 d_k) per head and
 * window of T steps, with no d_k x d_k matrix ever formed.
 *
 * The heuristic TransformerLens documents for Gated DeltaNet drops the key
 * removal (the -beta k k^T of every later write) and keeps only the decays:
 *     h_{t,j} = beta_j k_j^T q_t prod_{i=j+1..t} alpha_i.
 * Both are computed here, so their distance is a measured number.
 *
 * q, k, v, alpha and beta are the engine's own sites, captured by name with
 * probes/ while the runner steps the model (no part of the model is
 * recomputed here); the read o_t is captured too, so every window checks
 * sum_j a_{t,j} v_j against the engine's read. */
#ifndef GS_ANALYSES_EFFECTIVE_ATTENTION_H
#define GS_ANALYSES_EFFECTIVE_ATTENTION_H

#include <stdint.h>

#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/runner.h"

/* The delta-rule memory of a model's family (gs_family.delta_memory,
 * engine/arch/family.h); NULL with gs_error() where the model has none
 * (GPN, Elman, Transformer++). */
const gs_delta_memory *gs_delta_memory_of(const gs_config *c);

/* One window's captured sites, float32 as the engine made them. */
typedef struct {
    int T, H, dk, dv, n_layers, n_writes; /* n_writes: n_layers, or 1 for a shared write */
    const gs_delta_memory *mem;
    float *q;     /* [n_layers][T][H*dk] */
    float *read;  /* [n_layers][T][H*dv] */
    float *k;     /* [n_writes][T][H*dk] */
    float *v;     /* [n_writes][T][H*dv] */
    float *alpha; /* [n_writes][T][H] */
    float *beta;  /* [n_writes][T][H] */
} gs_delta_trace;

/* Called once per window after its T steps (w: the window's index within
 * the run's selection); non-zero stops the run. */
typedef int (*gs_delta_window_fn)(void *ctx, int64_t w, const gs_delta_trace *tr);

/* A capture of the delta-rule sites on an engine, as a runner sink: attach
 * it (gs_delta_capture_sink) to a runner_run over windows of T tokens. */
typedef struct gs_delta_capture gs_delta_capture;
gs_delta_capture *gs_delta_capture_new(gs_engine *e, int T, gs_delta_window_fn fn, void *ctx);
runner_sink gs_delta_capture_sink(gs_delta_capture *c);
void gs_delta_capture_free(gs_delta_capture *c);

/* Query x key weights of one head of one layer over the trace's window:
 * exact[t*T + j] = a_{t,j} and heuristic[t*T + j] = h_{t,j} for j <= t, 0
 * above the diagonal (heuristic may be NULL). O(T^2 d_k). */
void gs_delta_weights(const gs_delta_trace *tr, int layer, int head, double *exact, double *heuristic);

/* sum_j w[t*T + j] v_j for query t of (layer, head): out has d_v doubles. */
void gs_delta_reconstruct(const gs_delta_trace *tr, int layer, int head, const double *w, int t, double *out);

/* Per query of one head: how well the weights explain the engine's read and
 * how far the heuristic is from them. */
typedef struct {
    double read_error;      /* ||sum_j a_{t,j} v_j - o_t|| / max(||o_t||, 1e-30): 0 up to float rounding */
    double heuristic_error; /* the same with h_{t,j}: how wrong the heuristic's read is */
    double heuristic_l1;    /* sum_j |h_{t,j} - a_{t,j}| / sum_j |a_{t,j}| (0 where the sum is 0) */
    double l1;              /* sum_j |a_{t,j}| */
} gs_delta_query_stats;
void gs_delta_query_stats_of(const gs_delta_trace *tr, int layer, int head, const double *exact, const double *heuristic,
                             int t, gs_delta_query_stats *out);

/* The k keys of query t with the largest |a_{t,j}| (ties: the later key),
 * most first, into keys[]; returns how many (min(k, t + 1)) and sets *mass to
 * the share of sum_j |a_{t,j}| they hold (1 where the sum is 0). */
int gs_delta_top_keys(const double *exact, int T, int t, int k, int *keys, double *mass);

#endif
