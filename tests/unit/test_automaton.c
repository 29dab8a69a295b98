/* The automaton analysis (analyses/automaton/automaton.h) at the two ends
 * of its scale, with the reference node sources (node_sources.h):
 * - the balanced tree tiles every string at every level, has one root, and
 *   fits GS_NODES_MAX;
 * - an exact automaton (node vector = one-hot of its segment's monoid
 *   element) gives purity 1 and ARI 1 in every cell, k-means and the
 *   self-chosen clustering alike, and the latter finds as many clusters as
 *   its sample has elements; cells split at the training length (in: spans
 *   <= 40, out: > 40); level 0 holds the symbols' elements;
 * - random vectors give |ARI| < 0.05 in every cell of >= 500 points with two
 *   or more elements, and purity at least the majority share;
 * - a run is deterministic; a source that gives a node outside its string
 *   fails in one line naming it;
 * - the MLP-LDRU glue (ldru_nodes.h) on a random model: its nodes have the
 *   balanced tree's levels and segments, and its level-0 vectors (the two
 *   symbols' embeddings, which differ) cluster exactly into parity's two
 *   one-symbol elements; a model of another family, or a task whose
 *   alphabet is not the model's, is refused in one line. */
#include "analyses/automaton/automaton.h"
#include "analyses/automaton/ldru_nodes.h"
#include "analyses/automaton/node_sources.h"
#include "base/error.h"
#include "testlib.h"

static void check_tree(void) {
    int level[GS_NODES_MAX(300)], start[GS_NODES_MAX(300)], span[GS_NODES_MAX(300)], bad = 0;
    for (int len = 1; len <= 300; len++) {
        int n = gs_balanced_tree(len, level, start, span), top = 0;
        if (n > GS_NODES_MAX(len)) bad++;
        for (int i = 0; i < n; i++) top = level[i] > top ? level[i] : top;
        for (int l = 0; l <= top; l++) { /* the level's segments, in order, tile [0, len) */
            int at = 0;
            for (int i = 0; i < n; i++)
                if (level[i] == l) {
                    if (start[i] != at || span[i] > (1 << l)) bad++;
                    at = start[i] + span[i];
                }
            if (at != len) bad++;
        }
        int roots = 0;
        for (int i = 0; i < n; i++) roots += level[i] == top;
        if (roots != 1 || (len > 1 && top != (int)ceil(log2(len)))) bad++;
    }
    CHECK(bad == 0, "balanced tree: %d defects over lengths 1..300", bad);
}

static int outside(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors) {
    (void)ctx, (void)symbols;
    level[0] = 0, start[0] = length - 1, span[0] = 2, vectors[0] = 1;
    return 1;
}

static void check_ldru(void) {
    gs_config c = {0};
    c.arch = GS_ARCH_LDRU, c.n_layers = LDRU_SITE_LEVELS, c.norm_eps = LDRU_LN_EPS;
    c.V = 2, c.d = c.e = 8, c.f = 16, c.n_classes = 2;
    gs_model *m = gs_model_random(&c, 5);
    CHECK(m != NULL, "random LDRU: %s", gs_error());
    if (!m) return;
    gs_ldru_nodes ctx;
    gs_node_source src;
    CHECK(gs_node_source_ldru(m, gs_task_find("parity"), &ctx, &src) == 0 && src.width == 8, "%s", gs_error());
    enum { T = 37 };
    int sym[T], level[GS_NODES_MAX(T)], start[GS_NODES_MAX(T)], span[GS_NODES_MAX(T)];
    int blevel[GS_NODES_MAX(T)], bstart[GS_NODES_MAX(T)], bspan[GS_NODES_MAX(T)];
    float vec[GS_NODES_MAX(T) * 8];
    for (int t = 0; t < T; t++) sym[t] = (t * 7 + t / 3) % 2;
    int n = src.nodes(src.ctx, sym, T, level, start, span, vec), nb = gs_balanced_tree(T, blevel, bstart, bspan);
    int same = n == nb;
    for (int i = 0; same && i < n; i++) same = level[i] == blevel[i] && start[i] == bstart[i] && span[i] == bspan[i];
    CHECK(same, "LDRU nodes (%d) are not the balanced tree's (%d) in level, start and span", n, nb);
    gs_automaton_opts o;
    gs_automaton_opts_default(&o);
    o.task = gs_task_find("parity");
    o.n_strings = 30;
    o.max_length = 64;
    gs_automaton_result r;
    CHECK(gs_automaton_run(&src, &o, &r) == 0 && r.n_cells > 0, "%s", gs_error());
    const gs_automaton_cell *leaves = r.n_cells > 0 ? &r.cells[0] : NULL;
    CHECK(leaves && leaves->grouping == GS_CELL_LEVEL && leaves->bucket == 0 && leaves->n_elements == 2 &&
              leaves->kmeans_purity == 1 && leaves->kmeans_ari == 1,
          "LDRU level 0: the embeddings of 0 and 1 do not separate parity's two elements");
    gs_automaton_result_free(&r);
    CHECK(gs_node_source_ldru(m, gs_task_find("cycle_navigation"), &ctx, &src) == -1 &&
              strstr(gs_error(), "reads 2 symbols but task cycle_navigation has 3"), "%s", gs_error());
    gs_model other = *m;
    other.cfg.arch = GS_ARCH_ELMAN;
    CHECK(gs_node_source_ldru(&other, gs_task_find("parity"), &ctx, &src) == -1 && strstr(gs_error(), "reads MLP-LDRU's tree"),
          "%s", gs_error());
    gs_model_free(m);
}

int main(void) {
    check_tree();
    const gs_task *task = gs_task_find("tomita3");
    gs_dfa dfa;
    gs_task_dfa(task, &dfa);
    gs_monoid *m = gs_monoid_build(&dfa, 1000);
    gs_automaton_opts o;
    gs_automaton_opts_default(&o);
    o.task = task;
    o.n_strings = 80;
    o.max_length = 120;
    o.max_points = 1000; /* (smaller samples than the command's, to keep the test short) */
    o.auto_points = 400;
    gs_node_source exact = gs_node_source_exact(m);
    gs_automaton_result r, r2;
    CHECK(gs_automaton_run(&exact, &o, &r) == 0, "%s", gs_error());
    CHECK(r.monoid_size == 26 && r.n_strings == 80 && r.n_cells > 8, "monoid %d, %d strings, %d cells", r.monoid_size,
          r.n_strings, r.n_cells);
    int n_in = 0, n_out = 0, perfect = 1, found = 1, split = 1, level0 = 0;
    for (int i = 0; i < r.n_cells; i++) {
        const gs_automaton_cell *c = &r.cells[i];
        *(c->in_distribution ? &n_in : &n_out) += 1;
        if (c->kmeans_purity != 1 || c->kmeans_ari != 1 || c->auto_purity != 1 || c->auto_ari != 1) {
            perfect = 0;
            printf("cell %d (%s %s %d): purity %.4f ARI %.4f auto %.4f %.4f\n", i, c->in_distribution ? "in" : "out",
                   c->grouping ? "length" : "level", c->bucket, c->kmeans_purity, c->kmeans_ari, c->auto_purity, c->auto_ari);
        }
        if (c->auto_elements >= 2 && c->auto_k != c->auto_elements) found = 0;
        if (c->in_distribution ? c->max_span > 40 : c->min_span <= 40) split = 0;
        if (c->grouping == GS_CELL_LEVEL && c->bucket == 0) level0 = c->n_elements; /* "0" and "1" */
    }
    CHECK(perfect, "exact automaton: every cell has purity 1 and ARI 1");
    CHECK(found, "exact automaton: the silhouette finds as many clusters as elements");
    CHECK(split && n_in > 0 && n_out > 0, "in/out split at 40 (%d in, %d out cells)", n_in, n_out);
    CHECK(level0 == 2, "level 0 holds the 2 symbols' elements, got %d", level0);
    CHECK(gs_automaton_run(&exact, &o, &r2) == 0 && r2.n_cells == r.n_cells &&
              !memcmp(r.cells, r2.cells, (size_t)r.n_cells * sizeof *r.cells), "deterministic");
    gs_automaton_result_free(&r2);
    gs_automaton_result_free(&r);

    gs_random_nodes rn = {.state = 7, .width = 16};
    gs_node_source random = gs_node_source_random(&rn);
    CHECK(gs_automaton_run(&random, &o, &r) == 0, "%s", gs_error());
    int checked = 0, near_zero = 1, above_majority = 1;
    for (int i = 0; i < r.n_cells; i++) {
        const gs_automaton_cell *c = &r.cells[i];
        if (c->kmeans_purity < c->majority) above_majority = 0;
        if (c->n_points < 500 || c->n_elements < 2) continue;
        checked++;
        if (!(fabs(c->kmeans_ari) < 0.05 && fabs(c->auto_ari) < 0.05)) {
            near_zero = 0;
            printf("random cell %d: ARI %.4f auto %.4f (%d points)\n", i, c->kmeans_ari, c->auto_ari, c->n_points);
        }
    }
    CHECK(checked >= 4 && near_zero, "random vectors: |ARI| < 0.05 in the %d cells of >= 500 points", checked);
    CHECK(above_majority, "purity is at least the majority share");
    gs_automaton_result_free(&r);

    check_ldru();

    gs_node_source bad = {.width = 1, .nodes = outside};
    CHECK(gs_automaton_run(&bad, &o, &r) == -1 && strstr(gs_error(), "node source gave node 0"), "%s", gs_error());
    o.max_length = 5000;
    CHECK(gs_automaton_run(&exact, &o, &r) == -1 && strstr(gs_error(), "maximum length"), "%s", gs_error());
    gs_monoid_free(m);
    return test_summary();
}
