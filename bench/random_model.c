/* bench_random_model OUT.safetensors [--quick]: the paper's 130M GPN+M
 * configuration (bench/engine.c's: 1 layer, d 2496, e 768, f 6656, 15 heads
 * of d_k 128, d_v 256, V 32000) with random weights, saved as BF16
 * safetensors, for benchmarks that run the command line (bench/mpi_scale.sh).
 * --quick: a small model of the same family (d 256, V 32000). */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/model.h"

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--quick"))) {
        fprintf(stderr, "usage: bench_random_model OUT.safetensors [--quick]\n");
        return 2;
    }
    gs_config paper = {.n_layers = 1, .d = 2496, .e = 768, .f = 6656, .H = 15, .dk = 128,
                        .dv = 256, .V = 32000, .decoder_bias = 0};
    gs_config quick = {.n_layers = 1, .d = 256, .e = 128, .f = 512, .H = 4, .dk = 32,
                        .dv = 64, .V = 32000, .decoder_bias = 0};
    gs_family_config("gpn_m", &paper); /* the paper's 130M GPN+M, and a small one */
    gs_family_config("gpn_m", &quick);
    gs_model *m = gs_model_random(argc == 3 ? &quick : &paper, 0);
    if (!m || gs_model_save(m, argv[1], 1)) {
        fprintf(stderr, "bench_random_model: %s\n", gs_error());
        gs_model_free(m);
        return 1;
    }
    printf("%s: %.1fM parameters\n", argv[1], m->n_params / 1e6);
    gs_model_free(m);
    return 0;
}
