/* analyses/automaton/state_geometry.h */
#include "analyses/automaton/state_geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/registry.h"
#include "base/error.h"
#include "base/prng.h"
#include "engine/arch/family.h"

/* Vitter's algorithm R over one set: every state seen has the same chance
 * cap / seen of being in the sample. */
static int sample_add(gs_state_geometry *g, gs_geom_sample *s, const float *v) {
    if (!s->x && !(s->x = malloc((size_t)g->cap * g->d * sizeof *s->x)))
        return gs_fail("automaton: out of memory for %d states of width %d", g->cap, g->d);
    int64_t slot = s->seen < g->cap ? s->seen : (int64_t)(gs_splitmix64(&g->rng) % (uint64_t)(s->seen + 1));
    s->seen++;
    if (slot >= g->cap) return 0;
    memcpy(s->x + slot * g->d, v, (size_t)g->d * sizeof *v);
    if (slot == s->n) s->n++;
    return 0;
}

static int prefix_states(gs_state_geometry *g, const int *symbols, int length) {
    gs_engine_reset(g->engine);
    for (int t = 0; t < length; t++) {
        int32_t x = symbols[t];
        if (gs_engine_step(g->engine, &x, 1)) return -1;
        const float *s = gs_engine_site(g->engine, g->state);
        if (!s) return gs_fail("automaton: the engine kept no state site");
        memcpy(g->prefix_rows + (size_t)t * g->d, s, (size_t)g->d * sizeof *s);
    }
    /* sampled after the whole string: the engine's rows are only valid until its next step */
    for (int t = 0; t < length; t++)
        if (sample_add(g, &g->set[GS_GEOM_PREFIX][t + 1 <= g->train_length], g->prefix_rows + (size_t)t * g->d)) return -1;
    return 0;
}

static int nodes(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors) {
    gs_state_geometry *g = ctx;
    int n = g->inner.nodes(g->inner.ctx, symbols, length, level, start, span, vectors);
    for (int i = 0; i < n; i++)
        if (sample_add(g, &g->set[GS_GEOM_NODE][span[i] <= g->train_length], vectors + (size_t)i * g->d)) return -1;
    if (n >= 0 && g->engine && prefix_states(g, symbols, length)) return -1;
    return n;
}

int gs_state_geometry_wrap(gs_state_geometry *g, const gs_node_source *inner, const gs_model *model,
                           int train_length, int cap, uint64_t seed, gs_node_source *out) {
    memset(g, 0, sizeof *g);
    g->inner = *inner;
    g->d = inner->width;
    g->cap = cap;
    g->train_length = train_length;
    g->rng = seed ^ 0x6a09e667f3bcc909ull;
    if (model) {
        const gs_site *s = gs_site_of_role(gs_family_of(&model->cfg), &model->cfg, GS_ROLE_STATE);
        if (!s || gs_site_width(s, &model->cfg) != g->d)
            return gs_fail("automaton: the model has no state site as wide as its nodes (%d)", g->d);
        g->state = s->point;
        if (!(g->prefix_rows = malloc((size_t)GS_TASK_MAX_LENGTH * g->d * sizeof *g->prefix_rows)) ||
            !(g->engine = gs_engine_new(model, 1))) {
            gs_state_geometry_free(g);
            return gs_fail_context("automaton: the prefix states: ");
        }
    }
    *out = (gs_node_source){.width = g->d, .ctx = g, .nodes = nodes};
    return 0;
}

int gs_state_geometry_measure(const gs_state_geometry *s, int which, int in_distribution, uint64_t seed, gs_geometry *g,
                              char *why, size_t why_size) {
    memset(g, 0, sizeof *g);
    const gs_geom_sample *set = &s->set[which][in_distribution];
    if (set->n < 2) {
        snprintf(why, why_size, "%d states", set->n);
        return 1;
    }
    int64_t *window = malloc((size_t)set->n * sizeof *window);
    int32_t *pos = calloc((size_t)set->n, sizeof *pos);
    if (!window || !pos) {
        free(window);
        free(pos);
        return gs_fail("automaton: out of memory");
    }
    for (int i = 0; i < set->n; i++) window[i] = i; /* a sample has no order: each state its own window */
    gs_states st = {set->n, s->d, set->x, window, pos};
    gs_states_cursor cur;
    gs_state_source src;
    gs_states_source(&src, &cur, &st);
    gs_analyze_opts o;
    gs_analyze_opts_default(&o);
    o.seed = seed;
    gs_analysis a = {0};
    gs_analysis_ctx c = {.o = &o, .a = &a, .src = &src, .strict = 1};
    int rc = gs_analysis_row_of(GS_AN_GEOMETRY)->run(&c); /* analyze's own geometry row */
    free(window);
    free(pos);
    if (rc) {
        snprintf(why, why_size, "%s", gs_error());
        rc = 1;
    } else {
        *g = a.geometry;
        memset(&a.geometry, 0, sizeof a.geometry);
    }
    gs_analysis_free(&a);
    return rc;
}

void gs_state_geometry_free(gs_state_geometry *g) {
    gs_engine_free(g->engine);
    free(g->prefix_rows);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 2; i++) free(g->set[w][i].x);
    memset(g, 0, sizeof *g);
}
