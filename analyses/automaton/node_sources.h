/* Reference node sources for the automaton analysis (automaton.h): the two
 * ends of its scale, for tests and for calibrating a model's numbers.
 * Both use the balanced binary tree of gs_balanced_tree. */
#ifndef GS_ANALYSES_AUTOMATON_NODE_SOURCES_H
#define GS_ANALYSES_AUTOMATON_NODE_SOURCES_H

#include <stdint.h>

#include "analyses/automaton/automaton.h"
#include "analyses/automaton/monoid.h"

/* The balanced binary tree over LENGTH symbols, as a parallel reduction
 * builds it: level 0 holds the symbols, level l+1 combines nodes 2j and
 * 2j+1 of level l, and an odd last node is carried up unchanged (the same
 * segment one level higher, as padding with the identity gives). Fills
 * level, start, span for every node, leaves first; returns the count
 * (<= GS_NODES_MAX(length)). */
int gs_balanced_tree(int length, int *level, int *start, int *span);

/* An exact automaton: each node's vector is the one-hot of its segment's
 * monoid element (width = the monoid's size). M must outlive the source. */
gs_node_source gs_node_source_exact(const gs_monoid *m);

/* Vectors that know nothing: i.i.d. standard normal of width r->width for
 * every node, drawn from r->state (advanced by each call). R must outlive
 * the source. */
typedef struct {
    uint64_t state;
    int width;
} gs_random_nodes;
gs_node_source gs_node_source_random(gs_random_nodes *r);

#endif
