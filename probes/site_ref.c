/* A site parsed once (probes/site_ref.h). */
#include "probes/site_ref.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "probes/probes.h"

int probe_site_ref_parse(const gs_config *c, const char *spec, probe_site_ref *r) {
    memset(r, 0, sizeof *r);
    if (gs_head_select_parse(spec, c->H, r->written, sizeof r->written, &r->heads)) return -1;
    return probe_parse_site(c, r->written, &r->site, &r->layer);
}

void probe_site_ref_name(const probe_site_ref *r, int layer, char *out, size_t size) {
    gs_site_format(r->site, layer, out, size);
}

int probe_site_ref_kind(const probe_site_ref *r, int layer, char *out, size_t size) {
    char name[64], selector[64];
    probe_site_ref_name(r, layer, name, sizeof name);
    if (gs_head_select_format(&r->heads, selector, sizeof selector)) return -1;
    int n = snprintf(out, size, "%s%s", probe_stored_kind(name), selector);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* the sites stored under a states.kind of their own (what stores have always called them) */
static const struct {
    const char *site, *kind;
} short_kinds[] = {{"state.pred", "pred"}, {"state.ground", "ground"}};

const char *probe_stored_kind(const char *site) {
    for (size_t i = 0; i < sizeof short_kinds / sizeof *short_kinds; i++)
        if (!strcmp(site, short_kinds[i].site)) return short_kinds[i].kind;
    return site;
}

const char *probe_site_of_stored_kind(const char *kind) {
    for (size_t i = 0; i < sizeof short_kinds / sizeof *short_kinds; i++)
        if (!strcmp(kind, short_kinds[i].kind)) return short_kinds[i].site;
    return kind;
}
