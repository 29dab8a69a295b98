/* GPN's and GPN+M's training tape (gpn_train.h), compiled from one source
 * (gpn_train.inc) for float and double, and their gs_train_i entries. */
#include "engine/arch/gpn/gpn_train.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/tape/tape_kernels.h"
#include "engine/tape/train_ops.h"

#include "engine/tape/real_f32.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/arch/gpn/gpn_train.inc"
#include "engine/tape/real_end.h"

#include "engine/tape/real_f64.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/arch/gpn/gpn_train.inc"
#include "engine/tape/real_end.h"

size_t gpn_tape_bytes(const gs_config *c, int B, int T) {
    train_layout L;
    if (train_layout_init(&L, c) != 0) return 0;
    return tape_buffers_f32(NULL, &L, B, T);
}

static void *gpn_new(const gs_config *c, int B, int T) { return gpn_tape_new_f32(c, B, T); }
static void gpn_free(void *tp) { gpn_tape_free_f32(tp); }
static int gpn_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {
    return gpn_tape_forward_f32(tp, P, tok, NULL, NULL, NULL, grads, loss);
}
static void gpn_backward(void *tp, const float *P, float *grads, int bptt) { gpn_tape_backward_f32(tp, P, grads, bptt); }

/* the "model" keys of GPN's and GPN+M's training configs (train_family.h) */
static const gs_train_key gpn_keys[] = {
    TRAIN_KEY_VOCAB_SIZE(GS_KEY_REQUIRED), TRAIN_KEY_D_STATE(GS_KEY_REQUIRED), TRAIN_KEY_D_EMB(GS_KEY_REQUIRED),
    TRAIN_KEY_D_FFN(GS_KEY_REQUIRED),      TRAIN_KEY_DECODER_BIAS(GS_KEY_OPTIONAL), TRAIN_KEY_NO_CONV, TRAIN_KEYS_END};
static const gs_train_key gpn_m_keys[] = {
    TRAIN_KEY_VOCAB_SIZE(GS_KEY_REQUIRED), TRAIN_KEY_D_STATE(GS_KEY_REQUIRED), TRAIN_KEY_D_EMB(GS_KEY_REQUIRED),
    TRAIN_KEY_D_FFN(GS_KEY_REQUIRED),      TRAIN_KEY_N_HEADS(GS_KEY_REQUIRED), TRAIN_KEY_D_KEY(GS_KEY_REQUIRED),
    TRAIN_KEY_D_VAL(GS_KEY_REQUIRED),      TRAIN_KEY_N_LAYERS(GS_KEY_OPTIONAL), TRAIN_KEY_DECODER_BIAS(GS_KEY_OPTIONAL),
    TRAIN_KEY_NO_CONV,                     TRAIN_KEYS_END};
/* GPN: one layer, no memory heads, whatever the config says of them */
static void gpn_derive(gs_config *c) {
    c->H = c->dk = c->dv = 0;
    c->n_layers = 1;
}
/* GPN+M's one write (GPN's rows keep the decay keys every family has) */
#define INIT_WRITE {"init_write_A_log", "init_write_dt_bias"}

const gs_train_i gs_train_gpn = {gpn_new,  gpn_free, gpn_forward, gpn_backward, gpn_tape_bytes, train_init_params, 1, 1,
                                 gpn_keys, NULL,     gpn_derive,  TRAIN_INIT_DECAY};
const gs_train_i gs_train_gpn_m = {gpn_new,    gpn_free, gpn_forward, gpn_backward, gpn_tape_bytes, train_init_params, 1, 1,
                                   gpn_m_keys, NULL,     NULL,        INIT_WRITE};

