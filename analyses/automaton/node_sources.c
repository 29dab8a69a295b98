/* analyses/automaton/node_sources.h */
#include "analyses/automaton/node_sources.h"

#include <math.h>
#include <string.h>

#include "base/prng.h"

int gs_balanced_tree(int length, int *level, int *start, int *span) {
    int n = 0;
    for (int t = 0; t < length; t++) level[n] = 0, start[n] = t, span[n] = 1, n++;
    for (int first = 0, count = length, l = 1; count > 1; l++) { /* first: where the previous level begins */
        int next = n;
        for (int j = 0; j < count; j += 2) {
            const int a = first + j;
            level[n] = l;
            start[n] = start[a];
            span[n] = j + 1 < count ? span[a] + span[a + 1] : span[a];
            n++;
        }
        count = n - next;
        first = next;
    }
    return n;
}

static int exact_nodes(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors) {
    const gs_monoid *m = ctx;
    int n = gs_balanced_tree(length, level, start, span), w = gs_monoid_size(m);
    memset(vectors, 0, (size_t)n * w * sizeof *vectors);
    for (int i = 0; i < n; i++) vectors[(size_t)i * w + gs_monoid_word(m, symbols + start[i], span[i])] = 1;
    return n;
}

gs_node_source gs_node_source_exact(const gs_monoid *m) {
    return (gs_node_source){.width = gs_monoid_size(m), .ctx = (void *)m, .nodes = exact_nodes};
}

/* Standard normal by Box-Muller from two uniforms in (0, 1]. */
static float normal(uint64_t *s) {
    double u = ((double)(gs_splitmix64(s) >> 11) + 1) * 0x1.0p-53, v = (double)(gs_splitmix64(s) >> 11) * 0x1.0p-53;
    return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static int random_nodes(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors) {
    (void)symbols;
    gs_random_nodes *r = ctx;
    int n = gs_balanced_tree(length, level, start, span);
    for (size_t i = 0; i < (size_t)n * r->width; i++) vectors[i] = normal(&r->state);
    return n;
}

gs_node_source gs_node_source_random(gs_random_nodes *r) {
    return (gs_node_source){.width = r->width, .ctx = r, .nodes = random_nodes};
}
