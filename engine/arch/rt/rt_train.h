/* The Recurrent Transformer tape: forward and backward over a window of B sequences x
 * T tokens (engine/tape/seq_tape.h), float32 for the trainer and float64 for
 * the gradient checks, from one source (rt_train.inc), and its training
 * entry in the family table. */
#ifndef GS_ENGINE_ARCH_RT_TRAIN_H
#define GS_ENGINE_ARCH_RT_TRAIN_H

#include <stddef.h>

#include "engine/model.h"
#include "engine/tape/seq_tape.h"
#include "engine/tape/train_family.h"

/* Bytes of activations a tape of B x T keeps for its backward pass. */
size_t rt_tape_bytes(const gs_config *c, int B, int T);
SEQ_WINDOW_DECLARE(rt, float, f32)
SEQ_WINDOW_DECLARE(rt, double, f64)
/* cut != 0: the backward drops what later positions send back through K_t, V_t into out_t (a stop-gradient on
 * the recurrent memory), so the gradient check can show it sees that term; 0 (the default): full BPTT */
void rt_tape_cut_recurrence_f32(rt_tape_f32 *tp, int cut);
void rt_tape_cut_recurrence_f64(rt_tape_f64 *tp, int cut);

extern const gs_train_i gs_train_rt;

#endif
