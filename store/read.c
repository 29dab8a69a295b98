/* Readers for the analyses: run metadata, state vectors as float32 blocks,
 * per-head and per-token values as dense arrays, unigram counts, pieces. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "base/text.h"
#include "store/store_internal.h"

void st_copy_text(sqlite3_stmt *s, int col, char *dst, size_t size) {
    const char *t = (const char *)sqlite3_column_text(s, col);
    snprintf(dst, size, "%s", t ? t : "");
}

/* store_run_info's fields in the order store_run_get selects them (the
 * struct's order): a text is copied up to the field's size, a number read at
 * the field's width (int or int64_t). */
#define RUN_TEXT(f) {offsetof(store_run_info, f), sizeof((store_run_info *)0)->f, 1}
#define RUN_NUM(f) {offsetof(store_run_info, f), sizeof((store_run_info *)0)->f, 0}
static const struct {
    size_t offset, size;
    int text;
} run_fields[] = {
    RUN_NUM(id),           RUN_NUM(model_id),         RUN_NUM(tokenizer_id),      RUN_NUM(corpus_id),
    RUN_TEXT(kind),        RUN_TEXT(status),          RUN_TEXT(states),           RUN_TEXT(positions),
    RUN_TEXT(state_dtype), RUN_TEXT(device),          RUN_NUM(seq_len),           RUN_NUM(batch),
    RUN_NUM(d_state),      RUN_NUM(n_heads),          RUN_NUM(n_windows),         RUN_NUM(windows_done),
    RUN_NUM(tokens_done),  RUN_TEXT(model_sha256),    RUN_TEXT(tokenizer_sha256), RUN_TEXT(corpus_sha256),
    RUN_TEXT(code_version), RUN_TEXT(started_at),     RUN_TEXT(finished_at),      RUN_TEXT(model_path),
    RUN_TEXT(tokenizer_path), RUN_TEXT(corpus_path),  RUN_NUM(model_vocab),       RUN_NUM(tokenizer_vocab),
    RUN_TEXT(model_arch),
};
#undef RUN_TEXT
#undef RUN_NUM
_Static_assert(sizeof run_fields / sizeof *run_fields == 29, "one field for each column store_run_get selects");

int store_run_get(store *st, int64_t run_id, store_run_info *out) {
    sqlite3_stmt *s = st_prepare(st,
        "SELECT r.id, ifnull(r.model_id, 0), ifnull(r.tokenizer_id, 0), ifnull(r.corpus_id, 0), r.kind, r.status,"
        " r.states, r.positions, r.state_dtype, r.device, ifnull(r.seq_len, 0), ifnull(r.batch, 0),"
        " ifnull(r.d_state, 0), ifnull(r.n_heads, 0), ifnull(r.n_windows, 0), r.windows_done, r.tokens_done,"
         " m.sha256, t.sha256, c.sha256, r.code_version, r.started_at, r.finished_at, m.path, t.path, c.path,"
        " ifnull(m.vocab_size, 0), ifnull(t.vocab_size, 0), m.arch"
        " FROM runs r LEFT JOIN models m ON m.id = r.model_id LEFT JOIN tokenizers t ON t.id = r.tokenizer_id"
        " LEFT JOIN corpora c ON c.id = r.corpus_id WHERE r.id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        char q[4200];
        if (rc == SQLITE_DONE)
            return gs_fail("%s: there is no run %lld (`gpnscope sql %s 'SELECT * FROM runs'` lists them)", st->path,
                           (long long)run_id, gs_shell_quote(st->path, q, sizeof q));
        return st_fail(st, "reading a run");
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < (int)(sizeof run_fields / sizeof *run_fields); i++) {
        char *at = (char *)out + run_fields[i].offset;
        if (run_fields[i].text) st_copy_text(s, i, at, run_fields[i].size);
        else if (run_fields[i].size == sizeof(int64_t)) *(int64_t *)at = sqlite3_column_int64(s, i);
        else *(int *)at = sqlite3_column_int(s, i);
    }
    sqlite3_finalize(s);
    return 0;
}

int64_t store_list_runs(store *st, int64_t **ids) {
    *ids = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT id FROM runs ORDER BY id");
    if (!s) return -1;
    int64_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *p = realloc(*ids, (size_t)cap * sizeof *p);
            if (!p) { sqlite3_finalize(s); free(*ids); *ids = NULL; return gs_fail("%s: out of memory", st->path); }
            *ids = p;
        }
        (*ids)[n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { free(*ids); *ids = NULL; return st_fail(st, "listing runs"); }
    return n;
}

char *store_run_settings(store *st, int64_t run_id) {
    sqlite3_stmt *s = st_prepare(st, "SELECT settings FROM runs WHERE id = ?1");
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, run_id);
    char *out = NULL;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        out = strdup(t ? t : "{}");
        if (!out) gs_fail("%s: out of memory", st->path);
    } else {
        gs_fail("%s: there is no run %lld", st->path, (long long)run_id);
    }
    sqlite3_finalize(s);
    return out;
}

const char *const store_control_names[STORE_N_CONTROLS] = {"untrained", "shuffled"};

int64_t store_control_run(store *st, int64_t run, const char *kind) {
    sqlite3_stmt *s = st_prepare(st, "SELECT max(id) FROM runs WHERE status = 'complete'"
                                     " AND json_extract(settings, '$.control.of') = ?1"
                                     " AND json_extract(settings, '$.control.kind') = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
    int64_t id = -1;
    if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int64(s, 0); /* NULL reads as 0 */
    else st_fail(st, "finding a control run");
    sqlite3_finalize(s);
    return id;
}

int store_run_control(store *st, int64_t run, char *kind, size_t size, int64_t *of) {
    sqlite3_stmt *s = st_prepare(st, "SELECT json_extract(settings, '$.control.kind'),"
                                     " json_extract(settings, '$.control.of') FROM runs WHERE id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run);
    int rc = -1;
    kind[0] = 0;
    *of = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(s, 0);
        rc = k != NULL;
        if (k) snprintf(kind, size, "%s", k), *of = sqlite3_column_int64(s, 1);
    } else {
        gs_fail("%s: there is no run %lld", st->path, (long long)run);
    }
    sqlite3_finalize(s);
    return rc;
}

int64_t store_last_run(store *st, int which) {
    sqlite3_stmt *s = st_prepare(st, which == STORE_RUN_UNFINISHED ? "SELECT max(id) FROM runs WHERE status <> 'complete'"
                                     : which == STORE_RUN_COMPLETE ? "SELECT max(id) FROM runs WHERE status = 'complete'"
                                                                     " AND json_extract(settings, '$.control') IS NULL"
                                                                   : "SELECT max(id) FROM runs");
    if (!s) return -1;
    int64_t id = -1;
    if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int64(s, 0); /* NULL reads as 0 */
    else st_fail(st, "finding the last run");
    sqlite3_finalize(s);
    return id;
}

int64_t store_count_states(store *st, int64_t run_id, const char *kind) {
    return store_count_states_from(st, run_id, kind, INT32_MIN);
}

int64_t store_count_states_from(store *st, int64_t run_id, const char *kind, int first) {
    return store_count_states_in(st, run_id, kind, first, 0);
}

int64_t store_count_states_in(store *st, int64_t run_id, const char *kind, int first, int end) {
    sqlite3_stmt *s = st_prepare(st, "SELECT count(*) FROM states WHERE run_id = ?1 AND kind = ?2 AND position >= ?3"
                                     " AND position < ?4");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, kind ? kind : "pred", -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, first);
    sqlite3_bind_int(s, 4, end > 0 ? end : INT32_MAX);
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : st_fail(st, "counting states");
    sqlite3_finalize(s);
    return n;
}

int64_t store_count_windows_in_prefix(store *st, int64_t run_id, const char *kind, int first, int end, int64_t take) {
    sqlite3_stmt *s = st_prepare(st, "SELECT count(DISTINCT window) FROM (SELECT window FROM states WHERE run_id = ?1"
                                     " AND kind = ?2 AND position >= ?3 AND position < ?5 ORDER BY window, position"
                                     " LIMIT ?4)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, kind ? kind : "pred", -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, first);
    sqlite3_bind_int64(s, 4, take);
    sqlite3_bind_int(s, 5, end > 0 ? end : INT32_MAX);
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : st_fail(st, "counting windows");
    sqlite3_finalize(s);
    return n;
}

/* ---------- streaming states ---------- */
struct store_states {
    store *st;
    sqlite3_stmt *s;
    int64_t run_id;
    int dim, pending; /* pending: the statement holds a row not yet returned */
    int done;         /* stepping after SQLITE_DONE would restart the query */
};

static int state_row_dim(sqlite3_stmt *s) {
    const char *dt = (const char *)sqlite3_column_text(s, 2);
    int bytes = sqlite3_column_bytes(s, 3);
    return dt && !strcmp(dt, "f16") ? bytes / 2 : bytes / 4;
}

store_states *store_states_open(store *st, int64_t run_id, const char *kind, int64_t window_from, int64_t window_to) {
    store_states *r = calloc(1, sizeof *r);
    if (!r) { gs_fail("%s: out of memory", st->path); return NULL; }
    r->st = st;
    r->run_id = run_id;
    r->s = st_prepare(st, "SELECT window, position, dtype, vector FROM states"
                          " WHERE run_id = ?1 AND kind = ?2 AND window BETWEEN ?3 AND ?4 ORDER BY window, position");
    if (!r->s) { free(r); return NULL; }
    sqlite3_bind_int64(r->s, 1, run_id);
    sqlite3_bind_text(r->s, 2, kind ? kind : "pred", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(r->s, 3, window_from < 0 ? INT64_MIN : window_from);
    sqlite3_bind_int64(r->s, 4, window_to < 0 ? INT64_MAX : window_to);
    int rc = sqlite3_step(r->s);
    if (rc == SQLITE_ROW) {
        r->pending = 1;
        r->dim = state_row_dim(r->s);
    } else if (rc == SQLITE_DONE) {
        r->done = 1;
    } else {
        st_fail(st, "reading states");
        store_states_close(r);
        return NULL;
    }
    return r;
}

int store_states_dim(const store_states *r) { return r->dim; }

int64_t store_states_read(store_states *r, float *rows, int32_t *windows, int32_t *positions, int64_t max_rows) {
    int64_t n = 0;
    while (n < max_rows && !r->done) {
        if (!r->pending) {
            int rc = sqlite3_step(r->s);
            if (rc == SQLITE_DONE) { r->done = 1; break; }
            if (rc != SQLITE_ROW) return st_fail(r->st, "reading states");
            r->pending = 1;
        }
        sqlite3_stmt *s = r->s;
        int w = sqlite3_column_int(s, 0), p = sqlite3_column_int(s, 1);
        const char *dt = (const char *)sqlite3_column_text(s, 2);
        int f16 = dt && !strcmp(dt, "f16");
        const unsigned char *b = sqlite3_column_blob(s, 3);
        int bytes = sqlite3_column_bytes(s, 3);
        if (!b || bytes != (int64_t)r->dim * (f16 ? 2 : 4))
            return gs_fail("%s: run %lld: the state at window %d position %d has %d bytes of %s, but the first state "
                           "had %d elements: mixed state sizes", r->st->path, (long long)r->run_id, w, p, bytes,
                           f16 ? "f16" : "f32", r->dim);
        float *out = rows + n * r->dim;
        if (f16) {
            for (int i = 0; i < r->dim; i++) {
                uint16_t h;
                memcpy(&h, b + 2 * i, 2);
                out[i] = f16_to_f32(h);
            }
        } else {
            memcpy(out, b, (size_t)bytes);
        }
        if (windows) windows[n] = w;
        if (positions) positions[n] = p;
        r->pending = 0;
        n++;
    }
    return n;
}

void store_states_close(store_states *r) {
    if (!r) return;
    sqlite3_finalize(r->s);
    free(r);
}

/* ---------- dense arrays over (window, position[, head]) ---------- */

/* The distinct windows of a run in `table`, ascending, and the largest
 * position (and head). */
static int dense_axes(store *st, const char *table, int64_t run_id, int with_head, int32_t **windows, int64_t *n_windows,
                      int64_t *n_positions, int64_t *n_heads) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT window), ifnull(max(position), -1) + 1, %s, min(window), max(window)"
             " FROM %s WHERE run_id = ?1", with_head ? "ifnull(max(head), -1) + 1" : "1", table);
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    if (sqlite3_step(s) != SQLITE_ROW) { sqlite3_finalize(s); return st_fail(st, "reading a run's size"); }
    *n_windows = sqlite3_column_int64(s, 0);
    *n_positions = sqlite3_column_int64(s, 1);
    *n_heads = sqlite3_column_int64(s, 2);
    const int64_t wmin = sqlite3_column_int64(s, 3), wmax = sqlite3_column_int64(s, 4);
    sqlite3_finalize(s);
    if (*n_windows == 0) return gs_fail("%s: run %lld has no %s rows", st->path, (long long)run_id, table);
    /* the window ids are int32 here: a larger one would wrap (and be written negative into .npy files) */
    if (wmin < INT32_MIN || wmax > INT32_MAX)
        return gs_fail("%s: run %lld: %s has window %lld, outside the 32-bit range of window ids (a damaged or "
                       "hand-edited store)", st->path, (long long)run_id, table,
                       (long long)(wmax > INT32_MAX ? wmax : wmin));
    /* positions and heads index a dense array: refuse negative or absurd ones */
    int64_t total;
    if (*n_positions <= 0 || *n_heads <= 0 || __builtin_mul_overflow(*n_windows, *n_positions, &total) ||
        __builtin_mul_overflow(total, *n_heads, &total) || total > ((int64_t)1 << 31))
        return gs_fail("%s: run %lld: %s spans %lld windows x %lld positions x %lld heads, too large to read at once",
                       st->path, (long long)run_id, table, (long long)*n_windows, (long long)*n_positions,
                       (long long)*n_heads);
    *windows = malloc((size_t)*n_windows * sizeof **windows);
    if (!*windows) return gs_fail("%s: out of memory", st->path);
    snprintf(sql, sizeof sql, "SELECT DISTINCT window FROM %s WHERE run_id = ?1 ORDER BY window", table);
    s = st_prepare(st, sql);
    if (!s) { free(*windows); *windows = NULL; return -1; }
    sqlite3_bind_int64(s, 1, run_id);
    int64_t i = 0;
    while (i < *n_windows && sqlite3_step(s) == SQLITE_ROW) (*windows)[i++] = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (i != *n_windows) { free(*windows); *windows = NULL; return st_fail(st, "reading a run's windows"); }
    return 0;
}

int store_read_heads(store *st, int64_t run_id, const char *what, store_head_array *out) {
    memset(out, 0, sizeof *out);
    if (!what || (strcmp(what, "alpha") && strcmp(what, "beta") && strcmp(what, "mem_norm")))
        return gs_fail("store_read_heads: what must be alpha, beta or mem_norm, got '%s'", what ? what : "(none)");
    if (dense_axes(st, "head_steps", run_id, 1, &out->window_ids, &out->n_windows, &out->n_positions, &out->n_heads))
        return -1;
    size_t total = (size_t)(out->n_windows * out->n_positions * out->n_heads);
    out->values = malloc(total * sizeof *out->values);
    if (!out->values) { store_head_array_free(out); return gs_fail("%s: out of memory", st->path); }
    for (size_t i = 0; i < total; i++) out->values[i] = NAN;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT window, position, head, %s FROM head_steps WHERE run_id = ?1 ORDER BY window", what);
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) { store_head_array_free(out); return -1; }
    sqlite3_bind_int64(s, 1, run_id);
    int64_t wi = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int w = sqlite3_column_int(s, 0);
        int64_t p = sqlite3_column_int64(s, 1), h = sqlite3_column_int64(s, 2);
        while (wi < out->n_windows && out->window_ids[wi] != w) wi++;
        if (wi == out->n_windows || p < 0 || h < 0) continue; /* negative indices are not ours to place */
        if (sqlite3_column_type(s, 3) != SQLITE_NULL)
            out->values[(wi * out->n_positions + p) * out->n_heads + h] = (float)sqlite3_column_double(s, 3);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { store_head_array_free(out); return st_fail(st, "reading head steps"); }
    return 0;
}

void store_head_array_free(store_head_array *a) {
    free(a->window_ids);
    free(a->values);
    memset(a, 0, sizeof *a);
}

int store_read_tokens(store *st, int64_t run_id, store_token_array *out) {
    memset(out, 0, sizeof *out);
    int64_t one;
    if (dense_axes(st, "tokens", run_id, 0, &out->window_ids, &out->n_windows, &out->n_positions, &one)) return -1;
    size_t total = (size_t)(out->n_windows * out->n_positions);
    out->token_id = malloc(total * sizeof(int32_t));
    out->next_token_id = malloc(total * sizeof(int32_t));
    out->top1 = malloc(total * sizeof(int32_t));
    out->nll = malloc(total * sizeof(float));
    out->entropy = malloc(total * sizeof(float));
    if (!out->token_id || !out->next_token_id || !out->top1 || !out->nll || !out->entropy) {
        store_token_array_free(out);
        return gs_fail("%s: out of memory", st->path);
    }
    for (size_t i = 0; i < total; i++) {
        out->token_id[i] = out->next_token_id[i] = out->top1[i] = -1;
        out->nll[i] = out->entropy[i] = NAN;
    }
    sqlite3_stmt *s = st_prepare(st, "SELECT window, position, token_id, next_token_id, top1, nll, entropy"
                                     " FROM tokens WHERE run_id = ?1 ORDER BY window, position");
    if (!s) { store_token_array_free(out); return -1; }
    sqlite3_bind_int64(s, 1, run_id);
    int64_t wi = 0;
    int rc;
    static const char *const cols[5] = {"token_id", "next_token_id", "top1", "nll", "entropy"};
    int bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int w = sqlite3_column_int(s, 0);
        int64_t p = sqlite3_column_int64(s, 1);
        while (wi < out->n_windows && out->window_ids[wi] != w) wi++;
        if (wi == out->n_windows || p < 0) continue;
        size_t k = (size_t)(wi * out->n_positions + p);
        int32_t *ids[3] = {out->token_id, out->next_token_id, out->top1};
        float *reals[2] = {out->nll, out->entropy};
        /* sqlite3_column_int wraps ids of 2^31 and up, and sqlite3_column_double reads text as 0.0:
         * either would pass for a real value (an NLL of 0 lowers ablate's base perplexity) */
        for (int c = 0; c < 5 && !bad; c++) {
            int type = sqlite3_column_type(s, 2 + c);
            if (type == SQLITE_NULL) continue;
            if (c < 3 && type == SQLITE_INTEGER) {
                /* an id past int32 stays -1 (unknown), never wrapped into another id; the callers that
                 * must not lose it say so by name first (ablate: outside the vocabulary; export) */
                int64_t v = sqlite3_column_int64(s, 2 + c);
                if (v >= INT32_MIN && v <= INT32_MAX) ids[c][k] = (int32_t)v;
            } else if (c >= 3 && (type == SQLITE_FLOAT || type == SQLITE_INTEGER)) {
                reals[c - 3][k] = (float)sqlite3_column_double(s, 2 + c);
            } else {
                gs_fail("%s: run %lld, window %d, position %lld: tokens.%s is %s, not %s (a damaged or "
                        "hand-edited store)", st->path, (long long)run_id, w, (long long)p, cols[c],
                        type == SQLITE_TEXT ? "text" : type == SQLITE_BLOB ? "a blob" : "a real number",
                        c < 3 ? "an integer" : "a number");
                bad = 1;
            }
        }
    }
    sqlite3_finalize(s);
    if (bad) { store_token_array_free(out); return -1; }
    if (rc != SQLITE_DONE) { store_token_array_free(out); return st_fail(st, "reading tokens"); }
    return 0;
}

void store_token_array_free(store_token_array *a) {
    free(a->window_ids);
    free(a->token_id);
    free(a->next_token_id);
    free(a->top1);
    free(a->nll);
    free(a->entropy);
    memset(a, 0, sizeof *a);
}

int store_read_unigram_counts(store *st, int64_t run_id, int64_t **counts, int64_t *n_vocab) {
    *counts = NULL;
    *n_vocab = 0;
    sqlite3_stmt *s = st_prepare(st,
        "SELECT r.corpus_id, max(ifnull(t.vocab_size, 0), ifnull(m.vocab_size, 0),"
        "  ifnull((SELECT max(token_id) + 1 FROM unigram_counts u WHERE u.corpus_id = r.corpus_id), 0))"
        " FROM runs r LEFT JOIN tokenizers t ON t.id = r.tokenizer_id LEFT JOIN models m ON m.id = r.model_id"
        " WHERE r.id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    if (sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return gs_fail("%s: there is no run %lld", st->path, (long long)run_id);
    }
    int64_t corpus = sqlite3_column_int64(s, 0), n = sqlite3_column_int64(s, 1);
    sqlite3_finalize(s);
    if (corpus <= 0) return gs_fail("%s: run %lld has no corpus, so no unigram counts", st->path, (long long)run_id);
    if (n <= 0) return gs_fail("%s: corpus %lld of run %lld has no unigram counts", st->path, (long long)corpus, (long long)run_id);
    if (n > ((int64_t)1 << 31)) return gs_fail("%s: implausible vocabulary size %lld", st->path, (long long)n);
    *counts = calloc((size_t)n, sizeof **counts);
    if (!*counts) return gs_fail("%s: out of memory", st->path);
    s = st_prepare(st, "SELECT token_id, count FROM unigram_counts WHERE corpus_id = ?1");
    if (!s) { free(*counts); *counts = NULL; return -1; }
    sqlite3_bind_int64(s, 1, corpus);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (id >= 0 && id < n) (*counts)[id] = sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { free(*counts); *counts = NULL; return st_fail(st, "reading unigram counts"); }
    *n_vocab = n;
    return 0;
}

int store_token_piece(store *st, int64_t run_id, int32_t token_id, char *buf, size_t size) {
    sqlite3_stmt *s = st_prepare(st, "SELECT v.piece FROM runs r JOIN vocabulary v ON v.tokenizer_id = r.tokenizer_id"
                                     " WHERE r.id = ?1 AND v.token_id = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, token_id);
    int found = sqlite3_step(s) == SQLITE_ROW;
    if (found) st_copy_text(s, 0, buf, size);
    else gs_fail("%s: run %lld has no vocabulary entry for token %d", st->path, (long long)run_id, token_id);
    sqlite3_finalize(s);
    return found ? 0 : -1;
}

int store_first_token_outside(store *st, int64_t run_id, int V, int64_t *window, int64_t *position, char *id_text,
                              size_t size) {
    sqlite3_stmt *s = st_prepare(st, "SELECT window, position, token_id FROM tokens WHERE run_id = ?1 AND"
                                     " (typeof(token_id) <> 'integer' OR token_id < 0 OR token_id >= ?2) LIMIT 1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, V);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *window = sqlite3_column_int64(s, 0);
        *position = sqlite3_column_int64(s, 1);
        st_copy_text(s, 2, id_text, size);
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return st_fail(st, "checking the run's token ids");
}

int store_snapshot_begin(store *st) {
    return sqlite3_exec(st->db, "BEGIN; SELECT count(*) FROM runs", NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : st_fail(st, "starting a read");
}

void store_snapshot_end(store *st) { sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL); }

int store_window_pieces(store *st, int64_t run_id, int32_t window, int T, char **pieces) {
    /* positions past T are passed over below */
    sqlite3_stmt *s = st_prepare(st, "SELECT position, piece FROM tokens_text WHERE run_id = ?1 AND window = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, window);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int p = sqlite3_column_int(s, 0);
        const char *txt = (const char *)sqlite3_column_text(s, 1);
        if (p >= 0 && p < T && txt && !pieces[p] && !(pieces[p] = strdup(txt))) { rc = SQLITE_NOMEM; break; }
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_NOMEM) return gs_fail("%s: out of memory reading token pieces", st->path);
    return rc == SQLITE_DONE ? 0 : st_fail(st, "reading the window's token pieces");
}

static void fill_offset_pair(sqlite3_stmt *s, void *row) {
    int64_t *g = row;
    g[0] = sqlite3_column_int64(s, 0);
    g[1] = sqlite3_column_int64(s, 1);
}

int64_t store_window_offsets(store *st, int64_t run_id, int64_t **pairs) {
    sqlite3_stmt *s = st_prepare(st, "SELECT ifnull(corpus_offset, -1), ifnull(n_tokens, -1) FROM windows"
                                     " WHERE run_id = ?1 ORDER BY window");
    if (s) sqlite3_bind_int64(s, 1, run_id);
    void *rows = NULL;
    int n = st_read_rows(st, s, 2 * sizeof **pairs, fill_offset_pair, &rows, "reading the run's windows");
    *pairs = rows;
    return n;
}
