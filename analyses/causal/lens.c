/* The logit lens (analyses/causal/lens.h). */
#include "analyses/causal/lens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/probes.h"

int gs_lens_site(const gs_model *m, const char *name, probe_site_ref *ref) {
    const gs_config *c = &m->cfg;
    if (probe_site_ref_parse(c, name, ref)) return -1;
    if (ref->heads.n) return gs_fail("%s: the lens decodes a whole vector, not some of its heads", name);
    if (ref->layer < 0) return gs_fail("%s: name one layer, not '*'", name);
    if (gs_site_width(ref->site, c) != c->d)
        return gs_fail("%s is %d wide; the lens decodes vectors of the state's width %d", name, gs_site_width(ref->site, c),
                       c->d);
    return 0;
}

int gs_lens_default_sites(const gs_model *m, probe_site_ref **out) {
    const gs_config *c = &m->cfg;
    const gs_family *f = gs_family_of(c);
    if (!f) return gs_fail("the model's family is unknown");
    int n = 0, cap = 0;
    probe_site_ref *v = NULL;
    for (int i = 0; i < f->n_sites; i++) {
        const gs_site *s = &f->sites[i];
        if (s->kind != GS_SITE_VECTOR || s->width != GS_DIM_STATE || !gs_site_present(s, c)) continue;
        /* gates multiply the state and are no state themselves; GPN's state.decode is a copy of state.pred */
        if (strstr(s->name, "gate") || s->point == GS_HOOK_S_DECODE) continue;
        for (int l = 0; l < (s->per_layer ? c->n_layers : 1); l++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                probe_site_ref *nv = realloc(v, (size_t)cap * sizeof *nv);
                if (!nv) { free(v); return gs_fail("out of memory"); }
                v = nv;
            }
            v[n] = (probe_site_ref){.site = s, .layer = l};
            probe_site_ref_name(&v[n], l, v[n].written, sizeof v[n].written);
            n++;
        }
    }
    if (!n) { free(v); return gs_fail("the %s family has no vector site of the state's width", f->name); }
    *out = v;
    return n;
}

void gs_lens_result_free(gs_lens_result *r) {
    free(r->sites);
    free(r->ids);
    free(r->logits);
    memset(r, 0, sizeof *r);
}

/* the k largest of x[0..V), best first (k is small: a partial selection) */
static void top_k(const float *x, int V, int k, int32_t *ids, float *vals) {
    for (int j = 0; j < k; j++) { ids[j] = -1; vals[j] = 0; }
    for (int v = 0; v < V; v++) {
        int j = k;
        while (j > 0 && (ids[j - 1] < 0 || x[v] > vals[j - 1])) j--;
        if (j == k) continue;
        memmove(ids + j + 1, ids + j, (size_t)(k - j - 1) * sizeof *ids);
        memmove(vals + j + 1, vals + j, (size_t)(k - j - 1) * sizeof *vals);
        ids[j] = v;
        vals[j] = x[v];
    }
}

int gs_lens_run(const gs_model *m, const int32_t *tokens, int T, const probe_site_ref *sites, int n_sites, int k,
                gs_lens_result *r) {
    memset(r, 0, sizeof *r);
    const gs_config *c = &m->cfg;
    const gs_family *f = gs_family_of(c);
    if (!f || !f->decode) return gs_fail("the %s family has no decode to look through", f ? f->name : "model's");
    if (T < 1 || n_sites < 1) return gs_fail("the lens needs tokens and sites");
    if (k < 1 || k > c->V) return gs_fail("--top %d: 1 to the vocabulary's %d", k, c->V);
    r->n_sites = n_sites;
    r->T = T;
    r->k = k;
    size_t cells = (size_t)n_sites * T * k;
    r->sites = malloc((size_t)n_sites * sizeof *r->sites);
    r->ids = malloc(cells * sizeof *r->ids);
    r->logits = malloc(cells * sizeof *r->logits);
    float *states = malloc((size_t)n_sites * T * c->d * sizeof *states), *lg = malloc((size_t)c->V * sizeof *lg);
    probe_capture **cap = calloc((size_t)n_sites, sizeof *cap);
    gs_engine *e = NULL;
    probe_set *ps = NULL;
    int rc = 0;
    if (!r->sites || !r->ids || !r->logits || !states || !lg || !cap) rc = gs_fail("out of memory for the lens of %d sites", n_sites);
    if (!rc && (!(e = gs_engine_new(m, 1)) || !(ps = probe_set_new(e)))) rc = -1;
    for (int i = 0; i < n_sites && !rc; i++) {
        snprintf(r->sites[i], GS_LENS_SITE_NAME, "%s", sites[i].written);
        if (!(cap[i] = probe_capture_site(ps, sites[i].site, sites[i].layer))) rc = -1;
    }
    for (int t = 0; t < T && !rc; t++) {
        if (gs_engine_step(e, tokens + t, 1)) { rc = gs_fail_context("token %d: ", t); break; }
        for (int i = 0; i < n_sites; i++) memcpy(states + ((size_t)i * T + t) * c->d, cap[i]->data, (size_t)c->d * sizeof *states);
    }
    for (int i = 0; i < n_sites && !rc; i++)
        for (int t = 0; t < T && !rc; t++) {
            size_t at = ((size_t)i * T + t);
            if (f->decode(m, states + at * c->d, lg)) rc = -1;
            else top_k(lg, c->V, k, r->ids + at * k, r->logits + at * k);
        }
    probe_set_free(ps);
    gs_engine_free(e);
    free(states);
    free(lg);
    free(cap);
    if (rc) gs_lens_result_free(r);
    return rc;
}
