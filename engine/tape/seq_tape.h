/* The interface every sequence-major tape (Transformer++, GDN, Recurrent
 * Transformer: engine/arch/<fam>/<fam>_train.h) declares for float and
 * double, and the adapters that make its float tape a gs_train_i entry.
 *
 * Rows are sequence-major (row = b*T + t), so one sequence's T rows are
 * contiguous. None of these families predicts a window's first token
 * (gs_family.predicts_first_token = 0): step t predicts x_{t+1} and the loss
 * is the mean NLL over the B*(T-1) predicted tokens, what `gpnscope eval`
 * reports on the same window. Full backpropagation through the window. */
#ifndef GS_ENGINE_TAPE_SEQ_TAPE_H
#define GS_ENGINE_TAPE_SEQ_TAPE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"

#define SEQ_WINDOW_DECLARE(FAM, R, S)                                                                                \
    typedef struct FAM##_tape_##S FAM##_tape_##S;                                                                    \
    /* NULL with gs_error() on bad sizes (T < 2) or no memory */                                                     \
    FAM##_tape_##S *FAM##_tape_new_##S(const gs_config *c, int B, int T);                                           \
    void FAM##_tape_free_##S(FAM##_tape_##S *tp);                                                                    \
    /* Forward over tokens (B x T, sequence-major). With grads != NULL, also accumulates the output head's gradient  \
     * and keeps what the backward needs. *loss = mean NLL over the predicted tokens. 0, or -1 with gs_error(). */   \
    int FAM##_tape_forward_##S(FAM##_tape_##S *tp, const R *params, const int32_t *tokens, R *grads, double *loss); \
    /* Accumulate dLoss/dparams into grads (after a forward with grads). */                                          \
    void FAM##_tape_backward_##S(FAM##_tape_##S *tp, const R *params, R *grads);                                     \
    /* Per-token NLL of the last forward, B x T: entry (b, t) is -log p(x_t), NaN at t = 0 (the engine's). */        \
    void FAM##_tape_nll_##S(const FAM##_tape_##S *tp, R *out);

/* The gs_train_i adapters of a sequence tape FAM##_tape_*_f32 (static, in the family's _train.c) */
#define SEQ_TAPE_ADAPTERS(FAM)                                                                                       \
    static void *FAM##_new(const gs_config *c, int B, int T) { return FAM##_tape_new_f32(c, B, T); }               \
    static void FAM##_free(void *tp) { FAM##_tape_free_f32(tp); }                                                    \
    static int FAM##_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {             \
        return FAM##_tape_forward_f32(tp, P, tok, grads, loss);                                                      \
    }                                                                                                                \
    static void FAM##_backward(void *tp, const float *P, float *grads, int bptt) {                                   \
        (void)bptt; /* full window: the config reader refuses bptt > 0 */                                            \
        FAM##_tape_backward_f32(tp, P, grads);                                                                       \
    }

#endif
