/* MLP-LDRU's two forms agree (engine/arch/ldru/ldru.h): on a random model,
 * for strings of lengths 1..40, the engine's prefix state after x_t (the
 * streaming stack finished with the padding rule) equals the root the
 * level-by-level tree computes for x_0..x_t, and its logits the tree's; each
 * "tree.level.{i}" node the engine fires equals the tree's node of the same
 * level and segment; NaN rows exactly where no node completes; sequences at
 * different positions in one step; a save / load round trip keeps the family
 * and the numbers; an edit of a level-0 node is carried into later nodes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/engine.h"
#include "testlib.h"

#define MAXB 4
#define MAXT 40

static gs_config config(void) {
    gs_config c = {0};
    c.arch = GS_ARCH_LDRU, c.n_layers = LDRU_SITE_LEVELS, c.norm_eps = LDRU_LN_EPS;
    c.V = 3, c.d = c.e = 8, c.f = 16, c.n_classes = 5;
    return c;
}

/* every fired row of every level and the prefix, per (sequence, step) */
typedef struct {
    int d, B;
    float node[LDRU_SITE_LEVELS][MAXB][MAXT][16];
    float prefix[MAXB][MAXT][16];
    int64_t pos[MAXB];
    int zero_at; /* zero sequence 0's leaf at this position (-1: no edit) */
} capture;

static void on_node(void *ctx, const gs_hook_event *ev) {
    capture *c = ctx;
    for (int b = 0; b < ev->B; b++) {
        if (ev->layer == 0 && b == 0 && ev->positions[b] == c->zero_at)
            memset(ev->data + (size_t)b * ev->width, 0, (size_t)ev->width * sizeof(float));
        memcpy(c->node[ev->layer][b][ev->positions[b]], ev->data + (size_t)b * ev->width, (size_t)ev->width * 4);
    }
}

static void on_prefix(void *ctx, const gs_hook_event *ev) {
    capture *c = ctx;
    for (int b = 0; b < ev->B; b++)
        memcpy(c->prefix[b][ev->positions[b]], ev->data + (size_t)b * ev->width, (size_t)ev->width * 4);
}

static double max_rel(const float *a, const float *b, int n) {
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), den += (double)b[i] * b[i];
    return sqrt(num / (den > 0 ? den : 1));
}

/* run B strings of T symbols through the engine; logits[b][t] of each step */
static int run_engine(const gs_model *m, const int32_t *sym, int B, int T, capture *cap, float *logits) {
    gs_engine *e = gs_engine_new(m, B);
    if (!e) return -1;
    gs_engine_set_hook(e, LDRU_HOOK_NODE, on_node, cap);
    gs_engine_set_hook(e, LDRU_HOOK_PREFIX, on_prefix, cap);
    gs_engine_reset(e);
    int C = m->cfg.n_classes;
    for (int t = 0; t < T; t++) {
        int32_t tok[MAXB];
        for (int b = 0; b < B; b++) tok[b] = sym[b * T + t];
        if (gs_engine_step(e, tok, B)) { gs_engine_free(e); return -1; }
        const float *lg = gs_engine_site(e, GS_HOOK_LOGITS);
        for (int b = 0; b < B; b++) memcpy(logits + ((size_t)b * T + t) * C, lg + (size_t)b * C, (size_t)C * 4);
    }
    gs_engine_free(e);
    return 0;
}

/* the engine against the tree of every prefix length */
static void check_forms(const gs_model *m, const char *label) {
    const gs_config *c = &m->cfg;
    int d = c->d, C = c->n_classes, B = MAXB, T = MAXT;
    ldru_weights w;
    ldru_weights_bind(c, m->block, &w);
    int32_t sym[MAXB * MAXT];
    uint64_t x = 7;
    for (int i = 0; i < B * T; i++) x = x * 6364136223846793005ull + 1442695040888963407ull, sym[i] = (int)((x >> 33) % 3);
    static capture cap;
    memset(&cap, 0, sizeof cap);
    cap.zero_at = -1;
    float *logits = calloc((size_t)B * T * C, 4);
    CHECK(run_engine(m, sym, B, T, &cap, logits) == 0, "engine: %s", gs_error());
    double worst_prefix = 0, worst_logit = 0, worst_node = 0;
    int nodes = 0, nan_ok = 1;
    for (int len = 1; len <= T; len++) {
        int32_t pre[MAXB * MAXT];
        for (int b = 0; b < B; b++) memcpy(pre + b * len, sym + b * T, (size_t)len * sizeof *pre);
        ldru_tree tr;
        CHECK(ldru_tree_alloc(&tr, c, B, len) == 0, "alloc: %s", gs_error());
        ldru_tree_forward(&tr, &w, pre);
        for (int b = 0; b < B; b++) {
            double ep = max_rel(cap.prefix[b][len - 1], ldru_tree_root(&tr, b), d);
            double el = max_rel(logits + ((size_t)b * T + len - 1) * C, tr.logits + (size_t)b * C, C);
            worst_prefix = ep > worst_prefix ? ep : worst_prefix, worst_logit = el > worst_logit ? el : worst_logit;
            /* the nodes completed by x_{len-1}: level L when 2^L divides len */
            for (int L = 0; L < tr.n_levels && L < LDRU_SITE_LEVELS; L++) {
                const float *got = cap.node[L][b][len - 1];
                if (len % (1 << L)) { nan_ok &= isnan(got[0]) != 0; continue; }
                int k = len / (1 << L) - 1, s, e;
                ldru_segment(len, L, k, &s, &e);
                CHECK(s == len - (1 << L) && e == len, "segment of level %d node %d of %d: [%d, %d)", L, k, len, s, e);
                double en = max_rel(got, ldru_tree_node(&tr, b, L, k), d);
                worst_node = en > worst_node ? en : worst_node;
                nodes++;
            }
        }
        ldru_tree_free(&tr);
    }
    printf("  %s: prefix vs tree root %.2e, logits %.2e, %d completed nodes %.2e, lengths 1..%d\n", label, worst_prefix,
           worst_logit, nodes, worst_node, T);
    CHECK(worst_prefix < 1e-5 && worst_logit < 1e-5 && worst_node < 1e-5, "%s: the streaming form differs from the tree",
          label);
    CHECK(nan_ok, "%s: a level fired a number where no node completes", label);

    /* zeroing sequence 0's leaf at position 5 is carried into the level-1..3
     * nodes over it and the later prefixes, and touches nothing before */
    static capture cut;
    memset(&cut, 0, sizeof cut);
    cut.zero_at = 5;
    float *lg2 = calloc((size_t)B * T * C, 4);
    CHECK(run_engine(m, sym, B, T, &cut, lg2) == 0, "engine: %s", gs_error());
    CHECK(!memcmp(cut.prefix[0][4], cap.prefix[0][4], (size_t)d * 4) && memcmp(cut.prefix[0][5], cap.prefix[0][5], (size_t)d * 4) &&
              memcmp(cut.node[2][0][7], cap.node[2][0][7], (size_t)d * 4) && !memcmp(cut.prefix[1], cap.prefix[1], sizeof cap.prefix[1]),
          "%s: a leaf edit was not carried into the level-2 node over it, or changed an earlier step or another sequence", label);
    free(lg2);
    free(logits);
}

/* sequences at different positions in one step: sequence 1 reset at step 3 */
static void check_offsets(const gs_model *m) {
    gs_engine *e = gs_engine_new(m, 2);
    static capture cap;
    memset(&cap, 0, sizeof cap);
    cap.zero_at = -1;
    gs_engine_set_hook(e, LDRU_HOOK_PREFIX, on_prefix, &cap);
    gs_engine_reset(e);
    int32_t s0[9] = {0, 1, 2, 2, 1, 0, 1, 1, 2};
    for (int t = 0; t < 9; t++) {
        if (t == 3) gs_engine_reset_seq(e, 1);
        int32_t tok[2] = {s0[t], s0[t >= 3 ? t - 3 : t]};
        gs_engine_step(e, tok, 2);
    }
    gs_engine_free(e);
    /* sequence 1 restarted with s0's first 6 symbols: its prefix at 5 is s0's at 5 */
    CHECK(!memcmp(cap.prefix[1][5], cap.prefix[0][5], (size_t)m->cfg.d * 4), "a sequence reset mid-batch differs");
}

int main(void) {
    gs_config c = config();
    const gs_family *f = gs_family_of(&c);
    CHECK(f && !strcmp(f->name, "ldru"), "the family table has no ldru row");
    gs_model *m = gs_model_random(&c, 11);
    CHECK(m != NULL, "random model: %s", gs_error());
    if (!m) return test_summary();
    check_forms(m, "random");
    check_offsets(m);

    char path[512];
    snprintf(path, sizeof path, "%s/ldru.safetensors", scratch_dir("test_ldru"));
    CHECK(gs_model_save(m, path, 0) == 0, "save: %s", gs_error());
    gs_model *back = gs_model_load(path);
    CHECK(back && !memcmp(&back->cfg, &m->cfg, sizeof c) && !memcmp(back->block, m->block, m->n_params * 4),
          "round trip: %s", back ? "config or weights differ" : gs_error());
    if (back) check_forms(back, "reloaded");
    gs_model_free(back);
    gs_model_free(m);
    return test_summary();
}
