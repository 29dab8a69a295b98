#include "analyses/causal/ablation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/documents.h"
#include "analyses/math/stats.h"
#include "analyses/registry.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "probes/runner.h"
#include "analyses/state/geometry_keys.h"

/* position 1 alone: its state is zero, so its prediction is the same for every
 * window and an intervention there (subtracting s_bar from a zero state) is
 * unlike any later one; it would dominate "1-16" */
const char *const gs_control_names[GS_CONTROL_KINDS] = {"isotropic", "states", "heads"};
const char *const gs_ablation_bucket_names[ABLATION_BUCKETS] = {"1", "2-16", "17-128", "129-512", "513+"};
static const int bucket_lo[ABLATION_BUCKETS] = {1, 2, 17, 129, 513};

void gs_ablate_opts_default(gs_ablate_opts *o) {
    memset(o, 0, sizeof *o);
    o->scope = "decode";
    o->heads_at = "before-norm";
    o->seed = 1;
    o->controls = 3;
}

static int bucket_of(int position) {
    int p = position + 1, b = 0;
    while (b + 1 < ABLATION_BUCKETS && p >= bucket_lo[b + 1]) b++;
    return b;
}

int gs_ablation_heads(store *st, int64_t run_id) {
    store_run_info info;
    if (store_run_get(st, run_id, &info)) return -1;
    if (info.n_heads <= 0) return gs_fail("run %lld: the model has no memory heads (GPN)", (long long)run_id);
    return info.n_heads;
}

/* Heads of a retention pool: series "pool" holds 0 (fast) or 1 (slow) per head. */
static int pool_heads(store *st, int64_t run, const char *which, int *heads, int max) {
    int64_t an = store_analysis_find(st, run, gs_analysis_stored_name(GS_AN_RETENTION), NULL);
    if (an <= 0) return gs_fail("pool:%s needs the run's retention analysis: run gpnscope analyze first", which);
    double *x = NULL, *y = NULL;
    int64_t n = store_analysis_get_series(st, an, "pool", &x, &y);
    if (n <= 0) {
        free(x); free(y);
        return gs_fail("the run's retention analysis found no pools (too few heads)");
    }
    int want = !strcmp(which, "slow"), k = 0;
    for (int64_t i = 0; i < n && k < max; i++)
        if ((int)y[i] == want) heads[k++] = (int)x[i];
    free(x);
    free(y);
    return k;
}

static int parse_heads(const char *list, int H, int *heads) {
    int n = 0;
    const char *p = list;
    while (*p) {
        char *end;
        long h = strtol(p, &end, 10);
        if (end == p || h < 0 || h >= H) return gs_fail("heads:%s: head numbers 0..%d, separated by commas", list, H - 1);
        heads[n++] = (int)h;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return gs_fail("heads:%s: head numbers 0..%d, separated by commas", list, H - 1);
    }
    if (n == 0) return gs_fail("heads: name at least one head");
    return n;
}

/* An intervention, parsed: what install() puts on a probe set. Controls are
 * targets of the same kind and size with random content. */
typedef struct {
    int kind;           /* 0 none, 1 direction, 2 heads */
    int project;        /* direction: project out instead of subtracting */
    char hook[64];      /* none and direction: the site (the family's state; GPN's state.decode for decode scope) */
    float *v;           /* direction (d), malloc'd */
    int d;
    int heads[4096], n_heads, H;
    int after_norm;
} target;

static int parse_target(store *st, int64_t run, const gs_model *m, const gs_ablate_opts *o, target *tg) {
    const char *what = o->what;
    const gs_config *c = &m->cfg;
    memset(tg, 0, sizeof *tg);
    tg->d = c->d;
    tg->H = c->H;
    /* the carried state: the family's state site (its last layer's when per layer) */
    const gs_family *fam = gs_family_of(c);
    const gs_site *state = fam ? gs_site_of_role(fam, c, GS_ROLE_STATE) : NULL;
    if (!state) return gs_fail("the %s family marks no state site to intervene on", fam ? fam->name : "model's");
    gs_site_format(state, c->n_layers - 1, tg->hook, sizeof tg->hook);
    if (!strcmp(what, "none")) return 0;
    if (!strncmp(what, "mean-direction:", 15)) {
        const char *mode = what + 15;
        if (strcmp(mode, "subtract") && strcmp(mode, "project"))
            return gs_fail("--what %s: mean-direction:subtract or mean-direction:project", what);
        if (strcmp(o->scope, "decode") && strcmp(o->scope, "carry"))
            return gs_fail("--scope %s: decode or carry", o->scope);
        int64_t an = store_analysis_find(st, run, gs_analysis_stored_name(GS_AN_GEOMETRY), NULL);
        int64_t n = an > 0 ? store_analysis_get_vector(st, an, GS_KEY_MEAN, &tg->v) : -1;
        if (n != c->d) {
            free(tg->v);
            tg->v = NULL;
            return gs_fail("mean-direction needs the run's mean state (geometry analysis, d = %d): run gpnscope analyze first", c->d);
        }
        tg->kind = 1;
        tg->project = !strcmp(mode, "project");
        if (!strcmp(o->scope, "decode")) { /* a copy of the state that is only decoded: GPN has one */
            const gs_site *copy = gs_site_of_point(fam, GS_HOOK_S_DECODE);
            if (!copy) {
                free(tg->v);
                tg->v = NULL;
                return gs_fail("--scope decode: the %s family has no decode-only copy of its state (GPN's "
                               "state.decode): use --scope carry", fam->name);
            }
            gs_site_format(copy, 0, tg->hook, sizeof tg->hook);
        }
        return 0;
    }
    int n;
    if (c->H > 4096) return gs_fail("head ablation supports at most 4096 heads (the model has %d)", c->H);
    const gs_site *reads = fam ? gs_site_of_point(fam, GS_HOOK_MEM_HEADS) : NULL;
    if ((!reads || !gs_site_present(reads, c)) && (!strncmp(what, "heads:", 6) || !strncmp(what, "pool:", 5)))
        return gs_fail("--what %s: the model has no memory heads (%s)", what, fam ? fam->title : "?");
    if (!strncmp(what, "heads:", 6)) n = parse_heads(what + 6, c->H, tg->heads);
    else if (!strcmp(what, "pool:fast") || !strcmp(what, "pool:slow")) n = pool_heads(st, run, what + 5, tg->heads, c->H);
    else return gs_fail("--what %s: none, mean-direction:subtract|project, heads:LIST, pool:fast|slow or each-head", what);
    if (n < 0) return -1;
    if (n == 0) return gs_fail("%s: the pool is empty", what);
    if (strcmp(o->heads_at, "after-norm") && strcmp(o->heads_at, "before-norm"))
        return gs_fail("--heads-at %s: before-norm or after-norm", o->heads_at);
    tg->kind = 2;
    tg->n_heads = n;
    tg->after_norm = !strcmp(o->heads_at, "after-norm");
    return 0;
}

/* Set up the intervention on a probe set. */
static int install(probe_set *ps, const target *tg) {
    if (tg->kind == 0) { /* a hook that subtracts zero: runs, changes nothing */
        float *zero = calloc((size_t)tg->d, sizeof *zero);
        int rc = zero ? probe_subtract(ps, tg->hook, zero) : gs_fail("out of memory");
        free(zero);
        return rc;
    }
    if (tg->kind == 1) return tg->project ? probe_project_out(ps, tg->hook, tg->v) : probe_subtract(ps, tg->hook, tg->v);
    return tg->after_norm ? probe_zero_heads_after_norm(ps, -1, tg->heads, tg->n_heads)
                          : probe_zero_heads(ps, -1, tg->heads, tg->n_heads);
}

/* Control draw r of a kind: the target with its content drawn at random.
 * isotropic: a direction uniform on the sphere; states: a recorded state
 * minus s_bar (a direction drawn from the states' own spread); both scaled
 * to ||s_bar|| (the norm matters for subtract, not for project). heads: a
 * uniformly random set of as many heads, not the target's own. */
static int control_target(const target *tg, int kind, const float *states, int64_t n_states, uint64_t seed, int r,
                          target *ct) {
    *ct = *tg;
    ct->v = NULL;
    gs_rng g = {gs_hash2(seed, (uint64_t)(kind * 1000 + r + 1))};
    if (tg->kind == 1) {
        if (!(ct->v = malloc((size_t)tg->d * sizeof *ct->v))) return gs_fail("out of memory");
        double nb = 0, nv = 0;
        for (int i = 0; i < tg->d; i++) nb += (double)tg->v[i] * tg->v[i];
        if (kind == GS_CONTROL_ISOTROPIC) {
            for (int i = 0; i < tg->d; i++) ct->v[i] = (float)gs_rng_normal(&g);
        } else {
            const float *x = states + (size_t)(gs_rng_next(&g) % (uint64_t)n_states) * tg->d;
            for (int i = 0; i < tg->d; i++) ct->v[i] = x[i] - tg->v[i];
        }
        for (int i = 0; i < tg->d; i++) nv += (double)ct->v[i] * ct->v[i];
        double sc = nv > 0 ? sqrt(nb / nv) : 0;
        for (int i = 0; i < tg->d; i++) ct->v[i] = (float)(ct->v[i] * sc);
        return 0;
    }
    /* heads: partial Fisher-Yates; redraw (a few times) when it is the target's set */
    for (int tries = 0; tries < 16; tries++) {
        int perm[4096];
        for (int h = 0; h < tg->H; h++) perm[h] = h;
        for (int i = 0; i < tg->n_heads; i++) {
            int j = i + (int)(gs_rng_next(&g) % (uint64_t)(tg->H - i));
            int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
        int same = 1;
        for (int i = 0; i < tg->n_heads && same; i++) {
            int found = 0;
            for (int k = 0; k < tg->n_heads; k++) found |= tg->heads[k] == perm[i];
            same = found;
        }
        memcpy(ct->heads, perm, (size_t)tg->n_heads * sizeof *perm);
        if (!same || tg->n_heads >= tg->H) break;
    }
    return 0;
}

/* k recorded 'pred' states (random rows, by seed) for the states control;
 * 0 rows when the run kept none. */
static int64_t sample_states(store *st, int64_t run, int d, int k, uint64_t seed, float **out) {
    *out = NULL;
    int64_t n = store_count_states(st, run, "pred");
    if (n <= 0) return 0;
    store_states *rd = store_states_open(st, run, "pred", -1, -1);
    if (!rd) return -1;
    if (store_states_dim(rd) != d) { store_states_close(rd); return 0; }
    int64_t *want = malloc((size_t)k * sizeof *want);
    float *rows = malloc((size_t)k * d * sizeof *rows), *buf = malloc((size_t)1024 * d * sizeof *buf);
    if (!want || !rows || !buf) { free(want); free(rows); free(buf); store_states_close(rd); return gs_fail("out of memory"); }
    gs_rng g = {gs_hash2(seed, 0x57a7e5ull)};
    for (int i = 0; i < k; i++) want[i] = (int64_t)(gs_rng_next(&g) % (uint64_t)n);
    int64_t at = 0, got, filled = 0;
    while ((got = store_states_read(rd, buf, NULL, NULL, 1024)) > 0) {
        for (int i = 0; i < k; i++)
            if (want[i] >= at && want[i] < at + got) {
                memcpy(rows + (size_t)i * d, buf + (size_t)(want[i] - at) * d, (size_t)d * sizeof *rows);
                filled++;
            }
        at += got;
    }
    store_states_close(rd);
    free(want);
    free(buf);
    if (got < 0 || filled < k) { free(rows); return got < 0 ? -1 : 0; }
    *out = rows;
    return k;
}

/* The runner's view of an ablation: windows are the run's recorded tokens;
 * after each step keep the NLL under the intervention, after each batch
 * store it and add it up against the run's own NLL. */
typedef struct {
    store *st;
    int64_t an;
    const store_token_array *tk;
    int T;
    int64_t W;  /* windows reported; the runner may run more to keep the recording's batch layout */
    float *nll; /* B x T */
    double *sums;    /* per window: base, ablated NLL sums */
    int64_t *counts; /* per window */
    double *bsum;    /* per window and bucket: NLL change sum */
    int64_t *bcnt;   /* per window and bucket */
} ablate_sink;

static int recorded_window(void *ctx, int64_t w, int32_t *tokens) {
    const store_token_array *tk = ctx;
    memcpy(tokens, tk->token_id + w * tk->n_positions, (size_t)tk->n_positions * sizeof *tokens);
    return 0;
}

static int keep_nll(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    (void)w0, (void)tokens;
    ablate_sink *a = ctx;
    const float *nll = gs_engine_out(e).nll;
    for (int b = 0; b < nb; b++) a->nll[(size_t)b * a->T + t] = nll[b];
    return 0;
}

static int store_batch(void *ctx, int64_t w0, int nb) {
    ablate_sink *a = ctx;
    int T = a->T;
    for (int b = 0; b < nb && w0 + b < a->W; b++) {
        int64_t w = w0 + b;
        if (a->st && store_put_ablation_nll(a->st, a->an, a->tk->window_ids[w], a->nll + (size_t)b * T, T)) return -1;
        for (int t = 0; t < T; t++) {
            double base = a->tk->nll[w * T + t], abl = a->nll[(size_t)b * T + t];
            if (isnan(base)) continue;
            a->sums[2 * w] += base;
            a->sums[2 * w + 1] += abl;
            a->counts[w]++;
            if (!a->bsum) continue;
            a->bsum[w * ABLATION_BUCKETS + bucket_of(t)] += abl - base;
            a->bcnt[w * ABLATION_BUCKETS + bucket_of(t)]++;
        }
    }
    return 0;
}

/* -1 with the error set when a token of the run is not an id of a vocabulary
 * of V pieces (an import of another tokenizer's ids, say). */
static int out_of_vocabulary(store *st, int64_t run_id, int V) {
    int64_t w = 0, p = 0;
    char id[64];
    int found = store_first_token_outside(st, run_id, V, &w, &p, id, sizeof id);
    if (found < 0) return -1;
    if (found)
        return gs_fail("run %lld: window %lld, position %lld holds token id %s, outside the model's vocabulary (0 to %d): "
                       "the run's tokens are not this model's (check the tokenizer it was recorded or imported with)",
                       (long long)run_id, (long long)w, (long long)p, id, V - 1);
    return 0;
}

/* Per document: the NLL change and tokens of bucket k. */
static void per_doc(const double *bsum, const int64_t *bcnt, int k, const int64_t *doc, int64_t W, double *sum,
                    double *n, int64_t G) {
    memset(sum, 0, (size_t)G * sizeof *sum);
    memset(n, 0, (size_t)G * sizeof *n);
    for (int64_t w = 0; w < W; w++) {
        sum[doc[w]] += bsum[w * ABLATION_BUCKETS + k];
        n[doc[w]] += (double)bcnt[w * ABLATION_BUCKETS + k];
    }
}

int gs_ablate(store *st, int64_t run_id, const gs_ablate_opts *o, gs_ablation *out) {
    memset(out, 0, sizeof *out);
    int heads_kind = !strncmp(o->what, "heads:", 6) || !strncmp(o->what, "pool:", 5);
    snprintf(out->what, sizeof out->what, "%s", o->what);
    snprintf(out->scope, sizeof out->scope, "%s", strncmp(o->what, "mean-direction:", 15) ? "" : o->scope);
    snprintf(out->heads_at, sizeof out->heads_at, "%s", heads_kind ? (o->heads_at ? o->heads_at : "before-norm") : "");
    store_run_info info;
    if (store_run_get(st, run_id, &info)) return -1;
    store_token_array tk;
    if (store_read_tokens(st, run_id, &tk)) return -1;
    int rc = -1;
    gs_model *m = NULL;
    gs_engine *e = NULL;
    probe_set *ps = NULL;
    float *nll = NULL;
    double *sums = NULL, *bsum = NULL, *gsum = NULL, *gn = NULL, *csum = NULL;
    int64_t *counts = NULL, *bcnt = NULL, *doc = NULL, *ccnt = NULL;
    float *states = NULL;
    target tg = {0};
    int T = (int)tk.n_positions;
    int64_t W = tk.n_windows;
    if (o->windows > 0 && o->windows < W) W = o->windows;
    if (W < 1 || T < 1) { gs_fail("run %lld has no recorded tokens", (long long)run_id); goto done; }
    if (!(m = gs_analysis_load_model(&info, o->model_path)) || gs_family_require_lm(&m->cfg, m->path, "ablate"))
        goto done;
    /* ids outside the model's vocabulary first: read as int32 they could
     * look like the -1 of a missing token */
    if (out_of_vocabulary(st, run_id, m->cfg.V)) goto done;
    for (int64_t w = 0; w < W * T; w++)
        if (tk.token_id[w] < 0) {
            gs_fail("run %lld: window %d has no token at position %lld (the window is incomplete, or a per-document "
                    "run's document ends there): ablate fewer --windows, or finish the recording with --resume",
                    (long long)run_id, tk.window_ids[w / T], (long long)(w % T));
            goto done;
        }
    /* The recording's batch layout unless told otherwise: the engine's GEMMs
     * round differently for another batch size, so the first K windows run
     * in the recording's full batches (windows after K run and are dropped)
     * and `none` reproduces the recorded NLL exactly. */
    int B = o->batch > 0 ? o->batch : (info.batch > 0 ? info.batch : 16);
    int64_t W_run = W;
    if (o->batch <= 0) {
        int64_t full = (W + B - 1) / B * (int64_t)B;
        int64_t complete = tk.n_windows;
        for (int64_t w = W; w < full && w < complete; w++)
            if (tk.token_id[w * T] < 0 || tk.token_id[w * T + T - 1] < 0) { complete = w; break; }
        W_run = full < complete ? full : complete;
    }
    if (B > W_run) B = (int)W_run;
    if (B > 4096) { gs_fail("--batch %d: at most 4096", B); goto done; }
    gs_device dev;
    if (gs_device_parse(o->device, o->precision, &dev) || !(e = gs_engine_new_on(m, B, &dev)) ||
        !(ps = probe_set_new(e)))
        goto done;
    gs_engine_set_outputs(e, 0, NULL); /* the NLL is all an ablation reads */
    if (parse_target(st, run_id, m, o, &tg) || install(ps, &tg)) goto done;

    char settings[512];
    if (heads_kind && !strcmp(out->heads_at, "after-norm")) /* before-norm keeps the settings it always had */
        snprintf(settings, sizeof settings, "{\"what\":\"%s\",\"scope\":\"%s\",\"windows\":%lld,\"seed\":%llu,\"heads_at\":\"%s\"}",
                 out->what, out->scope, (long long)W, (unsigned long long)o->seed, out->heads_at);
    else
        snprintf(settings, sizeof settings, "{\"what\":\"%s\",\"scope\":\"%s\",\"windows\":%lld,\"seed\":%llu}", out->what,
                 out->scope, (long long)W, (unsigned long long)o->seed);
    int64_t an = store_analysis_begin(st, run_id, gs_analysis_stored_name(GS_AN_ABLATION), settings, o->code_version);
    if (an < 0) goto done;
    out->analysis_id = an;
    int n_draws = tg.kind == 0 ? 0 : o->controls < 0 ? 0 : o->controls > ABLATION_MAX_CONTROLS ? ABLATION_MAX_CONTROLS : o->controls;
    /* every head zeroed: a random set of as many heads is the same set */
    if (tg.kind == 2 && tg.n_heads >= tg.H) n_draws = 0;
    int n_kinds = n_draws == 0 ? 0 : tg.kind == 1 ? 2 : 1;
    nll = malloc((size_t)B * T * sizeof *nll);
    sums = calloc((size_t)W * 2, sizeof *sums);
    counts = calloc((size_t)W, sizeof *counts);
    bsum = calloc((size_t)W * ABLATION_BUCKETS, sizeof *bsum);
    bcnt = calloc((size_t)W * ABLATION_BUCKETS, sizeof *bcnt);
    doc = malloc((size_t)W * sizeof *doc);
    gsum = malloc((size_t)W * sizeof *gsum);
    gn = malloc((size_t)W * sizeof *gn);
    csum = calloc((size_t)W * 2 * (n_kinds * n_draws + 1), sizeof *csum);
    ccnt = calloc((size_t)W, sizeof *ccnt);
    if (!nll || !sums || !counts || !bsum || !bcnt || !doc || !gsum || !gn || !csum || !ccnt) {
        gs_fail("out of memory");
        goto rollback;
    }
    ablate_sink as = {st, an, &tk, T, W, nll, sums, counts, bsum, bcnt};
    runner_sink sink = {.ctx = &as, .after_step = keep_nll, .end = store_batch};
    runner_opts ro = {.engine = e, .T = T, .first = 0, .total = W_run, .window = recorded_window, .window_ctx = &tk};
    if (runner_run(&ro, &sink, 1, NULL)) goto rollback;
    /* controls: the same runner, a fresh probe set per draw, NLLs summed per
     * window only (csum: per draw, W x {base, ablated}) */
    int64_t n_states = 0;
    int ctrl_k[2] = {0, 0};
    if (tg.kind == 1 && n_draws > 0 && (n_states = sample_states(st, run_id, tg.d, n_draws, o->seed, &states)) < 0)
        goto rollback;
    for (int k = 0; k < n_kinds; k++) {
        int kind = tg.kind == 2 ? GS_CONTROL_HEADS : k == 0 ? GS_CONTROL_ISOTROPIC : GS_CONTROL_STATES;
        if (kind == GS_CONTROL_STATES && n_states < n_draws) continue; /* the run kept no states */
        ctrl_k[out->n_controls] = k;
        gs_ablation_control *c = &out->control[out->n_controls++];
        c->kind = kind;
        for (int r = 0; r < n_draws; r++) {
            target ct;
            probe_set_free(ps);
            ps = NULL;
            if (control_target(&tg, kind, states, n_states, o->seed, r, &ct) || !(ps = probe_set_new(e)) ||
                install(ps, &ct)) {
                free(ct.v);
                goto rollback;
            }
            /* the draw itself, so that its effect can be recomputed */
            char key[64];
            snprintf(key, sizeof key, "control_%s_%d", gs_control_names[kind], r);
            float hv[4096];
            for (int i = 0; i < ct.n_heads; i++) hv[i] = (float)ct.heads[i];
            int bad = ct.v ? store_analysis_vector(st, an, key, ct.v, ct.d) : store_analysis_vector(st, an, key, hv, ct.n_heads);
            free(ct.v);
            if (bad) goto rollback;
            double *cs = csum + (size_t)W * 2 * (k * n_draws + r);
            memset(ccnt, 0, (size_t)W * sizeof *ccnt);
            ablate_sink cas = {NULL, an, &tk, T, W, nll, cs, ccnt, NULL, NULL};
            runner_sink csink = {.ctx = &cas, .after_step = keep_nll, .end = store_batch};
            if (runner_run(&ro, &csink, 1, NULL)) goto rollback;
            c->n = r + 1;
        }
    }

    /* documents: the units the intervals resample over */
    int32_t bos, eos;
    gs_run_boundary_tokens(st, run_id, m->cfg.V, &bos, &eos);
    int64_t G = gs_window_documents(tk.token_id, W, T, bos, eos, doc);
    out->by_document = G > 0;
    if (G == 0) G = W;
    out->n_units = G;
    out->n_windows = W;
    double base = 0, abl = 0;
    for (int64_t w = 0; w < W; w++) { base += sums[2 * w]; abl += sums[2 * w + 1]; out->n_tokens += counts[w]; }
    out->ppl_base = exp(base / (double)out->n_tokens);
    out->ppl_ablated = exp(abl / (double)out->n_tokens);
    out->delta_ppl = out->ppl_ablated - out->ppl_base;
    out->delta_nll = (abl - base) / (double)out->n_tokens;
    /* mean NLL change: t-interval over documents */
    for (int64_t g = 0; g < G; g++) gsum[g] = gn[g] = 0;
    for (int64_t w = 0; w < W; w++) { gsum[doc[w]] += sums[2 * w + 1] - sums[2 * w]; gn[doc[w]] += (double)counts[w]; }
    gs_interval iv = gs_cluster_t_interval(gsum, gn, G, 0.95);
    out->delta_nll_lo = iv.lo;
    out->delta_nll_hi = iv.hi;
    /* perplexity change exp(A) - exp(B) (A, B: mean NLLs): linearized, its
     * document-level influence is ppl_abl (a_g - n_g A) - ppl_base (b_g - n_g B),
     * i.e. the cluster ratio of ppl_abl a_g - ppl_base b_g (delta method) */
    for (int64_t g = 0; g < G; g++) gsum[g] = 0;
    for (int64_t w = 0; w < W; w++) gsum[doc[w]] += out->ppl_ablated * sums[2 * w + 1] - out->ppl_base * sums[2 * w];
    gs_interval ip = gs_cluster_t_interval(gsum, gn, G, 0.95);
    out->ci_low = out->delta_ppl - (ip.mean - ip.lo);
    out->ci_high = out->delta_ppl + (ip.hi - ip.mean);
    for (int k = 0; k < ABLATION_BUCKETS; k++) {
        per_doc(bsum, bcnt, k, doc, W, gsum, gn, G);
        gs_interval ib = gs_cluster_t_interval(gsum, gn, G, 0.95);
        int64_t nk = 0;
        for (int64_t g = 0; g < G; g++) nk += (int64_t)gn[g];
        out->bucket_tokens[k] = nk;
        out->bucket_delta_nll[k] = nk ? ib.mean : NAN;
        out->bucket_lo[k] = ib.lo;
        out->bucket_hi[k] = ib.hi;
    }

    /* controls: each draw's effect, their spread, and the effect beyond their
     * mean with a paired t-interval over documents */
    for (int slot = 0; slot < out->n_controls; slot++) {
        gs_ablation_control *c = &out->control[slot];
        int k = ctrl_k[slot];
        double ppl_sum = 0, sq = 0;
        c->mean = 0;
        c->min = INFINITY;
        c->max = -INFINITY;
        for (int64_t g = 0; g < G; g++) gsum[g] = gn[g] = 0;
        for (int r = 0; r < c->n; r++) {
            const double *cs = csum + (size_t)W * 2 * (k * n_draws + r);
            double a = 0;
            for (int64_t w = 0; w < W; w++) {
                a += cs[2 * w + 1];
                gsum[doc[w]] += (sums[2 * w + 1] - cs[2 * w + 1]) / c->n;
            }
            c->delta_nll[r] = (a - base) / (double)out->n_tokens;
            ppl_sum += exp(a / (double)out->n_tokens) - out->ppl_base;
            c->mean += c->delta_nll[r] / c->n;
            c->min = fmin(c->min, c->delta_nll[r]);
            c->max = fmax(c->max, c->delta_nll[r]);
        }
        for (int r = 0; r < c->n; r++) sq += (c->delta_nll[r] - c->mean) * (c->delta_nll[r] - c->mean);
        c->sd = c->n > 1 ? sqrt(sq / (c->n - 1)) : NAN;
        c->delta_ppl_mean = ppl_sum / c->n;
        for (int64_t w = 0; w < W; w++) gn[doc[w]] += (double)counts[w];
        gs_interval ie = gs_cluster_t_interval(gsum, gn, G, 0.95);
        c->excess = ie.mean;
        c->excess_lo = ie.lo;
        c->excess_hi = ie.hi;
    }

    const char *unit_note = out->by_document ? "95% t-interval over documents (df = documents - 1)"
                                             : "95% t-interval over windows (no BOS/EOS: documents unknown)";
    const struct { const char *k; double v; const char *note; } sc[] = {
        {"ppl_base", out->ppl_base, "the run's own NLL on the same tokens"},
        {"ppl_ablated", out->ppl_ablated, NULL},
        {"delta_ppl", out->delta_ppl, "ablated - base"},
        {"delta_ppl_ci_low", out->ci_low, "95% t-interval over documents of the delta-method linearization"},
        {"delta_ppl_ci_high", out->ci_high, "95% t-interval over documents of the delta-method linearization"},
        {"delta_nll", out->delta_nll, "mean NLL change per token (nats)"},
        {"delta_nll_ci_low", out->delta_nll_lo, unit_note},
        {"delta_nll_ci_high", out->delta_nll_hi, unit_note},
        {"n_units", (double)G, out->by_document ? "documents (the intervals' independent units)" : "windows (documents unknown)"},
        {"units_are_documents", (double)out->by_document, NULL},
        {"after_norm", heads_kind ? (double)!strcmp(out->heads_at, "after-norm") : NAN,
         "heads zeroed at the output of the read's RMSNorm (1) or before it (0)"},
        {"n_windows", (double)W, NULL},
        {"n_windows_run", (double)W_run, "windows run to keep the recording's batch layout"},
        {"n_tokens", (double)out->n_tokens, NULL},
    };
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++)
        if (store_analysis_scalar(st, an, sc[i].k, sc[i].v, sc[i].note)) goto rollback;
    for (int k = 0; k < out->n_controls; k++) {
        const gs_ablation_control *c = &out->control[k];
        const char *nm = gs_control_names[c->kind];
        char key[96];
        const struct { const char *suffix; double v; const char *note; } cs[] = {
            {"draws", (double)c->n, "random draws of this control"},
            {"delta_nll_mean", c->mean, "mean over draws of the mean NLL change"},
            {"delta_nll_sd", c->sd, "sd over draws"},
            {"delta_nll_min", c->min, NULL},
            {"delta_nll_max", c->max, NULL},
            {"delta_ppl_mean", c->delta_ppl_mean, NULL},
            {"excess_delta_nll", c->excess, "effect - mean control effect (nats per token)"},
            {"excess_ci_low", c->excess_lo, "95% paired t-interval over documents"},
            {"excess_ci_high", c->excess_hi, "95% paired t-interval over documents"},
        };
        for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
            snprintf(key, sizeof key, "control_%s_%s", nm, cs[i].suffix);
            if (store_analysis_scalar(st, an, key, cs[i].v, cs[i].note)) goto rollback;
        }
        double xr[ABLATION_MAX_CONTROLS];
        for (int r = 0; r < c->n; r++) xr[r] = r;
        snprintf(key, sizeof key, "control_%s_delta_nll", nm);
        if (store_analysis_series(st, an, key, xr, c->delta_nll, NULL, c->n)) goto rollback;
    }
    double bx[ABLATION_BUCKETS], by[ABLATION_BUCKETS], bn[ABLATION_BUCKETS], bl[ABLATION_BUCKETS], bh[ABLATION_BUCKETS];
    for (int k = 0; k < ABLATION_BUCKETS; k++) {
        bx[k] = bucket_lo[k];
        by[k] = out->bucket_delta_nll[k];
        bn[k] = (double)out->bucket_tokens[k];
        bl[k] = out->bucket_lo[k];
        bh[k] = out->bucket_hi[k];
    }
    if (store_analysis_series(st, an, "bucket_delta_nll", bx, by, gs_ablation_bucket_names, ABLATION_BUCKETS) ||
        store_analysis_series(st, an, "bucket_delta_nll_ci_low", bx, bl, gs_ablation_bucket_names, ABLATION_BUCKETS) ||
        store_analysis_series(st, an, "bucket_delta_nll_ci_high", bx, bh, gs_ablation_bucket_names, ABLATION_BUCKETS) ||
        store_analysis_series(st, an, "bucket_tokens", bx, bn, gs_ablation_bucket_names, ABLATION_BUCKETS))
        goto rollback;
    /* window -> document, so that anyone can redo the intervals; gsum and gn
     * (W long) are free for it now */
    for (int64_t w = 0; w < W; w++) { gsum[w] = tk.window_ids[w]; gn[w] = (double)doc[w]; }
    if (store_analysis_series(st, an, "window_document", gsum, gn, NULL, W)) goto rollback;
    if (store_commit(st)) goto done;
    rc = 0;
    goto done;
rollback:
    store_rollback(st);
done:
    free(tg.v);
    free(states);
    free(csum);
    free(ccnt);
    free(sums);
    free(counts);
    free(bsum);
    free(bcnt);
    free(doc);
    free(gsum);
    free(gn);
    free(nll);
    probe_set_free(ps);
    gs_engine_free(e);
    gs_model_free(m);
    store_token_array_free(&tk);
    return rc;
}
