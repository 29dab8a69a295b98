/* Hook points: every observable of a step, by name (TransformerLens style).
 *
 * The engine calls the function registered on a point with the tensor for the
 * whole batch (B rows of `width` floats); the function may read it and may
 * change it in place, and the step continues from the changed values. That is
 * both capture and intervention. The engine knows nothing of what hooks do;
 * probes/ builds named capture sets and interventions on top of this. The
 * public names, widths and kinds of these points are the family's sites
 * (engine/arch/gpn/gpn_sites.c); the names in the comments below are the
 * older ones, kept as aliases. */
#ifndef GS_ENGINE_HOOKS_H
#define GS_ENGINE_HOOKS_H

#include <stdint.h>

typedef enum {
    /* memory write, once per step (GPN+M) */
    GS_HOOK_MEM_K,      /* "mem.k"       keys, H*dk, before the write */
    GS_HOOK_MEM_ALPHA,  /* "mem.alpha"   decay rate per head, H */
    GS_HOOK_MEM_BETA,   /* "mem.beta"    write strength per head, H */
    GS_HOOK_MEM_NORM,   /* "mem.norm"    ||M_h||_F after the write, H */
    /* per layer */
    GS_HOOK_MEM_Q,      /* "L{i}.mem.q"     read queries, H*dk */
    GS_HOOK_MEM_HEADS,  /* "L{i}.mem.heads" per-head read q_h M_h, H*dv (zero a head here to ablate it) */
    GS_HOOK_MEM_READ,   /* "L{i}.mem_read"  memory contribution to the state, d */
    GS_HOOK_FFN_OUT,    /* "L{i}.ffn_out"   FFN contribution, d */
    GS_HOOK_PRED_GATE,  /* "L{i}.pred_gate" predict gate, d */
    /* after the layers */
    GS_HOOK_S_PRED,     /* "s_pred"   predicted state: decoded and carried */
    GS_HOOK_S_DECODE,   /* "s_decode" copy of s_pred that is decoded only */
    GS_HOOK_LOGITS,     /* "logits"   V */
    GS_HOOK_NLL,        /* "nll"      1 */
    GS_HOOK_FUSE_GATE,  /* "fuse_gate" d */
    GS_HOOK_S_GROUND,   /* "s_ground" grounded state carried to the next step, d */
    /* a transformer's residual stream and attention (Transformer++; names as
     * TransformerLens's; per layer but the first and the last) */
    GS_HOOK_EMBED,      /* "hook_embed"                E[x_t], d */
    GS_HOOK_RESID_PRE,  /* "blocks.{i}.hook_resid_pre"  the block's input, d */
    GS_HOOK_ATTN_Q,     /* "blocks.{i}.attn.hook_q"     queries after RoPE, H*dk */
    GS_HOOK_ATTN_K,     /* "blocks.{i}.attn.hook_k"     keys after RoPE, before the cache, H*dk */
    GS_HOOK_ATTN_V,     /* "blocks.{i}.attn.hook_v"     values, before the cache, H*dv */
    GS_HOOK_ATTN_OUT,   /* "blocks.{i}.hook_attn_out"   attention's contribution, d */
    GS_HOOK_RESID_MID,  /* "blocks.{i}.hook_resid_mid"  after attention's residual add, d */
    GS_HOOK_RESID_POST, /* "blocks.{i}.hook_resid_post" the block's output, d */
    GS_HOOK_FINAL_NORM, /* "ln_final.hook_normalized"   the final norm's output, d */
    /* points a family numbers for itself, GS_HOOK_LOCAL + 0 .. 7, for its own
     * quantities (GDN's decays and state): its site table (engine/arch/<family>/)
     * gives them names, widths and kinds, so a new family adds no line here;
     * two families may give one number different meanings (every caller goes
     * through the model's family). Eight, as GPN's CUDA hook mask holds 32. */
    GS_HOOK_LOCAL,
    GS_HOOK_LOCAL_LAST = GS_HOOK_LOCAL + 7,
    GS_HOOK_COUNT
} gs_hook_point;

typedef struct {
    gs_hook_point point;
    int layer;              /* for per-layer points, else 0 */
    int B, width;
    float *data;            /* B x width, row-major, may be modified */
    const int32_t *tokens;  /* the B tokens of this step */
    const int64_t *positions; /* each sequence's position (0 = first token since reset) */
} gs_hook_event;

typedef void (*gs_hook_fn)(void *ctx, const gs_hook_event *ev);


#endif
