/* A site as a command names it ("blocks.*.attn.state[heads=1-2]"), parsed
 * once into the family's site, its layer and its head selector; the name
 * each layer is stored under and the capture are made from this reference,
 * never from a name printed and parsed again. The one rule of which
 * states.kind a site is stored under lives here too. */
#ifndef GS_PROBES_SITE_REF_H
#define GS_PROBES_SITE_REF_H

#include <stddef.h>

#include "engine/arch/family.h"
#include "probes/head_select.h"

typedef struct {
    const gs_site *site;
    int layer;            /* -1: every layer ("*") */
    gs_head_select heads; /* n = 0: every head */
    char written[64];     /* the name as the command wrote it, less the selector (for messages) */
} probe_site_ref;

/* Parse "NAME" or "NAME[heads=LIST]" for a model (probe_parse_site's names,
 * head_select.h's selector). 0, or -1 with a one-line gs_error(). */
int probe_site_ref_parse(const gs_config *c, const char *spec, probe_site_ref *r);
/* The site's name at one layer ("blocks.0.attn.state"), without the selector. */
void probe_site_ref_name(const probe_site_ref *r, int layer, char *out, size_t size);
/* The states.kind the site's rows at that layer are stored under: the
 * stored kind of its name (probe_stored_kind) and its canonical selector.
 * 0, or -1 when that does not fit in size bytes. */
int probe_site_ref_kind(const probe_site_ref *r, int layer, char *out, size_t size);

/* The states.kind under which a vector site is stored: "pred" and "ground"
 * for state.pred and state.ground (what stores have always called them),
 * the site's own name (layer spelled out) for any other. */
const char *probe_stored_kind(const char *site);
/* The inverse: the site a states.kind holds ("pred" -> state.pred; any other kind is its site's name). */
const char *probe_site_of_stored_kind(const char *kind);

#endif
