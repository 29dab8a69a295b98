/* The family table: every architecture gpnscope knows, one row each, and
 * the site helpers every layer above the engine uses. Adding a family is a
 * folder engine/arch/<family>/ and one line here (docs/architecture.md). */
#include "engine/arch/family.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include <string.h>

#include "engine/arch/elman/elman.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/arch/gpn/gpn_family.h"
#include "engine/arch/layer_pattern.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/arch/mamba2/mamba2.h"
#include "engine/arch/rt/rt.h"
#include "engine/arch/tpp/tpp.h"

static const gs_family *const families[] = {&gs_family_gpn, &gs_family_gpn_m, &gs_family_elman, &gs_family_tpp,
                                             &gs_family_gdn, &gs_family_rt, &gs_family_ldru, &gs_family_mamba2};
#define N_FAMILIES ((int)(sizeof families / sizeof *families))

const gs_family *gs_family_of(const gs_config *c) {
    for (int i = 0; i < N_FAMILIES; i++)
        if (families[i]->arch == c->arch) return families[i];
    return NULL;
}

const gs_family *gs_family_of_file(const st_file *f) {
    for (int i = 0; i < N_FAMILIES; i++)
        if (families[i]->recognise(f)) return families[i];
    char names[512] = "";
    for (int i = 0; i < N_FAMILIES; i++)
        if (i == 0 || strcmp(families[i]->signature, families[i - 1]->signature))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s needs %s", i ? "; " : "",
                     families[i]->name, families[i]->signature);
    gs_fail("the tensors are those of no architecture gpnscope knows (%s)", names);
    return NULL;
}

const gs_family *gs_family_by_name(const char *name) {
    for (int i = 0; name && i < N_FAMILIES; i++)
        if (!strcmp(families[i]->name, name)) return families[i];
    return NULL;
}

int gs_family_is(const gs_config *c, const char *name) {
    const gs_family *f = gs_family_of(c);
    return f && !strcmp(f->name, name);
}

int gs_family_has_memory(const gs_config *c) {
    const gs_family *f = gs_family_of(c);
    return f && f->has_memory;
}

int gs_family_config(const char *name, gs_config *c) {
    const gs_family *f = gs_family_by_name(name);
    if (!f) return gs_fail("no model family \"%s\"", name);
    c->arch = f->arch;
    return 0;
}

const gs_family *gs_family_by_store_name(const char *store_name) {
    for (int i = 0; store_name && i < N_FAMILIES; i++)
        if (!strcmp(families[i]->store_name, store_name)) return families[i];
    return NULL;
}

int gs_family_require_lm(const gs_config *c, const char *path, const char *needs) {
    const gs_family *f = gs_family_of(c);
    if (!f || !f->not_lm) return 0;
    return gs_fail("%s is %s, not a language model: %s needs a language model (for task models: gpnscope train "
                   "--config with \"task\" evaluates; gpnscope automaton analyzes)",
                   path, f->not_lm, needs);
}

int gs_site_present(const gs_site *s, const gs_config *c) { return !s->needs_memory || c->H > 0; }

int gs_site_width(const gs_site *s, const gs_config *c) {
    if (!gs_site_present(s, c)) return 0;
    switch (s->width) {
    case GS_DIM_ONE: return 1;
    case GS_DIM_STATE: return c->d;
    case GS_DIM_VOCAB: return c->V;
    case GS_DIM_HEADS: return c->H;
    case GS_DIM_HEADS_KEY: return c->H * c->dk;
    case GS_DIM_HEADS_VAL: return c->H * c->dv;
    case GS_DIM_HEADS_KEY_VAL: return c->H * c->dk * c->dv;
    case GS_DIM_HEADS_PATTERN: return c->H * GS_PATTERN_KEYS;
    case GS_DIM_CLASSES: return c->n_classes;
    case GS_DIM_OWN: {
        const gs_family *f = gs_family_of(c);
        return f && f->site_width ? f->site_width(s, c) : 0;
    }
    }
    return 0;
}

const gs_site *gs_site_of_point(const gs_family *f, gs_hook_point p) {
    for (int i = 0; i < f->n_sites; i++)
        if (f->sites[i].point == p) return &f->sites[i];
    return NULL;
}

const gs_site *gs_site_of_role(const gs_family *f, const gs_config *c, gs_site_role role) {
    for (int i = 0; i < f->n_sites; i++)
        if (f->sites[i].role == role && gs_site_present(&f->sites[i], c)) return &f->sites[i];
    return NULL;
}

void gs_site_format(const gs_site *s, int layer, char *out, size_t size) {
    if (s->per_layer) gs_pattern_format(s->name, layer, out, size);
    else snprintf(out, size, "%s", s->name);
}

const char *gs_site_kind_name(gs_site_kind k) {
    switch (k) {
    case GS_SITE_VECTOR: return "vector";
    case GS_SITE_HEAD_SCALAR: return "per-head scalar";
    case GS_SITE_HEAD_VECTOR: return "per-head vector";
    case GS_SITE_SCALAR: return "scalar";
    }
    return "?";
}

void gs_describe(char *buf, size_t size, const char *name, long value, const char *fmt, ...) {
    size_t at = strlen(buf);
    if (at + 1 >= size) return;
    int n = snprintf(buf + at, size - at, "%s %ld (", name, value);
    if (n < 0 || (size_t)n >= size - at) return;
    at += (size_t)n;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, size - at, fmt, ap);
    va_end(ap);
    at = strlen(buf);
    snprintf(buf + at, size - at, ")\n");
}

void gs_describe_shape(char *buf, size_t size, const char *name, long value, const st_file *f, const char *tensor,
                       const char *how) {
    const st_tensor *t = safetensors_find(f, tensor);
    char shape[96] = "";
    for (int i = 0; t && i < t->ndim; i++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    if (t) gs_describe(buf, size, name, value, "%s [%s]%s", tensor, shape, how);
    else gs_describe(buf, size, name, value, "%s absent%s", tensor, how);
}
