/* Clusterings of N vectors (float, width d) and how well they match given
 * labels (docs/automaton.md has the formulas and why these choices):
 * k-means (greedy k-means++ seeding from base/prng.h's splitmix64, then Lloyd;
 * deterministic for a seed), k chosen by the mean silhouette, purity and
 * the adjusted Rand index (Hubert and Arabie, from the contingency table).
 * Labels and cluster ids are any ints; only equality matters. */
#ifndef GS_ANALYSES_AUTOMATON_CLUSTERS_H
#define GS_ANALYSES_AUTOMATON_CLUSTERS_H

#include <stdint.h>

/* Share of points whose cluster's most common label is their own:
 * (1/N) sum over clusters of the largest label count in it. 1 for N = 0. */
double gs_purity(const int *labels, const int *clusters, int n);
/* Share of the most common label (the purity of putting all in one cluster). */
double gs_majority_share(const int *labels, int n);
/* The number of distinct values among v[0..n). */
int gs_distinct_count(const int *v, int n);
/* ARI = (sum_ij C(n_ij,2) - E) / ((A + B)/2 - E), A = sum_i C(a_i,2),
 * B = sum_j C(b_j,2), E = A B / C(n,2); 1 when both partitions are trivial
 * in the same way (the denominator is 0). NaN for n < 2 or out of memory. */
double gs_adjusted_rand(const int *labels, const int *clusters, int n);

/* k-means with k clusters (k is lowered to n when n < k): the best of
 * RESTARTS runs (lowest within-cluster sum of squares), each greedy k-means++
 * seeded and iterated until no point changes cluster (at most 200 rounds).
 * assign[i] in 0..k-1. 0, or -1 with gs_error() (out of memory, n < 1). */
int gs_kmeans(const float *x, int n, int d, int k, uint64_t seed, int restarts, int *assign, double *inertia);

/* A clustering that chooses its own number of clusters: k-means for each k
 * in a grid over 2..k_max (every k up to 12, then steps of about 25%, plus
 * k_hint when it is in range), keeping the k of the largest mean
 * silhouette (ties within 1e-9: the larger k). k is never more than the number of
 * distinct vectors; with fewer than two distinct vectors, k = 1. *k_found
 * and *silhouette (NaN when k = 1) say what was chosen. Costs n^2 floats
 * for the distance matrix: give it a sample. 0, or -1 with gs_error(). */
int gs_kmeans_auto(const float *x, int n, int d, int k_max, int k_hint, uint64_t seed, int *assign, int *k_found,
                   double *silhouette);

#endif
