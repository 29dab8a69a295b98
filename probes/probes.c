#include "probes/probes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/layer_pattern.h"
#include "engine/cpu/kernel_math.h"

typedef struct {
    gs_hook_point point;
    int layer; /* -1 = every layer */
    probe_fn fn;
    void *ctx;
} handler;

typedef struct owned owned; /* contexts the set allocated and frees */
struct owned {
    owned *next;
    void *ptr;
};

struct probe_set {
    gs_engine *e;
    handler *h;
    int n, cap;
    owned *allocs;
};

int probe_width(const gs_config *c, gs_hook_point p) {
    const gs_family *f = gs_family_of(c);
    const gs_site *site = f ? gs_site_of_point(f, p) : NULL;
    return site ? gs_site_width(site, c) : 0;
}

int probe_parse_site(const gs_config *c, const char *name, const gs_site **site, int *layer) {
    const gs_family *f = gs_family_of(c);
    if (!f) return gs_fail("hook name '%s': unknown architecture", name);
    for (int i = 0; i < f->n_sites; i++) {
        const gs_site *s = &f->sites[i];
        int l = 0, hit = gs_pattern_match(s->name, name, &l) || gs_pattern_match(s->alias, name, &l);
        if (!hit && s->alias && !strncmp(s->alias, "L{i}.", 5) && !strncmp(name, "*.", 2))
            hit = !strcmp(s->alias + 5, name + 2) && (l = -1, 1); /* the old "*.ffn_out" */
        if (!hit && s->per_layer) {
            /* a bare per-layer name ("mem_read", "hook_mlp_out"): only for a one-layer model */
            const char *pats[] = {s->name, s->alias};
            for (int k = 0; k < 2 && !hit; k++) {
                const char *dot = pats[k] ? strstr(pats[k], "{i}.") : NULL;
                if (dot && !strcmp(dot + 4, name)) {
                    if (c->n_layers != 1) {
                        char want[96];
                        gs_site_format(s, 0, want, sizeof want);
                        return gs_fail("hook name '%s' is per layer: use %.*s{i}.%s (e.g. %s, or * for every layer)",
                                       name, (int)(dot - pats[k]), pats[k], name, want);
                    }
                    hit = 1;
                }
            }
        }
        if (!hit) continue;
        if (!gs_site_present(s, c)) return gs_fail("hook name '%s': this model has no memory (%s)", name, f->title);
        if (l >= c->n_layers) return gs_fail("hook name '%s': the model has %d layer(s)", name, c->n_layers);
        *site = s;
        *layer = l;
        return 0;
    }
    /* a per-layer prefix on a site that is not per layer ("L0.s_pred", "blocks.0.state.pred") */
    for (int i = 0; i < f->n_sites; i++) {
        const gs_site *s = &f->sites[i];
        if (s->per_layer) continue;
        const char *tail = strchr(name, '.');
        if ((!strncmp(name, "blocks.", 7) && (tail = strchr(name + 7, '.'))) || (name[0] == 'L' && tail))
            if (!strcmp(tail + 1, s->name) || (s->alias && !strcmp(tail + 1, s->alias)))
                return gs_fail("hook name '%s': '%s' is not per layer; use '%s'", name, tail + 1, s->name);
    }
    return gs_fail("unknown hook name '%s' (gpnscope info MODEL lists the model's sites)", name);
}

int probe_parse_name(const gs_config *c, const char *name, gs_hook_point *point, int *layer) {
    const gs_site *s;
    if (probe_parse_site(c, name, &s, layer) != 0) return -1;
    *point = s->point;
    return 0;
}

int probe_list_names(const gs_config *c, char *buf, size_t size) {
    const gs_family *f = gs_family_of(c);
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; f && i < f->n_sites; i++) {
        const gs_site *s = &f->sites[i];
        if (!gs_site_present(s, c)) continue;
        for (int l = 0; l < (s->per_layer ? c->n_layers : 1); l++) {
            char name[96];
            gs_site_format(s, l, name, sizeof name);
            int w = snprintf(buf + used, size - used, "%s\n", name);
            if (w < 0 || (size_t)w >= size - used) return gs_fail("hook list does not fit");
            used += (size_t)w;
        }
    }
    return 0;
}

static void dispatch(void *ctx, const gs_hook_event *ev) {
    probe_set *s = ctx;
    for (int i = 0; i < s->n; i++) {
        handler *h = &s->h[i];
        if (h->point == ev->point && (h->layer < 0 || h->layer == ev->layer)) h->fn(h->ctx, ev);
    }
}

probe_set *probe_set_new(gs_engine *e) {
    probe_set *s = calloc(1, sizeof *s);
    if (!s) { gs_fail("out of memory"); return NULL; }
    s->e = e;
    return s;
}

void probe_set_free(probe_set *s) {
    if (!s) return;
    for (int p = 0; p < GS_HOOK_COUNT; p++) gs_engine_set_hook(s->e, (gs_hook_point)p, NULL, NULL);
    for (owned *o = s->allocs, *next; o; o = next) {
        next = o->next;
        free(o->ptr);
        free(o);
    }
    free(s->h);
    free(s);
}

static void *set_alloc(probe_set *s, size_t n) {
    owned *o = calloc(1, sizeof *o);
    void *p = calloc(1, n ? n : 1);
    if (!o || !p) { free(o); free(p); gs_fail("out of memory"); return NULL; }
    o->ptr = p;
    o->next = s->allocs;
    s->allocs = o;
    return p;
}

static int add_handler(probe_set *s, gs_hook_point p, int layer, probe_fn fn, void *ctx) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        handler *h = realloc(s->h, (size_t)cap * sizeof *h);
        if (!h) return gs_fail("out of memory");
        s->h = h;
        s->cap = cap;
    }
    s->h[s->n++] = (handler){p, layer, fn, ctx};
    gs_engine_set_hook(s->e, p, dispatch, s);
    return 0;
}

int probe_add(probe_set *s, const char *name, probe_fn fn, void *ctx) {
    gs_hook_point p;
    int layer;
    if (probe_parse_name(&gs_engine_model(s->e)->cfg, name, &p, &layer) != 0) return -1;
    return add_handler(s, p, layer, fn, ctx);
}

static void capture_fn(void *ctx, const gs_hook_event *ev) {
    probe_capture *c = ctx;
    c->B = ev->B;
    c->layer = ev->layer;
    memcpy(c->data, ev->data, (size_t)ev->B * ev->width * sizeof(float));
}

probe_capture *probe_capture_add(probe_set *s, const char *name) {
    const gs_site *site;
    int layer;
    if (probe_parse_site(&gs_engine_model(s->e)->cfg, name, &site, &layer) != 0) return NULL;
    if (layer < 0) { gs_fail("capture of '%s': name one layer, not '*'", name); return NULL; }
    return probe_capture_site(s, site, layer);
}

probe_capture *probe_capture_site(probe_set *s, const gs_site *site, int layer) {
    probe_capture *c = set_alloc(s, sizeof *c);
    if (!c) return NULL;
    c->width = probe_width(&gs_engine_model(s->e)->cfg, site->point);
    c->data = set_alloc(s, (size_t)gs_engine_max_batch(s->e) * c->width * sizeof(float));
    if (!c->data || add_handler(s, site->point, layer, capture_fn, c) != 0) return NULL;
    return c;
}

typedef struct {
    int H, dv;
    unsigned char *zero; /* H flags */
} heads_ctx;

static void zero_heads_fn(void *ctx, const gs_hook_event *ev) {
    heads_ctx *h = ctx;
    for (int b = 0; b < ev->B; b++)
        for (int k = 0; k < h->H; k++)
            if (h->zero[k]) memset(ev->data + (size_t)b * ev->width + (size_t)k * h->dv, 0, (size_t)h->dv * sizeof(float));
}

int probe_zero_heads(probe_set *s, int layer, const int *heads, int n_heads) {
    const gs_config *c = &gs_engine_model(s->e)->cfg;
    const gs_family *f = gs_family_of(c);
    const gs_site *reads = f ? gs_site_of_point(f, GS_HOOK_MEM_HEADS) : NULL;
    if (!reads || !gs_site_present(reads, c))
        return gs_fail("head ablation: this model has no memory heads (%s)", f ? f->title : "?");
    if (layer >= c->n_layers) return gs_fail("head ablation: layer %d, the model has %d", layer, c->n_layers);
    heads_ctx *h = set_alloc(s, sizeof *h);
    if (!h || !(h->zero = set_alloc(s, (size_t)c->H))) return -1;
    h->H = c->H;
    h->dv = c->dv;
    for (int i = 0; i < n_heads; i++) {
        if (heads[i] < 0 || heads[i] >= c->H) return gs_fail("head ablation: head %d, the model has heads 0..%d", heads[i], c->H - 1);
        h->zero[heads[i]] = 1;
    }
    return add_handler(s, GS_HOOK_MEM_HEADS, layer, zero_heads_fn, h);
}

/* after-norm: the ratio rms(o without the heads) / rms(o) of each row and
 * layer, taken at mem.heads and applied at mem_read of the same layer */
typedef struct {
    heads_ctx *heads;
    int n_layers, max_b;
    float *ratio; /* n_layers x max_b */
} after_norm_ctx;

static void after_norm_heads_fn(void *ctx, const gs_hook_event *ev) {
    after_norm_ctx *a = ctx;
    const heads_ctx *h = a->heads;
    for (int b = 0; b < ev->B && b < a->max_b; b++) {
        const float *o = ev->data + (size_t)b * ev->width;
        double all = 0, kept = 0;
        for (int k = 0; k < h->H; k++)
            for (int j = 0; j < h->dv; j++) {
                double v = (double)o[(size_t)k * h->dv + j] * o[(size_t)k * h->dv + j];
                all += v;
                if (!h->zero[k]) kept += v;
            }
        double n = (double)h->H * h->dv;
        a->ratio[(size_t)ev->layer * a->max_b + b] = (float)sqrt((kept / n + GPN_RMS_EPS) / (all / n + GPN_RMS_EPS));
    }
    zero_heads_fn(a->heads, ev);
}

static void after_norm_read_fn(void *ctx, const gs_hook_event *ev) {
    after_norm_ctx *a = ctx;
    for (int b = 0; b < ev->B && b < a->max_b; b++) {
        float r = a->ratio[(size_t)ev->layer * a->max_b + b], *x = ev->data + (size_t)b * ev->width;
        for (int i = 0; i < ev->width; i++) x[i] *= r;
    }
}

int probe_zero_heads_after_norm(probe_set *s, int layer, const int *heads, int n_heads) {
    const gs_config *c = &gs_engine_model(s->e)->cfg;
    int n = s->n;
    if (probe_zero_heads(s, layer, heads, n_heads) != 0) return -1;
    /* reuse the flags the before-norm handler just got; replace its handler */
    heads_ctx *h = s->h[n].ctx;
    s->n = n;
    after_norm_ctx *a = set_alloc(s, sizeof *a);
    if (!a) return -1;
    a->heads = h;
    a->n_layers = c->n_layers;
    a->max_b = gs_engine_max_batch(s->e);
    if (!(a->ratio = set_alloc(s, (size_t)a->n_layers * a->max_b * sizeof(float)))) return -1;
    for (size_t i = 0; i < (size_t)a->n_layers * a->max_b; i++) a->ratio[i] = 1.0f;
    if (add_handler(s, GS_HOOK_MEM_HEADS, layer, after_norm_heads_fn, a) != 0) return -1;
    return add_handler(s, GS_HOOK_MEM_READ, layer, after_norm_read_fn, a);
}

typedef struct {
    int d, project;
    float *v;     /* the vector, or the unit direction when projecting */
} direction_ctx;

static void direction_fn(void *ctx, const gs_hook_event *ev) {
    direction_ctx *c = ctx;
    for (int b = 0; b < ev->B; b++) {
        float *x = ev->data + (size_t)b * ev->width;
        float scale = 1.0f;
        if (c->project) {
            double dot = 0;
            for (int i = 0; i < c->d; i++) dot += (double)x[i] * c->v[i];
            scale = (float)dot;
        }
        for (int i = 0; i < c->d; i++) x[i] -= scale * c->v[i];
    }
}

static int add_direction(probe_set *s, const char *name, const float *v, int project) {
    const gs_config *cfg = &gs_engine_model(s->e)->cfg;
    gs_hook_point p;
    int layer;
    if (probe_parse_name(cfg, name, &p, &layer) != 0) return -1;
    int w = probe_width(cfg, p);
    direction_ctx *c = set_alloc(s, sizeof *c);
    if (!c || !(c->v = set_alloc(s, (size_t)w * sizeof(float)))) return -1;
    c->d = w;
    c->project = project;
    memcpy(c->v, v, (size_t)w * sizeof(float));
    if (project) {
        double n = 0;
        for (int i = 0; i < w; i++) n += (double)v[i] * v[i];
        if (!(n > 0) || !isfinite(n)) return gs_fail("projection onto a zero or non-finite direction at '%s'", name);
        for (int i = 0; i < w; i++) c->v[i] = (float)(v[i] / sqrt(n));
    }
    return add_handler(s, p, layer, direction_fn, c);
}

int probe_subtract(probe_set *s, const char *name, const float *v) { return add_direction(s, name, v, 0); }
int probe_project_out(probe_set *s, const char *name, const float *v) { return add_direction(s, name, v, 1); }
