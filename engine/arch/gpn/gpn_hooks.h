/* GPN+M's own hook points in engine/hooks.h's family-local range, in one
 * place for the C backends and the CUDA one (which cannot include the
 * family table's C header). */
#ifndef GS_ENGINE_ARCH_GPN_HOOKS_H
#define GS_ENGINE_ARCH_GPN_HOOKS_H

#include "engine/hooks.h"

/* each head's memory matrix M_h (dk x dv, row-major) as carried into a step,
 * before its write; state patching (analyses/causal/patching.h) replaces it */
#define GS_HOOK_MEM_STATE ((gs_hook_point)(GS_HOOK_LOCAL + 0))
/* the write's values, which effective attention needs (analyses/causal/effective_attention.h) */
#define GS_HOOK_MEM_V ((gs_hook_point)(GS_HOOK_LOCAL + 1))
/* each layer's per-head reads after the output norm and the read gate, what
 * W_o maps to the state: one head's share of hook_mem_out (logit attribution) */
#define GS_HOOK_MEM_GATED ((gs_hook_point)(GS_HOOK_LOCAL + 2))

#endif
