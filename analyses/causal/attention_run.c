/* gpnscope attention's loop: the run's recorded windows through the runner
 * with the delta-rule capture attached, each window's selected heads turned
 * into weights and stored (analyses/causal/attention_run.h). */
#include "analyses/causal/attention_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/effective_attention.h"
#include "analyses/causal/rerun.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "store/causal.h"
#include "analyses/shared_keys.h"

void gs_attention_opts_default(gs_attention_opts *o) {
    memset(o, 0, sizeof *o);
    o->windows = 4;
    o->top_k = 8;
    o->full_upto = 128;
    o->max_work = GS_ATTENTION_MAX_WORK;
}

/* "0,3,5" -> flags over [0, n); NULL or "" selects all */
static int parse_selection(const char *what, const char *list, int n, unsigned char *on) {
    memset(on, list && *list ? 0 : 1, (size_t)n);
    if (!list || !*list) return 0;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= n || (*end && *end != ','))
            return gs_fail("--%s %s: numbers 0 to %d separated by commas", what, list, n - 1);
        on[v] = 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

typedef struct {
    store *st;
    int64_t an;
    const gs_rerun *rr;
    int T, top_k, full;
    unsigned char layer_on[GS_ATTENTION_MAX_LAYERS], head_on[GS_ATTENTION_MAX_HEADS];
    double *exact, *heur;      /* T x T */
    float *f32;                /* T x T */
    store_attention_query *q;  /* T */
    int *keys;                 /* T x top_k */
    double *kw, *kh;           /* T x top_k */
    gs_attention_result *out;
} attention_ctx;

static int put_matrix(attention_ctx *a, int32_t window, int l, int h, const char *kind, const double *w) {
    for (long i = 0; i < (long)a->T * a->T; i++) a->f32[i] = (float)w[i];
    return store_put_attention_matrix(a->st, a->an, window, l, h, kind, a->T, a->f32);
}

static int one_window(void *ctx, int64_t w, const gs_delta_trace *tr) {
    attention_ctx *a = ctx;
    int T = a->T, k = a->top_k;
    int32_t window = a->rr->tk.window_ids[w];
    gs_attention_head *hs = a->out->head;
    for (int l = 0, slot = 0; l < tr->n_layers; l++) {
        if (!a->layer_on[l]) continue;
        for (int h = 0; h < tr->H; h++) {
            if (!a->head_on[h]) continue;
            gs_attention_head *s = &hs[slot++];
            gs_delta_weights(tr, l, h, a->exact, a->heur);
            for (int t = 0; t < T; t++) {
                gs_delta_query_stats qs;
                gs_delta_query_stats_of(tr, l, h, a->exact, a->heur, t, &qs);
                store_attention_query *q = &a->q[t];
                int *keys = a->keys + (size_t)t * k;
                double mass;
                int n = gs_delta_top_keys(a->exact, T, t, k, keys, &mass);
                for (int r = 0; r < n; r++) {
                    a->kw[(size_t)t * k + r] = a->exact[(size_t)t * T + keys[r]];
                    a->kh[(size_t)t * k + r] = a->heur[(size_t)t * T + keys[r]];
                }
                *q = (store_attention_query){t, t + 1, n, keys, a->kw + (size_t)t * k, a->kh + (size_t)t * k,
                                             mass, qs.l1, qs.heuristic_l1, qs.read_error, qs.heuristic_error};
                s->read_error_max = fmax(s->read_error_max, qs.read_error);
                if (GS_ATTENTION_EXCLUDED(t, qs.l1)) { s->excluded++; continue; }
                s->heuristic_l1 += qs.heuristic_l1;
                s->heuristic_error += qs.heuristic_error;
                s->topk_mass += mass;
                s->queries++;
            }
            if (store_put_attention_queries(a->st, a->an, window, l, h, a->q, T)) return -1;
            if (a->full && (put_matrix(a, window, l, h, "exact", a->exact) || put_matrix(a, window, l, h, "heuristic", a->heur)))
                return -1;
        }
    }
    return 0;
}

static int summaries(store *st, int64_t an, gs_attention_result *r) {
    int n = r->n_heads;
    double *x = malloc((size_t)n * 4 * sizeof *x);
    if (!x) return gs_fail("out of memory");
    double *y1 = x + n, *y2 = x + 2 * n, *y3 = x + 3 * n;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        gs_attention_head *s = &r->head[i];
        if (s->queries) s->heuristic_l1 /= (double)s->queries, s->heuristic_error /= (double)s->queries,
                        s->topk_mass /= (double)s->queries;
        else s->heuristic_l1 = s->heuristic_error = s->topk_mass = NAN; /* no query to average: no value stored */
        char key[96];
        x[i] = i;
        y1[i] = s->heuristic_l1;
        y2[i] = s->heuristic_error;
        y3[i] = s->topk_mass;
        const struct { const char *name, *note; double v; } rows[] = {
            {"heuristic_l1", "mean over queries of sum_j |h_tj - a_tj| / sum_j |a_tj| (h: key removal dropped)", s->heuristic_l1},
            {"heuristic_read_error", "mean over queries of ||sum_j h_tj v_j - o_t|| / ||o_t||", s->heuristic_error},
            {"read_error_max", "max over queries of ||sum_j a_tj v_j - o_t|| / ||o_t|| (the exact weights' check)", s->read_error_max},
            {"topk_mass", "mean share of sum_j |a_tj| the top-k keys hold", s->topk_mass},
            {"queries", "queries in the means above", (double)s->queries},
            {"queries_excluded", "left out of the means: query 0 and queries whose exact weights are all zero",
             (double)s->excluded},
        };
        for (size_t k = 0; k < sizeof rows / sizeof *rows && rc == 0; k++) {
            snprintf(key, sizeof key, "L%d.h%d.%s", s->layer, s->head, rows[k].name);
            if (isfinite(rows[k].v)) rc = store_analysis_scalar(st, an, key, rows[k].v, rows[k].note);
        }
    }
    /* one point per selected (layer, head), labelled "L0.h3", for the figure and SQL */
    char (*lab)[24] = malloc((size_t)n * sizeof *lab);
    const char **labels = malloc((size_t)n * sizeof *labels);
    if (!rc && (!lab || !labels)) rc = gs_fail("out of memory");
    for (int i = 0; !rc && i < n; i++) {
        snprintf(lab[i], sizeof lab[i], "L%d.h%d", r->head[i].layer, r->head[i].head);
        labels[i] = lab[i];
    }
    if (!rc) rc = store_analysis_series(st, an, "heuristic_l1", x, y1, labels, n) ||
                  store_analysis_series(st, an, "heuristic_read_error", x, y2, labels, n) ||
                  store_analysis_series(st, an, "topk_mass", x, y3, labels, n);
    free(lab);
    free(labels);
    free(x);
    return rc ? -1 : 0;
}

int gs_attention_run(store *st, int64_t run_id, const gs_attention_opts *o, gs_attention_result *out) {
    memset(out, 0, sizeof *out);
    if (o->top_k < 1 || o->top_k > 4096) return gs_fail("--top-k %d: 1 to 4096", o->top_k);
    gs_rerun rr;
    if (gs_rerun_open(st, run_id, o->windows, o->length, 512, o->model_path, &rr)) return -1;
    int rc = -1;
    gs_engine *e = NULL;
    gs_delta_capture *cap = NULL;
    attention_ctx a = {.st = st, .rr = &rr, .out = out};
    const gs_config *c = &rr.m->cfg;
    int64_t W = rr.W;
    int T = rr.T;
    if (!gs_delta_memory_of(c)) goto done;
    if (c->n_layers > GS_ATTENTION_MAX_LAYERS || c->H > GS_ATTENTION_MAX_HEADS) {
        gs_fail("the model has %d layers of %d heads: effective attention handles at most %d layers and %d heads",
                c->n_layers, c->H, GS_ATTENTION_MAX_LAYERS, GS_ATTENTION_MAX_HEADS);
        goto done;
    }
    if (parse_selection("layers", o->layers, c->n_layers, a.layer_on) || parse_selection("heads", o->heads, c->H, a.head_on))
        goto done;
    for (int l = 0; l < c->n_layers; l++)
        for (int h = 0; h < c->H && a.layer_on[l]; h++)
            if (a.head_on[h]) {
                if (out->n_heads == GS_ATTENTION_MAX_HEADS) {
                    gs_fail("more than %d (layer, head) pairs selected: name fewer with --layers / --heads", GS_ATTENTION_MAX_HEADS);
                    goto done;
                }
                out->head[out->n_heads++] = (gs_attention_head){.layer = l, .head = h};
            }
    /* the plan, checked against the budget before any work or allocation */
    int64_t work = GS_ATTENTION_WORK(W, out->n_heads, T, c->dk, c->dv);
    char plan[256];
    snprintf(plan, sizeof plan, "%lld window%s x %d (layer, head) pair%s x T^2 (1.5 d_k + d_v) with T %d, d_k %d, d_v %d "
             "= %lld multiply-adds", (long long)W, W == 1 ? "" : "s", out->n_heads, out->n_heads == 1 ? "" : "s", T, c->dk,
             c->dv, (long long)work);
    if (o->max_work > 0 && work > o->max_work) {
        gs_fail("the weights plan %s, more than --max-work %lld: raise --max-work, or bound --windows, --length, "
                "--heads or --layers", plan, (long long)o->max_work);
        goto done;
    }
    if (o->plan) o->plan(o->plan_ctx, plan);
    a.T = T;
    a.top_k = o->top_k;
    a.full = o->full_upto > 0 && T <= o->full_upto;
    size_t TT = (size_t)T * T;
    a.exact = malloc(TT * sizeof *a.exact);
    a.heur = malloc(TT * sizeof *a.heur);
    a.f32 = malloc(TT * sizeof *a.f32);
    a.q = malloc((size_t)T * sizeof *a.q);
    a.keys = malloc((size_t)T * o->top_k * sizeof *a.keys);
    a.kw = malloc((size_t)T * o->top_k * sizeof *a.kw);
    a.kh = malloc((size_t)T * o->top_k * sizeof *a.kh);
    if (!a.exact || !a.heur || !a.f32 || !a.q || !a.keys || !a.kw || !a.kh) {
        gs_fail("out of memory for windows of %d positions (%zu MB of weights per head)", T, TT * 16 >> 20);
        goto done;
    }
    int B = W < 8 ? (int)W : 8;
    if (!(e = gs_engine_new(rr.m, B)) || !(cap = gs_delta_capture_new(e, T, one_window, &a))) goto done;
    char settings[512];
    snprintf(settings, sizeof settings, "{\"windows\":%lld,\"length\":%d,\"heads\":\"%s\",\"layers\":\"%s\",\"top_k\":%d}",
             (long long)W, T, o->heads ? o->heads : "all", o->layers ? o->layers : "all", o->top_k);
    if ((a.an = store_analysis_begin(st, run_id, "attention", settings, o->code_version)) < 0) goto done;
    out->analysis_id = a.an;
    runner_sink sink = gs_delta_capture_sink(cap);
    if (gs_rerun_run(st, &rr, e, &sink, o->progress, o->progress_ctx)) goto done;
    if (summaries(st, a.an, out) || store_analysis_scalar(st, a.an, GS_KEY_WINDOWS, (double)W, NULL) ||
        store_analysis_scalar(st, a.an, "length", T, NULL) ||
        store_analysis_scalar(st, a.an, "token_offset", gs_family_of(c)->predicts_first_token,
                              "the last token read at step t is x_{t - token_offset} (1: GPN's step predicts x_t "
                              "before reading it; 0: GDN's step reads x_t)") || store_analysis_scalar(st, a.an, "full_matrices", a.full, NULL) ||
        store_commit(st)) {
        store_rollback(st);
        goto done;
    }
    out->windows = W;
    out->T = T;
    out->top_k = o->top_k;
    out->full = a.full;
    rc = 0;
done:
    gs_delta_capture_free(cap);
    gs_engine_free(e);
    gs_rerun_close(&rr);
    free(a.exact);
    free(a.heur);
    free(a.f32);
    free(a.q);
    free(a.keys);
    free(a.kw);
    free(a.kh);
    return rc;
}
