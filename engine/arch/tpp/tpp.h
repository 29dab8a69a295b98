/* Transformer++, the GPN paper's baseline, exactly as the companion's
 * src/torch/models/transformer computes it (docs/families.md): pre-norm
 * blocks h += attn(rms(h)); h += ffn(rms(h)) with RMSNorm eps 1e-6, RoPE
 * (base 10000, rotate-half), causal softmax attention over H heads of
 * Dh = d / H, SwiGLU (w1 = [gate; value]), a final RMSNorm and the tied head
 * h E^T. Weights are stored [out, in] under the companion's names.
 *
 * The config: gs_config.d = e = hidden_dim, f = ffn_dim, H = n_heads,
 * dk = dv = Dh. The heads cannot be read from shapes: they come from the
 * checkpoint's __metadata__.config (the companion's config dict, key
 * n_heads) or __metadata__.n_heads.
 *
 * Step convention (the engine's): step t reads x_t; its logits, nll, entropy
 * and top1 are the prediction of x_t made at step t-1 (NaN at t = 0: a
 * transformer does not predict the first token); residual-stream sites at
 * step t are at position t, after reading x_t. */
#ifndef GS_ENGINE_ARCH_TPP_H
#define GS_ENGINE_ARCH_TPP_H

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

/* The tensors, in checkpoint order (tpp_tensors, tpp_family.c). */
typedef enum {
    TPP_EMBED,
    TPP_ATTN_NORM, TPP_W_Q, TPP_W_K, TPP_W_V, TPP_W_O, TPP_FFN_NORM, TPP_W1, TPP_W2, /* per layer */
    TPP_NORM,
    TPP_N_TENSORS
} tpp_tensor;
extern const gs_tensor_table tpp_tensors;

/* The family's own hook point (engine/hooks.h's local range): the attention
 * pattern, B rows of H * GS_PATTERN_KEYS. Row b, head h, column j holds the
 * weight of key position pos_b - (GS_PATTERN_KEYS - 1) + j, so the last
 * column is the current position and column GS_PATTERN_KEYS - 2 the previous
 * one; NaN where that position is before 0. A hook's edit replaces those
 * weights before the values are read (keys further back keep theirs). */
#define TPP_HOOK_PATTERN ((gs_hook_point)(GS_HOOK_LOCAL + 0))

extern const gs_family gs_family_tpp;

int tpp_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);

/* The window path's budget in rows of a pass (tpp_window.c; 0: its default,
 * 256 MB of them): windows whose B x T rows pass it run in pieces of
 * tpp_window_piece(c, B, T) tokens. For tests, which set it small to make
 * pieces and ask the piece to be sure they did. */
void tpp_window_set_rows(long rows);
int tpp_window_piece(const gs_config *c, int B, int T);

#endif
