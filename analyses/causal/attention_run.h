/* Effective attention over a recorded run (gpnscope attention): re-run the
 * run's model over the first windows of its recorded tokens, capture the
 * delta-rule sites (analyses/causal/effective_attention.h), compute every selected
 * head's exact weights and the heuristic's, and store them (store/causal.h):
 * per query the top-k keys with their weights and the share of sum_j |a_tj|
 * they hold, the full matrices for short windows, and per head the distance
 * of the heuristic from the exact weights.
 *
 * Cost: O(T^2 d_k) per head, layer and window for the weights (each query
 * carried back through its t transitions), O(T^2 d_v) for the read check,
 * and T^2 doubles of scratch per head; bounded by windows, length, heads and
 * layers. */
#ifndef GS_ANALYSES_ATTENTION_RUN_H
#define GS_ANALYSES_ATTENTION_RUN_H

#include <stdint.h>

#include "store/store.h"

#define GS_ATTENTION_MAX_HEADS 256
#define GS_ATTENTION_MAX_LAYERS 64

typedef struct {
    int64_t windows;        /* the run's first K windows (default 4) */
    int length;             /* the first T positions of each (<= 0: the run's, at most 512) */
    const char *heads;      /* "0,3,5" or NULL: every head */
    const char *layers;     /* "0,2" or NULL: every layer */
    int top_k;              /* keys kept per query (default 8) */
    int full_upto;          /* the full matrices when T <= this (default 128; 0: never) */
    const char *model_path; /* NULL: the run's model file */
    const char *code_version;
    int (*progress)(void *ctx, int64_t done, int64_t total); /* after each batch of windows */
    void *progress_ctx;
    /* The budget: the planned multiply-adds (GS_ATTENTION_WORK) may not
     * exceed max_work (default GS_ATTENTION_MAX_WORK; <= 0: no limit);
     * plan(plan_ctx, text), when set, is told the plan before any work. */
    int64_t max_work;
    void (*plan)(void *ctx, const char *text);
    void *plan_ctx;
} gs_attention_opts;

/* The multiply-adds planned, docs/causal.md's cost model: per selected
 * (layer, head) and window, 1.5 d_k T^2 for the exact and heuristic weights
 * and d_v T^2 for the read check. The default budget, 5e10, is about 3
 * minutes on this project's two cores (2 windows of 1024 positions of the
 * GDN fixture, 4 heads: 2.3e8 in 0.8 s). */
#define GS_ATTENTION_WORK(windows, pairs, T, dk, dv) \
    ((int64_t)(windows) * (pairs) * (int64_t)(T) * (T) * (3 * (int64_t)(dk) + 2 * (int64_t)(dv)) / 2)
#define GS_ATTENTION_MAX_WORK 50000000000LL

void gs_attention_opts_default(gs_attention_opts *o);

/* Per (layer, head) over the windows' queries. The means leave out the
 * queries with nothing to measure, which would enter as 0 and bias them low
 * by about 1/T: query 0 (one key, whose read the heuristic cannot get wrong;
 * under a GPN the read of an empty memory) and any query whose exact weights
 * are all zero (GS_ATTENTION_EXCLUDED says which). */
typedef struct {
    int layer, head;
    double heuristic_l1;    /* mean over the kept queries of sum_j |h - a| / sum_j |a| */
    double heuristic_error; /* mean over the kept queries of ||sum_j h_tj v_j - o_t|| / ||o_t|| */
    double read_error_max;  /* max over queries of ||sum_j a_tj v_j - o_t|| / ||o_t|| (float rounding) */
    double topk_mass;       /* mean over the kept queries of the share of sum_j |a_tj| the top-k keys hold */
    int64_t queries;        /* kept in the means */
    int64_t excluded;       /* left out of them: query 0 and all-zero weights */
} gs_attention_head;

/* a query left out of the per-head means: query 0, or exact weights all zero (l1 = sum_j |a_tj| = 0) */
#define GS_ATTENTION_EXCLUDED(t, l1) ((t) == 0 || (l1) == 0.0)

typedef struct {
    int64_t analysis_id, windows;
    int T, top_k, full;     /* full: the matrices were stored */
    int n_heads;            /* entries of head[] */
    gs_attention_head head[GS_ATTENTION_MAX_HEADS];
} gs_attention_result;

/* 0, or -1 with gs_error(); the results are in the store under analysis
 * "attention" (settings: windows, length, heads, layers, top_k). */
int gs_attention_run(store *st, int64_t run_id, const gs_attention_opts *o, gs_attention_result *out);

#endif
