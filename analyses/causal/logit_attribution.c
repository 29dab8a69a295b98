/* Direct logit attribution over a recorded run (analyses/causal/logit_attribution.h):
 * the run's windows through the runner with the step's parts captured at
 * their sites, each recorded token's logit split over them. */
#include "analyses/causal/logit_attribution.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/rerun.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/cpu/kernel_math.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "probes/runner.h"
#include "store/causal.h"

void gs_dla_opts_default(gs_dla_opts *o) {
    memset(o, 0, sizeof *o);
    o->windows = 4;
}

/* carry, ground, ffn per layer, mem per layer and head, bias, residual */
int gs_dla_n_parts(int n_layers, int H, int has_mem, int has_bias) {
    return 2 + n_layers + (has_mem ? n_layers * H : 0) + (has_bias ? 1 : 0) + 1;
}

typedef struct {
    store *st;
    int64_t an;
    const gs_model *m;
    const gs_rerun *rr;
    int T, L, H, d, has_mem;
    probe_capture *pred, *fuse, *ground, *pg[GS_MAX_LAYERS], *ffn[GS_MAX_LAYERS], *gated[GS_MAX_LAYERS];
    float *prev;             /* B x 3d: the last step's s_pred, fuse gate, s_ground (0 before the first) */
    double *g, *G, *y;       /* d each */
    store_logit_part *parts; /* n_parts, names fixed */
    double *sum, *sum_abs;   /* per part */
    int n_parts;
    gs_dla_result *out;
} dla_ctx;

static int begin_batch(void *ctx, int64_t w0, int nb, const int32_t *tokens) {
    (void)w0, (void)tokens;
    dla_ctx *a = ctx;
    memset(a->prev, 0, (size_t)nb * 3 * a->d * sizeof *a->prev);
    return 0;
}

static double dot_g(const double *g, const float *x, const float *scale, int d) {
    double s = 0.0;
    for (int i = 0; i < d; i++) s += g[i] * x[i] * (scale ? scale[i] : 1.0f);
    return s;
}

/* one position of sequence b: the parts' logits of token x into a->parts */
static void attribute(dla_ctx *a, int b, int32_t x, double logit) {
    const gs_config *c = &a->m->cfg;
    const gpn_params *p = &a->m->p;
    int d = a->d, e = c->e, hv = c->H * c->dv;
    const float *sp = a->pred->data + (size_t)b * d;
    /* the decode's scale, frozen from the full state: rms's r as the engine computes it */
    double ss = 0.0;
    for (int i = 0; i < d; i++) ss += (double)sp[i] * sp[i];
    double r = gs_rms_scale((float)ss, d);
    /* g_i = r w_i (P E[x])_i: the logit of x is g . part for every part */
    const float *E = p->embedding + (size_t)x * e;
    for (int i = 0; i < d; i++) {
        double u = 0.0;
        const float *Pi = p->decode_proj_k + (size_t)i * e;
        for (int k = 0; k < e; k++) u += (double)Pi[k] * E[k];
        a->g[i] = r * p->decode_norm_w[i] * u;
    }
    for (int i = 0; i < d; i++) a->G[i] = 1.0;
    int n = 2;
    double sum = 0.0;
    for (int l = a->L - 1; l >= 0; l--) {
        /* G = G_{l+1}: the gates of the layers after l */
        for (int i = 0; i < d; i++) a->y[i] = a->G[i] * a->g[i];
        a->parts[n + l].logit = dot_g(a->y, a->ffn[l]->data + (size_t)b * d, NULL, d);
        if (a->has_mem) {
            const float *on = a->gated[l]->data + (size_t)b * hv, *Wo = p->layers[l].read_W_o_k;
            for (int h = 0; h < c->H; h++) {
                double s = 0.0;
                for (int j = h * c->dv; j < (h + 1) * c->dv; j++) s += on[j] * dot_g(a->y, Wo + (size_t)j * d, NULL, d);
                a->parts[n + a->L + l * c->H + h].logit = s;
            }
        }
        const float *pg = a->pg[l]->data + (size_t)b * d;
        for (int i = 0; i < d; i++) a->G[i] *= pg[i];
    }
    /* G = G_0: the carried state s = fg sp_prev + ground_in, both from the last step */
    const float *prev = a->prev + (size_t)b * 3 * d, *fg = prev + d, *sg = prev + 2 * d;
    for (int i = 0; i < d; i++) a->y[i] = a->G[i] * a->g[i];
    a->parts[0].logit = dot_g(a->y, prev, fg, d);
    double ground = 0.0;
    for (int i = 0; i < d; i++) ground += a->y[i] * ((double)sg[i] - (double)fg[i] * prev[i]);
    a->parts[1].logit = ground;
    int k = a->n_parts - 1; /* the residual last, the bias before it */
    if (c->decoder_bias) {
        double bias = 0.0;
        for (int j = 0; j < e; j++) bias += (double)p->decode_bias[j] * E[j];
        a->parts[k - 1].logit = bias;
    }
    for (int i = 0; i < k; i++) sum += a->parts[i].logit;
    a->parts[k].logit = logit - sum;
}

static int after_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    dla_ctx *a = ctx;
    int d = a->d, V = a->m->cfg.V;
    const float *logits = gs_engine_out(e).logits;
    for (int b = 0; b < nb; b++) {
        int32_t x = tokens[(size_t)b * a->T + t];
        attribute(a, b, x, logits[(size_t)b * V + x]);
        if (store_put_logit_parts(a->st, a->an, a->rr->tk.window_ids[w0 + b], t, x, a->parts, a->n_parts)) return -1;
        for (int i = 0; i < a->n_parts; i++) {
            a->sum[i] += a->parts[i].logit;
            a->sum_abs[i] += fabs(a->parts[i].logit);
        }
        double res = fabs(a->parts[a->n_parts - 1].logit);
        if (res > a->out->residual_max) a->out->residual_max = res;
        a->out->logit_mean_abs += fabs(logits[(size_t)b * V + x]);
        a->out->tokens++;
        float *prev = a->prev + (size_t)b * 3 * d;
        memcpy(prev, a->pred->data + (size_t)b * d, (size_t)d * sizeof *prev);
        memcpy(prev + d, a->fuse->data + (size_t)b * d, (size_t)d * sizeof *prev);
        memcpy(prev + 2 * d, a->ground->data + (size_t)b * d, (size_t)d * sizeof *prev);
    }
    return 0;
}

/* site "blocks.L.NAME" for layer >= 0, else NAME */
static probe_capture *capture(probe_set *ps, const char *site, int layer) {
    char name[96];
    if (layer >= 0) snprintf(name, sizeof name, "blocks.%d.%s", layer, site);
    else snprintf(name, sizeof name, "%s", site);
    probe_capture *c = probe_capture_add(ps, name);
    if (!c) gs_fail_context("logit attribution needs site %s: ", name);
    return c;
}

static int summaries(dla_ctx *a) {
    gs_dla_result *r = a->out;
    int n = a->n_parts, rc = 0;
    double *x = malloc((size_t)n * 3 * sizeof *x);
    char (*lab)[32] = malloc((size_t)n * sizeof *lab);
    const char **labels = malloc((size_t)n * sizeof *labels);
    if (!x || !lab || !labels) rc = gs_fail("out of memory");
    for (int i = 0; i < n && !rc; i++) {
        gs_dla_part *p = &r->part[i];
        snprintf(p->part, sizeof p->part, "%s", a->parts[i].part);
        p->layer = a->parts[i].layer;
        p->head = a->parts[i].head;
        p->mean = r->tokens ? a->sum[i] / (double)r->tokens : NAN;
        p->mean_abs = r->tokens ? a->sum_abs[i] / (double)r->tokens : NAN;
        if (p->head >= 0) snprintf(lab[i], sizeof lab[i], "%s.L%d.h%d", p->part, p->layer, p->head);
        else if (p->layer >= 0) snprintf(lab[i], sizeof lab[i], "%s.L%d", p->part, p->layer);
        else snprintf(lab[i], sizeof lab[i], "%s", p->part);
        labels[i] = lab[i];
        x[i] = i;
        x[n + i] = p->mean;
        x[2 * n + i] = p->mean_abs;
        char key[64];
        snprintf(key, sizeof key, "%s.mean", lab[i]);
        rc = store_analysis_scalar(a->st, a->an, key, p->mean, "mean logit of the recorded token from this part");
        snprintf(key, sizeof key, "%s.mean_abs", lab[i]);
        if (!rc) rc = store_analysis_scalar(a->st, a->an, key, p->mean_abs, "mean |logit| from this part");
    }
    r->n_parts = n;
    if (r->tokens) r->logit_mean_abs /= (double)r->tokens;
    r->residual_rel = r->logit_mean_abs > 0 ? r->residual_max / r->logit_mean_abs : 0;
    if (!rc)
        rc = store_analysis_series(a->st, a->an, "mean", x, x + n, labels, n) ||
             store_analysis_series(a->st, a->an, "mean_abs", x, x + 2 * n, labels, n) ||
             store_analysis_scalar(a->st, a->an, "residual_max", r->residual_max,
                                   "max |logit - sum of parts| with the decode norm's scale frozen (float rounding)") ||
             store_analysis_scalar(a->st, a->an, "residual_rel", r->residual_rel, "residual_max / mean |logit|") ||
             store_analysis_scalar(a->st, a->an, "tokens", (double)r->tokens, NULL);
    free(x);
    free(lab);
    free(labels);
    return rc ? -1 : 0;
}

int gs_logit_attribution(store *st, int64_t run_id, const gs_dla_opts *o, gs_dla_result *out) {
    memset(out, 0, sizeof *out);
    gs_rerun rr;
    if (gs_rerun_open(st, run_id, o->windows, o->length, 0, o->model_path, &rr)) return -1;
    int rc = -1;
    gs_engine *e = NULL;
    probe_set *ps = NULL;
    dla_ctx a = {.st = st, .rr = &rr, .out = out};
    const gs_model *m = rr.m;
    const gs_config *c = &m->cfg;
    int64_t W = rr.W;
    int T = rr.T;
    const gs_family *fam = gs_family_of(c);
    if (!fam || !fam->attributable) {
        gs_fail("logit attribution splits GPN's and GPN+M's step; this model is %s", gs_arch_name(c->arch));
        goto done;
    }
    a.m = m;
    a.T = T;
    a.L = c->n_layers;
    a.H = c->H;
    a.d = c->d;
    a.has_mem = fam->has_memory;
    a.n_parts = gs_dla_n_parts(a.L, a.H, a.has_mem, c->decoder_bias);
    if (a.n_parts > GS_DLA_MAX_PARTS) { gs_fail("%d parts: at most %d", a.n_parts, GS_DLA_MAX_PARTS); goto done; }
    int B = W < 8 ? (int)W : 8;
    if (!(e = gs_engine_new(m, B)) || !(ps = probe_set_new(e))) goto done;
    if (!(a.pred = capture(ps, "state.pred", -1)) || !(a.fuse = capture(ps, "state.fuse_gate", -1)) ||
        !(a.ground = capture(ps, "state.ground", -1)))
        goto done;
    for (int l = 0; l < a.L; l++)
        if (!(a.pg[l] = capture(ps, "pred_gate", l)) || !(a.ffn[l] = capture(ps, "hook_mlp_out", l)) ||
            (a.has_mem && !(a.gated[l] = capture(ps, "mem.gated", l))))
            goto done;
    a.prev = malloc((size_t)B * 3 * a.d * sizeof *a.prev);
    a.g = malloc((size_t)a.d * 3 * sizeof *a.g);
    a.parts = calloc((size_t)a.n_parts, sizeof *a.parts);
    a.sum = calloc((size_t)a.n_parts * 2, sizeof *a.sum);
    if (!a.prev || !a.g || !a.parts || !a.sum) { gs_fail("out of memory"); goto done; }
    a.G = a.g + a.d;
    a.y = a.g + 2 * a.d;
    a.sum_abs = a.sum + a.n_parts;
    /* the parts' names in the order attribute() fills them */
    a.parts[0] = (store_logit_part){"carry", -1, -1, 0};
    a.parts[1] = (store_logit_part){"ground", -1, -1, 0};
    for (int l = 0; l < a.L; l++) a.parts[2 + l] = (store_logit_part){"ffn", l, -1, 0};
    for (int l = 0; a.has_mem && l < a.L; l++)
        for (int h = 0; h < a.H; h++) a.parts[2 + a.L + l * a.H + h] = (store_logit_part){"mem", l, h, 0};
    if (c->decoder_bias) a.parts[a.n_parts - 2] = (store_logit_part){"bias", -1, -1, 0};
    a.parts[a.n_parts - 1] = (store_logit_part){"residual", -1, -1, 0};
    char settings[128];
    snprintf(settings, sizeof settings, "{\"windows\":%lld,\"length\":%d}", (long long)W, T);
    if ((a.an = store_analysis_begin(st, run_id, "logit_attribution", settings, o->code_version)) < 0) goto done;
    out->analysis_id = a.an;
    runner_sink sink = {.ctx = &a, .begin = begin_batch, .after_step = after_step};
    if (gs_rerun_run(st, &rr, e, &sink, o->progress, o->progress_ctx)) goto done;
    if (summaries(&a) || store_commit(st)) { store_rollback(st); goto done; }
    out->windows = W;
    out->T = T;
    rc = 0;
done:
    probe_set_free(ps);
    gs_engine_free(e);
    gs_rerun_close(&rr);
    free(a.prev);
    free(a.g);
    free(a.parts);
    free(a.sum);
    return rc;
}
