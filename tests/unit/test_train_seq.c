/* The Transformer++, GDN and Recurrent Transformer training tapes against
 * the inference engine: on the same weights and window, the float32 training
 * forward's per-token NLL and its loss (the mean over the predicted tokens)
 * equal what the engine computes step by step, and what `gpnscope eval`
 * reports, to 1e-5; the float32 gradient equals the float64 one (whose
 * finite-difference checks are in test_grad) to 1e-4. Two or three layers,
 * random weights on a trained model's scale (gs_model_random), several
 * windows at once; the RT's engine decodes one position at a time, its tape
 * the whole window. */
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/rt/rt.h"
#include "engine/engine.h"
#include "engine/arch/gdn/gdn_train.h"
#include "engine/arch/rt/rt_train.h"
#include "engine/arch/tpp/tpp_train.h"
#include "testlib.h"

enum { B = 3, T = 37 };

static void check_family(const char *name, gs_config c) {
    gs_model *m = gs_model_random(&c, 7);
    CHECK(m != NULL, "%s: model: %s", name, gs_error());
    if (!m) return;
    int32_t tok[B * T];
    uint64_t r = 99;
    for (int i = 0; i < B * T; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (int32_t)((r >> 33) % (uint64_t)c.V);
    }
    /* the engine, one position of every sequence per step */
    float eng[B * T], got[B * T];
    gs_engine *e = gs_engine_new(m, B);
    CHECK(e != NULL, "%s: engine: %s", name, gs_error());
    if (!e) { gs_model_free(m); return; }
    for (int t = 0; t < T; t++) {
        int32_t x[B];
        for (int b = 0; b < B; b++) x[b] = tok[b * T + t];
        CHECK(gs_engine_step(e, x, B) == 0, "%s: engine step: %s", name, gs_error());
        gs_step_out o = gs_engine_out(e);
        for (int b = 0; b < B; b++) eng[b * T + t] = o.nll[b];
    }
    gs_engine_free(e);
    double mean_eng = 0;
    int counted = 0;
    for (int i = 0; i < B * T; i++)
        if (!isnan(eng[i])) mean_eng += eng[i], counted++;
    mean_eng /= counted;

    long np = (long)m->n_params;
    float *g32 = calloc((size_t)np, sizeof *g32), *g64f = malloc((size_t)np * sizeof *g64f);
    double *P64 = malloc((size_t)np * sizeof *P64), *g64 = calloc((size_t)np, sizeof *g64), loss, loss64;
    for (long i = 0; i < np; i++) P64[i] = m->block[i];
    /* the float32 tape (loss, per-token NLL, gradient) and the float64 one (loss, gradient) of one family */
#define RUN_TAPES(FAM)                                                                                               \
    do {                                                                                                             \
        FAM##_tape_f32 *tp = FAM##_tape_new_f32(&c, B, T);                                                           \
        CHECK(FAM##_tape_forward_f32(tp, m->block, tok, g32, &loss) == 0, "forward: %s", gs_error());                \
        FAM##_tape_nll_f32(tp, got);                                                                                 \
        FAM##_tape_backward_f32(tp, m->block, g32);                                                                  \
        FAM##_tape_free_f32(tp);                                                                                     \
        FAM##_tape_f64 *t64 = FAM##_tape_new_f64(&c, B, T);                                                          \
        FAM##_tape_forward_f64(t64, P64, tok, g64, &loss64);                                                         \
        FAM##_tape_backward_f64(t64, P64, g64);                                                                      \
        FAM##_tape_free_f64(t64);                                                                                    \
    } while (0)
    if (c.arch == GS_ARCH_TPP) RUN_TAPES(tpp);
    else if (c.arch == GS_ARCH_RT) RUN_TAPES(rt);
    else RUN_TAPES(gdn);
#undef RUN_TAPES
    int nan_where_engine = 1;
    for (int i = 0; i < B * T; i++) nan_where_engine &= isnan(got[i]) == isnan(eng[i]);
    CHECK(nan_where_engine && counted == B * (T - 1), "%s: the first token of each window is not predicted", name);
    float got_p[B * T], eng_p[B * T];
    int n = 0;
    for (int i = 0; i < B * T; i++)
        if (!isnan(eng[i])) got_p[n] = got[i], eng_p[n++] = eng[i];
    double e1 = fabs(loss - mean_eng) / mean_eng, e2 = rel_err(got_p, eng_p, n), e3 = fabs(loss64 - loss) / loss64;
    for (long i = 0; i < np; i++) g64f[i] = (float)g64[i];
    double eg = rel_err(g32, g64f, np);
    printf("  %-14s train forward vs engine: loss %.7f vs mean NLL %.7f (rel %.1e), per token %.1e; float64 loss "
           "rel %.1e; float32 gradient vs float64 %.1e (%ld parameters)\n",
           name, loss, mean_eng, e1, e2, e3, eg, np);
    CHECK(e1 < 1e-5, "%s: training loss %.8f vs engine %.8f", name, loss, mean_eng);
    CHECK(e2 < 1e-5, "%s: per-token NLL vs engine rel err %.3e", name, e2);
    CHECK(e3 < 1e-5, "%s: float32 vs float64 loss rel %.3e", name, e3);
    CHECK(eg < 1e-4, "%s: float32 gradient rel err %.3e", name, eg);
    free(g32); free(g64f); free(P64); free(g64);
    gs_model_free(m);
}

int main(void) {
    check_family("Transformer++", (gs_config){.arch = GS_ARCH_TPP, .n_layers = 2, .d = 32, .e = 32, .f = 48, .H = 4,
                                               .dk = 8, .dv = 8, .V = 61, .norm_eps = 1e-6f});
    check_family("GDN", (gs_config){.arch = GS_ARCH_GDN, .n_layers = 2, .d = 24, .e = 24, .f = 40, .H = 3, .dk = 8,
                                     .dv = 16, .V = 61, .conv = 4, .norm_eps = 1e-6f});
    /* the paper's options (GELU, q/k LayerNorms, ALiBi 8), then relu without the q/k norms */
    check_family("RT", (gs_config){.arch = GS_ARCH_RT, .n_layers = 2, .d = 24, .e = 24, .f = 40, .H = 3, .dk = 8,
                                    .dv = 8, .V = 61, .norm_eps = 1e-5f, .activation = RT_ACT_GELU, .qk_norm = 1,
                                    .alibi_bias_max = 8.0f});
    check_family("RT relu, no qk", (gs_config){.arch = GS_ARCH_RT, .n_layers = 3, .d = 16, .e = 16, .f = 24, .H = 2,
                                                .dk = 8, .dv = 8, .V = 61, .norm_eps = 1e-5f,
                                                .activation = RT_ACT_RELU, .alibi_bias_max = 4.0f});
    return test_summary();
}
