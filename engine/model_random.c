/* Random weights on the scale of a trained model, for benchmarks and for
 * device parity at sizes no fixture has (the paper's 130M configuration):
 * U(-1.7, 1.7)/sqrt(fan_in) matrices (every matrix non-zero, unlike the
 * companion's initialisation, so no path is trivially equal), unit norms,
 * zero biases, decays in a realistic range. */
#include <math.h>

#include "engine/model.h"

gs_model *gs_model_random(const gs_config *c, uint64_t seed) {
    gs_model *m = gs_model_new(c);
    if (!m) return NULL;
    uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
#define UNIFORM() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (double)(x >> 11) / 9007199254740992.0)
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    for (int i = 0; i < n; i++) {
        float *p = m->block + specs[i].offset;
        /* fan-in scaling; a depthwise conv [C, 1, K] sums K taps */
        double scale = specs[i].ndim == 2   ? 1.7 / sqrt((double)specs[i].shape[0])
                       : specs[i].ndim == 3 ? 1.7 / sqrt((double)specs[i].shape[2])
                                            : 0.0;
        for (size_t j = 0; j < specs[i].numel; j++) {
            switch (specs[i].role) {
            case GS_TENSOR_MATRIX: p[j] = (float)((UNIFORM() - 0.5) * 2 * scale); break;
            case GS_TENSOR_NORM: p[j] = 1.0f; break;
            case GS_TENSOR_A_LOG: p[j] = (float)log(1 + 15 * UNIFORM()); break;
            case GS_TENSOR_DT_BIAS: p[j] = (float)(-4 - 2 * UNIFORM()); break;
            default: p[j] = 0.0f;
            }
        }
    }
#undef UNIFORM
    return m;
}
