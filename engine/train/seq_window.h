/* Forward and backward of a Transformer++ (tpp_tape), a Gated DeltaNet
 * (gdn_tape) and a Recurrent Transformer (rt_tape) over a window of B
 * sequences x T tokens, for the trainer (float32, SGEMM) and for gradient
 * checks (float64, DGEMM), from one source each in the family's folder
 * (engine/arch/tpp/tpp_train.inc, gdn/gdn_train.inc, rt/rt_train.inc; shared
 * pieces in seq_common.inc), with the equations of engine/arch/tpp/tpp.h, engine/arch/gdn/gdn.h and
 * engine/arch/rt/rt.h (docs/families.md) and the inference engines' order of
 * operations.
 *
 * Rows are sequence-major (row = b*T + t), so one sequence's T rows are
 * contiguous: attention is a GEMM per (sequence, head), the delta rule
 * walks a sequence's rows in order, and the Recurrent Transformer walks the
 * positions of every sequence together (rows T apart). None of the three
 * predicts a window's first token (gs_family.predicts_first_token = 0): step
 * t predicts x_{t+1} and the loss is the mean NLL over the B*(T-1) predicted
 * tokens, what `gpnscope eval` reports on the same window. Full
 * backpropagation through the window: attention over every earlier position,
 * the delta rule through every step, the Recurrent Transformer's attention
 * over each layer's own earlier outputs. */
#ifndef GS_ENGINE_TRAIN_SEQ_WINDOW_H
#define GS_ENGINE_TRAIN_SEQ_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"

/* Bytes of activations a tape of B x T keeps for its backward pass. */
size_t tpp_tape_bytes(const gpn_config *c, int B, int T);
size_t gdn_tape_bytes(const gpn_config *c, int B, int T);
size_t rt_tape_bytes(const gpn_config *c, int B, int T);

#define SEQ_WINDOW_DECLARE(FAM, R, S)                                                                                \
    typedef struct FAM##_tape_##S FAM##_tape_##S;                                                                    \
    /* NULL with gs_error() on bad sizes (T < 2) or no memory */                                                     \
    FAM##_tape_##S *FAM##_tape_new_##S(const gpn_config *c, int B, int T);                                           \
    void FAM##_tape_free_##S(FAM##_tape_##S *tp);                                                                    \
    /* Forward over tokens (B x T, sequence-major). With grads != NULL, also accumulates the output head's gradient  \
     * and keeps what the backward needs. *loss = mean NLL over the predicted tokens. 0, or -1 with gs_error(). */   \
    int FAM##_tape_forward_##S(FAM##_tape_##S *tp, const R *params, const int32_t *tokens, R *grads, double *loss); \
    /* Accumulate dLoss/dparams into grads (after a forward with grads). */                                          \
    void FAM##_tape_backward_##S(FAM##_tape_##S *tp, const R *params, R *grads);                                     \
    /* Per-token NLL of the last forward, B x T: entry (b, t) is -log p(x_t), NaN at t = 0 (the engine's). */        \
    void FAM##_tape_nll_##S(const FAM##_tape_##S *tp, R *out);

SEQ_WINDOW_DECLARE(tpp, float, f32)
SEQ_WINDOW_DECLARE(tpp, double, f64)
SEQ_WINDOW_DECLARE(gdn, float, f32)
SEQ_WINDOW_DECLARE(gdn, double, f64)
/* The Recurrent Transformer (engine/arch/rt/rt_train.inc): BPTT through each layer's attention over its own earlier outputs */
SEQ_WINDOW_DECLARE(rt, float, f32)
SEQ_WINDOW_DECLARE(rt, double, f64)
/* cut != 0: the backward drops what later positions send back through K_t, V_t into out_t (a stop-gradient on
 * the recurrent memory), so the gradient check can show it sees that term; 0 (the default): full BPTT */
void rt_tape_cut_recurrence_f32(rt_tape_f32 *tp, int cut);
void rt_tape_cut_recurrence_f64(rt_tape_f64 *tp, int cut);

#endif
