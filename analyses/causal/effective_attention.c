/* Exact effective attention of delta-rule heads: the capture of the sites a
 * head's write and read are made of, and the weights by carrying each query
 * backwards through the transitions (effective_attention.h has the algebra). */
#include "analyses/causal/effective_attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/arch/layer_pattern.h"
#include "probes/probes.h"

const gs_delta_memory *gs_delta_memory_of(const gs_config *c) {
    const gs_family *f = gs_family_of(c);
    if (f && f->delta_memory) return f->delta_memory;
    gs_fail("%s has no delta-rule memory heads (effective attention needs GPN+M or Gated DeltaNet)",
            f ? f->title : "this model");
    return NULL;
}

enum { CAP_Q, CAP_READ, CAP_K, CAP_V, CAP_ALPHA, CAP_BETA, CAP_KINDS };

struct gs_delta_capture {
    probe_set *ps;
    int B, T, nb;
    int64_t w0;
    gs_delta_window_fn fn;
    void *ctx;
    gs_delta_trace *tr;           /* B windows */
    probe_capture **cap;          /* [kind][layer] (writes: n_writes of them) */
    int per_kind;                 /* n_layers */
};

static float **trace_field(gs_delta_trace *t, int kind) {
    float **f[CAP_KINDS] = {&t->q, &t->read, &t->k, &t->v, &t->alpha, &t->beta};
    return f[kind];
}

static int field_width(const gs_delta_trace *t, int kind) {
    int w[CAP_KINDS] = {t->H * t->dk, t->H * t->dv, t->H * t->dk, t->H * t->dv, t->H, t->H};
    return w[kind];
}

static int field_layers(const gs_delta_trace *t, int kind) { return kind <= CAP_READ ? t->n_layers : t->n_writes; }

void gs_delta_capture_free(gs_delta_capture *c) {
    if (!c) return;
    probe_set_free(c->ps);
    for (int b = 0; c->tr && b < c->B; b++)
        for (int k = 0; k < CAP_KINDS; k++) free(*trace_field(&c->tr[b], k));
    free(c->tr);
    free(c->cap);
    free(c);
}

gs_delta_capture *gs_delta_capture_new(gs_engine *e, int T, gs_delta_window_fn fn, void *ctx) {
    const gs_config *cfg = &gs_engine_model(e)->cfg;
    const gs_delta_memory *mem = gs_delta_memory_of(cfg);
    if (!mem) return NULL;
    if (T < 1) { gs_fail("windows of %d tokens: at least 1", T); return NULL; }
    gs_delta_capture *c = calloc(1, sizeof *c);
    if (!c) { gs_fail("out of memory"); return NULL; }
    c->B = gs_engine_max_batch(e);
    c->T = T;
    c->fn = fn;
    c->ctx = ctx;
    c->per_kind = cfg->n_layers;
    c->tr = calloc((size_t)c->B, sizeof *c->tr);
    c->cap = calloc((size_t)CAP_KINDS * cfg->n_layers, sizeof *c->cap);
    if (!c->tr || !c->cap || !(c->ps = probe_set_new(e))) goto oom;
    for (int b = 0; b < c->B; b++) {
        gs_delta_trace *t = &c->tr[b];
        *t = (gs_delta_trace){.T = T, .H = cfg->H, .dk = cfg->dk, .dv = cfg->dv, .n_layers = cfg->n_layers,
                              .n_writes = mem->write_per_layer ? cfg->n_layers : 1, .mem = mem};
        for (int k = 0; k < CAP_KINDS; k++)
            if (!(*trace_field(t, k) = malloc((size_t)field_layers(t, k) * T * field_width(t, k) * sizeof(float))))
                goto oom;
    }
    const char *names[CAP_KINDS] = {mem->q, mem->read, mem->k, mem->v, mem->alpha, mem->beta};
    for (int k = 0; k < CAP_KINDS; k++)
        for (int l = 0; l < field_layers(&c->tr[0], k); l++) {
            char name[128];
            gs_pattern_format(names[k], l, name, sizeof name);
            if (!(c->cap[k * c->per_kind + l] = probe_capture_add(c->ps, name))) {
                gs_fail_context("capturing %s for effective attention: ", name);
                gs_delta_capture_free(c);
                return NULL;
            }
        }
    return c;
oom:
    gs_delta_capture_free(c);
    gs_fail("out of memory for the effective-attention capture of %d windows of %d tokens", gs_engine_max_batch(e), T);
    return NULL;
}

static int cap_begin(void *ctx, int64_t w0, int nb, const int32_t *tokens) {
    (void)tokens;
    gs_delta_capture *c = ctx;
    c->w0 = w0;
    c->nb = nb;
    return 0;
}

/* copy each captured site's rows into its window's trace at step t */
static int cap_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)e, (void)w0, (void)tokens;
    gs_delta_capture *c = ctx;
    for (int k = 0; k < CAP_KINDS; k++)
        for (int l = 0; l < field_layers(&c->tr[0], k); l++) {
            const probe_capture *pc = c->cap[k * c->per_kind + l];
            for (int b = 0; b < nb; b++) {
                gs_delta_trace *tr = &c->tr[b];
                int w = field_width(tr, k);
                memcpy(*trace_field(tr, k) + ((size_t)l * c->T + t) * w, pc->data + (size_t)b * pc->width,
                       (size_t)w * sizeof(float));
            }
        }
    return 0;
}

static int cap_end(void *ctx, int64_t w0, int nb) {
    gs_delta_capture *c = ctx;
    for (int b = 0; b < nb; b++)
        if (c->fn && c->fn(c->ctx, w0 + b, &c->tr[b])) return -1;
    return 0;
}

runner_sink gs_delta_capture_sink(gs_delta_capture *c) {
    return (runner_sink){.ctx = c, .begin = cap_begin, .after_step = cap_step, .end = cap_end};
}

/* ---------- the weights ---------- */

static const float *row(const float *base, int layer, int t, int T, int width, int head, int per_head) {
    return base + ((size_t)layer * T + t) * width + (size_t)head * per_head;
}

void gs_delta_weights(const gs_delta_trace *tr, int layer, int head, double *exact, double *heuristic) {
    int T = tr->T, H = tr->H, dk = tr->dk, wl = tr->n_writes > 1 ? layer : 0;
    int decay_first = tr->mem->decay_first;
    double r[dk > 0 ? dk : 1];
    memset(exact, 0, (size_t)T * T * sizeof *exact);
    if (heuristic) memset(heuristic, 0, (size_t)T * T * sizeof *heuristic);
    for (int t = 0; t < T; t++) {
        const float *q = row(tr->q, layer, t, T, H * dk, head, dk);
        for (int i = 0; i < dk; i++) r[i] = q[i];
        double decay = 1.0; /* prod_{i=j+1..t} alpha_i */
        for (int j = t; j >= 0; j--) {
            const float *k = row(tr->k, wl, j, T, H * dk, head, dk);
            double alpha = tr->alpha[((size_t)wl * T + j) * H + head], beta = tr->beta[((size_t)wl * T + j) * H + head];
            double kr = 0.0, kq = 0.0;
            for (int i = 0; i < dk; i++) kr += k[i] * r[i];
            double a = beta * kr;
            exact[(size_t)t * T + j] = a;
            if (heuristic) {
                for (int i = 0; i < dk; i++) kq += (double)k[i] * q[i];
                heuristic[(size_t)t * T + j] = beta * kq * decay;
                decay *= alpha;
            }
            /* r <- A_j r: alpha r - beta k (k.r), or alpha (r - beta k (k.r)) with the decay first */
            if (decay_first)
                for (int i = 0; i < dk; i++) r[i] = alpha * (r[i] - a * k[i]);
            else
                for (int i = 0; i < dk; i++) r[i] = alpha * r[i] - a * k[i];
        }
    }
}

void gs_delta_reconstruct(const gs_delta_trace *tr, int layer, int head, const double *w, int t, double *out) {
    int T = tr->T, dv = tr->dv, wl = tr->n_writes > 1 ? layer : 0;
    for (int i = 0; i < dv; i++) out[i] = 0.0;
    for (int j = 0; j <= t; j++) {
        double a = w[(size_t)t * T + j];
        const float *v = row(tr->v, wl, j, T, tr->H * dv, head, dv);
        for (int i = 0; i < dv; i++) out[i] += a * v[i];
    }
}

/* ||x - o|| / ||o|| for the engine's read o of (layer, head) at t */
static double read_distance(const gs_delta_trace *tr, int layer, int head, int t, const double *x) {
    const float *o = row(tr->read, layer, t, tr->T, tr->H * tr->dv, head, tr->dv);
    double d2 = 0.0, o2 = 0.0;
    for (int i = 0; i < tr->dv; i++) {
        d2 += (x[i] - o[i]) * (x[i] - o[i]);
        o2 += (double)o[i] * o[i];
    }
    return sqrt(d2) / fmax(sqrt(o2), 1e-30);
}

void gs_delta_query_stats_of(const gs_delta_trace *tr, int layer, int head, const double *exact, const double *heuristic,
                             int t, gs_delta_query_stats *out) {
    int T = tr->T;
    double x[tr->dv > 0 ? tr->dv : 1];
    gs_delta_reconstruct(tr, layer, head, exact, t, x);
    out->read_error = read_distance(tr, layer, head, t, x);
    double l1 = 0.0, diff = 0.0;
    for (int j = 0; j <= t; j++) {
        l1 += fabs(exact[(size_t)t * T + j]);
        if (heuristic) diff += fabs(heuristic[(size_t)t * T + j] - exact[(size_t)t * T + j]);
    }
    out->l1 = l1;
    out->heuristic_l1 = l1 > 0.0 ? diff / l1 : 0.0;
    out->heuristic_error = NAN;
    if (heuristic) {
        gs_delta_reconstruct(tr, layer, head, heuristic, t, x);
        out->heuristic_error = read_distance(tr, layer, head, t, x);
    }
}

int gs_delta_top_keys(const double *exact, int T, int t, int k, int *keys, double *mass) {
    const double *w = exact + (size_t)t * T;
    int n = k < t + 1 ? k : t + 1;
    double total = 0.0, kept = 0.0;
    for (int j = 0; j <= t; j++) total += fabs(w[j]);
    /* insertion into a list of n, most first: k is small (a handful to a few dozen) */
    int got = 0;
    for (int j = t; j >= 0; j--) {
        double a = fabs(w[j]);
        if (got == n && a <= fabs(w[keys[n - 1]])) continue;
        int at = got < n ? got++ : n - 1;
        while (at > 0 && fabs(w[keys[at - 1]]) < a) {
            keys[at] = keys[at - 1];
            at--;
        }
        keys[at] = j;
    }
    for (int i = 0; i < n; i++) kept += fabs(w[keys[i]]);
    *mass = total > 0.0 ? kept / total : 1.0;
    return n;
}
