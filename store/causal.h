/* The store's side of the causal tools (docs/causal.md; tables in
 * docs/schema.md, schema version 3): effective attention of delta-rule heads
 * and direct logit attribution, each keyed by its analysis row
 * (store_analysis_begin), written inside that analysis's batch. */
#ifndef GS_STORE_CAUSAL_H
#define GS_STORE_CAUSAL_H

#include <stdint.h>

#include "store/store.h"

/* ---------- effective attention ---------- */
/* One query of one head: its top keys (most weight first) and how they and
 * the heuristic relate to all of its keys. */
typedef struct {
    int32_t query, n_keys;     /* n_keys: the keys it may attend to (query + 1) */
    int n_top;                 /* entries in key / weight / heuristic */
    const int *key;
    const double *weight, *heuristic; /* heuristic may be NULL */
    double topk_mass, l1, heuristic_l1, read_error, heuristic_error;
} store_attention_query;

/* The queries of one (window, layer, head), into attention_queries and
 * attention_topk. */
int store_put_attention_queries(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                                const store_attention_query *q, int n);
/* A whole n x n query x key matrix (row-major, row = query) of kind "exact"
 * or "heuristic" into attention_matrices. */
int store_put_attention_matrix(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                               const char *kind, int32_t n, const float *weights);
/* Read one back: *weights malloc'd (n x n), *n its side; 1 when there is no
 * such matrix, 0 when read, -1 on an error. */
int store_read_attention_matrix(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                                const char *kind, float **weights, int32_t *n);

/* The first stored (window, layer) of the analysis and up to max of its heads with an "exact" matrix there,
 * in head order (what a figure draws); the count of heads, 0 when none, -1 on error. */
int store_attention_first_panel(store *st, int64_t analysis_id, int32_t *window, int32_t *layer, int *heads, int max);
/* Every (layer, head) with an "exact" matrix in the analysis, in layer then head order: up to max into
 * layers[] and heads[]; the count, -1 on error. */
int store_attention_heads(store *st, int64_t analysis_id, int32_t *layers, int32_t *heads, int max);

/* ---------- direct logit attribution ---------- */
/* One part of a predicted state at (window, position): its name ("carry",
 * "ground", "ffn", "mem", "residual"), its layer and head (-1: none) and the
 * logit of the recorded token it accounts for. */
typedef struct {
    const char *part;
    int32_t layer, head;
    double logit;
} store_logit_part;
int store_put_logit_parts(store *st, int64_t analysis_id, int32_t window, int32_t position, int32_t token_id,
                          const store_logit_part *parts, int n);
/* One stored part read back: as store_logit_part with its own copy of the name, at a position. */
typedef struct {
    int32_t position, layer, head, token_id;
    char part[16];
    double logit;
} store_logit_row;
/* The rows of (analysis, window) at positions below max_position, in position order: *rows malloc'd; the
 * count, -1 on error. */
int64_t store_read_logit_parts(store *st, int64_t analysis_id, int32_t window, int32_t max_position,
                               store_logit_row **rows);

#endif
