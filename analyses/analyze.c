#include "analyses/analyze.h"

#include "analyses/decay_init.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/documents.h"
#include "analyses/report.h"
#include "analyses/retention_store.h"
#include "analyses/train_counts.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "base/text.h"

void gs_analyze_opts_default(gs_analyze_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_states = 16384;
    o->seed = 1;
    o->kind = NULL;
    o->probe_max_lag = 256;
    o->probe_splits = 5;
}

int gs_analyze_parse_parts(const char *list, unsigned *parts) {
    static const gs_flag_name names[] = {
        {"geometry", GS_AN_GEOMETRY}, {"default", GS_AN_DEFAULT},   {"horizon", GS_AN_HORIZON},
        {"horizons", GS_AN_HORIZON},  {"retention", GS_AN_RETENTION}, {"probe", GS_AN_PROBE},
        {"all", GS_AN_ALL},
    };
    const char *bad;
    int len;
    if (gs_parse_flag_list(list, names, sizeof names / sizeof *names, 0, parts, &bad, &len))
        return gs_fail("unknown analysis '%.*s' (choose from geometry, default, horizon, retention, probe)", len, bad);
    if (!*parts) return gs_fail("no analysis named in '%s'", list ? list : "");
    return 0;
}

/* ---------- a state source over a store run ---------- */

typedef struct {
    gs_state_source src; /* first: the source handed out */
    store *st;
    int64_t run;
    char kind[STORE_KIND_MAX + 1];
    int skip, ground; /* ground: kind is "ground" */
    int64_t max, delivered;
    store_states *rd;
    int32_t *w32, *p32;
    int64_t cap;
} store_src;

static int ss_rewind(void *ctx) {
    store_src *s = ctx;
    store_states_close(s->rd);
    s->rd = store_states_open(s->st, s->run, s->kind, -1, -1);
    s->delivered = 0;
    return s->rd ? 0 : -1;
}

static int64_t ss_next(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap) {
    store_src *s = ctx;
    const int d = s->src.d;
    if (cap > s->cap) {
        free(s->w32);
        free(s->p32);
        s->w32 = malloc((size_t)cap * sizeof *s->w32);
        s->p32 = malloc((size_t)cap * sizeof *s->p32);
        if (!s->w32 || !s->p32) return gs_fail("out of memory");
        s->cap = cap;
    }
    int64_t n = 0;
    while (n == 0) {
        int64_t want = cap;
        if (s->max > 0 && s->max - s->delivered < want) want = s->max - s->delivered;
        if (want <= 0) return 0;
        int64_t k = store_states_read(s->rd, rows, s->w32, s->p32, want);
        if (k <= 0) return k;
        for (int64_t i = 0; i < k; i++) {
            if (s->p32[i] < s->skip) continue;
            if (n != i) memmove(rows + n * d, rows + i * d, (size_t)d * sizeof *rows);
            window[n] = s->w32[i];
            /* analyses count a state's position as the tokens it has read: a
             * 'pred' state at store position p was made from tokens 0..p-1
             * (docs/schema.md), a 'ground' state has also read token p */
            pos[n] = s->p32[i] + s->ground;
            n++;
        }
        s->delivered += n;
    }
    return n;
}

gs_state_source *gs_store_source_open(store *st, int64_t run_id, const char *kind, int skip_positions,
                                      int64_t max_states) {
    store_src *s = calloc(1, sizeof *s);
    if (!s) { gs_fail("out of memory"); return NULL; }
    s->st = st;
    s->run = run_id;
    snprintf(s->kind, sizeof s->kind, "%s", kind ? kind : "pred");
    s->ground = strcmp(s->kind, "ground") == 0;
    s->skip = skip_positions > 0 ? skip_positions : 0;
    s->max = max_states;
    s->rd = store_states_open(st, run_id, s->kind, -1, -1);
    if (!s->rd) { free(s); return NULL; }
    int d = store_states_dim(s->rd);
    if (d <= 0) {
        store_states_close(s->rd);
        free(s);
        const char *want = kind ? kind : "pred", *other = strcmp(want, "ground") ? "ground" : "pred";
        store_run_info info;
        const char *has = store_run_get(st, run_id, &info) == 0 ? info.states : "?";
        /* a run that kept the other state only: name the option that reads it */
        if (store_count_states(st, run_id, other) > 0)
            gs_fail("run %lld has no '%s' states but has '%s' ones (it recorded: %s): analyse those with --kind %s "
                    "(or --site), or record with --states %s", (long long)run_id, want, other, has, other, want);
        else
            gs_fail("run %lld has no '%s' states (it recorded: %s): record the site with record --sites (or --states "
                    "%s), or analyze another with --site", (long long)run_id, want, has, want);
        return NULL;
    }
    s->src.d = d;
    s->src.ctx = s;
    s->src.rewind = ss_rewind;
    s->src.next = ss_next;
    return &s->src;
}

void gs_store_source_close(gs_state_source *src) {
    if (!src) return;
    store_src *s = (store_src *)src;
    store_states_close(s->rd);
    free(s->w32);
    free(s->p32);
    free(s);
}

/* ---------- running the parts ---------- */

static void note(gs_analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gs_analysis *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(a->notes, sizeof a->notes, fmt, ap);
    va_end(ap);
}

void gs_analysis_free(gs_analysis *a) {
    gpn_model_free(a->model);
    gs_geometry_free(&a->geometry);
    gs_default_dir_free(&a->default_dir);
    gs_horizons_free(&a->horizons);
    gs_retention_free(&a->retention);
    gs_probe_free(&a->probe);
    memset(a, 0, sizeof *a);
}

/* The model file recorded with the run, or the one given; checked against the run's hash. */
static gpn_model *load_model(store *st, const store_run_info *info, const char *given) {
    char path[4096] = "";
    if (given) {
        snprintf(path, sizeof path, "%s", given);
    } else {
        if (info->model_id <= 0) { gs_fail("run %lld names no model: give one with --model", (long long)info->id); return NULL; }
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(store_db(st), "SELECT path FROM models WHERE id = ?1", -1, &s, NULL) != SQLITE_OK) {
            gs_fail("%s: reading the run's model: %s", store_path(st), sqlite3_errmsg(store_db(st)));
            return NULL;
        }
        sqlite3_bind_int64(s, 1, info->model_id);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(path, sizeof path, "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        if (!path[0]) {
            gs_fail("run %lld's model has no file path in the store: give it with --model", (long long)info->id);
            return NULL;
        }
    }
    gpn_model *m = gpn_model_load(path);
    if (!m) { gs_fail_context("loading the run's model %s: ", path); return NULL; }
    if (info->model_sha256[0] && strcmp(info->model_sha256, m->hash) != 0) {
        gs_fail("the model %s (sha256 %.12s...) is not the one run %lld was recorded with (%.12s...): pass that "
                "model with --model",
                path, m->hash, (long long)info->id, info->model_sha256);
        gpn_model_free(m);
        return NULL;
    }
    return m;
}

/* decays as rows of consecutive positions per window: each window is cut at
 * its first position with a missing value */
/* The run's site of a role (its stored name), or `fallback` when the run
 * records none (a store from before schema 2 that recorded nothing of it). */
static const char *site_of_role(store *st, int64_t run, const char *role, int want_stored_as, const char *fallback,
                                char *buf, size_t size) {
    store_site x;
    if (store_site_of_role(st, run, role, &x) != 0) return fallback;
    snprintf(buf, size, "%s", want_stored_as ? x.stored_as : x.site);
    return buf;
}

static int read_decays(store *st, int64_t run, const char *site, float **alpha, float **beta, int64_t **ws, int *nw,
                       int *H) {
    store_head_array A = {0}, B = {0};
    *alpha = *beta = NULL;
    *ws = NULL;
    if (store_read_site_heads(st, run, site, &A) != 0) return -1;
    char bsite[72];
    size_t n = strlen(site);
    snprintf(bsite, sizeof bsite, "%.*sbeta", (int)(n >= 5 && !strcmp(site + n - 5, "alpha") ? n - 5 : n), site);
    int have_beta = store_read_site_heads(st, run, bsite, &B) == 0 && B.n_windows == A.n_windows &&
                    B.n_positions == A.n_positions && B.n_heads == A.n_heads;
    const int64_t P = A.n_positions, h = A.n_heads;
    float *a = malloc((size_t)(A.n_windows * P * h) * sizeof *a);
    float *b = have_beta ? malloc((size_t)(A.n_windows * P * h) * sizeof *b) : NULL;
    int64_t *start = malloc((size_t)(A.n_windows + 1) * sizeof *start);
    if (!a || !start || (have_beta && !b)) {
        free(a); free(b); free(start);
        store_head_array_free(&A);
        store_head_array_free(&B);
        return gs_fail("out of memory for the decays");
    }
    int64_t rows = 0;
    for (int64_t w = 0; w < A.n_windows; w++) {
        start[w] = rows;
        for (int64_t p = 0; p < P; p++) {
            const float *src = A.values + (w * P + p) * h;
            int ok = 1;
            for (int64_t k = 0; k < h; k++) ok &= !isnan(src[k]);
            if (!ok) break;
            memcpy(a + rows * h, src, (size_t)h * sizeof *a);
            if (b) {
                const float *sb = B.values + (w * P + p) * h;
                for (int64_t k = 0; k < h; k++) b[rows * h + k] = isnan(sb[k]) ? 0.0f : sb[k];
            }
            rows++;
        }
    }
    start[A.n_windows] = rows;
    *nw = (int)A.n_windows;
    *H = (int)h;
    store_head_array_free(&A);
    store_head_array_free(&B);
    *alpha = a;
    *beta = b;
    *ws = start;
    return 0;
}

/* token rows compacted per window (each cut at its first missing token) */
typedef struct {
    gs_tokens t;
    int64_t *win, *start;
    int32_t *tok;
} owned_tokens;

static int read_tokens(store *st, int64_t run, owned_tokens *o) {
    memset(o, 0, sizeof *o);
    store_token_array T = {0};
    if (store_read_tokens(st, run, &T) != 0) return -1;
    o->win = malloc((size_t)T.n_windows * sizeof *o->win);
    o->start = malloc((size_t)(T.n_windows + 1) * sizeof *o->start);
    o->tok = malloc((size_t)(T.n_windows * T.n_positions + 1) * sizeof *o->tok);
    if (!o->win || !o->start || !o->tok) {
        store_token_array_free(&T);
        free(o->win); free(o->start); free(o->tok);
        return gs_fail("out of memory for the tokens");
    }
    int64_t n = 0;
    for (int64_t w = 0; w < T.n_windows; w++) {
        o->win[w] = T.window_ids[w];
        o->start[w] = n;
        for (int64_t p = 0; p < T.n_positions && T.token_id[w * T.n_positions + p] >= 0; p++)
            o->tok[n++] = T.token_id[w * T.n_positions + p];
    }
    o->start[T.n_windows] = n;
    o->t.n_windows = T.n_windows;
    o->t.window = o->win;
    o->t.start = o->start;
    o->t.tokens = o->tok;
    store_token_array_free(&T);
    return 0;
}

/* the path of the run's tokenizer or corpus (table: tokenizers / corpora), or NULL (buf = "") */
static const char *run_text(store *st, int64_t run, const char *table, const char *col, char *buf, size_t size) {
    char sql[160];
    sqlite3_stmt *s = NULL;
    buf[0] = 0;
    snprintf(sql, sizeof sql, "SELECT t.path FROM runs r JOIN %s t ON t.id = r.%s WHERE r.id = ?1", table, col);
    if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK) return NULL;
    sqlite3_bind_int64(s, 1, run);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return buf[0] ? buf : NULL;
}

int gs_analyze_store(store *st, int64_t run_id, const gs_analyze_opts *o, gs_analysis *a) {
    memset(a, 0, sizeof *a);
    gs_analyze_opts dflt;
    if (!o) { gs_analyze_opts_default(&dflt); o = &dflt; }
    a->run_id = run_id;
    store_run_info info;
    if (store_run_get(st, run_id, &info) != 0) return -1;
    unsigned parts = o->parts ? o->parts : GS_AN_ALL;
    const int strict = o->explicit_parts && o->parts;
    gs_state_source *src = NULL;
    if (parts & (GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON | GS_AN_PROBE)) {
        char kbuf[64];
        snprintf(a->kind, sizeof a->kind, "%s", o->kind ? o->kind : site_of_role(st, run_id, "state", 1, "pred", kbuf, sizeof kbuf));
        src = gs_store_source_open(st, run_id, a->kind, o->skip_positions, o->max_states);
        if (!src) return -1;
    }
    if (parts & (GS_AN_DEFAULT | GS_AN_PROBE)) {
        a->model = load_model(st, &info, o->model_path);
        if (!a->model) {
            if (strict && (parts & GS_AN_PROBE)) goto fail;
            if (o->model_path) goto fail;
            note(a, "no model (%s): default tokens, the embedding control and the probe are skipped", gs_error());
            if (parts & GS_AN_PROBE) parts &= ~(unsigned)GS_AN_PROBE;
        } else if (src && a->model->cfg.d != src->d) {
            gs_fail("the model has d_state = %d but run %lld's states have %d dimensions", a->model->cfg.d,
                    (long long)run_id, src->d);
            goto fail;
        }
    }

    if (parts & (GS_AN_GEOMETRY | GS_AN_DEFAULT)) {
        gs_geometry_opts go;
        gs_geometry_opts_default(&go);
        go.seed = o->seed;
        if (gs_geometry_run(src, &go, &a->geometry) != 0) { gs_fail_context("geometry: "); goto fail; }
        a->done |= GS_AN_GEOMETRY;
    }
    if (parts & GS_AN_DEFAULT) {
        int64_t *counts = NULL, nv = 0;
        double *uni = NULL;
        int64_t V = a->model ? a->model->cfg.V : 0;
        if (a->model) {
            if (store_read_unigram_counts(st, run_id, &counts, &nv) != 0) {
                note(a, "no unigram counts (%s): Spearman skipped", gs_error());
            } else if (nv > V) {
                note(a, "unigram counts cover %lld tokens, the model's vocabulary %lld: Spearman skipped",
                     (long long)nv, (long long)V);
            } else {
                uni = calloc((size_t)V, sizeof *uni);
                if (!uni) { free(counts); gs_fail("out of memory"); goto fail; }
                for (int64_t i = 0; i < nv; i++) uni[i] = (double)counts[i];
            }
            free(counts);
        }
        gs_default_opts dopt;
        gs_default_opts_default(&dopt);
        dopt.seed = o->seed;
        double *train = NULL;
        if (a->model && o->train_corpus) {
            char tok[4096];
            if (gs_train_unigram_counts(o->train_corpus, run_text(st, run_id, "tokenizers", "tokenizer_id", tok, sizeof tok),
                                        V, &train) != 0) {
                free(uni);
                goto fail;
            }
            dopt.train_unigram = train;
            dopt.train_unigram_len = V;
        }
        run_text(st, run_id, "corpora", "corpus_id", a->recorded_corpus, sizeof a->recorded_corpus);
        int rc = gs_default_dir_run(src, &a->geometry, a->model, uni, uni ? V : 0, &dopt, &a->default_dir);
        free(uni);
        free(train);
        if (rc != 0) { gs_fail_context("default direction: "); goto fail; }
        a->done |= GS_AN_DEFAULT;
    }
    if (parts & GS_AN_HORIZON) {
        gs_horizon_opts ho;
        gs_horizon_opts_default(&ho);
        ho.max_lag = o->horizon_max_lag;
        if (gs_horizons_run(src, &ho, &a->horizons) != 0) { gs_fail_context("horizons: "); goto fail; }
        a->done |= GS_AN_HORIZON;
    }
    if (parts & GS_AN_RETENTION) {
        float *alpha = NULL, *beta = NULL;
        int64_t *ws = NULL;
        int nw = 0, H = 0;
        char dbuf[64];
        snprintf(a->decay_site, sizeof a->decay_site, "%s",
                 o->decay_site ? o->decay_site : site_of_role(st, run_id, "decay", 0, "mem.alpha", dbuf, sizeof dbuf));
        int rc = read_decays(st, run_id, a->decay_site, &alpha, &beta, &ws, &nw, &H);
        if (rc != 0 && info.n_heads <= 0) /* a GPN: say that, not "no rows" */
            rc = gs_retention_run(NULL, NULL, NULL, 0, 0, NULL, &a->retention);
        else if (rc != 0)
            gs_fail_context("retention: reading the decays: ");
        if (rc == 0) {
            gs_retention_opts_default(&a->retention_opts);
            a->retention_opts.seed = o->seed;
            rc = gs_retention_run(alpha, beta, ws, nw, H, &a->retention_opts, &a->retention);
            if (rc != 0) gs_fail_context("retention: ");
        }
        free(alpha); free(beta); free(ws);
        if (rc != 0) {
            if (strict) goto fail; /* its messages name retention already */
            note(a, "retention skipped: %s", gs_error());
        } else {
            a->done |= GS_AN_RETENTION;
            /* did training move the decays? needs the checkpoint (its tensors and metadata) */
            if (!a->model) a->model = load_model(st, &info, o->model_path);
            int di = a->model ? gs_decay_init_run(a->model, &a->decay_init) : -1;
            if (di == 0 && a->decay_init.H == a->retention.H) a->has_decay_init = 1;
            else if (di == 0) note(a, "decays vs initialisation: %d decay parameters but %d recorded heads", a->decay_init.H,
                                   a->retention.H);
            else if (di < 0) note(a, "decays vs initialisation not measured: %s", gs_error());
        }
    }
    if (parts & GS_AN_PROBE) {
        owned_tokens tk;
        gs_states s;
        int rc = read_tokens(st, run_id, &tk);
        if (rc == 0) {
            rc = gs_states_load(src, o->max_states, &s);
            if (rc == 0) {
                gs_probe_opts po;
                gs_probe_opts_default(&po);
                po.seed = o->seed;
                if (o->probe_max_lag > 0) po.max_lag = o->probe_max_lag;
                if (o->probe_splits > 0) po.splits = o->probe_splits;
                const gpn_config *c = &a->model->cfg;
                const gs_family *fam = gs_family_of(c);
                int width = 0;
                const float *E = fam && fam->embedding ? fam->embedding(a->model, &width) : NULL;
                gs_run_boundary_tokens(st, run_id, c->V, &po.bos, &po.eos); /* split by document */
                rc = E ? gs_probe_run(&s, &tk.t, E, c->V, width, &po, &a->probe)
                       : gs_fail("the %s family has no token embedding to probe for", fam ? fam->name : "model's");
                gs_states_free(&s);
            }
            free(tk.win); free(tk.start); free(tk.tok);
        }
        if (rc != 0) {
            if (strict) { gs_fail_context("probe: "); goto fail; }
            note(a, "probe skipped: %s", gs_error());
        } else {
            a->done |= GS_AN_PROBE;
        }
    }
    gs_store_source_close(src);
    return 0;
fail:
    gs_store_source_close(src);
    gs_analysis_free(a);
    return -1;
}

/* ---------- writing results ---------- */

static char *settings(const gs_analyze_opts *o, const char *extra) {
    char *buf = malloc(1024);
    if (!buf) return NULL;
    snprintf(buf, 1024, "{\"kind\":\"%s\",\"max_states\":%lld,\"skip_positions\":%d,\"seed\":%llu%s%s}",
             o->kind ? o->kind : "pred", (long long)o->max_states, o->skip_positions, (unsigned long long)o->seed,
             extra ? "," : "", extra ? extra : "");
    return buf;
}

typedef struct { store *st; int64_t id; int rc; } writer;

static void sc(writer *w, const char *key, double v, const char *note_) {
    if (w->rc == 0 && isfinite(v)) w->rc = store_analysis_scalar(w->st, w->id, key, v, note_);
}
static void ser(writer *w, const char *name, const double *x, const double *y, const char *const *labels, int64_t n) {
    if (w->rc == 0 && n > 0) w->rc = store_analysis_series(w->st, w->id, name, x, y, labels, n);
}
static void vecd(writer *w, const char *key, const double *v, int64_t n) {
    if (w->rc != 0 || n <= 0 || !v) return;
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) { w->rc = gs_fail("out of memory"); return; }
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
    w->rc = store_analysis_vector(w->st, w->id, key, f, n);
    free(f);
}
static double *iota(int64_t n, double first) {
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (x) for (int64_t i = 0; i < n; i++) x[i] = first + (double)i;
    return x;
}
static double *ints(const int *v, int64_t n) {
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (x) for (int64_t i = 0; i < n; i++) x[i] = v[i];
    return x;
}

static int begin(writer *w, store *st, int64_t run, const char *name, const char *set, const char *cv) {
    w->st = st;
    w->rc = 0;
    w->id = set ? store_analysis_begin(st, run, name, set, cv) : -1;
    return w->id > 0 ? 0 : -1;
}
static int end(writer *w) {
    if (w->rc != 0) { store_rollback(w->st); return -1; }
    return store_commit(w->st);
}

static int write_geometry(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_geometry *g = &a->geometry;
    char *set = settings(o, NULL);
    writer w;
    int rc = begin(&w, st, a->run_id, "geometry", set, cv);
    free(set);
    if (rc != 0) return -1;
    sc(&w, "n_states", (double)g->n, NULL);
    sc(&w, "n_windows", (double)g->n_windows, NULL);
    sc(&w, "d", g->d, NULL);
    sc(&w, "norm_mean", g->norm_mean, "mean ||s||");
    sc(&w, "norm_std", g->norm_std, "std ||s||, n - 1");
    sc(&w, "mean_norm", g->mean_norm, "||s_bar||");
    sc(&w, "median_std", g->median_std, NULL);
    sc(&w, "dim_std_min", g->dim_std_sorted[g->d - 1], NULL);
    sc(&w, "dim_std_max", g->dim_std_sorted[0], NULL);
    sc(&w, "dead_dims", g->n_dead, "std < 1e-3 x median std");
    sc(&w, "zero_variance_dims", g->n_zero_var, "left out of the correlations");
    sc(&w, "corr_mean_abs", g->corr_mean_abs, "mean |r| over pairs i != j");
    sc(&w, "corr_max_abs", g->corr_max_abs, NULL);
    sc(&w, "participation_ratio", g->participation_ratio, "(sum l)^2 / sum l^2");
    sc(&w, "total_variance", g->total_var, NULL);
    sc(&w, "top_sv_fallback", g->top_sv_fallback, "1: LAPACK dsyevr answered");
    double *x = iota(g->d, 1);
    ser(&w, "dim_std_sorted", x, g->dim_std_sorted, NULL, g->d);
    if (g->has_spectrum) {
        sc(&w, "components_90", g->n90, NULL);
        sc(&w, "components_99", g->n99, NULL);
        sc(&w, "stable_rank", g->stable_rank, "sum l / max l");
        ser(&w, "eigenvalues", x, g->eigvals, NULL, g->d);
        ser(&w, "cumulative_explained", x, g->cum_explained, NULL, g->d);
    }
    free(x);
    vecd(&w, "mean", g->mean, g->d);
    vecd(&w, "dim_std", g->dim_std, g->d);
    vecd(&w, "top_singular_vector", g->top_sv, g->d);
    vecd(&w, "corr_sample", g->corr_sample, (int64_t)g->n_sample * g->n_sample);
    double *sd = ints(g->sample_dims, g->n_sample);
    vecd(&w, "corr_sample_dims", sd, g->n_sample);
    free(sd);
    return end(&w);
}

static int write_default(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_default_dir *r = &a->default_dir;
    char tc[512], dex[600];
    snprintf(tc, sizeof tc, "%s", o->train_corpus ? o->train_corpus : "");
    for (char *c = tc; *c; c++)
        if (*c == '\\' || *c == '"' || (unsigned char)*c < 0x20) *c = '_'; /* keep the settings valid JSON */
    snprintf(dex, sizeof dex, "\"batches\":8,\"train_corpus\":\"%s\"", tc);
    char *set = settings(o, dex);
    writer w;
    int rc = begin(&w, st, a->run_id, "default_direction", set, cv);
    free(set);
    if (rc != 0) return -1;
    sc(&w, "mean_norm", r->mean_norm, "||s_bar||");
    sc(&w, "norm_ratio", r->norm_ratio, "||s_bar|| / mean ||s||");
    if (r->stability_valid) {
        sc(&w, "batch_cos_mean", r->stab_mean, r->batches_by_window ? "8 batches of whole windows" : "8 batches of rows (fewer than 8 windows)");
        sc(&w, "batch_cos_std", r->stab_std, NULL);
        double *x = iota(r->n_pairs, 0);
        ser(&w, "batch_cosines", x, r->batch_cos, NULL, r->n_pairs);
        free(x);
    }
    if (r->random_valid) {
        sc(&w, "batch_cos_random_mean", r->rand_mean, "8 random batches of rows (seeded), not of windows");
        sc(&w, "batch_cos_random_std", r->rand_std, NULL);
    }
    sc(&w, "pc1_cos", r->pc1_cos, "|cos(s_bar, the centered PC1)|: top eigenvector of the covariance");
    sc(&w, "mean_norm2_over_lambda1", r->mean_norm2_over_lambda1,
       "||s_bar||^2 / top centered eigenvalue: above 1 the uncentered top singular vector leans to s_bar by construction");
    if (r->has_t10) sc(&w, "emergence_t10", r->emerg_t10, NULL);
    if (r->has_t100) sc(&w, "emergence_t100", r->emerg_t100, NULL);
    sc(&w, "top_sv_cos", r->top_sv_cos, "cos(s_bar, first right singular vector)");
    double *x = iota(r->emerg_len, 1);
    ser(&w, "emergence", x, r->emergence, NULL, r->emerg_len);
    free(x);
    if (r->has_decode) {
        sc(&w, "embedding_overlap", r->emb_overlap, "of the top 10");
        sc(&w, "embedding_cos", r->emb_cos, "cos(logits_emb, logits_bar)");
        char cn[700];
        snprintf(cn, sizeof cn, "recorded corpus %s (not the training corpus); average ranks for ties",
                 a->recorded_corpus[0] ? a->recorded_corpus : "(path unknown)");
        if (r->has_unigram && r->spearman_defined) sc(&w, "spearman_unigram", r->spearman, cn);
        snprintf(cn, sizeof cn, "training corpus %s; average ranks for ties", o->train_corpus ? o->train_corpus : "?");
        if (r->has_train_unigram && r->spearman_train_defined) sc(&w, "spearman_unigram_train", r->spearman_train, cn);
        for (int which = 0; which < 2 && w.rc == 0; which++) {
            const int *top = which ? r->top_emb : r->top;
            const float *lg = which ? r->logits_emb : r->logits_bar;
            double xs[GS_TOPK], ys[GS_TOPK];
            char text[GS_TOPK][128];
            const char *labels[GS_TOPK];
            int n = 0;
            for (int i = 0; i < GS_TOPK && top[i] >= 0; i++, n++) {
                xs[i] = top[i];
                ys[i] = lg[top[i]];
                labels[i] = store_token_piece(st, a->run_id, top[i], text[i], sizeof text[i]) == 0 ? text[i] : NULL;
            }
            gs_clear_error();
            ser(&w, which ? "embedding_tokens" : "default_tokens", xs, ys, labels, n);
        }
        float *lb = r->logits_bar;
        if (w.rc == 0) w.rc = store_analysis_vector(st, w.id, "logits_bar", lb, r->V);
    }
    return end(&w);
}

static int write_horizons(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_horizons *h = &a->horizons;
    char extra[64];
    snprintf(extra, sizeof extra, "\"max_lag\":%d", o->horizon_max_lag);
    char *set = settings(o, extra);
    writer w;
    int rc = begin(&w, st, a->run_id, "horizons", set, cv);
    free(set);
    if (rc != 0) return -1;
    double *x = ints(h->lags, h->n_lags), *nr = malloc(sizeof(double) * h->n_lags), *nc = malloc(sizeof(double) * h->n_lags);
    if (!x || !nr || !nc) { free(x); free(nr); free(nc); store_rollback(st); return gs_fail("out of memory"); }
    for (int i = 0; i < h->n_lags; i++) { nr[i] = (double)h->n_raw[i]; nc[i] = (double)h->n_centered[i]; }
    ser(&w, "raw", x, h->raw, NULL, h->n_lags);
    ser(&w, "centered", x, h->centered, NULL, h->n_lags);
    ser(&w, "raw_pairs", x, nr, NULL, h->n_lags);
    ser(&w, "centered_pairs", x, nc, NULL, h->n_lags);
    free(x); free(nr); free(nc);
    sc(&w, "min_pairs", GS_HORIZON_MIN_PAIRS, "summaries, figures and the notebook read a curve only at lags with this many pairs");
    sc(&w, "c1", h->c1, "centered lag cosine at k = 1");
    if (h->h_e_valid) {
        sc(&w, "content_horizon_e", h->h_e, h->h_e_censored ? "right-censored: a lower bound" : "c_k <= c_1/e, log-k interpolation");
        sc(&w, "content_horizon_e_censored", h->h_e_censored, NULL);
    }
    sc(&w, "content_horizon_002", h->h_002, h->h_002_censored ? "right-censored: a lower bound" : "c_k < 0.02, log-k interpolation");
    sc(&w, "content_horizon_002_censored", h->h_002_censored, NULL);
    sc(&w, "zero_states", (double)h->n_zero_states, "left out of the raw curve");
    return end(&w);
}

static int write_retention(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    char extra[192], decay[96] = ""; /* the site only when not GPN's mem.alpha: a GPN run's settings stay as they were */
    if (o->decay_site) snprintf(decay, sizeof decay, ",\"decay_site\":\"%s\"", o->decay_site);
    snprintf(extra, sizeof extra, "\"null_draws\":%d,\"boot\":%d%s", a->retention_opts.null_draws,
             a->retention_opts.boot, decay);
    char *set = settings(o, extra);
    writer w;
    int rc = begin(&w, st, a->run_id, "retention", set, cv);
    free(set);
    if (rc != 0) return -1;
    w.rc = gs_retention_write(st, w.id, &a->retention, &a->retention_opts);
    if (w.rc == 0 && a->has_decay_init) w.rc = gs_decay_init_write(st, w.id, &a->decay_init, &a->retention);
    return end(&w);
}

static int write_probe(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_probe *p = &a->probe;
    char extra[96];
    snprintf(extra, sizeof extra, "\"probe_max_lag\":%d,\"ridge\":0.01,\"test_frac\":0.2,\"z\":2,\"splits\":%d", o->probe_max_lag,
             p->n_splits);
    char *set = settings(o, extra);
    writer w;
    int rc = begin(&w, st, a->run_id, "probe", set, cv);
    free(set);
    if (rc != 0) return -1;
    int n = 0;
    double *x = malloc(sizeof(double) * (p->n_lags + 1)), *acc = malloc(sizeof(double) * (p->n_lags + 1));
    double *base = malloc(sizeof(double) * (p->n_lags + 1)), *pass = malloc(sizeof(double) * (p->n_lags + 1));
    double *nt = malloc(sizeof(double) * (p->n_lags + 1));
    double *se = malloc(sizeof(double) * (p->n_lags + 1)), *seb = malloc(sizeof(double) * (p->n_lags + 1));
    double *sebin = malloc(sizeof(double) * (p->n_lags + 1)), *sds = malloc(sizeof(double) * (p->n_lags + 1));
    if (!x || !acc || !base || !pass || !nt || !se || !seb || !sebin || !sds) {
        free(x); free(acc); free(base); free(pass); free(nt); free(se); free(seb); free(sebin); free(sds);
        store_rollback(st);
        return gs_fail("out of memory");
    }
    for (int i = 0; i < p->n_lags; i++) {
        if (!p->measured[i]) continue;
        x[n] = p->lags[i];
        acc[n] = p->acc[i];
        base[n] = p->baseline[i];
        pass[n] = p->pass[i];
        nt[n] = (double)p->n_test[i];
        se[n] = p->se[i];
        seb[n] = p->se_block ? p->se_block[i] : NAN;
        sebin[n] = p->se_binomial[i];
        sds[n] = p->sd_splits ? p->sd_splits[i] : NAN;
        n++;
    }
    ser(&w, "accuracy", x, acc, NULL, n);
    ser(&w, "baseline", x, base, NULL, n);
    ser(&w, "pass", x, pass, NULL, n);
    ser(&w, "n_test", x, nt, NULL, n);
    ser(&w, "se", x, se, NULL, n);                 /* what the rule used */
    ser(&w, "se_block", x, seb, NULL, n);
    ser(&w, "se_binomial", x, sebin, NULL, n);
    ser(&w, "sd_over_splits", x, sds, NULL, n);
    free(x); free(acc); free(base); free(pass); free(nt); free(se); free(seb); free(sebin); free(sds);
    {
        double sx[64], sy[64];
        for (int k = 0; k < p->n_splits && k < 64; k++) { sx[k] = (double)(o->seed + (uint64_t)k); sy[k] = p->split_horizon[k]; }
        ser(&w, "horizon_by_split", sx, sy, NULL, p->n_splits); /* x: the split's seed */
    }
    sc(&w, "probe_horizon_min", p->horizon_min, "smallest horizon over the splits");
    sc(&w, "probe_horizon_median", p->horizon_median, "lower median over the splits");
    sc(&w, "probe_horizon_max", p->horizon_max, "largest horizon over the splits");
    sc(&w, "splits", p->n_splits, NULL);
    sc(&w, "split_by_document", p->by_document, "1: whole documents held out; 0: windows (no BOS/EOS, or one document)");
    sc(&w, "train_documents", (double)p->n_train_docs, NULL);
    sc(&w, "test_documents", (double)p->n_test_docs, NULL);
    sc(&w, "probe_horizon", p->horizon, p->rule);
    sc(&w, "probe_horizon_censored", p->censored, NULL);
    sc(&w, "train_windows", (double)p->n_train_windows, NULL);
    sc(&w, "test_windows", (double)p->n_test_windows, NULL);
    return end(&w);
}

int gs_analysis_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    gs_analyze_opts dflt, eff;
    if (!o) { gs_analyze_opts_default(&dflt); o = &dflt; }
    /* the settings name what was read: the site resolved from the run, not NULL */
    eff = *o;
    if (!eff.kind && a->kind[0]) eff.kind = a->kind;
    if (!eff.decay_site && a->decay_site[0] && strcmp(a->decay_site, "mem.alpha")) eff.decay_site = a->decay_site;
    o = &eff;
    if ((a->done & GS_AN_GEOMETRY) && write_geometry(st, a, o, cv) != 0) return -1;
    if ((a->done & GS_AN_DEFAULT) && write_default(st, a, o, cv) != 0) return -1;
    if ((a->done & GS_AN_HORIZON) && write_horizons(st, a, o, cv) != 0) return -1;
    if ((a->done & GS_AN_RETENTION) && write_retention(st, a, o, cv) != 0) return -1;
    if ((a->done & GS_AN_PROBE) && write_probe(st, a, o, cv) != 0) return -1;
    return 0;
}

typedef struct { store *st; int64_t run; char buf[256]; } piece_ctx;
static const char *piece(void *ctx, int id) {
    piece_ctx *p = ctx;
    if (store_token_piece(p->st, p->run, id, p->buf, sizeof p->buf) != 0) {
        gs_clear_error();
        snprintf(p->buf, sizeof p->buf, "#%d", id);
    }
    return p->buf;
}

void gs_analysis_print(FILE *f, store *st, const gs_analysis *a) {
    piece_ctx pc = {st, a->run_id, ""};
    gs_report r = {
        a->done & GS_AN_GEOMETRY ? &a->geometry : NULL,
        a->done & GS_AN_DEFAULT ? &a->default_dir : NULL,
        a->done & GS_AN_HORIZON ? &a->horizons : NULL,
        a->done & GS_AN_RETENTION ? &a->retention : NULL,
        a->done & GS_AN_PROBE ? &a->probe : NULL,
        piece,
        &pc,
    };
    fprintf(f, "run %lld\n", (long long)a->run_id);
    gs_report_print(f, &r);
    if (a->notes[0]) fprintf(f, "\nnotes:\n%s", a->notes);
}
