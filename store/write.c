/* Writers: models, tokenizers, corpora, runs, and the per-token rows a
 * recording produces (reused prepared statements; float16 via base/half.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "store/store_internal.h"

/* A writer that failed inside its own begin/commit: roll back only when it
 * owns the transaction; inside the caller's batch the caller rolls back. */
static int end_failed(store *st) {
    if (st->depth <= 1) store_rollback(st);
    else st->depth--;
    return -1;
}

static int need_writable(store *st) {
    if (!st->writable) return gs_fail("%s: opened read-only; cannot write", st->path);
    return 0;
}

static int valid_sha256(const char *s) {
    if (!s || strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

static void bind_pos_int(sqlite3_stmt *s, int i, int64_t v) {
    if (v > 0) sqlite3_bind_int64(s, i, v);
    else sqlite3_bind_null(s, i);
}

static void bind_id(sqlite3_stmt *s, int i, int64_t v) {
    if (v >= 0) sqlite3_bind_int64(s, i, v);
    else sqlite3_bind_null(s, i);
}

/* Run an upsert, then look the row up by its identity. */
static int64_t upsert_id(store *st, sqlite3_stmt *ins, const char *lookup_sql, const char *sha, int64_t extra,
                         const char *what) {
    if (sqlite3_step(ins) != SQLITE_DONE) {
        st_fail(st, what);
        sqlite3_finalize(ins);
        return -1;
    }
    sqlite3_finalize(ins);
    sqlite3_stmt *q = st_prepare(st, lookup_sql);
    if (!q) return -1;
    sqlite3_bind_text(q, 1, sha, -1, SQLITE_STATIC);
    if (sqlite3_bind_parameter_count(q) >= 2) sqlite3_bind_int64(q, 2, extra);
    int64_t id = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    if (id < 0) st_fail(st, what);
    sqlite3_finalize(q);
    return id;
}

int64_t store_add_model(store *st, const store_model *m) {
    if (need_writable(st)) return -1;
    if (!valid_sha256(m->sha256))
        return gs_fail("%s: adding a model: sha256 must be 64 lowercase hex digits, got '%s'", st->path,
                       m->sha256 ? m->sha256 : "(none)");
    sqlite3_stmt *s = st_prepare(st,
        "INSERT INTO models(path, sha256, arch, n_layers, d_state, d_emb, d_ffn, n_heads, d_key, d_val,"
        " vocab_size, n_params, dtype) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
        " ON CONFLICT(sha256) DO UPDATE SET path = coalesce(excluded.path, path),"
        " arch = coalesce(excluded.arch, arch), n_layers = coalesce(excluded.n_layers, n_layers),"
        " d_state = coalesce(excluded.d_state, d_state), d_emb = coalesce(excluded.d_emb, d_emb),"
        " d_ffn = coalesce(excluded.d_ffn, d_ffn), n_heads = coalesce(excluded.n_heads, n_heads),"
        " d_key = coalesce(excluded.d_key, d_key), d_val = coalesce(excluded.d_val, d_val),"
        " vocab_size = coalesce(excluded.vocab_size, vocab_size), n_params = coalesce(excluded.n_params, n_params),"
        " dtype = coalesce(excluded.dtype, dtype)");
    if (!s) return -1;
    st_bind_text(s, 1, m->path);
    sqlite3_bind_text(s, 2, m->sha256, -1, SQLITE_STATIC);
    st_bind_text(s, 3, m->arch);
    const int sizes[] = {m->n_layers, m->d_state, m->d_emb, m->d_ffn, m->n_heads, m->d_key, m->d_val, m->vocab_size};
    for (int i = 0; i < 8; i++) bind_pos_int(s, 4 + i, sizes[i]);
    bind_pos_int(s, 12, m->n_params);
    st_bind_text(s, 13, m->dtype);
    return upsert_id(st, s, "SELECT id FROM models WHERE sha256 = ?1", m->sha256, 0, "adding a model");
}

int64_t store_add_tokenizer(store *st, const store_tokenizer *t) {
    if (need_writable(st)) return -1;
    if (!valid_sha256(t->sha256))
        return gs_fail("%s: adding a tokenizer: sha256 must be 64 lowercase hex digits", st->path);
    sqlite3_stmt *s = st_prepare(st,
        "INSERT INTO tokenizers(path, sha256, kind, vocab_size) VALUES (?1, ?2, ?3, ?4)"
        " ON CONFLICT(sha256) DO UPDATE SET path = coalesce(excluded.path, path),"
        " kind = coalesce(excluded.kind, kind), vocab_size = coalesce(excluded.vocab_size, vocab_size)");
    if (!s) return -1;
    st_bind_text(s, 1, t->path);
    sqlite3_bind_text(s, 2, t->sha256, -1, SQLITE_STATIC);
    st_bind_text(s, 3, t->kind);
    bind_pos_int(s, 4, t->vocab_size);
    return upsert_id(st, s, "SELECT id FROM tokenizers WHERE sha256 = ?1", t->sha256, 0,
                     "adding a tokenizer");
}

int64_t store_add_corpus(store *st, const store_corpus *c) {
    if (need_writable(st)) return -1;
    if (!valid_sha256(c->sha256))
        return gs_fail("%s: adding a corpus: sha256 must be 64 lowercase hex digits", st->path);
    /* the identity is an expression index, which ON CONFLICT cannot name */
    sqlite3_stmt *s = st_prepare(st,
        "INSERT INTO corpora(path, sha256, kind, n_tokens, tokenizer_id)"
        " SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS"
        " (SELECT 1 FROM corpora WHERE sha256 = ?2 AND ifnull(tokenizer_id, 0) = ifnull(?5, 0))");
    if (!s) return -1;
    st_bind_text(s, 1, c->path);
    sqlite3_bind_text(s, 2, c->sha256, -1, SQLITE_STATIC);
    st_bind_text(s, 3, c->kind);
    bind_pos_int(s, 4, c->n_tokens);
    bind_pos_int(s, 5, c->tokenizer_id);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return st_fail(st, "adding a corpus");
    s = st_prepare(st, "UPDATE corpora SET path = coalesce(?1, path), kind = coalesce(?3, kind),"
                       " n_tokens = coalesce(?4, n_tokens) WHERE sha256 = ?2 AND ifnull(tokenizer_id, 0) = ?5");
    if (!s) return -1;
    st_bind_text(s, 1, c->path);
    sqlite3_bind_text(s, 2, c->sha256, -1, SQLITE_STATIC);
    st_bind_text(s, 3, c->kind);
    bind_pos_int(s, 4, c->n_tokens);
    sqlite3_bind_int64(s, 5, c->tokenizer_id > 0 ? c->tokenizer_id : 0);
    return upsert_id(st, s, "SELECT id FROM corpora WHERE sha256 = ?1 AND ifnull(tokenizer_id, 0) = ?2", c->sha256,
                     c->tokenizer_id > 0 ? c->tokenizer_id : 0, "adding a corpus");
}

int64_t store_begin_run(store *st, const store_run *r) {
    if (need_writable(st)) return -1;
    char *settings = store_canonical_json(r->settings_json);
    if (!settings) return gs_fail_context("%s: adding a run: settings: ", st->path);
    free(settings); /* validated; the text is stored as the recorder wrote it */
    sqlite3_stmt *s = st_prepare(st,
        "INSERT INTO runs(kind, model_id, tokenizer_id, corpus_id, seq_len, n_windows, batch, states, positions,"
        " state_dtype, device, d_state, n_heads, settings, code_version)"
        " VALUES (ifnull(?1, 'record'), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ifnull(?14, '{}'), ?15)");
    if (!s) return -1;
    st_bind_text(s, 1, r->kind);
    bind_pos_int(s, 2, r->model_id);
    bind_pos_int(s, 3, r->tokenizer_id);
    bind_pos_int(s, 4, r->corpus_id);
    bind_pos_int(s, 5, r->seq_len);
    bind_pos_int(s, 6, r->n_windows);
    bind_pos_int(s, 7, r->batch);
    st_bind_text(s, 8, r->states);
    st_bind_text(s, 9, r->positions);
    st_bind_text(s, 10, r->state_dtype);
    st_bind_text(s, 11, r->device);
    bind_pos_int(s, 12, r->d_state);
    bind_pos_int(s, 13, r->n_heads);
    st_bind_text(s, 14, r->settings_json);
    st_bind_text(s, 15, r->code_version);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return st_fail(st, "adding a run");
    return sqlite3_last_insert_rowid(st->db);
}

/* Run an UPDATE of one run; a missing run is an error. */
static int update_run(store *st, sqlite3_stmt *s, int64_t run_id, const char *what) {
    if (!s) return -1;
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return st_fail(st, what);
    if (sqlite3_changes(st->db) != 1) return gs_fail("%s: %s: there is no run %lld", st->path, what, (long long)run_id);
    return 0;
}

int store_run_progress(store *st, int64_t run_id, int64_t windows_done, int64_t tokens_done) {
    if (need_writable(st)) return -1;
    sqlite3_stmt *s = st_prepare(st, "UPDATE runs SET windows_done = ?2, tokens_done = ?3,"
                                     " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
    if (s) {
        sqlite3_bind_int64(s, 1, run_id);
        sqlite3_bind_int64(s, 2, windows_done);
        sqlite3_bind_int64(s, 3, tokens_done);
    }
    return update_run(st, s, run_id, "updating a run's progress");
}

int store_finish_run(store *st, int64_t run_id, const char *status, const char *message) {
    if (need_writable(st)) return -1;
    if (!status || (strcmp(status, "complete") && strcmp(status, "interrupted") && strcmp(status, "failed")))
        return gs_fail("%s: finishing run %lld: status must be complete, interrupted or failed, got '%s'", st->path,
                       (long long)run_id, status ? status : "(none)");
    /* A run that failed because its files hit a size limit still gets its
     * status: the update needs a few WAL pages past the last commit, and when
     * that commit ended right at the limit there are none, so once (outside
     * a batch) the committed WAL is checkpointed into the file and truncated,
     * and the update tried again at the WAL's start. */
    for (int attempt = 0;; attempt++) {
        sqlite3_stmt *s = st_prepare(st, "UPDATE runs SET status = ?2, message = ?3,"
                                         " finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),"
                                         " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
        if (s) {
            sqlite3_bind_int64(s, 1, run_id);
            sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
            st_bind_text(s, 3, message);
        }
        int rc = update_run(st, s, run_id, "finishing a run");
        int io = (sqlite3_errcode(st->db) & 0xff) == SQLITE_IOERR || (sqlite3_errcode(st->db) & 0xff) == SQLITE_FULL;
        if (rc == 0 || attempt > 0 || !s || !io || st->depth > 0) return rc;
        sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    }
}

int store_put_tokens(store *st, int64_t run_id, const store_token_row *rows, int64_t n) {
    if (need_writable(st) || store_begin(st)) return -1;
    sqlite3_stmt *s = st_cached(st, STMT_TOKEN,
        "INSERT INTO tokens(run_id, window, position, token_id, next_token_id, nll, entropy, top1)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, run_id);
    for (int64_t i = 0; i < n; i++) {
        const store_token_row *r = &rows[i];
        sqlite3_bind_int(s, 2, r->window);
        sqlite3_bind_int(s, 3, r->position);
        bind_id(s, 4, r->token_id);
        bind_id(s, 5, r->next_token_id);
        st_bind_float(s, 6, r->nll);
        st_bind_float(s, 7, r->entropy);
        bind_id(s, 8, r->top1);
        if (st_step_done(st, s, "writing token rows")) goto fail;
    }
    return store_commit(st);
fail:
    return end_failed(st);
}

int store_put_head_steps(store *st, int64_t run_id, int32_t window, int32_t position, int n_heads, const float *alpha,
                         const float *beta, const float *mem_norm) {
    if (need_writable(st) || store_begin(st)) return -1;
    sqlite3_stmt *s = st_cached(st, STMT_HEAD,
        "INSERT INTO head_steps(run_id, window, position, head, alpha, beta, mem_norm)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, window);
    sqlite3_bind_int(s, 3, position);
    for (int h = 0; h < n_heads; h++) {
        sqlite3_bind_int(s, 4, h);
        st_bind_float(s, 5, alpha ? alpha[h] : NAN);
        st_bind_float(s, 6, beta ? beta[h] : NAN);
        st_bind_float(s, 7, mem_norm ? mem_norm[h] : NAN);
        if (st_step_done(st, s, "writing head-step rows")) goto fail;
    }
    return store_commit(st);
fail:
    return end_failed(st);
}

int store_put_state(store *st, int64_t run_id, int32_t window, int32_t position, const char *kind, store_dtype dtype,
                    const float *v, int d) {
    if (need_writable(st)) return -1;
    if (d <= 0) return gs_fail("%s: writing a state: its length must be positive, got %d", st->path, d);
    if (!kind || !*kind || strlen(kind) > STORE_KIND_MAX)
        return gs_fail("%s: writing a state: kind must be a short name such as 'pred'", st->path);
    if (dtype != STORE_F32 && dtype != STORE_F16)
        return gs_fail("%s: writing a state: unknown dtype %d", st->path, (int)dtype);
    const void *blob = v;
    size_t bytes = (size_t)d * 4;
    if (dtype == STORE_F16) {
        if (st->half_cap < (size_t)d) {
            uint16_t *h = realloc(st->half, (size_t)d * sizeof *h);
            if (!h) return gs_fail("%s: writing a state: out of memory", st->path);
            st->half = h;
            st->half_cap = (size_t)d;
        }
        for (int i = 0; i < d; i++) st->half[i] = f32_to_f16(v[i]);
        blob = st->half;
        bytes = (size_t)d * 2;
    }
    sqlite3_stmt *s = st_cached(st, STMT_STATE,
        "INSERT INTO states(run_id, window, position, kind, dtype, vector) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, window);
    sqlite3_bind_int(s, 3, position);
    sqlite3_bind_text(s, 4, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, dtype == STORE_F16 ? "f16" : "f32", -1, SQLITE_STATIC);
    sqlite3_bind_blob64(s, 6, blob, bytes, SQLITE_STATIC);
    int rc = st_step_done(st, s, "writing a state");
    sqlite3_clear_bindings(s); /* do not keep pointers to the caller's memory */
    return rc;
}

int store_window_done(store *st, int64_t run_id, int32_t window, int64_t corpus_offset, int32_t n_tokens) {
    if (need_writable(st)) return -1;
    sqlite3_stmt *s = st_cached(st, STMT_WINDOW,
        "INSERT INTO windows(run_id, window, corpus_offset, n_tokens) VALUES (?1, ?2, ?3, ?4)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int(s, 2, window);
    bind_id(s, 3, corpus_offset);
    bind_id(s, 4, n_tokens);
    return st_step_done(st, s, "marking a window done");
}

/* Append bytes to piece text, escaping invalid UTF-8 as \xNN. */
static size_t utf8_escape(const unsigned char *b, size_t n, char *out) {
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = b[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 0 && i + len <= n && c != 0;
        for (size_t j = 1; ok && j < len; j++) ok = (b[i + j] & 0xc0) == 0x80;
        if (ok && len == 2) ok = c >= 0xc2;                                         /* overlong */
        if (ok && len == 3) {
            unsigned cp = ((c & 0x0fu) << 12) | ((b[i + 1] & 0x3fu) << 6) | (b[i + 2] & 0x3fu);
            ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
        }
        if (ok && len == 4) {
            unsigned cp = ((c & 0x07u) << 18) | ((b[i + 1] & 0x3fu) << 12) | ((b[i + 2] & 0x3fu) << 6) | (b[i + 3] & 0x3fu);
            ok = cp >= 0x10000 && cp <= 0x10ffff;
        }
        if (ok) {
            memcpy(out + k, b + i, len);
            k += len;
            i += len;
        } else {
            k += (size_t)sprintf(out + k, "\\x%02X", c);
            i++;
        }
    }
    out[k] = 0;
    return k;
}

int store_put_piece(store *st, int64_t tokenizer_id, int32_t token_id, const char *bytes, size_t len) {
    if (need_writable(st)) return -1;
    if (len > 1 << 20) return gs_fail("%s: token %d's piece is implausibly long (%zu bytes)", st->path, token_id, len);
    char small[256], *text = 4 * len + 1 <= sizeof small ? small : malloc(4 * len + 1);
    if (!text) return gs_fail("%s: out of memory", st->path);
    size_t k = utf8_escape((const unsigned char *)bytes, len, text);
    sqlite3_stmt *s = st_cached(st, STMT_PIECE,
        "INSERT OR REPLACE INTO vocabulary(tokenizer_id, token_id, piece, bytes) VALUES (?1, ?2, ?3, ?4)");
    int rc = -1;
    if (s) {
        sqlite3_bind_int64(s, 1, tokenizer_id);
        sqlite3_bind_int(s, 2, token_id);
        sqlite3_bind_text(s, 3, text, (int)k, SQLITE_TRANSIENT);
        sqlite3_bind_blob(s, 4, len ? bytes : "", (int)len, SQLITE_TRANSIENT);
        rc = st_step_done(st, s, "writing the vocabulary");
    }
    if (text != small) free(text);
    return rc;
}

int store_put_unigram_counts(store *st, int64_t corpus_id, const int64_t *counts, int64_t n_vocab) {
    if (need_writable(st) || store_begin(st)) return -1;
    sqlite3_stmt *s = st_prepare(st, "DELETE FROM unigram_counts WHERE corpus_id = ?1");
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, corpus_id);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { st_fail(st, "replacing unigram counts"); goto fail; }
    s = st_prepare(st, "INSERT INTO unigram_counts(corpus_id, token_id, count) VALUES (?1, ?2, ?3)");
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, corpus_id);
    for (int64_t i = 0; i < n_vocab; i++) {
        if (counts[i] == 0) continue;
        sqlite3_bind_int64(s, 2, i);
        sqlite3_bind_int64(s, 3, counts[i]);
        if (st_step_done(st, s, "writing unigram counts")) { sqlite3_finalize(s); goto fail; }
    }
    sqlite3_finalize(s);
    return store_commit(st);
fail:
    return end_failed(st);
}
