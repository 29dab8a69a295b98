/* analyses/automaton/automaton.h */
#include "analyses/automaton/automaton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/automaton/clusters.h"
#include "analyses/automaton/monoid.h"
#include "base/error.h"
#include "base/prng.h"

#define MAX_BUCKETS 24 /* levels and log2 length buckets: a binary tree over 1000 symbols has 11 */
#define AUTO_K_MAX 128 /* the largest k the self-chosen clustering tries */

void gs_automaton_opts_default(gs_automaton_opts *o) {
    memset(o, 0, sizeof *o);
    o->n_strings = 200;
    o->max_length = 256;
    o->train_length = 40;
    o->max_points = 2000;
    o->auto_points = 600;
    o->seed = 1;
}

/* The nodes of one cell: a uniform reservoir sample (Vitter's algorithm R)
 * of their vectors with their monoid elements. */
typedef struct {
    int64_t seen;
    int n, min_span, max_span;
    int *element;
    float *vec;
} reservoir;

static int reservoir_add(reservoir *c, int cap, int width, uint64_t *rng, int element, int span, const float *v) {
    if (!c->vec) {
        c->element = malloc((size_t)cap * sizeof *c->element);
        c->vec = malloc((size_t)cap * width * sizeof *c->vec);
        if (!c->element || !c->vec) return gs_fail("automaton: out of memory for %d node vectors of width %d", cap, width);
        c->min_span = c->max_span = span;
    }
    if (span < c->min_span) c->min_span = span;
    if (span > c->max_span) c->max_span = span;
    int64_t slot = c->seen < cap ? c->seen : (int64_t)(gs_splitmix64(rng) % (uint64_t)(c->seen + 1));
    c->seen++;
    if (slot >= cap) return 0;
    c->element[slot] = element;
    memcpy(c->vec + (size_t)slot * width, v, (size_t)width * sizeof *v);
    if (slot == c->n) c->n++;
    return 0;
}

/* b with 2^(b-1) < span <= 2^b (0 for a single symbol). */
static int length_bucket(int span) {
    int b = 0;
    while ((1 << b) < span) b++;
    return b;
}

/* Clusters the cell's sample and scores it against the elements. */
static int score_cell(const reservoir *c, int width, int auto_points, uint64_t seed, gs_automaton_cell *out) {
    int n = c->n, *assign = malloc((size_t)n * sizeof *assign);
    int *pick = malloc((size_t)n * sizeof *pick), *sub_el = malloc((size_t)n * sizeof *sub_el);
    float *sub = malloc((size_t)(auto_points < n ? auto_points : n) * width * sizeof *sub);
    int rc = assign && pick && sub_el && sub ? 0 : gs_fail("automaton: out of memory scoring %d points", n);
    out->n_nodes = c->seen;
    out->n_points = n;
    out->min_span = c->min_span;
    out->max_span = c->max_span;
    if (!rc) {
        out->n_elements = gs_distinct_count(c->element, n);
        out->majority = gs_majority_share(c->element, n);
        rc = gs_kmeans(c->vec, n, width, out->n_elements, seed, 3, assign, NULL);
    }
    if (!rc) {
        out->kmeans_purity = gs_purity(c->element, assign, n);
        out->kmeans_ari = gs_adjusted_rand(c->element, assign, n);
        /* The self-chosen clustering's sample: a partial Fisher-Yates shuffle
         * (the reservoir's first slots hold the first strings' nodes). */
        uint64_t rng = seed ^ 0x5bd1e995u;
        int m = auto_points < n ? auto_points : n;
        for (int i = 0; i < n; i++) pick[i] = i;
        for (int i = 0; i < m; i++) {
            int j = i + (int)(gs_splitmix64(&rng) % (uint64_t)(n - i)), t = pick[i];
            pick[i] = pick[j], pick[j] = t;
            sub_el[i] = c->element[pick[i]];
            memcpy(sub + (size_t)i * width, c->vec + (size_t)pick[i] * width, (size_t)width * sizeof *sub);
        }
        out->auto_points = m;
        out->auto_elements = gs_distinct_count(sub_el, m);
        int k_max = 2 * out->auto_elements < 8 ? 8 : 2 * out->auto_elements;
        if (k_max > AUTO_K_MAX) k_max = AUTO_K_MAX;
        rc = gs_kmeans_auto(sub, m, width, k_max, out->auto_elements, seed + 7, assign, &out->auto_k, &out->auto_silhouette);
        if (!rc) {
            out->auto_purity = gs_purity(sub_el, assign, m);
            out->auto_ari = gs_adjusted_rand(sub_el, assign, m);
        }
    }
    free(assign), free(pick), free(sub_el), free(sub);
    return rc;
}

static int check_opts(const gs_node_source *src, const gs_automaton_opts *o) {
    if (!o->task) return gs_fail("automaton: no task given");
    if (!src || !src->nodes || src->width < 1) return gs_fail("automaton: the node source has no nodes function or no width");
    if (o->n_strings < 1 || o->n_strings > 1000000) return gs_fail("automaton: %d strings: give 1..1000000", o->n_strings);
    if (o->max_length < 1 || o->max_length > GS_TASK_MAX_LENGTH)
        return gs_fail("automaton: a maximum length of %d: give 1..%d", o->max_length, GS_TASK_MAX_LENGTH);
    if (o->train_length < 1) return gs_fail("automaton: a training length of %d: give one >= 1", o->train_length);
    if (o->max_points < 2 || o->auto_points < 2) return gs_fail("automaton: at least 2 points per cell");
    return 0;
}

/* Checks node i of a source's answer for a string of LENGTH symbols. */
static int check_node(int i, int level, int start, int span, int length) {
    if (level < 0 || level >= MAX_BUCKETS || start < 0 || span < 1 || start + span > length)
        return gs_fail("automaton: the node source gave node %d at level %d covering [%d, %d) of a string of %d symbols",
                       i, level, start, start + span, length);
    return 0;
}

int gs_automaton_run(const gs_node_source *src, const gs_automaton_opts *o, gs_automaton_result *r) {
    memset(r, 0, sizeof *r);
    if (check_opts(src, o)) return -1;
    gs_dfa dfa;
    gs_task_dfa(o->task, &dfa);
    gs_monoid *m = gs_monoid_build(&dfa, GS_MONOID_DEFAULT_MAX);
    if (!m) return gs_fail_context("automaton: task %s: ", o->task->name);
    r->monoid_size = gs_monoid_size(m);
    r->dfa_states = dfa.n_states;
    int cap = GS_NODES_MAX(o->max_length), w = src->width;
    int *symbols = malloc((size_t)o->max_length * sizeof *symbols), *level = malloc((size_t)cap * sizeof *level);
    int *start = malloc((size_t)cap * sizeof *start), *span = malloc((size_t)cap * sizeof *span);
    float *vec = malloc((size_t)cap * w * sizeof *vec);
    reservoir(*cells)[2][MAX_BUCKETS] = calloc(2, sizeof *cells); /* [in][grouping][bucket] */
    int rc = symbols && level && start && span && vec && cells ? 0 : gs_fail("automaton: out of memory");
    uint64_t strings = o->seed, sampling = o->seed ^ 0x9e3779b97f4a7c15ull;
    for (int s = 0; !rc && s < o->n_strings; s++) {
        int len = 1 + (int)(gs_splitmix64(&strings) % (uint64_t)o->max_length), label;
        if (o->task->odd_lengths_only && len % 2 == 0) len = len < o->max_length ? len + 1 : len - 1;
        rc = gs_task_generate(o->task, len, 1, gs_splitmix64(&strings), symbols, &label);
        int n = rc ? 0 : src->nodes(src->ctx, symbols, len, level, start, span, vec);
        if (!rc && (n < 0 || n > GS_NODES_MAX(len)))
            rc = n < 0 ? gs_fail_context("automaton: string %d: ", s)
                       : gs_fail("automaton: the node source gave %d nodes for %d symbols (at most %d)", n, len, GS_NODES_MAX(len));
        for (int i = 0; !rc && i < n; i++) {
            if ((rc = check_node(i, level[i], start[i], span[i], len))) break;
            int e = gs_monoid_word(m, symbols + start[i], span[i]), in = span[i] <= o->train_length;
            const float *v = vec + (size_t)i * w;
            rc = reservoir_add(&cells[in][GS_CELL_LEVEL][level[i]], o->max_points, w, &sampling, e, span[i], v);
            if (!rc)
                rc = reservoir_add(&cells[in][GS_CELL_LENGTH][length_bucket(span[i])], o->max_points, w, &sampling, e, span[i], v);
        }
        r->n_nodes += n;
        r->n_strings = s + 1;
        if (!rc && o->progress && o->progress(o->progress_ctx, s + 1, o->n_strings))
            rc = gs_fail("automaton: stopped after %d of %d strings", s + 1, o->n_strings);
    }
    if (!rc && !(r->cells = calloc(2 * 2 * MAX_BUCKETS, sizeof *r->cells))) rc = gs_fail("automaton: out of memory");
    for (int g = 0; !rc && g < 2; g++)
        for (int in = 1; !rc && in >= 0; in--)
            for (int b = 0; !rc && b < MAX_BUCKETS; b++) {
                const reservoir *c = &cells[in][g][b];
                if (!c->n) continue;
                gs_automaton_cell *out = &r->cells[r->n_cells++];
                out->in_distribution = in;
                out->grouping = g;
                out->bucket = b;
                rc = score_cell(c, w, o->auto_points, o->seed + (uint64_t)(((g * 2 + in) * MAX_BUCKETS + b) * 1000003), out);
            }
    for (int in = 0; cells && in < 2; in++)
        for (int g = 0; g < 2; g++)
            for (int b = 0; b < MAX_BUCKETS; b++) free(cells[in][g][b].element), free(cells[in][g][b].vec);
    free(cells), free(symbols), free(level), free(start), free(span), free(vec);
    gs_monoid_free(m);
    if (rc) gs_automaton_result_free(r);
    return rc;
}

void gs_automaton_result_free(gs_automaton_result *r) {
    free(r->cells);
    r->cells = NULL;
    r->n_cells = 0;
}
