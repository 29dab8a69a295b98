/* The Recurrent Transformer training tape (rt_train.h), compiled from one
 * source (rt_train.inc) for float and double, and its gs_train_i entry. */
#include "engine/arch/rt/rt_train.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/rt/rt.h"
#include "engine/tape/tape_kernels.h"
#include "engine/tape/train_ops.h"

#include "engine/tape/real_f32.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/rt/rt_train.inc"
#include "engine/tape/real_end.h"

#include "engine/tape/real_f64.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/seq_common.inc"
#include "engine/arch/rt/rt_train.inc"
#include "engine/tape/real_end.h"

size_t rt_tape_bytes(const gs_config *c, int B, int T) {
    rt_tape_f32 tp;
    return rt_buffers_f32(&tp, NULL, c, B, T);
}

SEQ_TAPE_ADAPTERS(rt)

/* the "model" keys of its training config (train_family.h) */
static const gs_train_key rt_keys[] = {TRAIN_KEYS_ATTENTION("recurrent-transformer")};

/* the paper's runs (docs/training.md): GELU, q/k LayerNorms, ALiBi 8, OLMo's eps, no clip_qkv */
static void rt_derive(gs_config *c) {
    train_baseline_derive(c);
    c->activation = RT_ACT_GELU;
    c->qk_norm = 1;
    c->alibi_bias_max = 8.0f;
    c->clip_qkv = 0.0f;
    c->norm_eps = 1e-5f;
    if (c->H > 0) c->dk = c->dv = c->d / c->H;
}
const gs_train_i gs_train_rt = {rt_new,  rt_free, rt_forward, rt_backward, rt_tape_bytes, train_init_lm, 0, 2,
                                rt_keys, NULL,    rt_derive,  TRAIN_INIT_DECAY};
