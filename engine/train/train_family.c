/* The training entries of the family table (train_family.h): thin adapters
 * from the trainer's untyped tape to each family's float32 tape. */
#include "engine/train/train_family.h"

#include "engine/train/seq_window.h"
#include "engine/train/train_window.h"

static void *gpn_new(const gpn_config *c, int B, int T) { return gpn_tape_new_f32(c, B, T); }
static void gpn_free(void *tp) { gpn_tape_free_f32(tp); }
static int gpn_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {
    return gpn_tape_forward_f32(tp, P, tok, NULL, NULL, NULL, grads, loss);
}
static void gpn_backward(void *tp, const float *P, float *grads, int bptt) { gpn_tape_backward_f32(tp, P, grads, bptt); }

const gs_train_i gs_train_gpn = {gpn_new, gpn_free, gpn_forward, gpn_backward, gpn_tape_bytes, train_init_params, 1, 1};

/* Transformer++, GDN and the Recurrent Transformer: one adapter set each, from one template */
#define SEQ_ADAPTERS(FAM)                                                                                            \
    static void *FAM##_new(const gpn_config *c, int B, int T) { return FAM##_tape_new_f32(c, B, T); }               \
    static void FAM##_free(void *tp) { FAM##_tape_free_f32(tp); }                                                    \
    static int FAM##_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {             \
        return FAM##_tape_forward_f32(tp, P, tok, grads, loss);                                                      \
    }                                                                                                                \
    static void FAM##_backward(void *tp, const float *P, float *grads, int bptt) {                                   \
        (void)bptt; /* full window: the config reader refuses bptt > 0 */                                            \
        FAM##_tape_backward_f32(tp, P, grads);                                                                       \
    }
SEQ_ADAPTERS(tpp)
SEQ_ADAPTERS(gdn)
SEQ_ADAPTERS(rt)

const gs_train_i gs_train_tpp = {tpp_new, tpp_free, tpp_forward, tpp_backward, tpp_tape_bytes, train_init_lm, 0, 2};
const gs_train_i gs_train_gdn = {gdn_new, gdn_free, gdn_forward, gdn_backward, gdn_tape_bytes, train_init_lm, 0, 2};
const gs_train_i gs_train_rt = {rt_new, rt_free, rt_forward, rt_backward, rt_tape_bytes, train_init_lm, 0, 2};
