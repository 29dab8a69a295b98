/* The state geometry of issue #21's "plus the same state geometry as for the
 * language models", inside `gpnscope automaton` (docs/automaton.md): over
 * the strings the automaton analysis draws, a uniform sample of
 *   - the prefix states (the family's state site, MLP-LDRU's `prefix`: the
 *     root of the tree over x_0..x_t), in distribution when t + 1 <=
 *     train_length, and
 *   - the node vectors (each the root of its segment's subtree), in
 *     distribution when the segment has <= train_length symbols,
 * each measured by analyze's geometry row (analyses/registry.h: the same
 * explained-variance spectrum, components for 90% / 99%, participation ratio
 * and stable rank as `gpnscope analyze --only geometry`).
 *
 * It sits between the analysis and its node source (a gs_node_source that
 * calls the real one and samples what passes), so the automaton analysis is
 * not changed and sees the same nodes; the prefix states come from the
 * model's engine, one symbol a step, over the same string. */
#ifndef GS_ANALYSES_AUTOMATON_STATE_GEOMETRY_H
#define GS_ANALYSES_AUTOMATON_STATE_GEOMETRY_H

#include <stdint.h>

#include "analyses/automaton/automaton.h"
#include "analyses/state/geometry.h"
#include "engine/engine.h"

enum { GS_GEOM_PREFIX = 0, GS_GEOM_NODE = 1 };

typedef struct {
    int64_t seen; /* states that fell in the set */
    int n;        /* of them sampled */
    float *x;     /* n x d */
} gs_geom_sample;

typedef struct {
    gs_node_source inner;
    gs_engine *engine;   /* NULL: no prefix states (a reference source) */
    gs_hook_point state; /* the engine's state site */
    int d, cap, train_length;
    uint64_t rng;
    float *prefix_rows;            /* GS_TASK_MAX_LENGTH x d: one string's prefix states */
    gs_geom_sample set[2][2];      /* [GS_GEOM_PREFIX | GS_GEOM_NODE][out | in] */
} gs_state_geometry;

/* Wraps inner into *out (g must outlive it): model NULL samples the nodes
 * only; else its family's state site is stepped through its engine. cap:
 * states kept per set (a uniform reservoir). 0, or -1 with gs_error(). */
int gs_state_geometry_wrap(gs_state_geometry *g, const gs_node_source *inner, const gs_model *model,
                           int train_length, int cap, uint64_t seed, gs_node_source *out);
/* One set's geometry through the registry's geometry row: 0 (*g filled), 1
 * (too few or identical states: *why says so, *g empty), -1 on an error. */
int gs_state_geometry_measure(const gs_state_geometry *s, int which, int in_distribution, uint64_t seed, gs_geometry *g,
                              char *why, size_t why_size);
void gs_state_geometry_free(gs_state_geometry *g);

#endif
