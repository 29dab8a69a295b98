/* The Gated DeltaNet training tape (gdn_train.h), compiled from one source
 * (gdn_train.inc) for float and double, and its gs_train_i entry. */
#include "engine/arch/gdn/gdn_train.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/tape/tape_kernels.h"
#include "engine/tape/train_ops.h"

#include "engine/tape/real_f32.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/gdn/gdn_train.inc"
#include "engine/tape/real_end.h"

#include "engine/tape/real_f64.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/gdn/gdn_train.inc"
#include "engine/tape/real_end.h"

size_t gdn_tape_bytes(const gs_config *c, int B, int T) {
    gdn_tape_f32 tp;
    return gdn_buffers_f32(&tp, NULL, c, B, T);
}

SEQ_TAPE_ADAPTERS(gdn)

/* the "model" keys of its training config (train_family.h) */
static const gs_train_key gdn_keys[] = {
    TRAIN_KEY_VOCAB_SIZE(GS_KEY_REQUIRED), TRAIN_KEY_D_STATE(GS_KEY_REQUIRED), TRAIN_KEY_D_FFN(GS_KEY_REQUIRED),
    TRAIN_KEY_N_HEADS(GS_KEY_REQUIRED),    TRAIN_KEY_D_KEY(GS_KEY_REQUIRED),   TRAIN_KEY_D_VAL(GS_KEY_REQUIRED),
    TRAIN_KEY_N_LAYERS(GS_KEY_OPTIONAL),
    {"conv_size", GS_KEY_OPTIONAL, NULL, offsetof(gs_config, conv), 1, 16, "conv"},
    TRAIN_KEYS_NO_GPN("gdn"),              TRAIN_KEYS_END};

static void gdn_defaults(gs_config *c) { c->conv = 4; /* fla's conv_size */ }

const gs_train_i gs_train_gdn = {gdn_new,  gdn_free,     gdn_forward,     gdn_backward, gdn_tape_bytes, train_init_lm, 0, 2,
                                 gdn_keys, gdn_defaults, train_baseline_derive, TRAIN_INIT_DECAY};
