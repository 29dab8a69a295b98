/* "Does the operator learn the automaton?" (issue #21, docs/automaton.md).
 * A tree model (MLP-LDRU) combines adjacent segments; each node's vector
 * stands for a segment w. The minimal DFA's transition monoid says what w
 * does (f_w: Q -> Q). Over many random strings of a task, the node vectors
 * are grouped by tree level and by segment length, each in distribution
 * (segments of at most train_length symbols) or out, then clustered
 * (k-means with k = the number of monoid elements present, and a
 * silhouette-chosen k), and the clusters are scored against the elements
 * (purity, adjusted Rand index, clusters found against elements present).
 *
 * The model is reached only through gs_node_source, so this file knows
 * nothing of any family's internals: anything that can say "here are the
 * nodes of the tree over this string" can be measured, including the
 * reference sources of node_sources.h (an exact automaton, random vectors). */
#ifndef GS_ANALYSES_AUTOMATON_AUTOMATON_H
#define GS_ANALYSES_AUTOMATON_AUTOMATON_H

#include <stdint.h>

#include "engine/tasks/tasks.h"
#include "store/automaton.h"

/* The most nodes a source may give for a string of LENGTH symbols: a binary
 * tree's 2 LENGTH - 1, plus a node per level for odd ones carried up. */
#define GS_NODES_MAX(length) (2 * (length) + 64)

typedef struct {
    int width; /* floats per node vector */
    void *ctx;
    /* The nodes of the tree over symbols[0..length), at most
     * GS_NODES_MAX(length): node i is at tree level level[i] (0: the
     * leaves), covers the segment symbols[start[i] .. start[i] + span[i])
     * (span >= 1, padding not counted), and its vector is
     * vectors[i * width .. +width). Returns the number of nodes, or -1 with
     * gs_error() set. */
    int (*nodes)(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors);
} gs_node_source;

typedef struct {
    const gs_task *task;
    int n_strings;     /* random strings, lengths uniform in 1..max_length (odd for odd-only tasks) */
    int max_length;    /* <= GS_TASK_MAX_LENGTH */
    int train_length;  /* segments of at most this many symbols are in distribution (40) */
    int max_points;    /* nodes kept per cell (a uniform reservoir sample; 2000) */
    int auto_points;   /* of those, how many the self-chosen clustering sees (600: it holds n^2 distances) */
    uint64_t seed;
    int (*progress)(void *ctx, int64_t done, int64_t total); /* per string; nonzero stops (NULL: none) */
    void *progress_ctx;
} gs_automaton_opts;

void gs_automaton_opts_default(gs_automaton_opts *o);

enum { GS_CELL_LEVEL = 0, GS_CELL_LENGTH = 1 };

/* A cell's scores: the store's row (store/automaton.h), so that what is
 * measured and what is stored are one struct. */
typedef store_automaton_cell gs_automaton_cell;

typedef struct {
    int monoid_size, dfa_states;
    int n_strings;
    int64_t n_nodes;
    int n_cells;
    gs_automaton_cell *cells; /* malloc'd: level cells then length cells, in distribution first, buckets ascending */
} gs_automaton_result;

/* 0, or -1 with gs_error() (a bad option, the source's error, out of
 * memory, or stopped by progress). Deterministic for a seed and a
 * deterministic source. */
int gs_automaton_run(const gs_node_source *src, const gs_automaton_opts *o, gs_automaton_result *r);
void gs_automaton_result_free(gs_automaton_result *r);

#endif
