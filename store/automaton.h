/* The automaton analysis's tables (docs/automaton.md, docs/schema.md):
 * automaton_experiments (one row per `gpnscope automaton`: the model, the
 * task, its monoid's size, the settings) and automaton_cells (one row per
 * cell: a tree level or a segment-length bucket, in or out of
 * distribution, with its cluster-vs-monoid scores). Additive tables,
 * created IF NOT EXISTS by the first write, like the causal ones
 * (store/experiments.h): the schema version stays. An experiment is
 * written in one transaction, so an interrupted command leaves none. */
#ifndef GS_STORE_AUTOMATON_H
#define GS_STORE_AUTOMATON_H

#include <stdint.h>

#include "store/store.h"

/* One cell; the analysis fills these (analyses/automaton/automaton.h). */
typedef struct {
    int in_distribution;    /* 1: every segment of the cell has <= train_length symbols */
    int grouping;           /* 0: bucket is a tree level; 1: segment lengths in (2^(b-1), 2^b] */
    int bucket;
    int min_span, max_span; /* segment lengths that occurred in the cell */
    int64_t n_nodes;        /* nodes that fell in the cell */
    int n_points;           /* of them sampled and clustered */
    int n_elements;         /* distinct monoid elements among the points */
    double majority;        /* share of the most common element (purity of a single cluster) */
    double kmeans_purity, kmeans_ari;       /* k-means with k = n_elements */
    int auto_points, auto_elements, auto_k; /* the silhouette-chosen clustering: its sample, the elements in it, its k */
    double auto_silhouette, auto_purity, auto_ari;
} store_automaton_cell;

/* The state geometry of one set (analyses/automaton/state_geometry.h): the
 * prefix states or the node vectors, in or out of distribution; table
 * automaton_geometry, with the sample the numbers come from. */
typedef struct {
    const char *states; /* "prefix" or "node" */
    int in_distribution;
    int64_t n_seen;     /* states that fell in the set */
    int n_states, d;    /* of them sampled and measured; their width */
    double norm_mean, mean_norm, total_variance, participation_ratio, stable_rank;
    int components_90, components_99;
    const double *cum_explained; /* d: the fraction of the variance in the first i + 1 components */
    const float *vectors;        /* n_states x d */
} store_automaton_geometry;

typedef struct {
    char model_path[4096], model_sha256[80], task[64], settings[2048], code_version[32];
    int monoid_size, dfa_states, n_strings;
    int64_t n_nodes;
    const store_automaton_geometry *geometry; /* written with the experiment, in its transaction */
    int n_geometry;
} store_automaton_experiment;

/* Creates the tables if the file lacks them. */
int store_automaton_tables(store *st);
/* The experiment and its cells in one transaction; the new id, or -1. */
int64_t store_put_automaton(store *st, const store_automaton_experiment *e, const store_automaton_cell *cells, int n);
/* Experiment ID (0: the newest) into *e and its cells into *cells
 * (malloc'd, in the order written); the number of cells, or -1 (also when
 * there is no such experiment, with a message saying so). */
int store_get_automaton(store *st, int64_t *id, store_automaton_experiment *e, store_automaton_cell **cells);

#endif
