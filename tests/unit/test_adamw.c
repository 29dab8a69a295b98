/* The optimizer against a hand computation: the warm-up + cosine schedule at
 * its landmarks (optax.warmup_cosine_decay_schedule), AdamW steps with global
 * norm clipping recomputed here in double from the formulas, and the weight
 * decay mask (matrices only; embedding included; norms, biases, A_log,
 * dt_bias never). */
#include "train/adamw.h"
#include "testlib.h"

static uint64_t rs = 88172645463325252ull;
static double urand(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

static void check_schedule(void) {
    adamw_config c = {.lr = 1e-3, .min_lr_ratio = 0.1, .warmup = 10, .total_steps = 110};
    CHECK(adamw_schedule(&c, 0) == 0.0, "schedule(0) = %g, optax starts warm-up at init_value 0", adamw_schedule(&c, 0));
    CHECK(fabs(adamw_schedule(&c, 5) - 5e-4) < 1e-15, "schedule(5) = %g", adamw_schedule(&c, 5));
    CHECK(fabs(adamw_schedule(&c, 10) - 1e-3) < 1e-15, "peak at the end of warm-up: %g", adamw_schedule(&c, 10));
    /* half way through the cosine: (peak + end) / 2 */
    CHECK(fabs(adamw_schedule(&c, 60) - 0.55e-3) < 1e-15, "schedule(60) = %g", adamw_schedule(&c, 60));
    double q = 1e-4 + 0.9e-3 * 0.5 * (1 + cos(M_PI * 25.0 / 100.0));
    CHECK(fabs(adamw_schedule(&c, 35) - q) < 1e-15, "schedule(35) = %g, want %g", adamw_schedule(&c, 35), q);
    CHECK(fabs(adamw_schedule(&c, 110) - 1e-4) < 1e-15, "end value: %g", adamw_schedule(&c, 110));
    CHECK(fabs(adamw_schedule(&c, 500) - 1e-4) < 1e-15, "stays at the end value: %g", adamw_schedule(&c, 500));
    for (long k = 1; k < 110; k++)
        CHECK(k < 10 ? adamw_schedule(&c, k) > adamw_schedule(&c, k - 1) : adamw_schedule(&c, k + 1) <= adamw_schedule(&c, k),
              "schedule not monotone at %ld", k);
    adamw_config nw = c;
    nw.warmup = 0;
    CHECK(fabs(adamw_schedule(&nw, 0) - 1e-3) < 1e-15, "no warm-up: cosine from the peak (%g)", adamw_schedule(&nw, 0));
    printf("  schedule: 0 -> %.2e -> peak %.2e at 10 -> %.2e at 60 -> %.2e at 110\n", adamw_schedule(&c, 5),
           adamw_schedule(&c, 10), adamw_schedule(&c, 60), adamw_schedule(&c, 110));
}

static void check_steps(void) {
    gs_config mc = {.arch = GS_ARCH_GPN_M, .n_layers = 1, .d = 4, .e = 3, .f = 5, .H = 2, .dk = 2, .dv = 3, .V = 7,
                     .decoder_bias = 1};
    adamw_config c = {.lr = 0.05, .min_lr_ratio = 0.1, .warmup = 2, .total_steps = 6, .beta1 = 0.9, .beta2 = 0.95,
                      .eps = 1e-8, .weight_decay = 0.1, .clip = 1.0};
    adamw *o = adamw_new(&mc, &c);
    CHECK(o != NULL, "adamw_new");
    if (!o) return;
    size_t n = o->n;
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int ns = gs_tensor_specs(&mc, specs);
    double *P = calloc(n, 8), *m = calloc(n, 8), *v = calloc(n, 8);
    char *decays = calloc(n, 1);
    float *p = calloc(n, 4), *g = calloc(n, 4);
    for (int i = 0; i < ns; i++) /* the companion's mask: ndim >= 2, except A_log / dt_bias (1-D anyway) */
        for (size_t k = 0; k < specs[i].numel; k++) decays[specs[i].offset + k] = specs[i].ndim >= 2;
    for (size_t i = 0; i < n; i++) P[i] = p[i] = (float)(2 * urand() - 1);
    double max_err = 0;
    for (int step = 1; step <= 5; step++) {
        /* gradients whose norm is above the clip on odd steps, below on even */
        double scale = step % 2 ? 3.0 : 0.01, ss = 0;
        for (size_t i = 0; i < n; i++) {
            g[i] = (float)(scale * (2 * urand() - 1) / sqrt((double)n));
            ss += (double)g[i] * g[i];
        }
        double norm = sqrt(ss), k = norm > c.clip ? c.clip / norm : 1.0;
        double lr = step <= 2 ? c.lr * (step - 1) / 2.0
                              : 0.005 + 0.045 * 0.5 * (1 + cos(M_PI * (double)(step - 1 - 2) / 4.0));
        double gexp[4096];
        for (size_t i = 0; i < n; i++) gexp[i] = (double)g[i] * k;
        for (size_t i = 0; i < n; i++) {
            m[i] = 0.9 * m[i] + 0.1 * gexp[i];
            v[i] = 0.95 * v[i] + 0.05 * gexp[i] * gexp[i];
            double u = (m[i] / (1 - pow(0.9, step))) / (sqrt(v[i] / (1 - pow(0.95, step))) + 1e-8);
            if (decays[i]) u += 0.1 * P[i];
            P[i] -= lr * u;
        }
        double lr_used, gn = adamw_step(o, p, g, &lr_used);
        CHECK(fabs(gn - norm) < 1e-9 * norm, "step %d: reported norm %g, want %g (before clipping)", step, gn, norm);
        CHECK(fabs(lr_used - lr) < 1e-12, "step %d: lr %g, want %g", step, lr_used, lr);
        if (step == 1) {
            CHECK(lr_used == 0.0, "the first update has learning rate 0 (optax counts from 0)");
            int same = 1;
            for (size_t i = 0; i < n; i++) same &= p[i] == (float)P[i];
            CHECK(same, "a zero learning rate leaves the weights unchanged");
        }
        for (size_t i = 0; i < n; i++) {
            /* relative to the weight plus the update's scale (a weight that nearly cancels keeps the
             * float rounding of its previous value) */
            double e = fabs((double)p[i] - P[i]) / (fabs(P[i]) + c.lr);
            if (e > max_err) max_err = e;
        }
        /* keep the reference in step with float storage, so errors do not compound */
        for (size_t i = 0; i < n; i++) { P[i] = p[i]; m[i] = o->m[i]; v[i] = o->v[i]; }
    }
    printf("  5 AdamW steps (clipped on odd steps) vs hand computation: max rel err %.2e\n", max_err);
    CHECK(max_err < 1e-6, "AdamW step differs from the hand computation by %.3e", max_err);

    /* weight decay mask: zero gradient, m = v = 0 -> only decayed tensors move */
    adamw_free(o);
    adamw_config c2 = c;
    c2.warmup = 0;
    o = adamw_new(&mc, &c2);
    for (size_t i = 0; i < n; i++) { p[i] = 1.0f; g[i] = 0.0f; }
    double lr;
    adamw_step(o, p, g, &lr);
    for (int i = 0; i < ns; i++) {
        const gs_tensor_spec *s = &specs[i];
        int want = s->role == GS_TENSOR_MATRIX;
        float expect = want ? (float)(1.0 - lr * 0.1) : 1.0f;
        int ok = 1;
        for (size_t k = 0; k < s->numel; k++) ok &= p[s->offset + k] == expect;
        CHECK(ok, "%s: weight decay %s", s->name, want ? "missing" : "applied to a non-matrix");
        CHECK(want == (s->ndim >= 2), "%s: mask differs from the companion's (ndim >= 2)", s->name);
    }
    printf("  weight decay on %s\n", "embedding and every projection; not on norms, biases, A_log, dt_bias");
    adamw_free(o);
    free(P); free(m); free(v); free(decays); free(p); free(g);
}

int main(void) {
    check_schedule();
    check_steps();
    return test_summary();
}
