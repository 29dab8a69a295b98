/* The Gated DeltaNet tape: forward and backward over a window of B sequences x
 * T tokens (engine/tape/seq_tape.h), float32 for the trainer and float64 for
 * the gradient checks, from one source (gdn_train.inc), and its training
 * entry in the family table. */
#ifndef GS_ENGINE_ARCH_GDN_TRAIN_H
#define GS_ENGINE_ARCH_GDN_TRAIN_H

#include <stddef.h>

#include "engine/model.h"
#include "engine/tape/seq_tape.h"
#include "engine/tape/train_family.h"

/* Bytes of activations a tape of B x T keeps for its backward pass. */
size_t gdn_tape_bytes(const gs_config *c, int B, int T);
SEQ_WINDOW_DECLARE(gdn, float, f32)
SEQ_WINDOW_DECLARE(gdn, double, f64)

extern const gs_train_i gs_train_gdn;

#endif
