/* The companion's optimizer, exactly as its optax chain computes it:
 *   clip_by_global_norm(clip) -> adamw(schedule, b1, b2, eps, weight_decay, mask)
 * with schedule = warmup_cosine_decay_schedule(init 0, peak lr, warmup,
 * decay_steps = total steps, end = lr * min_lr_ratio).
 *
 * Update k (1-based) uses the schedule at count k-1 (optax evaluates the
 * schedule at the count before incrementing it, so with warm-up the first
 * update has learning rate 0) and bias corrections 1 - b^k. Weight decay
 * (decoupled, scaled by the learning rate) applies only to GS_TENSOR_MATRIX
 * tensors: the companion's mask is "ndim >= 2 and not A_log/dt_bias", which
 * includes the (tied) embedding and excludes norms, biases, A_log, dt_bias. */
#ifndef GS_TRAIN_ADAMW_H
#define GS_TRAIN_ADAMW_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"

typedef struct {
    double lr;           /* peak learning rate */
    double min_lr_ratio; /* end of the cosine, as a fraction of lr */
    long warmup;         /* linear warm-up steps from 0 */
    long total_steps;    /* optax decay_steps: warm-up + cosine */
    double beta1, beta2, eps, weight_decay;
    double clip;         /* global gradient norm limit; <= 0: no clipping */
} adamw_config;

typedef struct {
    adamw_config cfg;
    size_t n;
    float *m, *v;
    uint8_t *decay; /* 1 where weight decay applies */
    long step;      /* updates done */
} adamw;

/* optax.warmup_cosine_decay_schedule(0, lr, warmup, total_steps, lr*min_lr_ratio)(count) */
double adamw_schedule(const adamw_config *c, long count);
adamw *adamw_new(const gs_config *model, const adamw_config *cfg);
void adamw_free(adamw *o);
/* The global L2 norm of g (in double). */
double adamw_global_norm(const float *g, size_t n);
/* One update of params from grads (grads are scaled in place by the clip).
 * Returns the global norm before clipping; *lr_used gets the learning rate. */
double adamw_step(adamw *o, float *params, float *grads, double *lr_used);

#endif
