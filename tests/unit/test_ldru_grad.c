/* MLP-LDRU's backward (engine/arch/ldru/ldru_backward.c) against central
 * finite differences of the forward: loss = sum R * logits for a fixed random
 * R, strings of lengths 1, 2, 5 (padding at two levels) and 8, every tensor,
 * up to 24 entries each, in float32 (eps 1e-2, ||fd - g|| /
 * ||g|| < 2e-2 per tensor). Then the sign test: negating the gradient of one
 * tensor must fail the same comparison (the check can fail). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/ldru/ldru.h"
#include "testlib.h"

static gs_config config(void) {
    gs_config c = {0};
    c.arch = GS_ARCH_LDRU, c.n_layers = LDRU_SITE_LEVELS, c.norm_eps = LDRU_LN_EPS;
    c.V = 3, c.d = c.e = 6, c.f = 10, c.n_classes = 3;
    return c;
}

static double loss_of(const gs_config *c, const float *block, ldru_tree *t, const int32_t *sym, const float *R) {
    ldru_weights w;
    ldru_weights_bind(c, block, &w);
    ldru_tree_forward(t, &w, sym);
    double s = 0;
    for (int i = 0; i < t->B * t->C; i++) s += (double)R[i] * t->logits[i];
    return s;
}

/* the worst per-tensor relative error of the analytic gradient (sign flips
 * the gradient of tensor `flip`, -1: none) */
static double check_length(gs_model *m, int B, int T, int flip, int verbose) {
    const gs_config *c = &m->cfg;
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    ldru_tree t;
    if (ldru_tree_alloc(&t, c, B, T)) return 1e30;
    int32_t *sym = malloc((size_t)B * T * sizeof *sym);
    float *R = malloc((size_t)B * c->n_classes * sizeof *R), *grads = calloc(m->n_params, sizeof(float));
    uint64_t x = 99 + T;
    for (int i = 0; i < B * T; i++) x = x * 6364136223846793005ull + 1442695040888963407ull, sym[i] = (int)((x >> 33) % c->V);
    for (int i = 0; i < B * c->n_classes; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull, R[i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
    loss_of(c, m->block, &t, sym, R);
    ldru_weights w;
    ldru_weights_bind(c, m->block, &w);
    ldru_tree_backward(&t, &w, sym, R, grads);
    double worst = 0;
    for (int s = 0; s < n; s++) {
        double num = 0, den = 0;
        size_t stride = specs[s].numel > 24 ? specs[s].numel / 24 : 1;
        for (size_t j = 0; j < specs[s].numel; j += stride) {
            float *p = m->block + specs[s].offset + j, keep = *p, eps = 1e-2f;
            *p = keep + eps;
            double lp = loss_of(c, m->block, &t, sym, R);
            *p = keep - eps;
            double lm = loss_of(c, m->block, &t, sym, R);
            *p = keep;
            double fd = (lp - lm) / (2.0 * eps), g = grads[specs[s].offset + j] * (s == flip ? -1.0 : 1.0);
            num += (fd - g) * (fd - g), den += fd * fd;
        }
        /* a tensor the loss does not reach (the embedding of an unused symbol) has fd = g = 0 */
        double e = den > 1e-20 ? sqrt(num / den) : sqrt(num);
        if (verbose && e > 2e-2) printf("  T=%d %s: relative error %.2e\n", T, specs[s].name, e);
        worst = e > worst ? e : worst;
    }
    ldru_tree_free(&t);
    free(sym), free(R), free(grads);
    return worst;
}

int main(void) {
    gs_config c = config();
    gs_model *m = gs_model_random(&c, 5);
    CHECK(m != NULL, "%s", gs_error());
    if (!m) return test_summary();
    /* the LayerNorm gain and the biases are 1 and 0 in a random model: perturb them so their gradients are general */
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&c, specs);
    uint64_t x = 3;
    for (int s = 0; s < n; s++)
        if (specs[s].ndim == 1)
            for (size_t j = 0; j < specs[s].numel; j++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                m->block[specs[s].offset + j] += (float)(0.6 * ((double)(x >> 11) / 9007199254740992.0 - 0.5));
            }
    const int lengths[] = {1, 2, 5, 8};
    for (int i = 0; i < 4; i++) {
        double e = check_length(m, 3, lengths[i], -1, 1);
        printf("  length %d: worst per-tensor relative error of the gradient %.2e\n", lengths[i], e);
        CHECK(e < 2e-2, "length %d: the backward differs from finite differences (%.2e)", lengths[i], e);
    }
    double flipped = check_length(m, 3, 5, LDRU_W1, 0);
    printf("  length 5 with W1's gradient negated: %.2e (must fail)\n", flipped);
    CHECK(flipped > 0.5, "negating a gradient went unnoticed (%.2e)", flipped);
    gs_model_free(m);
    return test_summary();
}
