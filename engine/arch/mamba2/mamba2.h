/* Mamba-2 (Dao and Gu, "Transformers are SSMs"; state-spaces/mamba's Mamba2
 * mixer in Hugging Face's Mamba2ForCausalLM layout): pre-norm blocks of one
 * SSD mixer each, a scalar decay per head. The equations are in
 * docs/families.md, the sites in docs/hooks.md. */
#ifndef GS_ENGINE_ARCH_MAMBA2_H
#define GS_ENGINE_ARCH_MAMBA2_H

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

extern const gs_family gs_family_mamba2;

/* the family's id: the first of the ids families in their own folders take (engine/model.h) */
#define MAMBA2_ARCH ((gs_arch)(GS_ARCH_OWN + 0))

/* Mamba-2's options that no shape shows, in gs_config.own (gs_own_get). The
 * shared fields: d the residual width (hidden_size), H heads (num_heads) of
 * dv = head_dim channels, dk = d_state (state_size), conv the kernel
 * (conv_kernel), norm_eps every RMSNorm's eps (layer_norm_epsilon). */
typedef struct {
    int n_groups;       /* B and C are shared by H / n_groups heads; the gated norm is per group */
    int tied;           /* no lm_head.weight: the embedding decodes */
    float dt_min, dt_max; /* time_step_limit: dt is clamped to it ((0, inf): no clamp) */
} mamba2_opts;

static inline mamba2_opts mamba2_opts_of(const gs_config *c) {
    mamba2_opts o;
    gs_own_get(mamba2_opts, c, &o);
    return o;
}

/* Mamba-2's hook points: the residual stream's are the shared TransformerLens
 * points (engine/hooks.h); the mixer's own are the family-local ones. */
#define M2_HOOK(n) ((gs_hook_point)(GS_HOOK_LOCAL + (n)))
#define M2_HOOK_CONV M2_HOOK(0)
#define M2_HOOK_X M2_HOOK(1)
#define M2_HOOK_B M2_HOOK(2)
#define M2_HOOK_C M2_HOOK(3)
#define M2_HOOK_DT M2_HOOK(4)
#define M2_HOOK_DECAY M2_HOOK(5)
#define M2_HOOK_STATE M2_HOOK(6)
#define M2_HOOK_Y M2_HOOK(7)
#define M2_HOOK_END M2_HOOK(8)
#define M2_HOOK_MIXER_OUT GS_HOOK_ATTN_OUT /* the mixer's contribution, as a block's attention's elsewhere */

/* The tensors of one layer, in the order tensor_specs lays them out. */
enum { M2_NORM, M2_IN_PROJ, M2_CONV_W, M2_CONV_B, M2_DT_BIAS, M2_A_LOG, M2_D, M2_GNORM, M2_OUT_PROJ, M2_PER_LAYER };
/* specs: [0] the embedding, then M2_PER_LAYER per layer, then norm_f and (untied) lm_head */
#define M2_SPEC(l, t) (1 + (l) * M2_PER_LAYER + (t))
#define M2_MAX_LAYERS ((GS_MAX_TENSORS - 3) / M2_PER_LAYER)
/* The ids of mamba2_tensors (mamba2_family.c), in the same order: the
 * embedding, a layer's tensor t at M2_TENSOR(t), norm_f and lm_head. */
#define M2_TENSOR(t) (1 + (t))
enum { M2_T_EMBED = 0, M2_T_NORM_F = M2_TENSOR(M2_PER_LAYER), M2_T_HEAD, M2_N_TENSORS };
extern const gs_tensor_table mamba2_tensors;

/* d_inner = H head_dim; the convolved channels x | B | C = d_inner + 2 G N;
 * in_proj's rows z | xBC | dt = d_inner + conv channels + H */
static inline int mamba2_inner(const gs_config *c) { return c->H * c->dv; }
static inline int mamba2_conv_dim(const gs_config *c) {
    return mamba2_inner(c) + 2 * mamba2_opts_of(c).n_groups * c->dk;
}

int mamba2_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);

#endif
