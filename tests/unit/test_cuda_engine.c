/* The CUDA engine against the CPU engine (the reference, itself checked
 * against the companion's fixtures by test_parity): every output of every
 * step on both reference fixtures, a random 2-layer GPN+M with a decoder bias
 * and odd sizes, and the paper's 130M configuration with random weights, in
 * f32, tf32 and bf16; without hooks (the fast path), with a capture, and with
 * a head ablation through hooks; the row selection of states; a partial
 * batch. Without a device it skips and says why, but a build with CUDA must
 * at least load its plugin.
 *
 * Tolerances (relative error over each tensor): f32 1e-4 (only summation
 * order differs); bf16 2e-2 (the bound); tf32 5e-3, not the issue's
 * 1e-3: TF32 keeps 10 mantissa bits, so each GEMM input is rounded by up to
 * 2^-11 = 4.9e-4, and through a recurrence of several GEMMs per step the
 * outputs of a correct engine can exceed 1e-3 from rounding alone. */
#include <stdint.h>

#include "base/error.h"
#include "engine/cuda/cuda_engine.h"
#include "engine/engine.h"
#include "io/checkpoint/safetensors.h"
#include "probes/probes.h"
#include "testlib.h"

typedef struct {
    float *s_pred, *s_ground, *logits, *nll, *entropy, *alpha, *beta, *mem_norm;
    int32_t *top1;
    float *capture; /* L0.mem.q (GPN+M) or s_pred, captured by a probe */
} trace;

static void trace_free(trace *t) {
    free(t->s_pred), free(t->s_ground), free(t->logits), free(t->nll), free(t->entropy);
    free(t->alpha), free(t->beta), free(t->mem_norm), free(t->top1), free(t->capture);
}

enum { NO_HOOKS, CAPTURE, CAPTURE_AND_ABLATE };
static const char *mode_name[] = {"", " capture hook", " heads 0,2 ablated"};

/* Run B sequences of T tokens on a device (hooks per mode), recording every
 * output laid out (B, T, ...). */
static int run(const gs_model *m, const gs_device *dev, const int32_t *tokens, int B, int T, int mode, trace *r) {
    const gs_config *c = &m->cfg;
    long BT = (long)B * T;
    int H = c->H ? c->H : 1, cap_w = c->H ? c->H * c->dk : c->d;
    memset(r, 0, sizeof *r);
    r->s_pred = calloc(BT * c->d, 4), r->s_ground = calloc(BT * c->d, 4), r->logits = calloc(BT * c->V, 4);
    r->nll = calloc(BT, 4), r->entropy = calloc(BT, 4), r->top1 = calloc(BT, 4);
    r->alpha = calloc(BT * H, 4), r->beta = calloc(BT * H, 4), r->mem_norm = calloc(BT * H, 4);
    r->capture = calloc(BT * cap_w, 4);
    gs_engine *e = gs_engine_new_on(m, B, dev);
    if (!e) return -1;
    probe_set *ps = probe_set_new(e);
    probe_capture *cap = NULL;
    const char *cap_name = c->H ? (c->n_layers > 1 ? "L1.mem.q" : "L0.mem.q") : "s_pred";
    int heads[] = {0, 2};
    if (mode != NO_HOOKS && !(cap = probe_capture_add(ps, cap_name))) {
        probe_set_free(ps), gs_engine_free(e);
        return -1;
    }
    if (mode == CAPTURE_AND_ABLATE && c->H > 2 && probe_zero_heads(ps, -1, heads, 2)) {
        probe_set_free(ps), gs_engine_free(e);
        return -1;
    }
    gs_engine_reset(e);
    for (int t = 0; t < T; t++) {
        int32_t tok[64];
        for (int b = 0; b < B; b++) tok[b] = tokens[(long)b * T + t];
        if (gs_engine_step(e, tok, B)) {
            probe_set_free(ps), gs_engine_free(e);
            return -1;
        }
        gs_step_out o = gs_engine_out(e);
        for (int b = 0; b < B; b++) {
            long row = (long)b * T + t;
            memcpy(r->s_pred + row * c->d, o.s_pred + (long)b * c->d, (size_t)c->d * 4);
            memcpy(r->s_ground + row * c->d, o.s_ground + (long)b * c->d, (size_t)c->d * 4);
            memcpy(r->logits + row * c->V, o.logits + (long)b * c->V, (size_t)c->V * 4);
            if (cap) memcpy(r->capture + row * cap_w, cap->data + (long)b * cap_w, (size_t)cap_w * 4);
            r->nll[row] = o.nll[b], r->entropy[row] = o.entropy[b], r->top1[row] = o.top1[b];
            if (o.alpha) {
                memcpy(r->alpha + row * c->H, o.alpha + (long)b * c->H, (size_t)c->H * 4);
                memcpy(r->beta + row * c->H, o.beta + (long)b * c->H, (size_t)c->H * 4);
                memcpy(r->mem_norm + row * c->H, o.mem_norm + (long)b * c->H, (size_t)c->H * 4);
            }
        }
    }
    probe_set_free(ps);
    gs_engine_free(e);
    return 0;
}

static void compare(const char *what, const gs_model *m, const trace *cpu, const trace *gpu, long BT, double tol) {
    const gs_config *c = &m->cfg;
    struct { const char *name; const float *a, *b; long n; } t[] = {
        {"s_pred", gpu->s_pred, cpu->s_pred, BT * c->d},   {"s_ground", gpu->s_ground, cpu->s_ground, BT * c->d},
        {"logits", gpu->logits, cpu->logits, BT * c->V},   {"nll", gpu->nll, cpu->nll, BT},
        {"entropy", gpu->entropy, cpu->entropy, BT},       {"capture", gpu->capture, cpu->capture, BT * (c->H ? c->H * c->dk : c->d)},
        {"alpha", gpu->alpha, cpu->alpha, c->H ? BT * c->H : 0}, {"beta", gpu->beta, cpu->beta, c->H ? BT * c->H : 0},
        {"mem_norm", gpu->mem_norm, cpu->mem_norm, c->H ? BT * c->H : 0},
    };
    double worst = 0;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (!t[i].n) continue;
        double err = rel_err(t[i].a, t[i].b, t[i].n);
        if (err > worst) worst = err;
        CHECK(err < tol, "%s: %s relative error %.3e >= %.0e", what, t[i].name, err, tol);
    }
    long agree = 0;
    for (long i = 0; i < BT; i++) agree += gpu->top1[i] == cpu->top1[i];
    printf("  %-40s worst rel err %.2e (tolerance %.0e), top-1 agrees %ld/%ld\n", what, worst, tol, agree, BT);
    CHECK(agree >= BT * 9 / 10, "%s: top-1 agrees on only %ld of %ld tokens", what, agree, BT);
}

static const double tolerance[] = {[GS_PREC_F32] = 1e-4, [GS_PREC_TF32] = 5e-3, [GS_PREC_BF16] = 2e-2};
static const char *prec_name[] = {"auto", "f32", "tf32", "bf16"};

static void parity(const char *label, const gs_model *m, const int32_t *tokens, int B, int T) {
    gs_device cpu_dev = {GS_DEVICE_CPU, 0, GS_PREC_AUTO};
    for (int mode = NO_HOOKS; mode <= CAPTURE_AND_ABLATE; mode++) {
        trace cpu;
        CHECK(run(m, &cpu_dev, tokens, B, T, mode, &cpu) == 0, "%s: CPU run: %s", label, gs_error());
        for (int p = GS_PREC_F32; p <= GS_PREC_BF16; p++) {
            gs_device dev = {GS_DEVICE_CUDA, 0, (gs_precision)p};
            trace gpu;
            char what[128];
            snprintf(what, sizeof what, "%s %s%s", label, prec_name[p], mode_name[mode]);
            if (run(m, &dev, tokens, B, T, mode, &gpu) == 0) compare(what, m, &cpu, &gpu, (long)B * T, tolerance[p]);
            else CHECK(0, "%s: CUDA run: %s", what, gs_error());
            trace_free(&gpu);
        }
        trace_free(&cpu);
    }
}

/* Only the selected rows' states come back, and they are right; a step of
 * fewer sequences than the engine holds leaves the others alone. */
static void rows_and_partial_batch(const gs_model *m) {
    const gs_config *c = &m->cfg;
    gs_device dev = {GS_DEVICE_CUDA, 0, GS_PREC_F32};
    gs_engine *cpu = gs_engine_new(m, 3), *gpu = gs_engine_new_on(m, 3, &dev);
    CHECK(cpu && gpu, "engines: %s", gs_error());
    if (!cpu || !gpu) { gs_engine_free(cpu), gs_engine_free(gpu); return; }
    unsigned char rows[3] = {1, 0, 1};
    gs_engine_set_outputs(gpu, GS_OUT_STATES, rows);
    gs_engine_reset(cpu), gs_engine_reset(gpu);
    int32_t tok[3] = {1, 2, 3};
    double worst = 0;
    for (int t = 0; t < 6; t++) {
        int B = t == 2 ? 1 : 3; /* one partial step */
        for (int b = 0; b < 3; b++) tok[b] = (tok[b] * 31 + 7 * t + b) % c->V;
        CHECK(gs_engine_step(cpu, tok, B) == 0 && gs_engine_step(gpu, tok, B) == 0, "step: %s", gs_error());
        gs_step_out a = gs_engine_out(cpu), g = gs_engine_out(gpu);
        for (int b = 0; b < B; b++) {
            if (!rows[b]) continue;
            double e = rel_err(g.s_pred + (long)b * c->d, a.s_pred + (long)b * c->d, c->d);
            double e2 = rel_err(g.s_ground + (long)b * c->d, a.s_ground + (long)b * c->d, c->d);
            if (e > worst) worst = e;
            if (e2 > worst) worst = e2;
        }
        double en = rel_err(g.nll, a.nll, B);
        CHECK(en < 1e-3, "step %d: nll rel err %.2e", t, en);
    }
    printf("  selected rows and a partial batch: worst state rel err %.2e\n", worst);
    CHECK(worst < 1e-3, "selected rows: states differ (rel %.2e)", worst);
    gs_engine_free(cpu), gs_engine_free(gpu);
}

static void fixture_parity(const char *name) {
    gs_model *m = gs_model_load(reference_fixture(name, "weights.safetensors"));
    st_file *ex = safetensors_open(reference_fixture(name, "expect.safetensors"));
    CHECK(m && ex, "%s: %s", name, gs_error());
    if (!m || !ex) { gs_model_free(m), safetensors_close(ex); return; }
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);
    parity(name, m, tokens, B, T);
    if (m->cfg.H) rows_and_partial_batch(m);
    free(tokens);
    safetensors_close(ex);
    gs_model_free(m);
}

int main(void) {
    char why[768];
    if (!gpn_cuda_usable(why, sizeof why)) {
#ifdef GPNSCOPE_WITH_CUDA
        /* the plugin was built: it must load, so only the device may be missing */
        CHECK(strstr(why, "no usable CUDA device") != NULL, "the CUDA plugin did not load: %s", why);
        if (test_summary()) return 1;
#endif
        return test_skip(why);
    }
    fixture_parity("gpnm1");
    fixture_parity("gpn");
    /* later layers' reads and hooks, a decoder bias, sizes that are not multiples of 32 */
    gs_config two = {.arch = GS_ARCH_GPN_M, .n_layers = 2, .d = 300, .e = 48, .f = 200, .H = 5, .dk = 20, .dv = 36, .V = 600, .decoder_bias = 1};
    gs_model *m2 = gs_model_random(&two, 3);
    CHECK(m2 != NULL, "random 2-layer model: %s", gs_error());
    if (m2) {
        for (int i = 0; i < two.e; i++) m2->p.decode_bias[i] = 0.1f * sinf((float)i);
        int32_t tokens[3 * 12];
        for (int i = 0; i < 3 * 12; i++) tokens[i] = (i * 131 + 7) % two.V;
        parity("random 2-layer GPN+M, decoder bias", m2, tokens, 3, 12);
        rows_and_partial_batch(m2);
        gs_model_free(m2);
    }
    gs_config paper = {.arch = GS_ARCH_GPN_M, .n_layers = 1, .d = 2496, .e = 768, .f = 6656, .H = 15, .dk = 128, .dv = 256, .V = 32000, .decoder_bias = 0};
    gs_model *m = gs_model_random(&paper, 7);
    CHECK(m != NULL, "random model: %s", gs_error());
    if (m) {
        int B = 2, T = 8;
        int32_t tokens[16];
        for (int i = 0; i < B * T; i++) tokens[i] = (i * 7919 + 13) % paper.V;
        parity("paper 130M GPN+M (random weights)", m, tokens, B, T);
        gs_model_free(m);
    }
    return test_summary();
}
