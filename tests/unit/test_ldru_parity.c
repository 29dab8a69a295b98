/* MLP-LDRU against its float64 numpy reference (tests/reference/ldru_reference.py,
 * written from the equations, run with $GPNSCOPE_PYTHON): random weights,
 * lengths 1, 2, 3, 7, 16 and 40 (odd ones pad), every level's nodes from the
 * batch tree (ldru_tree_forward) and its root logits, the prefix states and
 * per-prefix logits from the engine's sites, each within 1e-4 relative.
 * Given WEIGHTS EXPECT pairs, checks those instead. Skipped (77) without numpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/ldru/ldru.h"
#include "io/checkpoint/safetensors.h"
#include "engine/engine.h"
#include "testlib.h"

static double rel_to(const st_file *ex, const char *name, const float *got, size_t n, int *found) {
    const st_tensor *t = safetensors_find(ex, name);
    *found = t && (size_t)t->numel == n;
    if (!*found) return 1e30;
    float *want = malloc(n * sizeof(float));
    st_tensor_to_f32(t, want);
    double e = rel_err(got, want, (long)n);
    free(want);
    return e;
}

typedef struct {
    float *prefix;
    int d, T;
    int64_t t;
} prefix_cap;

static void on_prefix(void *ctx, const gs_hook_event *ev) {
    prefix_cap *c = ctx;
    for (int b = 0; b < ev->B; b++)
        memcpy(c->prefix + ((size_t)b * c->T + ev->positions[b]) * c->d, ev->data + (size_t)b * c->d, (size_t)c->d * 4);
}

static void check_pair(const char *label, const char *wpath, const char *epath) {
    gs_model *m = gs_model_load(wpath);
    st_file *ex = safetensors_open(epath);
    CHECK(m && ex, "%s: %s", label, gs_error());
    if (!m || !ex) { gs_model_free(m); safetensors_close(ex); return; }
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1], d = m->cfg.d, C = m->cfg.n_classes;
    /* a copy: a tensor's bytes in a safetensors file need not sit at a 4-byte boundary (UBSan) */
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    memcpy(tok, tt->data, (size_t)B * T * sizeof *tok);
    ldru_weights w;
    ldru_weights_bind(&m->cfg, m->block, &w);
    ldru_tree tr;
    CHECK(ldru_tree_alloc(&tr, &m->cfg, B, T) == 0, "%s", gs_error());
    ldru_tree_forward(&tr, &w, tok);
    int found;
    double worst = 0;
    for (int L = 0; L < tr.n_levels; L++) {
        char name[32];
        snprintf(name, sizeof name, "node_%d", L);
        double e = rel_to(ex, name, tr.h + tr.offset[L] * d, (size_t)B * tr.count[L] * d, &found);
        CHECK(found && e < 1e-4, "%s: level %d's %d nodes: relative error %.2e%s", label, L, tr.count[L], e,
              found ? "" : " (not in the expect file)");
        worst = e > worst ? e : worst;
    }
    char beyond[32];
    snprintf(beyond, sizeof beyond, "node_%d", tr.n_levels);
    CHECK(!safetensors_find(ex, beyond), "%s: the reference has more levels than the %d of the tree", label, tr.n_levels);
    double el = rel_to(ex, "root_logits", tr.logits, (size_t)B * C, &found);
    CHECK(found && el < 1e-4, "%s: root logits %.2e", label, el);
    int levels = tr.n_levels;
    ldru_tree_free(&tr);

    /* the engine's prefix states and per-prefix logits */
    prefix_cap cap = {calloc((size_t)B * T * d, 4), d, T, 0};
    float *logits = calloc((size_t)B * T * C, 4);
    gs_engine *e = gs_engine_new(m, B);
    CHECK(e != NULL, "%s", gs_error());
    gs_engine_set_hook(e, LDRU_HOOK_PREFIX, on_prefix, &cap);
    gs_engine_reset(e);
    for (int t = 0; e && t < T; t++) {
        int32_t step[64];
        for (int b = 0; b < B; b++) step[b] = tok[b * T + t];
        CHECK(gs_engine_step(e, step, B) == 0, "%s", gs_error());
        const float *lg = gs_engine_site(e, GS_HOOK_LOGITS);
        for (int b = 0; b < B; b++) memcpy(logits + ((size_t)b * T + t) * C, lg + (size_t)b * C, (size_t)C * 4);
    }
    gs_engine_free(e);
    double ep = rel_to(ex, "prefix", cap.prefix, (size_t)B * T * d, &found);
    CHECK(found && ep < 1e-4, "%s: prefix states %.2e", label, ep);
    double eq = rel_to(ex, "logits", logits, (size_t)B * T * C, &found);
    CHECK(found && eq < 1e-4, "%s: per-prefix logits %.2e", label, eq);
    printf("  %-8s B=%d T=%-3d levels %d: nodes %.2e, root logits %.2e, prefix %.2e, prefix logits %.2e\n", label, B, T,
           levels, worst, el, ep, eq);
    free(cap.prefix);
    free(logits);
    free(tok);
    gs_model_free(m);
    safetensors_close(ex);
}

int main(int argc, char **argv) {
    if (test_each_pair(argc, argv, check_pair)) return test_summary();
    const char *py = test_numpy_python(), *src = getenv("GPNSCOPE_SOURCE");
    if (!py) return test_skip(TEST_NO_NUMPY);
    if (!src) src = ".";
    char cmd[8600];
    /* S d f C B T seed: the task alphabets' sizes, lengths 1 to 40 */
    static const int cases[][7] = {{2, 16, 32, 2, 3, 1, 1},  {2, 16, 32, 2, 3, 2, 2},  {3, 16, 24, 5, 2, 3, 3},
                                   {3, 12, 48, 5, 4, 7, 4},  {8, 16, 32, 5, 2, 16, 5}, {2, 16, 32, 2, 3, 40, 6}};
    const char *dir = scratch_dir("test_ldru_parity");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const int *k = cases[i];
        char prefix[4200], w[4300], e[4300], label[16];
        snprintf(label, sizeof label, "T%d", k[5]);
        snprintf(prefix, sizeof prefix, "%s/%s", dir, label);
        snprintf(cmd, sizeof cmd, "'%s' '%s/tests/reference/ldru_reference.py' make '%s' %d %d %d %d %d %d %d", py, src,
                 prefix, k[0], k[1], k[2], k[3], k[4], k[5], k[6]);
        CHECK(system(cmd) == 0, "the reference failed: %s", cmd);
        snprintf(w, sizeof w, "%s.weights.safetensors", prefix);
        snprintf(e, sizeof e, "%s.expect.safetensors", prefix);
        check_pair(label, w, e);
    }
    return test_summary();
}
