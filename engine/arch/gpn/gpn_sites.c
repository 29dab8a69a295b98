/* GPN and GPN+M as rows of the family table: their sites, in step order
 * (docs/gpn-model.md, docs/hooks.md). The old hook names stay as aliases. */
#include "engine/arch/gpn/gpn_family.h"
#include "engine/arch/gpn/gpn_train.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof *(a)))

static const gs_site gpn_sites[] = {
    /* the memory write, once per step */
    {"mem.state", NULL, GS_HOOK_MEM_STATE, GS_SITE_HEAD_VECTOR, 0, GS_DIM_HEADS_KEY_VAL, GS_ROLE_NONE, 1, 0,
     "each head's memory M_h (d_key x d_val, row-major) carried into the step, before the write; an edit is carried"},
    {"mem.k", NULL, GS_HOOK_MEM_K, GS_SITE_HEAD_VECTOR, 0, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 1, 0,
     "write keys k_h = l2n(relu(rms(prev) W_k + b_k)), before the write"},
    {"mem.v", NULL, GS_HOOK_MEM_V, GS_SITE_HEAD_VECTOR, 0, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 1, 0,
     "write values v_h = rms(s) W_v, before the write"},
    {"mem.alpha", NULL, GS_HOOK_MEM_ALPHA, GS_SITE_HEAD_SCALAR, 0, GS_DIM_HEADS, GS_ROLE_DECAY, 1, 1,
     "per-head decay rate alpha_h = exp(-exp(A_log) softplus(a + dt_bias))"},
    {"mem.beta", NULL, GS_HOOK_MEM_BETA, GS_SITE_HEAD_SCALAR, 0, GS_DIM_HEADS, GS_ROLE_NONE, 1, 1,
     "per-head write strength beta_h"},
    {"mem.norm", NULL, GS_HOOK_MEM_NORM, GS_SITE_HEAD_SCALAR, 0, GS_DIM_HEADS, GS_ROLE_NONE, 1, 1,
     "||M_h||_F after the write"},
    /* each layer */
    {"blocks.{i}.mem.q", "L{i}.mem.q", GS_HOOK_MEM_Q, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 1, 0,
     "read queries"},
    {"blocks.{i}.mem.heads", "L{i}.mem.heads", GS_HOOK_MEM_HEADS, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL,
     GS_ROLE_NONE, 1, 0, "per-head reads q_h M_h before the output norm (zero a head here to ablate it)"},
    {"blocks.{i}.mem.gated", "L{i}.mem.gated", GS_HOOK_MEM_GATED, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL,
     GS_ROLE_NONE, 1, 0, "per-head reads after the output norm and the read gate; hook_mem_out = their W_o"},
    {"blocks.{i}.hook_mem_out", "L{i}.mem_read", GS_HOOK_MEM_READ, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 1, 0,
     "the memory read's contribution to the state"},
    {"blocks.{i}.hook_mlp_out", "L{i}.ffn_out", GS_HOOK_FFN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the FFN's contribution to the state"},
    {"blocks.{i}.pred_gate", "L{i}.pred_gate", GS_HOOK_PRED_GATE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the predict gate"},
    /* after the layers */
    {"state.pred", "s_pred", GS_HOOK_S_PRED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_STATE, 0, 1,
     "the predicted state s^p_t: decoded, and carried to grounding"},
    {"state.decode", "s_decode", GS_HOOK_S_DECODE, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "a copy of the predicted state that is only decoded (edit here to change the logits alone)"},
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1,
     "decode(s^p_t) E^T, the distribution for x_t"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t)"},
    {"state.fuse_gate", "fuse_gate", GS_HOOK_FUSE_GATE, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the fuse gate"},
    {"state.ground", "s_ground", GS_HOOK_S_GROUND, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "the grounded state after fusing x_t, carried to the next step"},
};

#define GPN_CHECKPOINTS                                                                                                \
    gpn_family_recognise, "tensors 'embedding' and 'decode_norm_w' (GPN and GPN+M)", gpn_family_infer, gpn_family_check_metadata, gpn_family_validate, gpn_family_tensor_specs,     \
        gpn_family_bind, gpn_family_write_metadata

/* patching's whole state: state.ground, the state site; GPN+M's memory is mem.state's (analyses/causal/patching.c) */
static const char *const gpn_carried[] = {NULL};

/* the shared write (mem.k, v, alpha, beta) read by every layer's queries (docs/hooks.md) */
static const gs_delta_memory gpn_delta_memory = {"blocks.{i}.mem.q", "mem.k", "mem.v", "mem.alpha", "mem.beta",
                                                 "blocks.{i}.mem.heads", 0, 0};

const gs_family gs_family_gpn = {"gpn", "gpn", "GPN, no memory", GS_ARCH_GPN, 1, gpn_sites, ARRAY_LEN(gpn_sites),
                                 GPN_CHECKPOINTS, gpn_cpu_new, gpn_cuda_backend_new, gpn_family_decode,
                                 gpn_family_embedding, gpn_family_describe, &gs_train_gpn, NULL, NULL, gpn_carried,
                                 0, 1, NULL};
const gs_family gs_family_gpn_m = {"gpn_m", "gpn+m", "GPN+M, shared matrix memory", GS_ARCH_GPN_M, 1, gpn_sites,
                                   ARRAY_LEN(gpn_sites), GPN_CHECKPOINTS, gpn_cpu_new, gpn_cuda_backend_new, gpn_family_decode,
                                   gpn_family_embedding, gpn_family_describe, &gs_train_gpn_m, NULL, NULL, gpn_carried,
                                   1, 1, &gpn_delta_memory};
