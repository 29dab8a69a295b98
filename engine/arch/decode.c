#include "engine/arch/decode.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "base/error.h"

int gs_decode_rms_head(const float *s, const float *w, float eps, int d, const float *head, int V, float *logits) {
    float *x = malloc((size_t)d * sizeof *x);
    if (!x) return gs_fail("out of memory");
    double ss = 0;
    for (int i = 0; i < d; i++) ss += (double)s[i] * s[i];
    float r = w ? 1.0f / sqrtf((float)(ss / d) + eps) : 1.0f;
    for (int i = 0; i < d; i++) x[i] = s[i] * r * (w ? w[i] : 1.0f);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, V, d, 1.0f, head, d, x, 1, 0.0f, logits, 1);
    free(x);
    return 0;
}
