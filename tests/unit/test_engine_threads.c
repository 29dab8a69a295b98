/* The engine's results and its thread count (docs/engine.md): a run gives the
 * same bits every time for a given thread count, and other thread counts
 * (which split each GEMM into other parts, or leave the GEMMs to OpenBLAS at
 * one thread) differ at most by float rounding. Each run is a child process,
 * because the worker pool reads $GPNSCOPE_THREADS once. The model is small
 * but wide enough that every split happens (GEMMs of >= 128 columns, memory
 * loops and row-wise ops over more than one chunk). */
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h"
#include "testlib.h"

#define B 16
#define STEPS 8

static const gs_config cfg = {.arch = GS_ARCH_GPN_M, .n_layers = 1, .d = 512, .e = 128, .f = 768, .H = 4, .dk = 32, .dv = 64, .V = 1000, .decoder_bias = 1};

/* s_ground, nll and logits of the last step, in one file */
static int child(const char *out) {
    gs_model *m = gs_model_random(&cfg, 7);
    gs_engine *e = m ? gs_engine_new(m, B) : NULL;
    if (!e) { fprintf(stderr, "%s\n", gs_error()); return 1; }
    gs_engine_reset(e);
    int32_t tok[B];
    for (int t = 0; t < STEPS; t++) {
        for (int b = 0; b < B; b++) tok[b] = (b * 7919 + t * 104729) % cfg.V;
        if (gs_engine_step(e, tok, B)) { fprintf(stderr, "%s\n", gs_error()); return 1; }
    }
    gs_step_out o = gs_engine_out(e);
    FILE *f = fopen(out, "wb");
    int ok = f && fwrite(o.s_ground, sizeof(float), (size_t)B * cfg.d, f) == (size_t)B * cfg.d &&
             fwrite(o.nll, sizeof(float), B, f) == B && fwrite(o.logits, sizeof(float), (size_t)B * cfg.V, f) == (size_t)B * cfg.V;
    if (f) fclose(f);
    gs_engine_free(e);
    gs_model_free(m);
    return ok ? 0 : 1;
}

static float *run(const char *self, const char *dir, int threads, int nth, size_t *n) {
    char out[4200], cmd[12000];
    snprintf(out, sizeof out, "%s/threads%d.%d", dir, threads, nth);
    snprintf(cmd, sizeof cmd, "GPNSCOPE_THREADS=%d '%s' --child '%s'", threads, self, out);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    size_t len = 0;
    float *x = (float *)read_whole_file(out, &len);
    *n = len / sizeof(float);
    CHECK(x && *n == (size_t)B * (cfg.d + 1 + cfg.V), "%s: %zu floats", out, *n);
    return x;
}

/* largest |a - b| over the largest |a| */
static double spread(const float *a, const float *b, size_t n) {
    double d = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        mx = fmax(mx, fabs((double)a[i]));
    }
    return mx > 0 ? d / mx : d;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--child")) return child(argv[2]);
    const char *dir = scratch_dir("engine_threads");
    size_t n2, n2b;
    float *two = run(argv[0], dir, 2, 0, &n2), *again = run(argv[0], dir, 2, 1, &n2b);
    if (!two || !again) return test_summary();
    CHECK(n2 == n2b && !memcmp(two, again, n2 * sizeof(float)), "two runs on 2 threads differ");
    int counts[] = {1, 3};
    for (int i = 0; i < 2; i++) {
        size_t k;
        float *other = run(argv[0], dir, counts[i], 0, &k);
        if (!other || k != n2) continue;
        double s = spread(two, other, n2);
        CHECK(s < 1e-5, "%d threads vs 2: results differ by %.2e of the largest value", counts[i], s);
        printf("  %d threads vs 2: largest difference %.2e of the largest value\n", counts[i], s);
        free(other);
    }
    free(two), free(again);
    return test_summary();
}
