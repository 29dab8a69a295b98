/* Gated DeltaNet (Yang et al.; fla-org/flash-linear-attention's
 * GatedDeltaNetModel, as the GPN companion's src/torch/models/gdn wraps it
 * with an untied lm_head): pre-norm blocks of a gated delta-rule layer and a
 * SwiGLU MLP. The equations and how they differ from GPN+M's write are in
 * docs/families.md; the sites in docs/hooks.md. */
#ifndef GS_ENGINE_ARCH_GDN_H
#define GS_ENGINE_ARCH_GDN_H

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

extern const gs_family gs_family_gdn;

/* GDN's hook points: the residual stream's are the TransformerLens points
 * Transformer++ shares (engine/hooks.h); GDN's own quantities are numbered in
 * the family-local range (a cast: gs_hook_point is the one type of a point). */
#define GDN_HOOK(n) ((gs_hook_point)(GS_HOOK_LOCAL + (n)))
#define GDN_HOOK_Q GDN_HOOK(0)
#define GDN_HOOK_K GDN_HOOK(1)
#define GDN_HOOK_V GDN_HOOK(2)
#define GDN_HOOK_BETA GDN_HOOK(3)
#define GDN_HOOK_ALPHA GDN_HOOK(4)
#define GDN_HOOK_STATE GDN_HOOK(5)
#define GDN_HOOK_O GDN_HOOK(6)
#define GDN_HOOK_CONV GDN_HOOK(7)
#define GDN_HOOK_END GDN_HOOK(8)
#define GDN_HOOK_EMBED GS_HOOK_EMBED
#define GDN_HOOK_RESID_PRE GS_HOOK_RESID_PRE
#define GDN_HOOK_ATTN_OUT GS_HOOK_ATTN_OUT
#define GDN_HOOK_RESID_MID GS_HOOK_RESID_MID
#define GDN_HOOK_MLP_OUT GS_HOOK_FFN_OUT
#define GDN_HOOK_RESID_POST GS_HOOK_RESID_POST
#define GDN_HOOK_LN_FINAL GS_HOOK_FINAL_NORM

/* The tensors of one layer and of the model, in the order tensor_specs lays them out. */
enum { GDN_ATTN_NORM, GDN_Q, GDN_K, GDN_V, GDN_A, GDN_B, GDN_A_LOG, GDN_DT_BIAS, GDN_QCONV, GDN_KCONV, GDN_VCONV,
       GDN_G, GDN_ONORM, GDN_O, GDN_MLP_NORM, GDN_GATE, GDN_UP, GDN_DOWN, GDN_PER_LAYER };
/* specs: [0] the embedding, then GDN_PER_LAYER per layer, then the final norm and lm_head */
#define GDN_SPEC(l, t) (1 + (l) * GDN_PER_LAYER + (t))
#define GDN_MAX_LAYERS ((GS_MAX_TENSORS - 3) / GDN_PER_LAYER)
/* The ids of gdn_tensors (gdn_family.c), in the same order: the embedding,
 * a layer's tensor t at GDN_TENSOR(t), the final norm and lm_head. */
#define GDN_TENSOR(t) (1 + (t))
enum { GDN_T_EMBED = 0, GDN_T_NORM = GDN_TENSOR(GDN_PER_LAYER), GDN_T_HEAD, GDN_N_TENSORS };
extern const gs_tensor_table gdn_tensors;

int gdn_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);

/* The window path's budget in rows of a pass (gdn_window.c; 0: its default,
 * 256 MB of them): windows whose B x T rows pass it run in pieces of
 * gdn_window_piece(c, B, T) tokens, whole chunks of the delta rule. For
 * tests, which set it small to make pieces and ask the piece to be sure. */
void gdn_window_set_rows(long rows);
int gdn_window_piece(const gs_config *c, int B, int T);

#endif
