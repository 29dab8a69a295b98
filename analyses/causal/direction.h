/* A direction in a model's state space, by name, for patching and steering
 * (docs/causal.md):
 *   s_bar          the mean state: the store's geometry analysis ("mean")
 *   pc1            its top singular direction ("top_singular_vector")
 *   ANALYSIS:KEY   any vector of width d a store's analysis holds (geometry:dim_std)
 *   FILE.npy       d floats from a .npy file (any float dtype, any shape of d):
 *                  a direction made elsewhere, e.g. a linear probe's weights
 * From a store, the newest analysis of that name (of run `run` when > 0). */
#ifndef GS_ANALYSES_DIRECTION_H
#define GS_ANALYSES_DIRECTION_H

#include <stdint.h>

#include "store/store.h"

/* d floats into out; st may be NULL for a .npy. One-line errors. */
int gs_direction_load(const char *spec, store *st, int64_t run, int d, float *out);

#endif
