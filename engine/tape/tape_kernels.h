/* The shared math of the training tapes that is not an op of train_ops.h:
 * the FN() suffix macro of the REAL templates, a vectorizable float exp and
 * the cross-entropy row of the logits (float: vectorized; double: plain).
 * Static, so each tape's file has its own copy and its own clones. */
#ifndef GS_ENGINE_TAPE_KERNELS_H
#define GS_ENGINE_TAPE_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/cpu/target_clones.h"

/* FN(name) is name_f32 or name_f64 after real_f32.h / real_f64.h */
#define FN_(name, sfx) name##_##sfx
#define FN__(name, sfx) FN_(name, sfx)
#define FN(name) FN__(name, SFX)

/* exp for float that the compiler can vectorize: 2^n * e^r, |r| <= ln2/2,
 * Cephes' minimax polynomial (about 1 ulp); inputs clamped to [-87, 88]. */
__attribute__((unused)) static inline float fast_expf(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* nll of a row of logits; with scale != 0, z becomes scale * (softmax(z) - onehot) */
GS_HOT __attribute__((unused)) static double xent_row_f32(float *z, int target, int V, float scale) {
    enum { L = 16 };
    float lane[L], zt = z[target];
    int i = 0;
    for (int j = 0; j < L; j++) lane[j] = z[0];
    for (; i + L <= V; i += L)
        for (int j = 0; j < L; j++) lane[j] = z[i + j] > lane[j] ? z[i + j] : lane[j];
    float mx = lane[0];
    for (int j = 1; j < L; j++) mx = lane[j] > mx ? lane[j] : mx;
    for (; i < V; i++) mx = z[i] > mx ? z[i] : mx;
    double sum = 0.0;
    if (scale != 0) {
        for (int k = 0; k < V; k++) z[k] = fast_expf(z[k] - mx);
        for (int j = 0; j < L; j++) lane[j] = 0;
        for (i = 0; i + L <= V; i += L)
            for (int j = 0; j < L; j++) lane[j] += z[i + j];
        for (int j = 0; j < L; j++) sum += lane[j];
        for (; i < V; i++) sum += z[i];
        float s = (float)(scale / sum);
        for (int k = 0; k < V; k++) z[k] *= s;
        z[target] -= scale;
    } else {
        for (int j = 0; j < L; j++) lane[j] = 0;
        for (i = 0; i + L <= V; i += L)
            for (int j = 0; j < L; j++) lane[j] += fast_expf(z[i + j] - mx);
        for (int j = 0; j < L; j++) sum += lane[j];
        for (; i < V; i++) sum += fast_expf(z[i] - mx);
    }
    return (double)mx + log(sum) - (double)zt;
}
/* the same in double for the gradient checks, plain exp; with scale != 0, z becomes scale * (softmax(z) - onehot) */
__attribute__((unused)) static double xent_row_f64(double *z, int target, int V, double scale) {
    double mx = z[0], zt = z[target];
    for (int i = 1; i < V; i++)
        if (z[i] > mx) mx = z[i];
    double sum = 0.0;
    if (scale != 0) {
        for (int i = 0; i < V; i++) {
            z[i] = exp(z[i] - mx);
            sum += z[i];
        }
        double s = (scale / sum);
        for (int i = 0; i < V; i++) z[i] *= s;
        z[target] -= scale;
    } else {
        for (int i = 0; i < V; i++) sum += exp(z[i] - mx);
    }
    return (double)mx + log(sum) - (double)zt;
}
#endif
