/* The logit lens over a window (docs/causal.md): each chosen site's vector
 * at each position decoded through the family's output path (its decode
 * entry, engine/arch/family.h: GPN's decode norm, projection and tied
 * embedding; a transformer's final RMSNorm and head), and its top-k tokens.
 * A site qualifies when it is a vector of the state's width. Position t is
 * step t (after reading x_t): what that decode predicts follows the family's
 * convention (GPN's state.pred at t predicts x_t, a residual at t predicts
 * x_{t+1}). */
#ifndef GS_ANALYSES_LENS_H
#define GS_ANALYSES_LENS_H

#include <stdint.h>

#include "engine/model.h"
#include "probes/site_ref.h"

#define GS_LENS_SITE_NAME 80

typedef struct {
    int n_sites, T, k;
    char (*sites)[GS_LENS_SITE_NAME];
    int32_t *ids;   /* [site][t][k], best first */
    float *logits;  /* the same */
} gs_lens_result;

/* A site named as a command or a store writes it, parsed once into the
 * reference the lens captures: one layer, of the state's width, no head
 * selector. 0, or -1 with gs_error(). */
int gs_lens_site(const gs_model *m, const char *name, probe_site_ref *ref);
/* Every vector site of the state's width, per-layer ones for each layer,
 * but gates (multipliers, not states) and GPN's state.decode (a copy of
 * state.pred). Returns the count, *out malloc'd; -1 with gs_error(). */
int gs_lens_default_sites(const gs_model *m, probe_site_ref **out);
/* Run tokens[0..T) from the zero state with the sites captured; each site's
 * result is named as it was written. */
int gs_lens_run(const gs_model *m, const int32_t *tokens, int T, const probe_site_ref *sites, int n_sites, int k,
                gs_lens_result *r);
void gs_lens_result_free(gs_lens_result *r);

#endif
