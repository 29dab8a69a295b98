/* A seeded PRNG (xoshiro256** seeded through splitmix64; normals by
 * Box-Muller) and the companion's initialisation of a GPN / GPN+M, so a run is
 * reproducible from its seed:
 *   embedding, read W_o        normal(0.02)
 *   other projections          LeCun normal, flax style: truncated normal on
 *                              [-2, 2] scaled to std 1/sqrt(fan_in) (fan_in =
 *                              rows of the (in, out) matrix)
 *   fg/pg gate matrices, ffn_w2, every bias   zeros
 *   RMSNorm weights            ones
 *   A_log                      log U(0, 16)
 *   dt_bias                    softplus^-1(dt), dt = exp(U(log 1e-3, log 0.1)) clipped at 1e-4
 * Tensors are filled in gs_tensor_specs order from one stream. */
#ifndef GS_ENGINE_TRAIN_INIT_H
#define GS_ENGINE_TRAIN_INIT_H

#include <stdint.h>

#include "engine/model.h"

typedef struct {
    uint64_t s[4];
} train_rng;

void train_rng_seed(train_rng *r, uint64_t seed);
uint64_t train_rng_next(train_rng *r);
double train_rng_uniform(train_rng *r); /* [0, 1), 53 bits */
double train_rng_normal(train_rng *r);  /* standard normal */
double train_rng_truncated_normal(train_rng *r, double lo, double hi);

/* Fill every parameter of (c, block) with the companion's initialisation. */
void train_init_params(const gs_config *c, float *block, train_rng *r);
/* The baselines' (Transformer++, GDN, the Recurrent Transformer): GPT-2's /
 * fla's initializer_range scheme, every matrix (embedding, lm_head, the
 * depthwise convolutions included) normal(0.02), the projections back into
 * the residual stream (attn W_o / o_proj, ffn w2 / down_proj, the RT's
 * attn_out and blocks' ff_out) normal(0.02 / sqrt(2 n_layers)), norms ones,
 * and A_log, dt_bias drawn as above. */
void train_init_lm(const gs_config *c, float *block, train_rng *r);

#endif
