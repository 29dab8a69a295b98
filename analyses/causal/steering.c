/* Steering by a hook that adds c u to the state (analyses/causal/steering.h). */
#include "analyses/causal/steering.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "probes/runner.h"

typedef struct {
    const gs_model *m;
    const gs_steer_opts *o;
    float *u;
    float c;
    int hooked;      /* this run adds c u */
    int T;
    int32_t *base_top1; /* windows x T: the baseline's */
    int64_t w0;
    /* this run's sums */
    double sum_nll, sum_norm;
    int64_t n, changed;
    int64_t *counts; /* V: top-1 predictions */
    int baseline;
} steer_ctx;

static void add_hook(void *ctx, const gs_hook_event *ev) {
    steer_ctx *s = ctx;
    if (ev->positions[0] < s->o->from) return;
    int d = ev->width;
    for (int b = 0; b < ev->B; b++) {
        float *x = ev->data + (size_t)b * d;
        if (s->baseline) { /* the unsteered state's norm: the scale of c */
            double n2 = 0;
            for (int i = 0; i < d; i++) n2 += (double)x[i] * x[i];
            s->sum_norm += sqrt(n2);
            continue;
        }
        for (int i = 0; i < d; i++) x[i] += s->c * s->u[i];
    }
}

static int on_begin(void *ctx, int64_t w0, int nb, const int32_t *tokens) {
    (void)nb;
    (void)tokens;
    ((steer_ctx *)ctx)->w0 = w0;
    return 0;
}

static int on_after(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)tokens;
    steer_ctx *s = ctx;
    if (t < s->o->from) return 0;
    gs_step_out out = gs_engine_out(e);
    for (int b = 0; b < nb; b++) {
        float nll = out.nll[b];
        if (!isfinite(nll)) continue; /* no prediction here (a transformer's first position) */
        int32_t top = out.top1[b];
        size_t at = (size_t)(w0 + b) * s->T + t;
        s->sum_nll += nll;
        s->n++;
        if (s->baseline) s->base_top1[at] = top;
        else s->changed += top != s->base_top1[at];
        s->counts[top]++;
    }
    return 0;
}

/* the site the hook goes on */
static int steer_site(const gs_model *m, int decode_only, char *name, size_t size) {
    const gs_family *f = gs_family_of(&m->cfg);
    const gs_site *s = f ? gs_site_of_role(f, &m->cfg, GS_ROLE_STATE) : NULL;
    if (!s) return gs_fail("the model's family marks no state site to steer");
    if (decode_only) {
        s = gs_site_of_point(f, GS_HOOK_S_DECODE);
        if (!s) return gs_fail("decode scope: the %s family has no decode-only copy of its state (GPN's state.decode)", f->name);
    }
    gs_site_format(s, m->cfg.n_layers - 1, name, size);
    return 0;
}

static void top_tokens(const int64_t *counts, int V, int64_t n, gs_steer_point *p) {
    p->n_top = 0;
    for (int k = 0; k < GS_STEER_TOP; k++) {
        int best = -1;
        for (int v = 0; v < V; v++) {
            int taken = 0;
            for (int j = 0; j < k && !taken; j++) taken = p->top_id[j] == v;
            if (!taken && counts[v] > 0 && (best < 0 || counts[v] > counts[best])) best = v;
        }
        if (best < 0) break;
        p->top_id[k] = best;
        p->top_share[k] = (double)counts[best] / (double)n;
        p->n_top++;
    }
}

int gs_steer_run(const gs_model *m, const gs_corpus *corpus, const gs_steer_opts *o, gs_steer_result *r) {
    memset(r, 0, sizeof *r);
    if (o->n_c < 1 || o->n_c > GS_STEER_MAX_C) return gs_fail("1 to %d coefficients", GS_STEER_MAX_C);
    int d = m->cfg.d, V = m->cfg.V;
    steer_ctx s = {.m = m, .o = o};
    s.T = (int)corpus_seq_len(corpus);
    int64_t W = corpus_n_windows(corpus);
    if (W < 1) return gs_fail("the corpus has no whole window of %d tokens", s.T);
    if (o->from < 0 || o->from >= s.T) return gs_fail("--from-position %d: 0 to %d (the windows have %d tokens)", o->from, s.T - 1, s.T);
    if (steer_site(m, o->decode_only, r->site, sizeof r->site)) return -1;
    double n2 = 0;
    for (int i = 0; i < d; i++) n2 += (double)o->u[i] * o->u[i];
    if (!(n2 > 0) || !isfinite(n2)) return gs_fail("the direction is zero or not finite");
    int batch = o->batch > 0 ? o->batch : 16;
    if (batch > W) batch = (int)W;
    s.u = malloc((size_t)d * sizeof *s.u);
    s.base_top1 = malloc((size_t)W * s.T * sizeof *s.base_top1);
    s.counts = calloc((size_t)V, sizeof *s.counts);
    gs_engine *e = gs_engine_new(m, batch);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    int rc = 0;
    if (!s.u || !s.base_top1 || !s.counts) rc = gs_fail("out of memory for %lld windows", (long long)W);
    else if (!e || !ps) rc = -1;
    if (!rc) {
        for (int i = 0; i < d; i++) s.u[i] = (float)(o->u[i] / sqrt(n2));
        gs_engine_set_outputs(e, GS_OUT_ALL, NULL);
        rc = probe_add(ps, r->site, add_hook, &s);
    }
    runner_opts ro = {.engine = e, .T = s.T, .first = 0, .total = W, .window = runner_corpus_window, .window_ctx = (void *)corpus};
    runner_sink sink = {.ctx = &s, .begin = on_begin, .after_step = on_after};
    for (int k = -1; k < o->n_c && !rc; k++) {
        s.baseline = k < 0;
        s.c = k < 0 ? 0.0f : (float)o->c[k];
        s.sum_nll = s.sum_norm = 0;
        s.n = s.changed = 0;
        memset(s.counts, 0, (size_t)V * sizeof *s.counts);
        if (runner_run(&ro, &sink, 1, NULL)) { rc = -1; break; }
        if (s.n == 0) { rc = gs_fail("no token at positions >= %d has a prediction", o->from); break; }
        if (k < 0) {
            r->baseline_nll = s.sum_nll / s.n;
            r->n_tokens = s.n;
            r->windows = W;
            r->state_norm = s.sum_norm / ((double)W * (s.T - o->from));
        } else {
            gs_steer_point *p = &r->point[r->n++];
            p->c = o->c[k];
            p->n_tokens = s.n;
            p->nll = s.sum_nll / s.n;
            p->delta_nll = p->nll - r->baseline_nll;
            p->top1_changed = (double)s.changed / (double)s.n;
            top_tokens(s.counts, V, s.n, p);
        }
        if (o->progress && o->progress(o->progress_ctx, k + 2, o->n_c + 1)) { rc = 1; break; }
    }
    probe_set_free(ps);
    gs_engine_free(e);
    free(s.u);
    free(s.base_top1);
    free(s.counts);
    return rc;
}
