/* The transition monoid of a DFA (docs/automaton.md): a word w induces the
 * function f_w: Q -> Q, f_w(q) = the state reached from q by reading w. The
 * monoid is the set of all f_w, closed under composition; f_{uv} = f_v o f_u
 * (read u, then v). gs_monoid_build enumerates it breadth first from the
 * identity (the empty word) by the per-symbol maps, so element 0 is the
 * identity and ids follow the shortlex order of each element's first word.
 * Every element keeps its one-symbol successors (the right Cayley graph), so
 * a segment's element is found in one table step per symbol. */
#ifndef GS_ANALYSES_AUTOMATON_MONOID_H
#define GS_ANALYSES_AUTOMATON_MONOID_H

#include <stdint.h>

#include "engine/tasks/tasks.h"

/* The default bound on the number of elements (the tasks' monoids are far
 * smaller except modular arithmetic's; see docs/automaton.md). */
#define GS_MONOID_DEFAULT_MAX 200000

typedef struct gs_monoid gs_monoid;

/* The monoid of DFA's transitions, or NULL with "the transition monoid has
 * more than MAX elements" (or out of memory) set. */
gs_monoid *gs_monoid_build(const gs_dfa *dfa, int max_elements);
void gs_monoid_free(gs_monoid *m);

int gs_monoid_size(const gs_monoid *m);
int gs_monoid_states(const gs_monoid *m);
/* f_e as a table of n_states entries: map[q] = f_e(q). */
const uint8_t *gs_monoid_map(const gs_monoid *m, int element);
/* The element of the word symbols[0..length) (0, the identity, for length 0). */
int gs_monoid_word(const gs_monoid *m, const int *symbols, int length);
/* The element of reading a's word, then one symbol. */
int gs_monoid_step(const gs_monoid *m, int a, int symbol);
/* The element f_b o f_a (a's word followed by b's). */
int gs_monoid_then(const gs_monoid *m, int a, int b);
/* The element whose map is MAP, or -1 when MAP is not in the monoid. */
int gs_monoid_find(const gs_monoid *m, const uint8_t *map);

#endif
