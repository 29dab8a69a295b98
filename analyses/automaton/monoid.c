/* analyses/automaton/monoid.h: BFS over functions Q -> Q, found again
 * through an open-addressing hash of their tables. */
#include "analyses/automaton/monoid.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

struct gs_monoid {
    int n_states, n_symbols, n, cap;
    uint8_t *maps;   /* n x n_states: maps[e * n_states + q] = f_e(q) */
    int32_t *step;   /* n x n_symbols: the element of e's word followed by the symbol */
    int32_t *slots;  /* hash table of element ids, -1 empty; n_slots a power of two */
    size_t n_slots;
};

static uint64_t hash_map(const uint8_t *map, int n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; i < n; i++) h = (h ^ map[i]) * 1099511628211ull;
    return h;
}

int gs_monoid_find(const gs_monoid *m, const uint8_t *map) {
    size_t mask = m->n_slots - 1, i = (size_t)hash_map(map, m->n_states) & mask;
    for (; m->slots[i] >= 0; i = (i + 1) & mask)
        if (!memcmp(m->maps + (size_t)m->slots[i] * m->n_states, map, (size_t)m->n_states)) return m->slots[i];
    return -1;
}

/* The id of MAP, added as a new element when it is not there yet; -1 when
 * the monoid would exceed its bound. */
static int intern(gs_monoid *m, const uint8_t *map) {
    size_t mask = m->n_slots - 1, i = (size_t)hash_map(map, m->n_states) & mask;
    for (; m->slots[i] >= 0; i = (i + 1) & mask)
        if (!memcmp(m->maps + (size_t)m->slots[i] * m->n_states, map, (size_t)m->n_states)) return m->slots[i];
    if (m->n == m->cap) return -1;
    memcpy(m->maps + (size_t)m->n * m->n_states, map, (size_t)m->n_states);
    m->slots[i] = m->n;
    return m->n++;
}

gs_monoid *gs_monoid_build(const gs_dfa *dfa, int max_elements) {
    if (dfa->n_states < 1 || dfa->n_states > GS_DFA_MAX_STATES || dfa->n_symbols < 1 ||
        dfa->n_symbols > GS_DFA_MAX_SYMBOLS || max_elements < 1) {
        gs_fail("transition monoid: a DFA of %d states and %d symbols (or a bound of %d elements) is not one it takes",
                dfa->n_states, dfa->n_symbols, max_elements);
        return NULL;
    }
    gs_monoid *m = calloc(1, sizeof *m);
    size_t slots = 2;
    while (slots < 2 * (size_t)max_elements) slots *= 2; /* load factor <= 1/2 */
    if (m) {
        m->n_states = dfa->n_states;
        m->n_symbols = dfa->n_symbols;
        m->cap = max_elements;
        m->n_slots = slots;
        m->maps = malloc((size_t)max_elements * dfa->n_states);
        m->step = malloc((size_t)max_elements * dfa->n_symbols * sizeof *m->step);
        m->slots = malloc(slots * sizeof *m->slots);
    }
    if (!m || !m->maps || !m->step || !m->slots) {
        gs_monoid_free(m);
        gs_fail("transition monoid: out of memory for %d elements", max_elements);
        return NULL;
    }
    memset(m->slots, 0xff, slots * sizeof *m->slots);
    uint8_t map[GS_DFA_MAX_STATES];
    for (int q = 0; q < m->n_states; q++) map[q] = (uint8_t)q;
    intern(m, map); /* 0: the identity, the empty word's */
    /* The queue is the element list itself: elements are appended in the
     * order they are discovered, and each is expanded once (maps is
     * allocated whole up front, so f stays valid while it grows). */
    for (int e = 0; e < m->n; e++) {
        const uint8_t *f = m->maps + (size_t)e * m->n_states;
        for (int s = 0; s < m->n_symbols; s++) {
            for (int q = 0; q < m->n_states; q++) map[q] = (uint8_t)dfa->next[f[q]][s];
            int id = intern(m, map);
            if (id < 0) {
                gs_monoid_free(m);
                gs_fail("the transition monoid has more than %d elements (give a larger bound)", max_elements);
                return NULL;
            }
            m->step[(size_t)e * m->n_symbols + s] = id;
        }
    }
    return m;
}

void gs_monoid_free(gs_monoid *m) {
    if (!m) return;
    free(m->maps);
    free(m->step);
    free(m->slots);
    free(m);
}

int gs_monoid_size(const gs_monoid *m) { return m->n; }
int gs_monoid_states(const gs_monoid *m) { return m->n_states; }
const uint8_t *gs_monoid_map(const gs_monoid *m, int element) { return m->maps + (size_t)element * m->n_states; }
int gs_monoid_step(const gs_monoid *m, int a, int symbol) { return m->step[(size_t)a * m->n_symbols + symbol]; }

int gs_monoid_word(const gs_monoid *m, const int *symbols, int length) {
    int e = 0;
    for (int t = 0; t < length; t++) e = m->step[(size_t)e * m->n_symbols + symbols[t]];
    return e;
}

int gs_monoid_then(const gs_monoid *m, int a, int b) {
    const uint8_t *fa = gs_monoid_map(m, a), *fb = gs_monoid_map(m, b);
    uint8_t map[GS_DFA_MAX_STATES];
    for (int q = 0; q < m->n_states; q++) map[q] = fb[fa[q]];
    return gs_monoid_find(m, map); /* always found: the monoid is closed */
}
