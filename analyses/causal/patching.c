/* The patching sweep (analyses/causal/patching.h): hooks that capture the clean
 * runs' sites and, in the patched runs, put them back. */
#include "analyses/causal/patching.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "probes/runner.h"

#define MAX_SLOTS 64 /* a GDN's state is two sites a layer */

/* One hooked site: its capture of the clean runs, [pair][step][width], and
 * the step offset of a position (the memory after x_p is carried into step
 * p + 1, where mem.state and mem.k show it). */
typedef struct sweep sweep;
typedef struct {
    sweep *sw;
    char name[80];
    int width, offset;
    int in_state; /* part of the whole carried state (component `state`) */
    float *clean;
} slot;

enum { MODE_CAPTURE, MODE_PLAIN, MODE_PATCH };

struct sweep {
    const gs_model *m;
    const gs_patch_pairs *p;
    int T, B;
    slot slots[MAX_SLOTS];
    int n_slots, carried, mem_state, mem_k; /* slot numbers, -1 where absent */
    int mode;
    int64_t w0;
    const gs_patch_component *comp;
    int pos;         /* -1: every position */
    double *ld;      /* n_pairs: this run's logit differences */
};

/* The site the family carries from one token to the next, which the state
 * and direction components patch: GPN's state.ground, else the family's
 * state site (a layered family's last residual). */
static int carried_site(const gs_model *m, char *name, size_t size) {
    const gs_family *f = gs_family_of(&m->cfg);
    if (!f) return gs_fail("the model's family is unknown");
    const gs_site *s = gs_site_of_point(f, GS_HOOK_S_GROUND);
    if (!s || !gs_site_present(s, &m->cfg)) s = gs_site_of_role(f, &m->cfg, GS_ROLE_STATE);
    if (!s) return gs_fail("the %s family marks no state site to patch", f->name);
    gs_site_format(s, m->cfg.n_layers - 1, name, size);
    return 0;
}

/* Whether the model carries a memory that hooks can reach (GPN+M's mem.state). */
static int has_memory(const gs_model *m) {
    const gs_family *f = gs_family_of(&m->cfg);
    const gs_site *s = NULL;
    int layer;
    for (int i = 0; f && i < f->n_sites && !s; i++)
        if (!strcmp(f->sites[i].name, "mem.state")) s = &f->sites[i];
    return s && gs_site_present(s, &m->cfg) && probe_parse_site(&m->cfg, "mem.state", &s, &layer) == 0;
}

/* ---------- components ---------- */

int gs_patch_parse_component(const gs_model *m, const char *name, const float *u, gs_patch_component *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    const gs_config *c = &m->cfg;
    const gs_family *f = gs_family_of(c);
    if (!strcmp(name, "state")) {
        if (!f || !f->carried)
            return gs_fail("state: a %s model carries its KV cache of every earlier position, not a state at one; patch "
                           "a layer's residual at the position (site:blocks.{i}.hook_resid_post) instead",
                           f ? f->store_name : "model of this family");
        out->kind = GS_PATCH_STATE;
        return 0;
    }
    if (!strncmp(name, "head:", 5)) {
        char *end;
        long h = strtol(name + 5, &end, 10);
        if (!has_memory(m)) return gs_fail("%s: the model has no memory heads (%s)", name, f ? f->title : "?");
        if (end == name + 5 || *end || h < 0 || h >= c->H)
            return gs_fail("%s: a memory head 0..%d", name, c->H - 1);
        out->kind = GS_PATCH_HEAD;
        out->head = (int)h;
        return 0;
    }
    if (!strncmp(name, "dir:", 4)) {
        if (!u) return gs_fail("%s: no direction was given (--direction)", name);
        out->kind = GS_PATCH_DIRECTION;
        if (!(out->u = malloc((size_t)c->d * sizeof *out->u))) return gs_fail("out of memory");
        double n2 = 0;
        for (int i = 0; i < c->d; i++) n2 += (double)u[i] * u[i];
        if (!(n2 > 0) || !isfinite(n2)) {
            free(out->u);
            out->u = NULL;
            return gs_fail("%s: the direction is zero or not finite", name);
        }
        for (int i = 0; i < c->d; i++) out->u[i] = (float)(u[i] / sqrt(n2));
        return 0;
    }
    if (!strncmp(name, "site:", 5)) {
        const gs_site *s;
        int layer;
        if (probe_parse_site(c, name + 5, &s, &layer)) return -1;
        if (layer < 0) return gs_fail("%s: name one layer, not '*'", name);
        if (s->role == GS_ROLE_LOGITS || s->role == GS_ROLE_NLL)
            return gs_fail("%s: the logits are what is measured, not a component", name);
        out->kind = GS_PATCH_SITE;
        gs_site_format(s, layer, out->site, sizeof out->site);
        return 0;
    }
    return gs_fail("component '%s': state, head:H, dir:NAME or site:SITE", name);
}

void gs_patch_components_free(gs_patch_component *c, int n) {
    if (!c) return;
    for (int i = 0; i < n; i++) free(c[i].u);
    free(c);
}

int gs_patch_default_components(const gs_model *m, const float *u, const char *u_name, gs_patch_component **out) {
    const gs_config *c = &m->cfg;
    const gs_family *f = gs_family_of(c);
    /* the whole carried state where the family has one, each memory head, each layer's residual */
    int state = f && f->carried, mem = has_memory(m), layered = f && gs_site_of_point(f, GS_HOOK_RESID_POST);
    int n = state + (mem ? c->H : 0) + (layered ? c->n_layers : 0) + (u ? 1 : 0), k = 0;
    gs_patch_component *v = calloc((size_t)n, sizeof *v);
    if (!v) return gs_fail("out of memory");
    char name[128];
    int rc = 0;
    if (state) rc = gs_patch_parse_component(m, "state", u, &v[k++]);
    for (int h = 0; mem && h < c->H && !rc; h++) {
        snprintf(name, sizeof name, "head:%d", h);
        rc = gs_patch_parse_component(m, name, u, &v[k++]);
    }
    for (int l = 0; layered && l < c->n_layers && !rc; l++) {
        snprintf(name, sizeof name, "site:blocks.%d.hook_resid_post", l);
        rc = gs_patch_parse_component(m, name, u, &v[k++]);
    }
    if (!rc && u) {
        snprintf(name, sizeof name, "dir:%s", u_name ? u_name : "u");
        rc = gs_patch_parse_component(m, name, u, &v[k++]);
    }
    if (rc) {
        gs_patch_components_free(v, k);
        return -1;
    }
    *out = v;
    return n;
}

/* ---------- the hooks ---------- */

static float *clean_row(const slot *s, int64_t pair, int step) {
    return s->clean + ((size_t)pair * (size_t)(s->sw->T + 1) + (size_t)step) * (size_t)s->width;
}

/* Whether the running component replaces slot k at this step, and where. */
static int edits(const sweep *sw, int k, int step) {
    const gs_patch_component *c = sw->comp;
    int p = step - sw->slots[k].offset; /* the position this step's value belongs to */
    if (p < 0 || p >= sw->T || (sw->pos >= 0 && p != sw->pos)) return 0;
    switch (c->kind) {
    case GS_PATCH_STATE: return sw->slots[k].in_state;
    case GS_PATCH_HEAD: return k == sw->mem_state;
    case GS_PATCH_DIRECTION: return k == sw->carried;
    case GS_PATCH_SITE: return !strcmp(sw->slots[k].name, c->site) && sw->slots[k].offset == 0;
    }
    return 0;
}

static void slot_hook(void *ctx, const gs_hook_event *ev) {
    slot *s = ctx;
    sweep *sw = s->sw;
    int k = (int)(s - sw->slots), w = ev->width, step = (int)ev->positions[0];
    if (sw->mode == MODE_PLAIN || step > sw->T) return;
    if (sw->mode == MODE_CAPTURE) {
        if (!s->clean) return;
        for (int b = 0; b < ev->B; b++) memcpy(clean_row(s, sw->w0 + b, step), ev->data + (size_t)b * w, (size_t)w * sizeof(float));
        return;
    }
    if (!edits(sw, k, step)) return;
    const gs_patch_component *c = sw->comp;
    for (int b = 0; b < ev->B; b++) {
        float *x = ev->data + (size_t)b * w;
        const float *y = clean_row(s, sw->w0 + b, step);
        if (c->kind == GS_PATCH_DIRECTION) { /* s + (u.s_clean - u.s) u */
            double dy = 0, dx = 0;
            for (int i = 0; i < w; i++) {
                dy += (double)c->u[i] * y[i];
                dx += (double)c->u[i] * x[i];
            }
            float delta = (float)(dy - dx);
            for (int i = 0; i < w; i++) x[i] += delta * c->u[i];
        } else if (c->kind == GS_PATCH_HEAD) {
            size_t per = (size_t)w / (size_t)sw->m->cfg.H, at = per * (size_t)c->head;
            memcpy(x + at, y + at, per * sizeof(float));
        } else {
            memcpy(x, y, (size_t)w * sizeof(float));
        }
    }
}

/* ---------- runs ---------- */

static int add_slot(sweep *sw, const char *name, int offset, int capture, int *index) {
    for (int k = 0; k < sw->n_slots; k++) /* site:mem.state (step p) is another slot than state's (step p + 1) */
        if (!strcmp(sw->slots[k].name, name) && sw->slots[k].offset == offset) {
            *index = k;
            return 0;
        }
    if (sw->n_slots == MAX_SLOTS) return gs_fail("at most %d sites can be patched in one sweep", MAX_SLOTS);
    slot *s = &sw->slots[sw->n_slots];
    const gs_site *site;
    int layer;
    if (probe_parse_site(&sw->m->cfg, name, &site, &layer)) return -1;
    memset(s, 0, sizeof *s);
    s->sw = sw;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->width = gs_site_width(site, &sw->m->cfg);
    s->offset = offset;
    if (capture) {
        size_t n = (size_t)sw->p->n * (size_t)(sw->T + 1) * (size_t)s->width;
        if (!(s->clean = malloc(n * sizeof(float))))
            return gs_fail("out of memory for the clean runs' %s (%zu MB)", name, n * 4 >> 20);
    }
    *index = sw->n_slots++;
    return 0;
}

/* What the family carries out of step p beside its state site (GDN: each
 * layer's delta-rule state S, after p's write, before its read, and its
 * convolutions' kept inputs, both at step p; with the last residual already
 * a slot, the prediction the step leaves for the next, nothing else reaches
 * step p + 1): the family row's carried sites, every layer of each. */
static int add_carried(sweep *sw) {
    const gs_config *c = &sw->m->cfg;
    const gs_family *f = gs_family_of(c);
    for (int i = 0; f->carried && f->carried[i]; i++) {
        const gs_site *s = NULL;
        for (int j = 0; j < f->n_sites && !s; j++)
            if (!strcmp(f->sites[j].name, f->carried[i])) s = &f->sites[j];
        if (!s) return gs_fail("the %s family carries '%s', which is none of its sites", f->name, f->carried[i]);
        if (gs_site_width(s, c) == 0) continue; /* e.g. a one-tap convolution keeps nothing */
        for (int l = 0; l < (s->per_layer ? c->n_layers : 1); l++) {
            char name[80];
            int k;
            gs_site_format(s, l, name, sizeof name);
            if (add_slot(sw, name, 0, 1, &k)) return -1;
            sw->slots[k].in_state = 1;
        }
    }
    return 0;
}

static int sweep_init(sweep *sw, const gs_model *m, const gs_patch_pairs *p, const gs_patch_component *c, int n,
                      const gs_patch_opts *o) {
    memset(sw, 0, sizeof *sw);
    sw->m = m;
    sw->p = p;
    sw->T = p->T;
    sw->B = o && o->batch > 0 ? o->batch : 64;
    if (sw->B > p->n) sw->B = p->n;
    sw->carried = sw->mem_state = sw->mem_k = -1;
    char name[80];
    if (carried_site(m, name, sizeof name) || add_slot(sw, name, 0, 1, &sw->carried)) return -1;
    int need_mem = 0, need_state = 0;
    for (int i = 0; i < n; i++) {
        need_mem |= (c[i].kind == GS_PATCH_STATE || c[i].kind == GS_PATCH_HEAD);
        need_state |= c[i].kind == GS_PATCH_STATE;
    }
    if (need_mem && has_memory(m)) {
        if (add_slot(sw, "mem.state", 1, 1, &sw->mem_state) || add_slot(sw, "mem.k", 1, 1, &sw->mem_k)) return -1;
    }
    if (need_state) {
        sw->slots[sw->carried].in_state = 1;
        if (sw->mem_state >= 0) sw->slots[sw->mem_state].in_state = sw->slots[sw->mem_k].in_state = 1;
        if (add_carried(sw)) return -1;
    }
    for (int i = 0; i < n; i++) {
        int k;
        if (c[i].kind == GS_PATCH_SITE && add_slot(sw, c[i].site, 0, 1, &k)) return -1;
    }
    return 0;
}

static void sweep_free(sweep *sw) {
    for (int k = 0; k < sw->n_slots; k++) free(sw->slots[k].clean);
}

typedef struct {
    sweep *sw;
    const int32_t *prompts; /* n x T */
} window_src;

/* window w: the prompt, then its answer as x_T (which reaches no logit of step T) */
static int pair_window(void *ctx, int64_t w, int32_t *tokens) {
    const window_src *s = ctx;
    int T = s->sw->T;
    memcpy(tokens, s->prompts + (size_t)w * T, (size_t)T * sizeof *tokens);
    tokens[T] = s->sw->p->answer[w];
    return 0;
}

static int on_begin(void *ctx, int64_t w0, int nb, const int32_t *tokens) {
    (void)nb;
    (void)tokens;
    ((sweep *)ctx)->w0 = w0;
    return 0;
}

static int on_after(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)tokens;
    sweep *sw = ctx;
    if (t != sw->T || !sw->ld) return 0;
    const float *lg = gs_engine_out(e).logits;
    int V = sw->m->cfg.V;
    for (int b = 0; b < nb; b++) {
        int64_t i = w0 + b;
        sw->ld[i] = (double)lg[(size_t)b * V + sw->p->answer[i]] - (double)lg[(size_t)b * V + sw->p->foil[i]];
    }
    return 0;
}

/* One pass over every pair: the prompts given, the hooks in sw->mode. */
static int sweep_pass(sweep *sw, gs_engine *e, const int32_t *prompts, double *ld) {
    window_src src = {sw, prompts};
    runner_opts ro = {.engine = e, .T = sw->T + 1, .first = 0, .total = sw->p->n, .window = pair_window, .window_ctx = &src};
    runner_sink sink = {.ctx = sw, .begin = on_begin, .after_step = on_after};
    sw->ld = ld;
    int rc = runner_run(&ro, &sink, 1, NULL);
    return rc ? -1 : 0;
}

static gs_engine *sweep_engine(sweep *sw, probe_set **ps) {
    gs_engine *e = gs_engine_new(sw->m, sw->B);
    if (!e) return NULL;
    gs_engine_set_outputs(e, GS_OUT_ALL, NULL);
    if (!(*ps = probe_set_new(e))) {
        gs_engine_free(e);
        return NULL;
    }
    for (int k = 0; k < sw->n_slots; k++)
        if (probe_add(*ps, sw->slots[k].name, slot_hook, &sw->slots[k])) {
            probe_set_free(*ps);
            gs_engine_free(e);
            return NULL;
        }
    return e;
}

int gs_patch_mean_state(const gs_model *m, const gs_patch_pairs *p, const gs_patch_opts *o, float *mean) {
    sweep sw;
    probe_set *ps = NULL;
    gs_engine *e = NULL;
    int rc = sweep_init(&sw, m, p, NULL, 0, o);
    if (!rc && !(e = sweep_engine(&sw, &ps))) rc = -1;
    if (!rc) {
        sw.mode = MODE_CAPTURE;
        rc = sweep_pass(&sw, e, p->clean, NULL);
    }
    if (!rc) {
        const slot *s = &sw.slots[sw.carried];
        int d = s->width;
        double *acc = calloc((size_t)d, sizeof *acc);
        if (!acc) rc = gs_fail("out of memory");
        for (int64_t i = 0; acc && i < p->n; i++)
            for (int t = 0; t < p->T; t++) {
                const float *x = clean_row(s, i, t);
                for (int j = 0; j < d; j++) acc[j] += x[j];
            }
        for (int j = 0; acc && j < d; j++) mean[j] = (float)(acc[j] / ((double)p->n * p->T));
        free(acc);
    }
    probe_set_free(ps);
    gs_engine_free(e);
    sweep_free(&sw);
    return rc;
}

void gs_patch_result_free(gs_patch_result *r) {
    free(r->ld_clean);
    free(r->ld_corrupted);
    free(r->ld);
    free(r->score);
    free(r->mean_score);
    memset(r, 0, sizeof *r);
}

static void normalise(gs_patch_result *r) {
    int P = r->n_positions, n = r->n_pairs;
    for (int c = 0; c < r->n_components; c++)
        for (int q = 0; q < P; q++) {
            double sum = 0;
            int k = 0;
            for (int i = 0; i < n; i++) {
                size_t at = ((size_t)c * P + q) * n + i;
                double span = r->ld_clean[i] - r->ld_corrupted[i];
                r->score[at] = span != 0 ? (r->ld[at] - r->ld_corrupted[i]) / span : NAN;
                if (span != 0) { sum += r->score[at]; k++; }
            }
            r->mean_score[(size_t)c * P + q] = k ? sum / k : NAN;
        }
}

int gs_patch_run(const gs_model *m, const gs_patch_pairs *p, const gs_patch_component *c, int n_components,
                 const gs_patch_opts *o, gs_patch_result *r) {
    memset(r, 0, sizeof *r);
    if (p->n < 1 || p->T < 1) return gs_fail("no prompt pairs");
    for (int i = 0; i < n_components; i++)
        if (c[i].kind == GS_PATCH_DIRECTION) {
            char name[80];
            if (carried_site(m, name, sizeof name)) return -1;
        }
    r->n_pairs = p->n;
    r->T = p->T;
    r->n_components = n_components;
    r->n_positions = p->T + 1;
    size_t cells = (size_t)n_components * r->n_positions * p->n;
    r->ld_clean = calloc((size_t)p->n, sizeof(double));
    r->ld_corrupted = calloc((size_t)p->n, sizeof(double));
    r->ld = calloc(cells ? cells : 1, sizeof(double));
    r->score = calloc(cells ? cells : 1, sizeof(double));
    r->mean_score = calloc((size_t)n_components * r->n_positions + 1, sizeof(double));
    if (!r->ld_clean || !r->ld_corrupted || !r->ld || !r->score || !r->mean_score) {
        gs_patch_result_free(r);
        return gs_fail("out of memory for %zu patch results", cells);
    }
    sweep sw;
    probe_set *ps = NULL;
    gs_engine *e = NULL;
    int rc = sweep_init(&sw, m, p, c, n_components, o);
    if (!rc && !(e = sweep_engine(&sw, &ps))) rc = -1;
    int64_t total = 2 + (int64_t)n_components * r->n_positions, done = 0;
    if (!rc) {
        sw.mode = MODE_CAPTURE;
        rc = sweep_pass(&sw, e, p->clean, r->ld_clean);
    }
    if (!rc) {
        sw.mode = MODE_PLAIN;
        rc = sweep_pass(&sw, e, p->corrupted, r->ld_corrupted);
        done = 2;
    }
    for (int k = 0; k < n_components && !rc; k++)
        for (int q = 0; q < r->n_positions && !rc; q++) {
            sw.mode = MODE_PATCH;
            sw.comp = &c[k];
            sw.pos = q < p->T ? q : -1;
            rc = sweep_pass(&sw, e, p->corrupted, r->ld + ((size_t)k * r->n_positions + q) * p->n);
            done++;
            if (!rc && o && o->progress && o->progress(o->progress_ctx, done, total)) rc = 1;
        }
    probe_set_free(ps);
    gs_engine_free(e);
    sweep_free(&sw);
    if (rc < 0) {
        gs_patch_result_free(r);
        return -1;
    }
    normalise(r);
    return rc;
}
