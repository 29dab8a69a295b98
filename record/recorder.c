/* The recorder: a sink of the runner (probes/runner.h) that writes a
 * model's sites over a corpus into a store (record/recorder.h). */
#include "record/recorder.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/prng.h"
#include "engine/arch/family.h"
#include "io/corpora/corpus.h"
#include "engine/engine.h"
#include "io/tokenizer/tokenizer.h"
#include "probes/probes.h"
#include "probes/runner.h"
#include "probes/site_ref.h"
#include "store/lock.h"
#include "store/merge.h"
#include "store/store.h"

/* One recorded vector site: its rows go to the states table under `kind`
 * ("pred" and "ground" for the two states, as stores have always called
 * them; the site's own name for any other). Sites the backend keeps after a
 * step are read from it; the rest are captured through probes/. */
typedef struct {
    char kind[64];
    const gs_site *site;
    int layer, width;
    int every_position; /* a per-head scalar kept as an H-vector: every position, float32 */
    gs_head_select heads; /* [heads=...]: only these heads' slices, each per_head floats (probes/head_select.h) */
    int per_head;
    probe_capture *cap;
} vector_site;

#define MAX_RECORDED_SITES 64
typedef struct {
    vector_site vec[MAX_RECORDED_SITES];
    int n_vec;
    int head[3]; /* mem.alpha, mem.beta, mem.norm into head_steps */
    int any_head;
    char kinds[512]; /* the vector sites' kinds, comma-separated (runs.states) */
    int stride, sample_k; /* positions: stride K (1 = all) or K random per window */
} capture_plan;

static const gs_hook_point head_points[3] = {GS_HOOK_MEM_ALPHA, GS_HOOK_MEM_BETA, GS_HOOK_MEM_NORM};

/* What to record: --sites, or the older --states (pred, ground, both or
 * none) with the memory's per-head rows where the model has memory. */
static int add_site(capture_plan *p, const gs_config *c, const char *spec) {
    probe_site_ref ref;
    if (probe_site_ref_parse(c, spec, &ref)) return gs_fail_context("--sites: ");
    const gs_site *site = ref.site;
    const gs_head_select heads = ref.heads;
    const int layer = ref.layer;
    const char *name = ref.written;
    char selector[64];
    int stored_in_states = site->kind == GS_SITE_HEAD_VECTOR || (site->kind == GS_SITE_HEAD_SCALAR && site->per_layer);
    if (heads.n && !stored_in_states)
        return gs_fail("--sites: '%s': a head selector needs a per-head site stored per token (%s is a %s)", spec, name,
                       gs_site_kind_name(site->kind));
    if (gs_head_select_format(&heads, selector, sizeof selector)) return gs_fail("--sites: '%s': too many heads", spec);
    if (site->kind == GS_SITE_SCALAR) return 0; /* the NLL: always in the tokens table */
    if (site->kind == GS_SITE_HEAD_SCALAR && !site->per_layer) /* the memory's columns of head_steps */
        for (int i = 0; i < 3; i++)
            if (site->point == head_points[i]) return p->head[i] = p->any_head = 1, 0;
    for (int l = layer < 0 ? 0 : layer; l < (layer < 0 ? c->n_layers : layer + 1); l++) {
        if (p->n_vec == MAX_RECORDED_SITES) return gs_fail("--sites: at most %d vector sites", MAX_RECORDED_SITES);
        vector_site *v = &p->vec[p->n_vec];
        memset(v, 0, sizeof *v);
        v->site = site;
        v->layer = l;
        v->width = gs_site_width(site, c);
        /* other per-head scalars (a layer's decays) as H-vectors at every position, in float32: a
         * decay near 1 needs more than float16's 11 bits, and retention needs consecutive steps */
        v->every_position = site->kind == GS_SITE_HEAD_SCALAR;
        v->heads = heads;
        v->per_head = c->H > 0 ? v->width / c->H : v->width; /* a model without heads takes no selector */
        if (heads.n) v->width = heads.n * v->per_head;
        char formatted[64];
        probe_site_ref_name(&ref, l, formatted, sizeof formatted);
        _Static_assert(sizeof v->kind == STORE_KIND_MAX + 1, "a vector site's kind holds a states.kind");
        if (probe_site_ref_kind(&ref, l, v->kind, sizeof v->kind))
            return gs_fail("--sites: '%s%s' is longer than %d characters: select fewer heads", formatted, selector,
                           STORE_KIND_MAX);
        for (int i = 0; i < p->n_vec; i++)
            if (!strcmp(p->vec[i].kind, v->kind)) return gs_fail("--sites: %s is named twice", v->kind);
        snprintf(p->kinds + strlen(p->kinds), sizeof p->kinds - strlen(p->kinds), "%s%s", p->n_vec ? "," : "", v->kind);
        p->n_vec++;
    }
    return 0;
}

static int plan_sites(const gs_record_opts *o, const gs_config *c, capture_plan *p) {
    char list[1024];
    if (o->sites) snprintf(list, sizeof list, "%s", o->sites);
    else if (!o->states_given) { /* the family's state (its last layer's, if per layer) and its per-head rows */
        const gs_family *f = gs_family_of(c);
        const gs_site *state = gs_site_of_role(f, c, GS_ROLE_STATE);
        list[0] = 0;
        if (state) gs_site_format(state, c->n_layers - 1, list, sizeof list);
        for (int i = 0; i < f->n_sites; i++) {
            const gs_site *s = &f->sites[i];
            int stored = 0;
            for (int k = 0; k < 3; k++) stored |= s->point == head_points[k];
            if (s->kind == GS_SITE_HEAD_SCALAR && !s->per_layer && stored && gs_site_present(s, c))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? "," : "", s->name);
        }
    } else {
        const char *st = !strcmp(o->states, "pred,ground") || !strcmp(o->states, "ground,pred") ? "state.pred,state.ground"
                         : !strcmp(o->states, "pred")   ? "state.pred"
                         : !strcmp(o->states, "ground") ? "state.ground"
                         : !strcmp(o->states, "none")   ? ""
                                                        : NULL;
        if (!st) return gs_fail("--states '%s': use pred,ground, pred, ground or none", o->states);
        const gs_family *f = gs_family_of(c);
        const gs_site *mem = f ? gs_site_of_point(f, GS_HOOK_MEM_ALPHA) : NULL;
        int has_mem = mem && gs_site_present(mem, c); /* the memory's head rows go with the older spelling */
        snprintf(list, sizeof list, "%s%s%s", st, *st && has_mem ? "," : "", has_mem ? "mem.alpha,mem.beta,mem.norm" : "");
    }
    char name[256];
    int got;
    for (const char *cursor = list; (got = gs_sites_next(&cursor, name, sizeof name)) != 0;)
        if (got < 0 ? gs_fail_context("--sites: ") : add_site(p, c, name)) return -1;
    if (!p->kinds[0]) snprintf(p->kinds, sizeof p->kinds, "none");
    return 0;
}

static int parse_plan(const gs_record_opts *o, capture_plan *p) {
    memset(p, 0, sizeof *p);
    if (o->sites && o->states_given) return gs_fail("--sites and --states: give one (--states is the older spelling)");
    char *end;
    if (!strcmp(o->positions, "all")) p->stride = 1;
    else if (!strncmp(o->positions, "stride:", 7) && (p->stride = (int)strtol(o->positions + 7, &end, 10)) > 0 && !*end) {}
    else if (!strncmp(o->positions, "sample:", 7) && (p->sample_k = (int)strtol(o->positions + 7, &end, 10)) > 0 && !*end) {}
    else return gs_fail("--positions '%s': use all, stride:K or sample:K with K >= 1", o->positions);
    if (strcmp(o->dtype, "f32") && strcmp(o->dtype, "f16")) return gs_fail("--dtype '%s': use f32 or f16", o->dtype);
    return 0;
}

/* Positions of one window whose states are kept (flags[T]); sample:K draws K
 * distinct positions from a generator seeded by (seed, window), so a resumed
 * run keeps the same ones. */
static void choose_positions(const capture_plan *p, uint64_t seed, int64_t window, int T, unsigned char *flags) {
    if (!p->sample_k) {
        for (int t = 0; t < T; t++) flags[t] = t % p->stride == 0;
        return;
    }
    memset(flags, 0, (size_t)T);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + (uint64_t)window * 0xbf58476d1ce4e5b9ull + 1;
    int want = p->sample_k < T ? p->sample_k : T;
    for (int got = 0; got < want;) {
        x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 27; x *= 0x94d049bb133111ebull; x ^= x >> 31;
        int t = (int)(x % (uint64_t)T);
        if (!flags[t]) { flags[t] = 1; got++; }
    }
}

static char *settings_json(const gs_record_opts *o, const gs_corpus *c) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "seq_len", (double)o->seq_len);
    cJSON_AddNumberToObject(j, "windows", (double)corpus_n_windows(c));
    cJSON_AddNumberToObject(j, "skip", (double)o->skip);
    cJSON_AddNumberToObject(j, "sample", (double)o->sample);
    /* the selection --sample drew from (0: all), so a control can draw the same windows */
    if (o->sample) cJSON_AddNumberToObject(j, "windows_requested", (double)o->windows);
    cJSON_AddNumberToObject(j, "seed", (double)o->seed);
    cJSON_AddStringToObject(j, "states", o->states);
    /* only when given, so a run recorded before --sites existed still resumes */
    if (o->sites) cJSON_AddStringToObject(j, "sites", o->sites);
    cJSON_AddStringToObject(j, "positions", o->positions);
    cJSON_AddStringToObject(j, "dtype", o->dtype);
    /* the device is part of the settings: a resumed run continues on the same one */
    cJSON_AddStringToObject(j, "device", o->device);
    if (o->precision) cJSON_AddStringToObject(j, "precision", o->precision);
    if (o->n_shards) { /* gpnscope merge takes it out again: the merged run's settings are a one-process run's */
        cJSON *sh = cJSON_AddObjectToObject(j, "shard");
        cJSON_AddNumberToObject(sh, "rank", o->shard);
        cJSON_AddNumberToObject(sh, "of", o->n_shards);
        cJSON_AddNumberToObject(sh, "batch", o->batch); /* the split is by batches: resume with the same */
    }
    cJSON_AddStringToObject(j, "corpus_format", corpus_format_name(corpus_get_format(c)));
    if (o->field) cJSON_AddStringToObject(j, "field", o->field);
    if (o->separator) cJSON_AddStringToObject(j, "separator", o->separator);
    /* only when per document, so a run of windows recorded before it existed still resumes */
    if (o->per_document) cJSON_AddStringToObject(j, "window_unit", o->per_document == 2 ? "line" : "document");
    if (o->control) {
        cJSON *ctl = cJSON_AddObjectToObject(j, "control");
        cJSON_AddStringToObject(ctl, "kind", o->control);
        cJSON_AddNumberToObject(ctl, "of", (double)o->control_of);
        cJSON_AddNumberToObject(ctl, "seed", (double)o->control_seed);
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

typedef struct {
    gs_model *model;
    gs_tokenizer *tok;
    gs_corpus *corpus;
    store *st;
    gs_engine *engine;
    probe_set *probes;
    store_lock *lock; /* the run's recording lock, held until the end */
} resources;

static void release(resources *r) {
    probe_set_free(r->probes);
    gs_engine_free(r->engine);
    store_close(r->st);
    store_lock_release(r->lock);
    corpus_free(r->corpus);
    tokenizer_free(r->tok);
    gs_model_free(r->model);
}

/* Models, tokenizer, corpus, vocabulary and unigram counts; returns the run id. */
/* run_sites: what this run records and where each site lives (docs/schema.md) */
static int put_sites(store *st, int64_t run, const capture_plan *p, const gs_config *c, const char *dtype) {
    const gs_family *f = gs_family_of(c);
    for (int i = 0; i < p->n_vec; i++) {
        const vector_site *v = &p->vec[i];
        store_site x = {.layer = v->site->per_layer ? v->layer : -1, .width = v->width};
        snprintf(x.site, sizeof x.site, "%s", v->kind); /* the site's name, with its head selector */
        if (!v->heads.n) gs_site_format(v->site, v->layer, x.site, sizeof x.site);
        snprintf(x.shape, sizeof x.shape, "%s", gs_site_kind_name(v->site->kind));
        snprintf(x.dtype, sizeof x.dtype, "%s", v->every_position ? "f32" : dtype);
        snprintf(x.stored_in, sizeof x.stored_in, "states");
        snprintf(x.stored_as, sizeof x.stored_as, "%s", v->kind);
        snprintf(x.role, sizeof x.role, "%s", v->site->role == GS_ROLE_STATE ? "state" : v->site->role == GS_ROLE_DECAY ? "decay" : "");
        if (store_put_site(st, run, &x)) return -1;
    }
    static const char *const cols[3] = {"alpha", "beta", "mem_norm"};
    for (int i = 0; i < 3; i++) {
        if (!p->head[i]) continue;
        const gs_site *s = gs_site_of_point(f, head_points[i]);
        store_site x = {.layer = -1, .width = c->H};
        snprintf(x.site, sizeof x.site, "%s", s->name);
        snprintf(x.shape, sizeof x.shape, "per-head scalar");
        snprintf(x.stored_in, sizeof x.stored_in, "head_steps");
        snprintf(x.stored_as, sizeof x.stored_as, "%s", cols[i]);
        snprintf(x.role, sizeof x.role, "%s", s->role == GS_ROLE_DECAY ? "decay" : "");
        if (store_put_site(st, run, &x)) return -1;
    }
    store_site nll = {.site = "nll", .shape = "scalar", .layer = -1, .width = 1, .stored_in = "tokens", .stored_as = "nll"};
    return store_put_site(st, run, &nll);
}

static int64_t register_run(const gs_record_opts *o, const capture_plan *plan, resources *r, const char *settings,
                            int64_t begin, int64_t *first_window) {
    store *st = r->st;
    const gs_model *m = r->model;
    const gs_config *c = &m->cfg;
    /* one process per run: the run to resume is locked before the batch
     * (whose write lock a stopped recorder may hold) and checked inside it */
    int64_t to_resume = o->resume ? store_last_run(st, 1) : 0;
    if (to_resume < 0 || (to_resume > 0 && !(r->lock = store_lock_run(o->db, to_resume, "gpnscope record")))) return -1;
    if (store_begin(st)) return -1;
    store_model sm = {.path = o->model, .sha256 = m->hash, .arch = gs_family_of(c)->store_name,
                      .n_layers = c->n_layers, .d_state = c->d, .d_emb = c->e, .d_ffn = c->f, .n_heads = c->H,
                      .d_key = c->dk, .d_val = c->dv, .vocab_size = c->V, .n_params = (int64_t)m->n_params,
                      .dtype = m->source_dtype};
    int64_t model_id = store_add_model(st, &sm), tok_id = 0;
    if (model_id < 0) goto fail;
    if (r->tok) {
        store_tokenizer t = {.path = o->tokenizer, .sha256 = tokenizer_hash(r->tok), .kind = tokenizer_format(r->tok),
                             .vocab_size = tokenizer_vocab_size(r->tok)};
        if ((tok_id = store_add_tokenizer(st, &t)) < 0) goto fail;
        for (int32_t id = 0; id < tokenizer_vocab_size(r->tok); id++) {
            const char *piece = tokenizer_piece(r->tok, id);
            if (store_put_piece(st, tok_id, id, piece, strlen(piece))) goto fail;
        }
    }
    const char *chash = corpus_hash(r->corpus);
    if (!chash) goto fail;
    store_corpus sc = {.path = o->corpus, .sha256 = chash, .kind = corpus_format_name(corpus_get_format(r->corpus)),
                       .n_tokens = corpus_total_tokens(r->corpus), .tokenizer_id = tok_id};
    int64_t corpus_id = store_add_corpus(st, &sc);
    if (corpus_id < 0) goto fail;
    int64_t run = 0;
    *first_window = begin;
    if (o->resume) {
        run = store_last_run(st, 1);
        if (run == 0) { gs_fail("%s: --resume: no unfinished run in this store", o->db); goto fail; }
        if (run != to_resume) {
            gs_fail("%s: --resume: the newest unfinished run changed while starting (run %lld, now %lld): try again",
                    o->db, (long long)to_resume, (long long)run);
            goto fail;
        }
        store_run_info info;
        if (store_run_get(st, run, &info)) goto fail;
        const char *thash = r->tok ? tokenizer_hash(r->tok) : "";
        if (strcmp(info.tokenizer_sha256, thash)) {
            gs_fail("%s: --resume: run %lld was recorded %s%.12s%s, but this recording %s%.12s%s: resume with the "
                    "run's tokenizer, or record a new run without --resume", o->db, (long long)run,
                    info.tokenizer_sha256[0] ? "with tokenizer sha256 " : "without a tokenizer", info.tokenizer_sha256,
                    info.tokenizer_sha256[0] ? "..." : "", thash[0] ? "has tokenizer sha256 " : "has no tokenizer",
                    thash, thash[0] ? "..." : "");
            goto fail;
        }
        if (strcmp(info.corpus_sha256, chash)) {
            gs_fail("%s: --resume: run %lld recorded a different corpus (sha256 %.12s..., this one %.12s...)", o->db,
                    (long long)run, info.corpus_sha256, chash);
            goto fail;
        }
        if ((*first_window = store_resume_run_at(st, run, m->hash, settings, begin)) < 0) goto fail;
    } else {
        int64_t *counts = calloc((size_t)c->V, sizeof *counts);
        if (!counts || corpus_unigram_counts(r->corpus, c->V, counts) || store_put_unigram_counts(st, corpus_id, counts, c->V)) {
            free(counts);
            goto fail;
        }
        free(counts);
        store_run sr = {.model_id = model_id, .tokenizer_id = tok_id, .corpus_id = corpus_id, .kind = "record",
                        .settings_json = settings, .seq_len = (int)o->seq_len, .batch = o->batch,
                        .n_windows = corpus_n_windows(r->corpus), .states = o->recorded, .positions = o->positions,
                        .state_dtype = o->dtype, .device = o->device, .d_state = c->d, .n_heads = c->H,
                        .code_version = o->code_version};
        if ((run = store_begin_run(st, &sr)) < 0 || put_sites(st, run, plan, c, o->dtype)) goto fail;
        /* locked before the run is committed, so no --resume can see it unlocked */
        if (!(r->lock = store_lock_run(o->db, run, "gpnscope record"))) goto fail;
    }
    if (store_commit(st)) return -1;
    return run;
fail:
    store_rollback(st);
    return -1;
}

/* The recorder as a sink of the runner (probes/runner.h): each batch of
 * windows is one transaction; a window's row is written last, in the batch
 * that completes it, so an interrupted run resumes at a batch boundary. */
typedef struct {
    const gs_record_opts *o;
    const capture_plan *plan;
    resources *r;
    int64_t run;
    store_dtype dt;
    unsigned char *keep;        /* B x T: positions whose states are kept */
    int64_t *len;               /* B: the batch's windows' real tokens (T but per document) */
    int64_t tokens;             /* real tokens of the range's windows done so far */
    unsigned char want[4096];   /* this step's rows whose states are kept: only those leave a GPU */
    store_token_row *rows;
    int64_t begin;              /* the first window of the range (a shard's; 0) */
    float *gather; /* one row of the widest head-selected site */
} recorder;

static const float *site_rows(gs_engine *e, const vector_site *v) {
    return v->cap ? v->cap->data : gs_engine_site(e, v->site->point);
}

static int rec_begin(void *ctx, int64_t w0, int nb, const int32_t *tokens) {
    (void)tokens;
    recorder *k = ctx;
    int T = (int)k->o->seq_len;
    for (int b = 0; b < nb; b++) { /* positions among the real ones only */
        k->len[b] = corpus_window_len(k->r->corpus, w0 + b);
        memset(k->keep + (size_t)b * T, 0, (size_t)T);
        choose_positions(k->plan, k->o->seed, w0 + b, (int)k->len[b], k->keep + (size_t)b * T);
    }
    return store_begin(k->r->st);
}

static int rec_before_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t) {
    (void)e, (void)w0;
    recorder *k = ctx;
    for (int b = 0; b < nb; b++) k->want[b] = k->keep[(size_t)b * k->o->seq_len + t];
    return 0;
}

static int rec_after_step(void *ctx, gs_engine *e, int64_t w0, int nb, int t, const int32_t *tokens) {
    recorder *k = ctx;
    const gs_config *c = &k->r->model->cfg;
    int T = (int)k->o->seq_len;
    gs_step_out out = gs_engine_out(e);
    const capture_plan *p = k->plan;
    const float *head[3] = {NULL, NULL, NULL}, *vec[MAX_RECORDED_SITES];
    for (int i = 0; i < 3; i++)
        if (p->head[i] && !(head[i] = gs_engine_site(e, head_points[i]))) return gs_fail("the engine kept no per-head rows");
    for (int i = 0; i < p->n_vec; i++)
        if (!(vec[i] = site_rows(e, &p->vec[i]))) return gs_fail("the engine kept no rows of %s", p->vec[i].kind);
    int n = 0;
    for (int b = 0; b < nb; b++) {
        if (t >= k->len[b]) continue; /* padding past a document's end: nothing recorded */
        int32_t w = (int32_t)(w0 + b);
        int32_t next = t + 1 < k->len[b] ? tokens[(size_t)b * T + t + 1] : -1;
        k->rows[n++] = (store_token_row){w, t, tokens[(size_t)b * T + t], next, out.top1[b], out.nll[b], out.entropy[b]};
        size_t hb = (size_t)b * c->H;
        if (p->any_head && store_put_head_steps(k->r->st, k->run, w, t, c->H, head[0] ? head[0] + hb : NULL,
                                                head[1] ? head[1] + hb : NULL, head[2] ? head[2] + hb : NULL))
            return -1;
        for (int i = 0; i < p->n_vec; i++) {
            const vector_site *v = &p->vec[i];
            if (!k->want[b] && !v->every_position) continue;
            const float *row = vec[i] + (size_t)b * (v->heads.n ? v->per_head * c->H : v->width);
            if (v->heads.n) gs_head_select_gather(&v->heads, row, v->per_head, k->gather), row = k->gather;
            if (store_put_state(k->r->st, k->run, w, t, v->kind, v->every_position ? STORE_F32 : k->dt, row, v->width))
                return -1;
        }
    }
    return store_put_tokens(k->r->st, k->run, k->rows, n);
}

static int rec_end(void *ctx, int64_t w0, int nb) {
    recorder *k = ctx;
    for (int b = 0; b < nb; b++) {
        if (store_window_done(k->r->st, k->run, (int32_t)(w0 + b), corpus_window_offset(k->r->corpus, w0 + b), (int)k->len[b]))
            return -1;
        k->tokens += k->len[b];
    }
    int64_t done = w0 + nb - k->begin; /* windows of this recording's range (all of a one-process run's) */
    return store_run_progress(k->r->st, k->run, done, k->tokens) || store_commit(k->r->st);
}

/* Sites the backend keeps (gs_site.kept) are read from it after each step,
 * asking a CUDA backend to copy only the kept rows; every other site is a
 * capture through probes/. */
static int plan_captures(capture_plan *p, resources *r, const unsigned char *rows) {
    int outputs = 0;
    for (int i = 0; i < p->n_vec; i++) {
        vector_site *v = &p->vec[i];
        if (v->site->kept && !v->site->per_layer) {
            outputs |= v->site->point == GS_HOOK_LOGITS ? GS_OUT_LOGITS : GS_OUT_STATES;
            continue;
        }
        if (!r->probes && !(r->probes = probe_set_new(r->engine))) return -1;
        if (!(v->cap = probe_capture_site(r->probes, v->site, v->layer))) return -1;
    }
    gs_engine_set_outputs(r->engine, outputs, rows);
    return 0;
}

/* The shuffled control's windows: tokens 1..n-1 of each window (n its real
 * length: a document's, per document) permuted by Fisher-Yates from a
 * generator seeded by (seed, the window's corpus index), so a resumed run
 * and every rank see the same text; token 0 (BOS) and the padding stay. */
typedef struct {
    const gs_corpus *corpus;
    uint64_t seed;
} shuffled_windows;

static int shuffled_window(void *ctx, int64_t w, int32_t *tokens) {
    const shuffled_windows *s = ctx;
    if (corpus_window(s->corpus, w, tokens)) return -1;
    uint64_t x = s->seed * 0x9e3779b97f4a7c15ull + (uint64_t)corpus_window_index(s->corpus, w) * 0xbf58476d1ce4e5b9ull;
    for (int i = (int)corpus_window_len(s->corpus, w) - 1; i > 1; i--) {
        int j = 1 + (int)(gs_splitmix64(&x) % (uint64_t)i);
        int32_t t = tokens[i];
        tokens[i] = tokens[j];
        tokens[j] = t;
    }
    return 0;
}

static int64_t shuffled_window_len(void *ctx, int64_t w) {
    return corpus_window_len(((const shuffled_windows *)ctx)->corpus, w);
}

/* Progress in real tokens (per document, padding is not counted) */
typedef struct {
    gs_record_progress fn;
    void *ctx;
    const recorder *rec;
    int64_t before, total; /* rec->tokens when this call began; the tokens it records */
} rec_progress;

static int show_progress(void *ctx, int64_t done, int64_t total) {
    (void)done, (void)total;
    rec_progress *p = ctx;
    if (p->fn) p->fn(p->ctx, p->rec->tokens - p->before, p->total);
    return 0;
}

/* The store's newest run when it is complete, of this model and these
 * settings and no unfinished run is newer; else 0 (-1 on a read error). */
static int64_t complete_shard(store *st, const char *model_sha256, const char *settings) {
    int64_t last = store_last_run(st, STORE_RUN_ANY);
    if (last <= 0 || store_last_run(st, STORE_RUN_UNFINISHED) > 0) return last < 0 ? -1 : 0;
    store_run_info info;
    if (store_run_get(st, last, &info)) return -1;
    char *recorded = store_run_settings(st, last);
    char *a = recorded ? store_canonical_json(recorded) : NULL, *b = store_canonical_json(settings);
    int same = a && b && !strcmp(a, b) && !strcmp(info.model_sha256, model_sha256) && !strcmp(info.status, "complete");
    free(recorded);
    free(a);
    free(b);
    return same ? last : 0;
}

/* --per-line: text split on newlines, a JSONL corpus's lines are its
 * documents already, shards have none. Returns 0, or 2 with gs_error(). */
static int per_line_corpus(gs_record_opts *o) {
    if (o->per_document != 2) return 0;
    corpus_format f = corpus_detect(o->corpus);
    if (f == CORPUS_SHARDS)
        return gs_fail("--per-line: %s is a shard corpus, whose documents come from its index files, not lines: use "
                       "--per-document", o->corpus), 2;
    if (o->separator) return gs_fail("--per-line splits on newlines: give it or --separator, not both"), 2;
    if (f == CORPUS_JSONL) o->per_document = 1; /* the same recording as --per-document */
    else o->separator = "\n";
    return 0;
}

/* Real tokens of selected windows [from, to). */
static int64_t tokens_of(const gs_corpus *c, int64_t from, int64_t to) {
    int64_t n = 0;
    for (int64_t i = from; i < to; i++) n += corpus_window_len(c, i);
    return n;
}

void gs_record_opts_default(gs_record_opts *o) {
    memset(o, 0, sizeof *o);
    o->seq_len = 2048;
    o->seed = 1;
    o->batch = 16;
    o->states = "pred";
    o->positions = "all";
    o->dtype = "f32";
    o->device = "cpu";
}

int gs_record(const gs_record_opts *opts, gs_record_progress progress_fn, void *progress_ctx,
              const volatile sig_atomic_t *stop, gs_record_result *res) {
    gs_record_opts o = *opts;
    memset(res, 0, sizeof *res);
    res->run = -1;
    if (gs_device_parse(o.device, o.precision, &o.dev)) return 2;
    capture_plan plan;
    if (parse_plan(&o, &plan) || per_line_corpus(&o)) return 2;
    resources r = {0};
    int rc = 1;
    int64_t run = -1;
    char *settings = NULL;
    unsigned char *keep = NULL;
    store_token_row *rows = NULL;
    int64_t *lens = NULL;
    float *gather = NULL;
    if (!(r.model = gs_model_load(o.model))) goto out;
    /* a task model's symbols are no tokenizer's pieces (a shard corpus of its symbols records it) */
    if (o.tokenizer && gs_family_require_lm(&r.model->cfg, o.model, "record --tokenizer")) goto out;
    if (plan_sites(&o, &r.model->cfg, &plan)) {
        rc = 2;
        goto out;
    }
    o.recorded = plan.kinds;
    if (o.tokenizer && !(r.tok = tokenizer_load(o.tokenizer))) goto out;
    if (r.tok && tokenizer_vocab_size(r.tok) != r.model->cfg.V) {
        gs_fail("tokenizer %s has %d pieces but model %s has vocabulary %d", o.tokenizer, tokenizer_vocab_size(r.tok),
                o.model, r.model->cfg.V);
        goto out;
    }
    corpus_options co;
    corpus_options_default(&co);
    co.by_document = o.per_document != 0;
    co.seq_len = co.by_document && !o.seq_len_given ? 0 : o.seq_len; /* 0: the longest document */
    co.windows = o.windows;
    co.skip = o.skip;
    co.sample = o.sample;
    co.seed = o.seed;
    co.vocab_size = r.model->cfg.V;
    if (o.field) co.field = o.field;
    if (o.separator) co.separator = o.separator;
    if (!(r.corpus = corpus_open(o.corpus, r.tok, &co))) goto out;
    res->seq_len = o.seq_len = corpus_seq_len(r.corpus);
    res->n_cut = corpus_n_cut(r.corpus, &res->cut_tokens);
    int64_t n_windows = corpus_n_windows(r.corpus), begin = 0, end = n_windows;
    int B = o.batch < n_windows ? o.batch : (int)(n_windows ? n_windows : 1);
    if (o.n_shards) { /* whole batches of a one-process recording (store/merge.h) */
        if (o.shard < 0 || o.shard >= o.n_shards) { gs_fail("shard %d of %d: no such rank", o.shard, o.n_shards); goto out; }
        store_shard_range(n_windows, o.n_shards, o.shard, B, &begin, &end);
    }
    res->begin = begin;
    res->end = end;
    /* the engine (the device) first: a device that cannot start leaves no run behind */
    if (!(r.engine = gs_engine_new_on(r.model, B, &o.dev))) goto out;
    if (!(r.st = store_open(o.db, STORE_WRITE | STORE_CREATE))) goto out;
    settings = settings_json(&o, r.corpus);
    if (o.resume && o.n_shards) { /* a shard that finished before its job failed: nothing left to do */
        int64_t done_run = complete_shard(r.st, r.model->hash, settings);
        if (done_run < 0) goto out;
        if (done_run > 0) {
            res->run = run = done_run;
            res->first = res->windows_done = end;
            res->n_windows = n_windows;
            rc = 0;
            goto out;
        }
    }
    int64_t first = 0;
    run = register_run(&o, &plan, &r, settings, begin, &first);
    if (run < 0) goto out;
    keep = malloc((size_t)B * o.seq_len);
    rows = malloc((size_t)B * sizeof *rows);
    lens = malloc((size_t)B * sizeof *lens);
    int widest = 1;
    for (int i = 0; i < plan.n_vec; i++) widest = plan.vec[i].width > widest ? plan.vec[i].width : widest;
    gather = malloc((size_t)widest * sizeof *gather);
    if (!keep || !rows || !gather || !lens) { gs_fail("out of memory"); goto out; }

    recorder rec = {&o, &plan, &r, run, strcmp(o.dtype, "f16") ? STORE_F32 : STORE_F16, keep, lens,
                    tokens_of(r.corpus, begin, first), {0}, rows, begin, gather};
    if (plan_captures(&plan, &r, rec.want)) goto out;
    runner_sink sink = {&rec, rec_begin, rec_before_step, rec_after_step, rec_end, NULL};
    rec_progress rp = {progress_fn, progress_ctx, &rec, rec.tokens, tokens_of(r.corpus, first, end)};
    runner_opts ro = {.engine = r.engine, .T = (int)o.seq_len, .first = first, .total = end,
                      .window = runner_corpus_window, .window_ctx = r.corpus, .progress = show_progress,
                      .progress_ctx = &rp, .stop = stop,
                      /* per document: a batch stops after its longest document */
                      .window_len = o.per_document ? runner_corpus_window_len : NULL};
    shuffled_windows shuffled = {r.corpus, o.control_seed};
    if (o.control && !strcmp(o.control, "shuffled")) {
        ro.window = shuffled_window, ro.window_ctx = &shuffled;
        if (ro.window_len) ro.window_len = shuffled_window_len;
    }
    int64_t w = first;
    res->run = run;
    res->first = first;
    res->n_windows = n_windows;
    int run_rc = runner_run(&ro, &sink, 1, &w);
    res->windows_done = w;
    res->tokens = rec.tokens - rp.before;
    res->tokens_total = rp.total;
    if (run_rc < 0) {
        char msg[GS_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", gs_error());
        store_rollback(r.st);
        store_finish_run(r.st, run, "failed", msg);
        gs_fail("%s", msg);
        goto out;
    }
    if (w < end) {
        store_finish_run(r.st, run, "interrupted", "stopped by a signal; continue with --resume");
        rc = 130;
        goto out;
    }
    if (store_finish_run(r.st, run, "complete", NULL)) goto out;
    rc = 0;
out:
    res->run = run;
    if (rc == 1) {
        char msg[GS_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", gs_error());
        /* a run that failed before or between batches is not left 'running' */
        store_run_info ri;
        if (run > 0 && r.st && store_run_get(r.st, run, &ri) == 0 && !strcmp(ri.status, "running"))
            store_finish_run(r.st, run, "failed", msg);
        res->resumable = run > 0 && r.st && store_run_get(r.st, run, &ri) == 0 && strcmp(ri.status, "complete");
        if (res->resumable) res->windows_done = res->begin + ri.windows_done;
        gs_fail("%s", msg);
    }
    free(settings);
    free(keep);
    free(rows);
    free(lens);
    free(gather);
    release(&r);
    return rc;
}
