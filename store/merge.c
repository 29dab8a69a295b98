/* gpnscope merge's work (store/merge.h). */
#include "store/merge.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/inputs.h"
#include "store/lock.h"
#include "store/store_internal.h"

typedef store_shard shard;

static void shards_free(shard *s, int n) {
    for (int i = 0; i < n; i++) store_shard_free(&s[i]);
    free(s);
}

void store_shard_free(store_shard *s) {
    free(s->settings);
    s->settings = NULL;
}

/* Take "shard" out of a run's settings (cJSON prints them as the recorder
 * did, so the text is a one-process run's byte for byte). */
static int split_settings(const char *json, int *rank, int *of, char **rest) {
    cJSON *j = cJSON_Parse(json);
    cJSON *sh = j ? cJSON_GetObjectItemCaseSensitive(j, "shard") : NULL;
    cJSON *r = sh ? cJSON_GetObjectItemCaseSensitive(sh, "rank") : NULL, *k = sh ? cJSON_GetObjectItemCaseSensitive(sh, "of") : NULL;
    int ok = cJSON_IsNumber(r) && cJSON_IsNumber(k) && k->valueint >= 1 && r->valueint >= 0 && r->valueint < k->valueint;
    if (ok) {
        *rank = r->valueint;
        *of = k->valueint;
        cJSON_DeleteItemFromObjectCaseSensitive(j, "shard");
        *rest = cJSON_PrintUnformatted(j);
    }
    cJSON_Delete(j);
    return ok && *rest ? 0 : -1;
}

void store_shard_range(int64_t n_windows, int n_ranks, int rank, int64_t batch, int64_t *begin, int64_t *end) {
    if (batch < 1) batch = 1;
    int64_t n_batches = (n_windows + batch - 1) / batch;
    int64_t b0 = n_batches * rank / n_ranks, b1 = n_batches * (rank + 1) / n_ranks;
    *begin = b0 * batch < n_windows ? b0 * batch : n_windows;
    *end = b1 * batch < n_windows ? b1 * batch : n_windows;
}

int store_shard_read(const char *path, store_shard *out) {
    memset(out, 0, sizeof *out);
    out->path = path;
    store *st = store_open(path, STORE_READ);
    if (!st) return -1;
    int64_t *ids = NULL, n = store_list_runs(st, &ids);
    int rc = -1;
    for (int64_t i = n - 1; i >= 0 && !out->run; i--) {
        char *json = store_run_settings(st, ids[i]);
        if (json && split_settings(json, &out->rank, &out->of, &out->settings) == 0) out->run = ids[i];
        free(json);
    }
    free(ids);
    if (!out->run) {
        gs_fail("%s: not a shard: no run recorded under MPI (mpirun -n K gpnscope record ...) in it", path);
        goto done;
    }
    if (store_run_get(st, out->run, &out->info)) goto done;
    if (strcmp(out->info.status, "complete")) {
        gs_fail("%s: rank %d of %d's run %lld is %s: finish it first (the same mpirun ... gpnscope record command with "
                "--resume)", path, out->rank, out->of, (long long)out->run, out->info.status);
        goto done;
    }
    out->n_windows = out->info.n_windows;
    out->batch = out->info.batch < out->n_windows ? out->info.batch : (out->n_windows ? out->n_windows : 1);
    store_shard_range(out->n_windows, out->of, out->rank, out->batch, &out->begin, &out->end);
    /* a shard holds only its own windows: two shards can then never collide in the target (checked before
     * anything is written, rather than a UNIQUE failure after earlier shards were committed) */
    sqlite3_stmt *q = st_prepare(st, "SELECT (SELECT count(*) FROM windows WHERE run_id = ?1 AND (window < ?2 OR window >= ?3))"
                                     " + (SELECT count(*) FROM tokens WHERE run_id = ?1 AND (window < ?2 OR window >= ?3))");
    if (!q) goto done;
    sqlite3_bind_int64(q, 1, out->run);
    sqlite3_bind_int64(q, 2, out->begin);
    sqlite3_bind_int64(q, 3, out->end);
    int64_t outside = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    sqlite3_finalize(q);
    if (outside != 0) {
        if (outside < 0) st_fail(st, "reading the shard's windows");
        else
            gs_fail("%s: rank %d of %d holds %lld rows of windows outside its own [%lld, %lld): it would collide with "
                    "another shard's; merge only shards written by mpirun ... gpnscope record",
                    path, out->rank, out->of, (long long)outside, (long long)out->begin, (long long)out->end);
        goto done;
    }
    rc = 0;
done:
    store_close(st);
    return rc;
}

const char *store_shards_differ(const store_shard *a, const store_shard *b) {
    if (strcmp(a->info.model_sha256, b->info.model_sha256)) return "the models differ";
    if (strcmp(a->info.corpus_sha256, b->info.corpus_sha256)) return "the corpora differ";
    if (strcmp(a->info.tokenizer_sha256, b->info.tokenizer_sha256)) return "the tokenizers differ";
    if (a->of != b->of) return "they come from jobs of different sizes";
    if (strcmp(a->settings, b->settings)) return "their settings differ";
    if (a->n_windows != b->n_windows || a->info.seq_len != b->info.seq_len) return "their windows differ";
    if (a->batch != b->batch) return "their batches differ";
    if (strcmp(a->info.code_version, b->info.code_version)) return "different gpnscope versions recorded them";
    return NULL;
}

static int by_rank(const void *x, const void *y) { return ((const shard *)x)->rank - ((const shard *)y)->rank; }

/* Run one statement with int64 parameters ?1..?n (a text for a negative
 * count's first parameter is not needed here). */
static int exec_i64(store *st, const char *what, const char *sql, int n, ...) {
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    va_list ap;
    va_start(ap, n);
    for (int i = 1; i <= n; i++) sqlite3_bind_int64(s, i, va_arg(ap, int64_t));
    va_end(ap);
    return st_step_done(st, s, what);
}

static int64_t query_i64(store *st, const char *sql, int64_t a, const char *text) {
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, a);
    if (text) sqlite3_bind_text(s, 2, text, -1, SQLITE_TRANSIENT);
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    if (v < 0) st_fail(st, "reading the target");
    return v;
}

/* The target's run for this job: an earlier merge's (same model, corpus,
 * tokenizer and settings, not yet complete or holding these windows), else 0. */
static int64_t find_run(store *st, const shard *s) {
    sqlite3_stmt *q = st_prepare(st,
        "SELECT r.id, r.settings FROM runs r JOIN models m ON m.id = r.model_id JOIN corpora c ON c.id = r.corpus_id"
        " LEFT JOIN tokenizers t ON t.id = r.tokenizer_id"
        " WHERE m.sha256 = ?1 AND c.sha256 = ?2 AND ifnull(t.sha256, '') = ?3 AND r.n_windows = ?4 ORDER BY r.id DESC");
    if (!q) return -1;
    sqlite3_bind_text(q, 1, s->info.model_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, s->info.corpus_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, s->info.tokenizer_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 4, s->n_windows);
    int64_t run = 0;
    char *want = store_canonical_json(s->settings);
    while (want && !run && sqlite3_step(q) == SQLITE_ROW) {
        char *have = store_canonical_json((const char *)sqlite3_column_text(q, 1));
        if (have && !strcmp(have, want)) run = sqlite3_column_int64(q, 0);
        free(have);
    }
    free(want);
    sqlite3_finalize(q);
    return run;
}

/* A new run in the target from the first shard (attached as `a`): what it
 * was recorded from, then the run with the one-process settings. */
static int64_t new_run(store *st, const shard *s) {
    static const char *const copy[] = {
        "INSERT INTO main.models(path, sha256, arch, n_layers, d_state, d_emb, d_ffn, n_heads, d_key, d_val,"
        " vocab_size, n_params, dtype) SELECT m.path, m.sha256, m.arch, m.n_layers, m.d_state, m.d_emb, m.d_ffn,"
        " m.n_heads, m.d_key, m.d_val, m.vocab_size, m.n_params, m.dtype FROM a.runs r JOIN a.models m ON"
        " m.id = r.model_id WHERE r.id = ?1 AND m.sha256 NOT IN (SELECT sha256 FROM main.models)",
        "INSERT INTO main.tokenizers(path, sha256, kind, vocab_size) SELECT t.path, t.sha256, t.kind, t.vocab_size"
        " FROM a.runs r JOIN a.tokenizers t ON t.id = r.tokenizer_id WHERE r.id = ?1"
        " AND t.sha256 NOT IN (SELECT sha256 FROM main.tokenizers)",
        "INSERT OR IGNORE INTO main.vocabulary SELECT mt.id, v.token_id, v.piece, v.bytes FROM a.runs r"
        " JOIN a.tokenizers t ON t.id = r.tokenizer_id JOIN main.tokenizers mt ON mt.sha256 = t.sha256"
        " JOIN a.vocabulary v ON v.tokenizer_id = t.id WHERE r.id = ?1",
        "INSERT INTO main.corpora(path, sha256, kind, n_tokens, tokenizer_id) SELECT c.path, c.sha256, c.kind,"
        " c.n_tokens, mt.id FROM a.runs r JOIN a.corpora c ON c.id = r.corpus_id LEFT JOIN a.tokenizers t ON"
        " t.id = c.tokenizer_id LEFT JOIN main.tokenizers mt ON mt.sha256 = t.sha256 WHERE r.id = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM main.corpora x WHERE x.sha256 = c.sha256 AND ifnull(x.tokenizer_id, 0) = ifnull(mt.id, 0))",
        /* the recorder replaces a corpus's counts; so does the merge */
        "INSERT OR REPLACE INTO main.unigram_counts SELECT mc.id, u.token_id, u.count FROM a.runs r"
        " JOIN a.corpora c ON c.id = r.corpus_id LEFT JOIN a.tokenizers t ON t.id = c.tokenizer_id"
        " LEFT JOIN main.tokenizers mt ON mt.sha256 = t.sha256 JOIN main.corpora mc ON mc.sha256 = c.sha256"
        " AND ifnull(mc.tokenizer_id, 0) = ifnull(mt.id, 0) JOIN a.unigram_counts u ON u.corpus_id = c.id"
        " WHERE r.id = ?1",
        "INSERT INTO main.runs(kind, model_id, tokenizer_id, corpus_id, seq_len, n_windows, batch, states, positions,"
        " state_dtype, device, d_state, n_heads, settings, code_version, started_at, status)"
        " SELECT r.kind, (SELECT x.id FROM main.models x WHERE x.sha256 = m.sha256),"
        " (SELECT x.id FROM main.tokenizers x WHERE x.sha256 = t.sha256),"
        " (SELECT x.id FROM main.corpora x JOIN a.corpora c ON c.id = r.corpus_id WHERE x.sha256 = c.sha256 AND"
        "  ifnull(x.tokenizer_id, 0) = ifnull((SELECT y.id FROM main.tokenizers y WHERE y.sha256 = t.sha256), 0)),"
        " r.seq_len, r.n_windows, r.batch, r.states, r.positions, r.state_dtype, r.device, r.d_state, r.n_heads,"
        " ?2, r.code_version, r.started_at, 'running' FROM a.runs r JOIN a.models m ON m.id = r.model_id"
        " LEFT JOIN a.tokenizers t ON t.id = r.tokenizer_id WHERE r.id = ?1",
    };
    for (size_t i = 0; i < sizeof copy / sizeof *copy; i++) {
        sqlite3_stmt *q = st_prepare(st, copy[i]);
        if (!q) return -1;
        sqlite3_bind_int64(q, 1, s->run);
        if (sqlite3_bind_parameter_count(q) >= 2) sqlite3_bind_text(q, 2, s->settings, -1, SQLITE_STATIC);
        if (st_step_done(st, q, "copying what the shards were recorded from")) return -1;
    }
    int64_t run = sqlite3_last_insert_rowid(st->db);
    if (exec_i64(st, "copying the run's sites", "INSERT INTO main.run_sites SELECT ?2, site, shape, layer, width, dtype,"
                 " stored_in, stored_as, role FROM a.run_sites WHERE run_id = ?1", 2, s->run, run))
        return -1;
    return run;
}

/* One shard (attached as `alias`) into the target's run, in one transaction.
 * Returns 1 when copied, 0 when the run already holds its windows, -1. */
static int merge_one(store *st, const shard *s, const char *alias, int64_t run, int batch) {
    if (store_begin(st)) return -1;
    int64_t have = query_i64(st, "SELECT count(*) FROM main.windows WHERE run_id = ?1", run, NULL);
    int64_t in_range = -1;
    {
        sqlite3_stmt *q = st_prepare(st, "SELECT count(*) FROM main.windows WHERE run_id = ?1 AND window >= ?2 AND window < ?3");
        if (q) {
            sqlite3_bind_int64(q, 1, run);
            sqlite3_bind_int64(q, 2, s->begin);
            sqlite3_bind_int64(q, 3, s->end);
            if (sqlite3_step(q) == SQLITE_ROW) in_range = sqlite3_column_int64(q, 0);
            sqlite3_finalize(q);
        }
    }
    if (have < 0 || in_range < 0) goto fail;
    if (in_range == s->end - s->begin) return store_commit(st) ? -1 : 0;
    if (in_range) {
        gs_fail("%s: the target's run %lld holds %lld of this shard's %lld windows (not written by gpnscope merge?): "
                "merge into a new store", s->path, (long long)run, (long long)in_range, (long long)(s->end - s->begin));
        goto fail;
    }
    char sql[1024];
    /* states in the order a one-process recording writes them: batch by
     * batch, step by step, window by window, site by site (runs.states) */
    static const char *const copy[] = {
        "INSERT INTO main.tokens SELECT ?2, window, position, token_id, next_token_id, nll, entropy, top1"
        " FROM %s.tokens WHERE run_id = ?1 ORDER BY window, position",
        "INSERT INTO main.head_steps SELECT ?2, window, position, head, alpha, beta, mem_norm"
        " FROM %s.head_steps WHERE run_id = ?1 ORDER BY window, position, head",
        "INSERT INTO main.states(run_id, window, position, kind, dtype, vector) SELECT ?2, s.window, s.position,"
        " s.kind, s.dtype, s.vector FROM %s.states s JOIN %s.runs r ON r.id = s.run_id WHERE s.run_id = ?1"
        " ORDER BY s.window / ?3, s.position, s.window, instr(',' || r.states || ',', ',' || s.kind || ','), s.kind",
        "INSERT INTO main.windows SELECT ?2, window, corpus_offset, n_tokens, done_at FROM %s.windows"
        " WHERE run_id = ?1 ORDER BY window",
    };
    for (size_t i = 0; i < sizeof copy / sizeof *copy; i++) {
        snprintf(sql, sizeof sql, copy[i], alias, alias);
        if (exec_i64(st, "copying a shard's rows", sql, i == 2 ? 3 : 2, s->run, run, (int64_t)batch)) goto fail;
    }
    if (exec_i64(st, "updating the run's progress",
                 "UPDATE main.runs SET windows_done = (SELECT count(*) FROM main.windows WHERE run_id = ?1),"
                 " tokens_done = (SELECT ifnull(sum(n_tokens), 0) FROM main.windows WHERE run_id = ?1),"
                 " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1", 1, run))
        goto fail;
    return store_commit(st) ? -1 : 1;
fail:
    store_rollback(st);
    return -1;
}

static int attach(store *st, const char *path, const char *alias) {
    sqlite3_stmt *q = st_prepare(st, "ATTACH ?1 AS ?2");
    if (!q) return -1;
    sqlite3_bind_text(q, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, alias, -1, SQLITE_STATIC);
    return st_step_done(st, q, "attaching a shard");
}

static int detach(store *st, const char *alias) {
    char sql[64];
    snprintf(sql, sizeof sql, "DETACH %s", alias);
    return st_exec(st, sql, "detaching a shard");
}

int store_merge_shards(const char *target, const char *const *paths, int n, store_merge_progress progress, void *ctx,
                       store_merge_result *out) {
    memset(out, 0, sizeof *out);
    if (n < 1) return gs_fail("no shards to merge");
    shard *s = calloc((size_t)n, sizeof *s);
    if (!s) return gs_fail("out of memory");
    store *st = NULL;
    store_lock *lock = NULL;
    int rc = -1;
    for (int i = 0; i < n; i++) {
        if (store_shard_read(paths[i], &s[i])) { n = i + 1; goto out; }
        const char *why = i ? store_shards_differ(&s[0], &s[i]) : NULL;
        if (why) {
            gs_fail("%s and %s are shards of different runs (%s): merge each run's shards into its own store",
                    s[0].path, s[i].path, why);
            n = i + 1;
            goto out;
        }
    }
    qsort(s, (size_t)n, sizeof *s, by_rank);
    for (int i = 1; i < n; i++)
        if (s[i].rank == s[i - 1].rank) {
            gs_fail("%s and %s are both rank %d of %d", s[i - 1].path, s[i].path, s[i].rank, s[i].of);
            goto out;
        }
    /* the shards are inputs (store_shard_read opened each): the target may be none of them, by any name */
    if (gs_output_check(target)) goto out;
    if (!(st = store_open(target, STORE_WRITE | STORE_CREATE))) goto out;
    int limit = sqlite3_limit(st->db, SQLITE_LIMIT_ATTACHED, -1);
    if (limit > 10) limit = 10;
    /* the target run: an earlier merge's, or a new one made from the first shard */
    int64_t run = find_run(st, &s[0]);
    if (run < 0) goto out;
    if (!run) {
        if (attach(st, s[0].path, "a")) goto out;
        if (store_begin(st)) { detach(st, "a"); goto out; }
        run = new_run(st, &s[0]);
        if (run < 0 || store_commit(st)) {
            store_rollback(st);
            detach(st, "a");
            goto out;
        }
        if (detach(st, "a")) goto out;
    }
    out->run = run;
    out->n_ranks = s[0].of;
    out->n_windows = s[0].n_windows;
    if (!(lock = store_lock_run(target, run, "gpnscope merge"))) goto out;
    int batch = (int)s[0].batch;
    for (int g = 0; g < n; g += limit) {
        int k = n - g < limit ? n - g : limit, attached = 0;
        char alias[16];
        for (; attached < k; attached++) {
            snprintf(alias, sizeof alias, "s%d", attached);
            if (attach(st, s[g + attached].path, alias)) break;
        }
        int ok = attached == k;
        for (int i = 0; ok && i < k; i++) {
            snprintf(alias, sizeof alias, "s%d", i);
            int copied = merge_one(st, &s[g + i], alias, run, batch);
            if (copied < 0) ok = 0;
            else {
                copied ? out->merged++ : out->skipped++;
                if (progress) progress(ctx, s[g + i].path, s[g + i].rank, copied, s[g + i].end - s[g + i].begin);
            }
        }
        for (int i = 0; i < attached; i++) {
            snprintf(alias, sizeof alias, "s%d", i);
            if (detach(st, alias)) ok = 0;
        }
        if (!ok) goto out;
    }
    out->windows = query_i64(st, "SELECT count(*) FROM main.windows WHERE run_id = ?1", run, NULL);
    if (out->windows < 0) goto out;
    if (out->windows == out->n_windows) {
        if (store_finish_run(st, run, "complete", NULL)) goto out;
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "merged %lld of %lld windows: gpnscope merge the other shards into it",
                 (long long)out->windows, (long long)out->n_windows);
        if (store_finish_run(st, run, "interrupted", msg)) goto out;
    }
    rc = 0;
out:
    store_lock_release(lock);
    store_close(st);
    shards_free(s, n);
    return rc;
}
