/* Analysis results keyed by (run, name, settings): the settings JSON is
 * canonicalised (keys sorted, no spaces) and hashed, so re-running with the
 * same settings replaces the earlier results and other settings add new ones. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"
#include "store/store_internal.h"

static int cmp_keys(const void *a, const void *b) {
    return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

/* Sort every object's keys, recursively; duplicate keys are an error. */
static int sort_keys(cJSON *node) {
    if (cJSON_IsArray(node)) {
        for (cJSON *c = node->child; c; c = c->next)
            if (sort_keys(c)) return -1;
        return 0;
    }
    if (!cJSON_IsObject(node)) return 0;
    int n = cJSON_GetArraySize(node);
    if (n == 0) return 0;
    cJSON **items = malloc((size_t)n * sizeof *items);
    if (!items) return gs_fail("out of memory");
    for (int i = 0; i < n; i++) items[i] = cJSON_DetachItemViaPointer(node, node->child);
    qsort(items, (size_t)n, sizeof *items, cmp_keys);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (!rc && i > 0 && !strcmp(items[i - 1]->string, items[i]->string)) rc = gs_fail("duplicate key '%s'", items[i]->string);
        if (!rc && sort_keys(items[i])) rc = -1;
        cJSON_AddItemToArray(node, items[i]); /* appends, keeping the item's key */
    }
    free(items);
    return rc;
}

char *store_canonical_json(const char *json) {
    if (!json || !*json) json = "{}";
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (!root) {
        gs_fail("invalid JSON near offset %ld", end ? (long)(end - json) : 0L);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        gs_fail("settings must be a JSON object ({...})");
        return NULL;
    }
    char *out = NULL;
    if (!sort_keys(root)) {
        out = cJSON_PrintUnformatted(root);
        if (!out) gs_fail("out of memory");
    }
    cJSON_Delete(root);
    return out;
}

int store_settings_hash(const char *json, char out[65]) {
    char *canon = store_canonical_json(json);
    if (!canon) return -1;
    gs_hash_bytes(canon, strlen(canon), out);
    free(canon);
    return 0;
}

int64_t store_analysis_begin(store *st, int64_t run_id, const char *name, const char *settings_json,
                             const char *code_version) {
    if (!st->writable) return gs_fail("%s: opened read-only; cannot write analysis results", st->path);
    if (!name || !*name) return gs_fail("%s: an analysis needs a name", st->path);
    char hash[GS_HASH_HEX];
    char *canon = store_canonical_json(settings_json);
    if (!canon) return gs_fail_context("%s: analysis %s: settings: ", st->path, name);
    gs_hash_bytes(canon, strlen(canon), hash);
    if (store_begin(st)) { free(canon); return -1; }
    /* delete children explicitly: the user may have foreign keys off */
    static const char *const del[] = {
        "DELETE FROM analysis_scalars WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM analysis_series WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM analysis_vectors WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM ablation_tokens WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM attention_queries WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM attention_topk WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM attention_matrices WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM logit_attribution WHERE analysis_id IN (SELECT id FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3)",
        "DELETE FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3",
        "INSERT INTO analyses(run_id, name, settings, settings_hash, code_version) VALUES (?1, ?2, ?4, ?3, ?5)",
    };
    for (size_t i = 0; i < sizeof del / sizeof *del; i++) {
        sqlite3_stmt *s = st_prepare(st, del[i]);
        if (!s) goto fail;
        sqlite3_bind_int64(s, 1, run_id);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, hash, -1, SQLITE_STATIC);
        if (sqlite3_bind_parameter_count(s) >= 4) {
            sqlite3_bind_text(s, 4, canon, -1, SQLITE_STATIC);
            st_bind_text(s, 5, code_version);
        }
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) { st_fail(st, "writing analysis results"); goto fail; }
    }
    free(canon);
    return sqlite3_last_insert_rowid(st->db);
fail:
    free(canon);
    if (st->depth <= 1) store_rollback(st);
    else st->depth--;
    return -1;
}

int store_analysis_scalar(store *st, int64_t analysis_id, const char *key, double value, const char *note) {
    sqlite3_stmt *s = st_cached(st, STMT_SCALAR,
        "INSERT OR REPLACE INTO analysis_scalars(analysis_id, key, value, note) VALUES (?1, ?2, ?3, ?4)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    st_bind_float(s, 3, value);
    st_bind_text(s, 4, note);
    return st_step_done(st, s, "writing an analysis scalar");
}

int store_analysis_series(store *st, int64_t analysis_id, const char *series, const double *x, const double *y,
                          const char *const *labels, int64_t n) {
    sqlite3_stmt *s = st_cached(st, STMT_SERIES,
        "INSERT OR REPLACE INTO analysis_series(analysis_id, series, idx, x, y, label) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, series, -1, SQLITE_TRANSIENT);
    for (int64_t i = 0; i < n; i++) {
        sqlite3_bind_int64(s, 3, i);
        st_bind_float(s, 4, x ? x[i] : (double)i);
        st_bind_float(s, 5, y ? y[i] : NAN);
        if (labels && labels[i]) sqlite3_bind_text(s, 6, labels[i], -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(s, 6);
        if (st_step_done(st, s, "writing an analysis series")) return -1;
    }
    return 0;
}

int store_analysis_vector(store *st, int64_t analysis_id, const char *key, const float *v, int64_t n) {
    if (n <= 0 || n > (1 << 28)) return gs_fail("%s: analysis vector '%s' has %lld elements", st->path, key, (long long)n);
    sqlite3_stmt *s = st_cached(st, STMT_VECTOR,
        "INSERT OR REPLACE INTO analysis_vectors(analysis_id, key, vector) VALUES (?1, ?2, ?3)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_blob64(s, 3, v, (sqlite3_uint64)n * 4, SQLITE_STATIC);
    int rc = st_step_done(st, s, "writing an analysis vector");
    sqlite3_clear_bindings(s);
    return rc;
}

int64_t store_analysis_find(store *st, int64_t run_id, const char *name, const char *settings_json) {
    char hash[GS_HASH_HEX];
    if (settings_json && store_settings_hash(settings_json, hash)) return -1;
    sqlite3_stmt *s = st_prepare(st, settings_json
        ? "SELECT max(id) FROM analyses WHERE run_id = ?1 AND name = ?2 AND settings_hash = ?3"
        : "SELECT max(id) FROM analyses WHERE run_id = ?1 AND name = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (settings_json) sqlite3_bind_text(s, 3, hash, -1, SQLITE_STATIC);
    int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : st_fail(st, "finding an analysis");
    sqlite3_finalize(s);
    return id;
}

int store_analysis_get_scalar(store *st, int64_t analysis_id, const char *key, double *value) {
    sqlite3_stmt *s = st_prepare(st, "SELECT value FROM analysis_scalars WHERE analysis_id = ?1 AND key = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *value = sqlite3_column_type(s, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE)
        return gs_fail("%s: analysis %lld has no scalar '%s'", st->path, (long long)analysis_id, key);
    return st_fail(st, "reading an analysis scalar");
}

int64_t store_analysis_get_series(store *st, int64_t analysis_id, const char *series, double **x, double **y) {
    *x = *y = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT x, y FROM analysis_series WHERE analysis_id = ?1 AND series = ?2 ORDER BY idx");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, series, -1, SQLITE_STATIC);
    int64_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            double *nx = realloc(*x, (size_t)cap * sizeof *nx);
            if (nx) *x = nx;
            double *ny = realloc(*y, (size_t)cap * sizeof *ny);
            if (ny) *y = ny;
            if (!nx || !ny) { rc = SQLITE_NOMEM; break; }
        }
        (*x)[n] = sqlite3_column_type(s, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 0);
        (*y)[n] = sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
        n++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(*x);
        free(*y);
        *x = *y = NULL;
        return rc == SQLITE_NOMEM ? gs_fail("%s: out of memory", st->path) : st_fail(st, "reading an analysis series");
    }
    return n;
}

int64_t store_analysis_get_vector(store *st, int64_t analysis_id, const char *key, float **v) {
    *v = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT vector FROM analysis_vectors WHERE analysis_id = ?1 AND key = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    int64_t n = -1;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const void *b = sqlite3_column_blob(s, 0);
        int bytes = sqlite3_column_bytes(s, 0);
        n = bytes / 4;
        *v = malloc(n > 0 ? (size_t)n * 4 : 1);
        if (!*v) n = gs_fail("%s: out of memory", st->path);
        else if (n > 0) memcpy(*v, b, (size_t)n * 4);
    } else if (rc == SQLITE_DONE) {
        gs_fail("%s: analysis %lld has no vector '%s'", st->path, (long long)analysis_id, key);
    } else {
        st_fail(st, "reading an analysis vector");
    }
    sqlite3_finalize(s);
    return n;
}

int store_put_ablation_nll(store *st, int64_t analysis_id, int32_t window, const float *nll, int n_positions) {
    sqlite3_stmt *s = st_prepare(st, "INSERT OR REPLACE INTO ablation_tokens(analysis_id, window, position, nll)"
                                     " VALUES (?1, ?2, ?3, ?4)");
    if (!s) return -1;
    int rc = 0;
    for (int p = 0; p < n_positions && rc == 0; p++) {
        sqlite3_bind_int64(s, 1, analysis_id);
        sqlite3_bind_int(s, 2, window);
        sqlite3_bind_int(s, 3, p);
        if (isnan(nll[p])) sqlite3_bind_null(s, 4);
        else sqlite3_bind_double(s, 4, nll[p]);
        if (sqlite3_step(s) != SQLITE_DONE) rc = st_fail(st, "writing ablation NLLs");
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}
