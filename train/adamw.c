#include "train/adamw.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "engine/cpu/target_clones.h"

double adamw_schedule(const adamw_config *c, long count) {
    if (count < 0) count = 0;
    if (c->warmup > 0 && count < c->warmup) return c->lr * (double)count / (double)c->warmup;
    long decay = c->total_steps - c->warmup;
    if (decay <= 0) return c->lr;
    long k = count - c->warmup;
    if (k > decay) k = decay;
    double cosine = 0.5 * (1.0 + cos(M_PI * (double)k / (double)decay));
    double alpha = c->min_lr_ratio;
    return c->lr * ((1.0 - alpha) * cosine + alpha);
}

adamw *adamw_new(const gs_config *model, const adamw_config *cfg) {
    adamw *o = calloc(1, sizeof *o);
    if (!o) { gs_fail("out of memory"); return NULL; }
    o->cfg = *cfg;
    o->n = gs_param_count(model);
    o->m = calloc(o->n, sizeof *o->m);
    o->v = calloc(o->n, sizeof *o->v);
    o->decay = calloc(o->n, 1);
    if (!o->m || !o->v || !o->decay) {
        adamw_free(o);
        gs_fail("out of memory for the optimizer state of %zu parameters", gs_param_count(model));
        return NULL;
    }
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(model, specs);
    for (int i = 0; i < n; i++)
        if (specs[i].role == GS_TENSOR_MATRIX)
            for (size_t k = 0; k < specs[i].numel; k++) o->decay[specs[i].offset + k] = 1;
    return o;
}

void adamw_free(adamw *o) {
    if (!o) return;
    free(o->m);
    free(o->v);
    free(o->decay);
    free(o);
}


/* sum of squares in 8 double lanes (vectorizable without reassociating) */
GS_HOT double adamw_global_norm(const float *g, size_t n) {
    double lane[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) lane[j] += (double)g[i + j] * g[i + j];
    double ss = 0.0;
    for (int j = 0; j < 8; j++) ss += lane[j];
    for (; i < n; i++) ss += (double)g[i] * g[i];
    return sqrt(ss);
}

/* the per-element update in float (vectorized); scalars in double */
GS_HOT static void update(float *p, float *m, float *v, const float *g, const uint8_t *decay, size_t n, float b1, float b2,
                       float c1, float c2, float eps, float lr, float lr_wd) {
    for (size_t i = 0; i < n; i++) {
        float mi = b1 * m[i] + (1.0f - b1) * g[i];
        float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        float u = (mi * c1) / (sqrtf(vi * c2) + eps);
        p[i] = p[i] - lr * u - (decay[i] ? lr_wd * p[i] : 0.0f);
    }
}

double adamw_step(adamw *o, float *params, float *grads, double *lr_used) {
    const adamw_config *c = &o->cfg;
    double norm = adamw_global_norm(grads, o->n);
    if (c->clip > 0 && norm > c->clip) { /* optax: g / norm * clip */
        float s = (float)(c->clip / norm);
        for (size_t i = 0; i < o->n; i++) grads[i] *= s;
    }
    double lr = adamw_schedule(c, o->step);
    o->step++;
    double bc1 = 1.0 - pow(c->beta1, (double)o->step), bc2 = 1.0 - pow(c->beta2, (double)o->step);
    update(params, o->m, o->v, grads, o->decay, o->n, (float)c->beta1, (float)c->beta2, (float)(1.0 / bc1),
           (float)(1.0 / bc2), (float)c->eps, (float)lr, (float)(lr * c->weight_decay));
    if (lr_used) *lr_used = lr;
    return norm;
}
