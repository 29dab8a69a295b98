/* The Transformer++ training tape (tpp_train.h), compiled from one source
 * (tpp_train.inc) for float and double, and its gs_train_i entry. */
#include "engine/arch/tpp/tpp_train.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/tpp/tpp.h"
#include "engine/tape/tape_kernels.h"
#include "engine/tape/train_ops.h"

#include "engine/tape/real_f32.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/tpp/tpp_train.inc"
#include "engine/tape/real_end.h"

#include "engine/tape/real_f64.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/tpp/tpp_train.inc"
#include "engine/tape/real_end.h"

size_t tpp_tape_bytes(const gs_config *c, int B, int T) {
    tpp_tape_f32 tp;
    return tpp_buffers_f32(&tp, NULL, c, B, T);
}

SEQ_TAPE_ADAPTERS(tpp)

/* the "model" keys of its training config (train_family.h) */
static const gs_train_key tpp_keys[] = {TRAIN_KEYS_ATTENTION("transformer++")};

/* heads of d / H (validate refuses a remainder) */
static void tpp_derive(gs_config *c) {
    train_baseline_derive(c);
    if (c->H > 0) c->dk = c->dv = c->d / c->H;
}

const gs_train_i gs_train_tpp = {tpp_new,  tpp_free, tpp_forward, tpp_backward, tpp_tape_bytes, train_init_lm, 0, 2,
                                 tpp_keys, NULL,     tpp_derive,  TRAIN_INIT_DECAY};
