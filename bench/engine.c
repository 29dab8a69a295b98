/* bench/engine: engine tokens/s against ceilings measured in the same run.
 *
 * For each model and batch size it times gpn_engine_step and, on the same
 * shapes, the step's GEMMs alone (cblas_sgemm with M = batch): the GEMM-only
 * ceiling. At batch 1 it also times the weights streamed once through
 * cblas_sgemv: the weight-streaming ceiling. Ratios: engine tok/s / GEMM tok/s
 * (goal >= 0.8 at batch >= 64) and engine time / GEMV time at batch 1 (goal
 * <= 1.5), for the paper's configuration: at the fixtures' toy sizes (d = 40)
 * GEMMs are a small part of a step's work and the weights fit in cache, so
 * neither ceiling bounds the engine there; their rows carry no goal (nor do
 * those of any model under 10M parameters). Not a test: numbers depend on
 * the machine.
 *
 * usage: bench_engine [--quick] [MODEL.safetensors ...]
 *        bench_engine --engine-only B   (the engine alone at batch B, for perf)
 *   default models: the paper's 130M GPN+M configuration with random weights,
 *   and the reference fixtures (tests/fixtures/reference). */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "base/error.h"
#include "engine/engine.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static gpn_model *random_model(const gpn_config *c) { return gpn_model_random(c, 0); }

typedef gpn_gemm_shape shape;

/* Weights with real pages behind them: calloc'd memory may all map the one
 * zero page, which stays in cache and would flatter the bandwidth. */
static float *filled(size_t n) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (float)(uniform() - 0.5) * 0.01f;
    return p;
}

static double gemm_seconds_per_step(const gpn_config *c, int B, int reps, double *flops) {
    shape s[GPN_MAX_STEP_GEMMS];
    int n = gpn_step_gemms(c, s);
    size_t maxk = 0, maxn = 0, maxw = 0;
    for (int i = 0; i < n; i++) {
        if ((size_t)s[i].k > maxk) maxk = s[i].k;
        if ((size_t)s[i].n > maxn) maxn = s[i].n;
        if ((size_t)s[i].k * s[i].n > maxw) maxw = (size_t)s[i].k * s[i].n;
    }
    /* real pages for the input too: calloc'd memory maps the one zero page, which
     * stays in L1 and would flatter the ceiling */
    float *A = filled((size_t)B * maxk), *C = calloc((size_t)B * maxn, 4);
    if (n < 1) return 0;
    float **W = calloc((size_t)n, sizeof *W); /* distinct weights, as in the model: no cache reuse */
    for (int i = 0; i < n; i++) W[i] = filled((size_t)s[i].k * s[i].n);
    *flops = 0;
    for (int i = 0; i < n; i++) *flops += 2.0 * B * s[i].k * s[i].n;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < n; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, s[i].n, s[i].k, 1, A, s[i].k, W[i], s[i].n, 0, C, s[i].n);
        double t = now() - t0;
        if (t < best) best = t;
    }
    for (int i = 0; i < n; i++) free(W[i]);
    free(W); free(A); free(C);
    (void)maxw;
    return best;
}

static double gemv_seconds_per_step(const gpn_config *c, int reps, double *bytes) {
    shape s[GPN_MAX_STEP_GEMMS];
    int n = gpn_step_gemms(c, s);
    if (n < 1) return 0;
    float **W = calloc((size_t)n, sizeof *W);
    float *x = calloc(65536, 4), *y = calloc(65536, 4);
    *bytes = 0;
    for (int i = 0; i < n; i++) { W[i] = filled((size_t)s[i].k * s[i].n); *bytes += 4.0 * s[i].k * s[i].n; }
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < n; i++) cblas_sgemv(CblasRowMajor, CblasTrans, s[i].k, s[i].n, 1, W[i], s[i].n, x, 1, 0, y, 1);
        double t = now() - t0;
        if (t < best) best = t;
    }
    for (int i = 0; i < n; i++) free(W[i]);
    free(W); free(x); free(y);
    return best;
}

static double engine_seconds_per_step(const gpn_model *m, int B, int steps) {
    gpn_engine *e = gpn_engine_new(m, B);
    if (!e) { fprintf(stderr, "bench_engine: %s\n", gs_error()); exit(1); }
    gpn_engine_reset(e);
    int32_t *tok = malloc((size_t)B * sizeof *tok);
    for (int b = 0; b < B; b++) tok[b] = (int32_t)(uniform() * m->cfg.V);
    gpn_engine_step(e, tok, B); /* warm-up */
    double best = 1e30;
    for (int s = 0; s < steps; s++) {
        for (int b = 0; b < B; b++) tok[b] = (int32_t)(uniform() * m->cfg.V);
        double t0 = now();
        gpn_engine_step(e, tok, B);
        double t = now() - t0;
        if (t < best) best = t;
    }
    free(tok);
    gpn_engine_free(e);
    return best;
}

static void bench_model(const char *label, const gpn_model *m, const int *batches, int nb, int quick, int goals) {
    const gpn_config *c = &m->cfg;
    printf("\n%s: %s N=%d d=%d e=%d f=%d H=%d dk=%d dv=%d V=%d (%.1f M params)\n", label, gpn_arch_name(c->arch),
           c->n_layers, c->d, c->e, c->f, c->H, c->dk, c->dv, c->V, m->n_params / 1e6);
    printf("%6s %12s %12s %10s %12s %8s\n", "batch", "engine tok/s", "GEMM tok/s", "GEMM GF/s", "engine/GEMM", "goal");
    for (int i = 0; i < nb; i++) {
        int B = batches[i];
        int steps = quick ? 2 : (B <= 16 ? 10 : 8); /* best of: the shared machine is noisy */
        double flops, tg = gemm_seconds_per_step(c, B, steps, &flops);
        double te = engine_seconds_per_step(m, B, steps);
        printf("%6d %12.1f %12.1f %10.1f %12.2f %8s\n", B, B / te, B / tg, flops / tg / 1e9, tg / te,
               goals && B >= 64 ? ">=0.80" : "");
        if (B == 1) {
            double bytes, tv = gemv_seconds_per_step(c, steps, &bytes);
            printf("%6s batch 1: engine %.2f ms/token, weights streamed once by SGEMV %.2f ms (%.1f GB/s): ratio %.2f%s\n",
                   "", te * 1e3, tv * 1e3, bytes / tv / 1e9, te / tv, goals ? " (goal <= 1.5)" : "");
        }
    }
}

int main(int argc, char **argv) {
    int quick = 0, profile_batch = 0;
    const char *paths[16];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--engine-only") && i + 1 < argc) profile_batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--help")) { puts("usage: bench_engine [--quick] [MODEL.safetensors ...]"); return 0; }
        else if (np < 16) paths[np++] = argv[i];
    }
    printf("gpnscope engine benchmark (OpenBLAS threads: %d)\n", openblas_get_num_threads());
    int batches[] = {1, 16, 64, 256};
    if (profile_batch > 0) { /* for perf: the engine alone on the paper config */
        gpn_config paper = {.arch = GPN_ARCH_GPN_M, .n_layers = 1, .d = 2496, .e = 768, .f = 6656, .H = 15, .dk = 128, .dv = 256, .V = 32000, .decoder_bias = 0};
        gpn_model *m = random_model(&paper);
        double t = engine_seconds_per_step(m, profile_batch, 40);
        printf("batch %d: %.1f tok/s\n", profile_batch, profile_batch / t);
        gpn_model_free(m);
        return 0;
    }
    if (np == 0) {
        gpn_config paper = {.arch = GPN_ARCH_GPN_M, .n_layers = 1, .d = 2496, .e = 768, .f = 6656, .H = 15, .dk = 128, .dv = 256, .V = 32000, .decoder_bias = 0};
        gpn_model *m = random_model(&paper);
        if (!m) { fprintf(stderr, "bench_engine: %s\n", gs_error()); return 1; }
        bench_model("paper 130M GPN+M (random weights)", m, batches, quick ? 2 : 4, quick, 1);
        gpn_model_free(m);
        const char *fx[] = {"tests/fixtures/reference/gpnm1.weights.safetensors", "tests/fixtures/reference/gpn.weights.safetensors"};
        for (int i = 0; i < 2; i++) {
            gpn_model *f = gpn_model_load(fx[i]);
            if (f) { bench_model(fx[i], f, batches, 4, quick, 0); gpn_model_free(f); }
        }
    }
    for (int i = 0; i < np; i++) {
        gpn_model *m = gpn_model_load(paths[i]);
        if (!m) { fprintf(stderr, "bench_engine: %s\n", gs_error()); return 1; }
        bench_model(paths[i], m, batches, 4, quick, m->n_params >= 10e6); /* goals for models of real size */
        gpn_model_free(m);
    }
    return 0;
}
