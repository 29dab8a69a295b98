/* The training ops and the window forward/backward, compiled twice from one
 * source: float (training, SGEMM) and double (gradient checks, DGEMM). */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/cpu/target_clones.h"
#include "engine/train/train_ops.h"
#include "engine/train/train_window.h"
#include "engine/train/seq_window.h"
#include "engine/arch/family.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/arch/rt/rt.h"

#define FN_(name, sfx) name##_##sfx
#define FN__(name, sfx) FN_(name, sfx)
#define FN(name) FN__(name, SFX)


/* exp for float that the compiler can vectorize: 2^n * e^r, |r| <= ln2/2,
 * Cephes' minimax polynomial (about 1 ulp); inputs clamped to [-87, 88]. */
static inline float fast_expf(float x) {
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
GS_HOT static double xent_row_f32(float *z, int target, int V, float scale) {
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
#define XENT_ROW xent_row_f32

#define REAL float
#define SFX f32
#define GEMM cblas_sgemm
#define GEMV cblas_sgemv
#define GER cblas_sger
#define EXP expf
#define FEXP fast_expf
#define LOG logf
#define LOG1P log1pf
#define SQRT sqrtf
#include "engine/train/train_ops.inc"
#include "engine/arch/gpn/gpn_train.inc"
#include "engine/train/seq_common.inc"
#include "engine/arch/tpp/tpp_train.inc"
#include "engine/arch/gdn/gdn_train.inc"
#include "engine/arch/rt/rt_train.inc"
#undef REAL
#undef SFX
#undef GEMM
#undef GEMV
#undef GER
#undef EXP
#undef LOG
#undef LOG1P
#undef SQRT
#undef FEXP
#undef XENT_ROW

#define REAL double
#define SFX f64
#define GEMM cblas_dgemm
#define GEMV cblas_dgemv
#define GER cblas_dger
#define EXP exp
#define FEXP exp
#define LOG log
#define LOG1P log1p
#define SQRT sqrt
#include "engine/train/train_ops.inc"
#include "engine/arch/gpn/gpn_train.inc"
#include "engine/train/seq_common.inc"
#include "engine/arch/tpp/tpp_train.inc"
#include "engine/arch/gdn/gdn_train.inc"
#include "engine/arch/rt/rt_train.inc"

size_t gpn_tape_bytes(const gpn_config *c, int B, int T) {
    train_layout L;
    if (train_layout_init(&L, c) != 0) return 0;
    return tape_buffers_f32(NULL, &L, B, T);
}

size_t tpp_tape_bytes(const gpn_config *c, int B, int T) {
    tpp_tape_f32 tp;
    return tpp_buffers_f32(&tp, NULL, c, B, T);
}

size_t gdn_tape_bytes(const gpn_config *c, int B, int T) {
    gdn_tape_f32 tp;
    return gdn_buffers_f32(&tp, NULL, c, B, T);
}

size_t rt_tape_bytes(const gpn_config *c, int B, int T) {
    rt_tape_f32 tp;
    return rt_buffers_f32(&tp, NULL, c, B, T);
}
