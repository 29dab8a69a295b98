/* The two head ablations of docs/ablations.md, on a tiny random GPN+M where
 * the answer is closed-form: the memory read of a layer is
 * (silu(g) * rms(o) * w) W_o, linear in the normed heads. At the first step
 * where the read o is not zero (before it, every variant runs identically),
 * with layer 0's captures:
 * - after-norm is additive: the read with heads S zeroed plus the read with
 *   the other heads zeroed is the full read (each head's share, unscaled);
 * - before-norm is the after-norm read scaled by rms(o) / rms(o without S)
 *   (the norm rescales the survivors up), so it is not additive. */
#include <math.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/cpu/kernel_math.h"
#include "probes/probes.h"
#include "testlib.h"

#define NB 2
#define NSTEP 6

static const gs_config cfg = {.arch = GS_ARCH_GPN_M, .n_layers = 1, .d = 32, .e = 16, .f = 48, .H = 4, .dk = 8, .dv = 8, .V = 50, .decoder_bias = 1};

/* mode 0: nothing; 1: zero before the norm; 2: after. heads: the flags.
 * o: layer 0's raw read (NSTEP x NB x H*dv), mem: layer 0's memory read (NSTEP x NB x d). */
static int run(const gs_model *m, int mode, const int *heads, int nh, float *o, float *mem) {
    gs_engine *e = gs_engine_new(m, NB);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    if (!ps) return -1;
    probe_capture *co = probe_capture_add(ps, "L0.mem.heads"); /* before the intervention: the raw read */
    int rc = mode == 1 ? probe_zero_heads(ps, 0, heads, nh) : mode == 2 ? probe_zero_heads_after_norm(ps, 0, heads, nh) : 0;
    probe_capture *cm = probe_capture_add(ps, "L0.mem_read"); /* after it */
    if (rc || !co || !cm) { probe_set_free(ps); gs_engine_free(e); return -1; }
    gs_engine_reset(e);
    int hv = cfg.H * cfg.dv;
    for (int t = 0; t < NSTEP; t++) {
        int32_t tok[NB] = {(int32_t)(3 + 7 * t) % cfg.V, (int32_t)(11 + 5 * t) % cfg.V};
        gs_engine_step(e, tok, NB);
        memcpy(o + (size_t)t * NB * hv, co->data, (size_t)NB * hv * sizeof(float));
        memcpy(mem + (size_t)t * NB * cfg.d, cm->data, (size_t)NB * cfg.d * sizeof(float));
    }
    probe_set_free(ps);
    gs_engine_free(e);
    return 0;
}

int main(void) {
    gs_model *m = gs_model_random(&cfg, 5);
    CHECK(m != NULL, "random model: %s", gs_error());
    if (!m) return test_summary();
    const int hv = cfg.H * cfg.dv, d = cfg.d;
    float o[NSTEP * NB * 32], full[NSTEP * NB * 32], bS[NSTEP * NB * 32], aS[NSTEP * NB * 32], aC[NSTEP * NB * 32], tmp[NSTEP * NB * 32];
    const int S[] = {0, 2}, C[] = {1, 3};
    CHECK(run(m, 0, NULL, 0, o, full) == 0 && run(m, 1, S, 2, tmp, bS) == 0 && run(m, 2, S, 2, tmp, aS) == 0 &&
              run(m, 2, C, 2, tmp, aC) == 0, "runs: %s", gs_error());
    /* the first step with a non-zero read */
    int t0 = -1;
    for (int t = 0; t < NSTEP && t0 < 0; t++)
        for (int i = 0; i < NB * hv; i++)
            if (o[t * NB * hv + i] != 0) { t0 = t; break; }
    CHECK(t0 >= 0, "the memory read is zero at every step");
    if (t0 < 0) return test_summary();
    double add_err = 0, scale_err = 0, nonadd = 0, ref = 0;
    for (int b = 0; b < NB; b++) {
        const float *ob = o + (size_t)(t0 * NB + b) * hv;
        double all = 0, kept = 0;
        for (int h = 0; h < cfg.H; h++)
            for (int j = 0; j < cfg.dv; j++) {
                double v = (double)ob[h * cfg.dv + j] * ob[h * cfg.dv + j];
                all += v;
                if (h == 1 || h == 3) kept += v;
            }
        double ratio = sqrt((all / hv + GPN_RMS_EPS) / (kept / hv + GPN_RMS_EPS)); /* rms(o) / rms(o without S) */
        for (int i = 0; i < d; i++) {
            size_t k = (size_t)(t0 * NB + b) * d + i;
            add_err = fmax(add_err, fabs(aS[k] + aC[k] - full[k]));
            scale_err = fmax(scale_err, fabs(bS[k] - ratio * aS[k]));
            ref = fmax(ref, fabs(full[k]));
            nonadd = fmax(nonadd, fabs(bS[k] - aS[k]));
        }
    }
    printf("step %d: |after(S) + after(not S) - full| %.2e, |before(S) - rescaled after(S)| %.2e, |before - after| %.2e, |full| %.2e\n",
           t0, add_err, scale_err, nonadd, ref);
    CHECK(ref > 1e-3, "the read is too small to test (%.2e)", ref);
    CHECK(add_err <= 1e-5 * ref, "after-norm: the two halves add up to the full read (err %.2e)", add_err);
    CHECK(scale_err <= 1e-5 * ref, "before-norm = after-norm x rms(o) / rms(o without S) (err %.2e)", scale_err);
    CHECK(nonadd > 1e-2 * ref, "before-norm and after-norm differ (%.2e)", nonadd);
    gs_model_free(m);
    return test_summary();
}
