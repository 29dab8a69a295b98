/* The Recurrent Transformer (arXiv 2604.21215), exactly as the authors' OLMo
 * fork computes it: OLMoRecurrentAutogradBlock._real_forward in
 * geniucos/recurrent-transformer's olmo/model.py (docs/families.md). Each
 * layer attends over keys and values made from its own earlier outputs:
 *
 *   xn = LN(x_t, attn_norm); q = q_norm(clip(q_proj xn));
 *   (k0, v0) = clip(kv_proj xn), k0 = k_norm(k0)   (the diagonal key/value)
 *   a_h = softmax_j(q_h . k_j / sqrt(dh) - slope_h (t - j)) over
 *         keys [K_0 .. K_{t-1}, k0], values [V_0 .. V_{t-1}, v0]
 *   y = x_t + attn_out(a V); out_t = y + ff_out(act(ff_proj LN(y, ff_norm)))
 *   (K_t, V_t) = clip(kv_proj LN(out_t, attn_norm)), K_t = k_norm(K_t)
 *
 * with OLMo's default LayerNorm (weight, no bias), ALiBi slopes
 * 2^-(h * alibi_bias_max / n_heads) for h = 1..n_heads, a final LayerNorm
 * ln_f and an untied head transformer.ff_out. Weights are stored [out, in]
 * under OLMo's state-dict names (transformer.blocks.{i}.q_proj.weight, ...).
 *
 * The config: gs_config.d = e = d_model, f = mlp_hidden_size (ff_proj's
 * rows), H = n_heads, dk = dv = d / H, norm_eps = layer_norm_eps, and the
 * RT fields activation, qk_norm, clip_qkv, alibi_bias_max; they come from the
 * run's OLMo model config in __metadata__.config (`convert --config`).
 *
 * Step convention (the engine's, as Transformer++): step t reads x_t; its
 * logits and nll are the prediction of x_t made at step t - 1 (NaN at t = 0);
 * the per-layer sites of step t are at position t. Incremental decoding keeps
 * per sequence and layer the recurrent keys and values K_j, V_j. */
#ifndef GS_ENGINE_ARCH_RT_H
#define GS_ENGINE_ARCH_RT_H

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

/* The tensors, in checkpoint order (rt_tensors, rt_family.c): OLMo's
 * state-dict names; q_norm and k_norm only with attention_layer_norm. */
typedef enum {
    RT_WTE,
    RT_ATTN_NORM, RT_Q_NORM, RT_K_NORM, RT_Q_PROJ, RT_KV_PROJ, RT_ATTN_OUT, RT_FF_NORM, RT_FF_PROJ, RT_FF_OUT, /* per layer */
    RT_LN_F, RT_HEAD,
    RT_N_TENSORS
} rt_tensor;
extern const gs_tensor_table rt_tensors;

/* activation_type: what OLMo's Activation.build knows */
typedef enum { RT_ACT_GELU = 0, RT_ACT_RELU = 1, RT_ACT_SWIGLU = 2 } rt_activation;

/* The family's own hook points (engine/hooks.h's local range). The pattern
 * is laid out as Transformer++'s (engine/arch/tpp/tpp.h): row b, head h,
 * column j holds the weight of key position pos_b - (GS_PATTERN_KEYS - 1) + j,
 * so the last column is the diagonal key k0 and column GS_PATTERN_KEYS - 2 the
 * recurrent key K_{t-1}; NaN before position 0; an edit replaces the weights
 * before the values are read. */
#define RT_HOOK(n) ((gs_hook_point)(GS_HOOK_LOCAL + (n)))
#define RT_HOOK_PATTERN RT_HOOK(0) /* blocks.{i}.attn.hook_pattern, H * GS_PATTERN_KEYS */
#define RT_HOOK_DIAG RT_HOOK(1)    /* blocks.{i}.attn.hook_diag_share, H: the weight on k0 */
#define RT_HOOK_K_REC RT_HOOK(2)   /* blocks.{i}.attn.hook_k_rec, H * dk: K_t, what the cache keeps */
#define RT_HOOK_V_REC RT_HOOK(3)   /* blocks.{i}.attn.hook_v_rec, H * dv: V_t */
#define RT_HOOK_END RT_HOOK(4)

extern const gs_family gs_family_rt;

int rt_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);
/* OLMo's default LayerNorm, F.layer_norm with a weight and no bias, on B rows
 * of n (out may be x) */
void rt_layer_norm(float *out, const float *x, const float *w, int B, int n, float eps);

#endif
