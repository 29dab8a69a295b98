/* bench/patch: the patching sweep (analyses/causal/patching.h) at the shipped
 * model's size, against its cost model measured in the same run.
 *
 * Cost model. A sweep of N pairs of T tokens over C components runs
 * 2 + C (T + 1) passes (clean, corrupted, then every component at every
 * position and at all positions), each T + 1 engine steps at batch N: in all
 * N (T + 1) (2 + C (T + 1)) token-steps, O(C T^2 N). Every pass re-runs the
 * prefix before the patch (positions < p are the corrupted run's): resuming
 * from a saved state would halve it, which the engine has no entry for. On
 * top come the hooks: the clean pass copies the carried state, and for
 * GPN+M the memory (H d_k d_v floats) and keys of every pair and step; a
 * patched pass reads them back. The ceiling printed beside the sweep is the
 * engine alone at batch N for the same number of token-steps, so the ratio
 * (goal <= 1.3) is what the hooks and the bookkeeping add. Not a test:
 * numbers depend on the machine.
 *
 * usage: bench_patch [--pairs N] [--tokens T] [MODEL.safetensors]
 *   default: models/gpnm-small (256-wide state, 8 heads of 32 x 64), 16 pairs of 8 tokens */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/patching.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/prng.h"
#include "engine/engine.h"

int main(int argc, char **argv) {
    int N = 16, T = 8;
    const char *path = GPNSCOPE_SOURCE_DIR "/models/gpnm-small/model.safetensors";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) T = atoi(argv[++i]);
        else if (argv[i][0] != '-') path = argv[i];
        else { fprintf(stderr, "usage: bench_patch [--pairs N] [--tokens T] [MODEL.safetensors]\n"); return 2; }
    }
    if (N < 1 || T < 2) { fprintf(stderr, "bench_patch: --pairs >= 1, --tokens >= 2\n"); return 2; }
    gs_model *m = gs_model_load(path);
    if (!m) { fprintf(stderr, "bench_patch: %s\n", gs_error()); return 1; }
    const gs_config *c = &m->cfg;
    /* random pairs: the corrupted prompt differs from the clean one at T/2 */
    gs_patch_pairs p = {N, T, malloc((size_t)N * T * sizeof(int32_t)), malloc((size_t)N * T * sizeof(int32_t)),
                        malloc((size_t)N * sizeof(int32_t)), malloc((size_t)N * sizeof(int32_t))};
    uint64_t g = 12345;
    for (int i = 0; i < N; i++) {
        for (int t = 0; t < T; t++) p.clean[i * T + t] = p.corrupted[i * T + t] = 3 + (int32_t)(gs_splitmix64(&g) % (uint64_t)(c->V - 3));
        p.corrupted[i * T + T / 2] = 3 + (int32_t)(gs_splitmix64(&g) % (uint64_t)(c->V - 3));
        p.answer[i] = p.clean[i * T + T / 2];
        p.foil[i] = p.corrupted[i * T + T / 2];
    }
    float *u = calloc((size_t)c->d, sizeof *u);
    u[0] = 1;
    gs_patch_component *comps;
    int C = gs_patch_default_components(m, u, "e0", &comps);
    if (C < 0) { fprintf(stderr, "bench_patch: %s\n", gs_error()); return 1; }
    int64_t passes = 2 + (int64_t)C * (T + 1), token_steps = (int64_t)N * (T + 1) * passes;
    printf("model %s: d %d, %d heads of %d x %d, V %d; %d pairs of %d tokens, %d components\n", path, c->d, c->H, c->dk,
           c->dv, c->V, N, T, C);
    printf("cost model: 2 + C (T + 1) = %lld passes of T + 1 steps at batch %d = %lld token-steps; clean captures %.1f MB\n",
           (long long)passes, N, (long long)token_steps,
           (double)N * (T + 1) * ((double)c->d + (c->H ? (double)c->H * c->dk * c->dv + (double)c->H * c->dk : 0)) * 4 / 1e6);

    /* the ceiling: the engine alone, the same token-steps at batch N */
    gs_engine *e = gs_engine_new(m, N);
    int32_t *tok = malloc((size_t)N * sizeof *tok);
    double t0 = gs_now();
    for (int64_t k = 0; k < passes; k++) {
        gs_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            for (int i = 0; i < N; i++) tok[i] = t < T ? p.corrupted[i * T + t] : p.answer[i];
            if (gs_engine_step(e, tok, N)) { fprintf(stderr, "bench_patch: %s\n", gs_error()); return 1; }
        }
    }
    double engine_s = gs_now() - t0;
    gs_engine_free(e);

    gs_patch_opts o = {.batch = N};
    gs_patch_result r;
    t0 = gs_now();
    if (gs_patch_run(m, &p, comps, C, &o, &r)) { fprintf(stderr, "bench_patch: %s\n", gs_error()); return 1; }
    double sweep_s = gs_now() - t0;
    printf("engine alone   %8.2f s  %10.0f token-steps/s\n", engine_s, token_steps / engine_s);
    printf("patching sweep %8.2f s  %10.0f token-steps/s   sweep / engine %.2f (goal <= 1.3)\n", sweep_s,
           token_steps / sweep_s, sweep_s / engine_s);
    gs_patch_result_free(&r);
    gs_patch_components_free(comps, C);
    gs_patch_pairs_free(&p);
    free(u);
    free(tok);
    gs_model_free(m);
    return 0;
}
