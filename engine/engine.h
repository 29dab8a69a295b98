/* The instrumented CPU inference engine: B sequences advance in lockstep, one
 * token each per step, exactly as docs/gpn-model.md states the step. Every
 * projection of a step is one SGEMM over the batch; the memory write and read
 * are per-sequence loops over heads. State and memory are float32. */
#ifndef GS_ENGINE_ENGINE_H
#define GS_ENGINE_ENGINE_H

#include <stdint.h>

#include "engine/hooks.h"
#include "engine/model.h"

typedef struct gpn_engine gpn_engine;

/* Outputs of the last step, B rows each (pointers stay valid until the next step). */
typedef struct {
    const float *nll, *entropy;   /* B */
    const int32_t *top1;          /* B */
    const float *s_pred, *s_ground; /* B x d */
    const float *logits;          /* B x V */
    const float *alpha, *beta, *mem_norm; /* B x H (NULL for GPN) */
} gpn_step_out;

gpn_engine *gpn_engine_new(const gpn_model *m, int max_batch);
void gpn_engine_free(gpn_engine *e);
/* Zero the state (s, prev, M) of every sequence / of sequence b. */
void gpn_engine_reset(gpn_engine *e);
void gpn_engine_reset_seq(gpn_engine *e, int b);
/* Advance the first B sequences by one token each. Returns 0, or -1 with
 * gs_error() set (token id out of range, B too large). */
int gpn_engine_step(gpn_engine *e, const int32_t *tokens, int B);
gpn_step_out gpn_engine_out(const gpn_engine *e);
void gpn_engine_set_hook(gpn_engine *e, gpn_hook_point p, gpn_hook_fn fn, void *ctx);
const gpn_model *gpn_engine_model(const gpn_engine *e);
int gpn_engine_max_batch(const gpn_engine *e);

#endif
