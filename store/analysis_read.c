/* Readers of stored analysis results for the layers above (plots,
 * notebooks-export, the CLI): lists and labels that the figures and reports
 * need, so that no module outside store/ prepares SQL of its own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/store_internal.h"

int st_read_rows(store *st, sqlite3_stmt *s, size_t size, void (*fill)(sqlite3_stmt *, void *), void **out,
                 const char *what) {
    *out = NULL;
    if (!s) return -1;
    int n = 0, cap = 0, rc;
    char *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char *nv = realloc(v, (size_t)cap * size);
            if (!nv) { rc = SQLITE_NOMEM; break; }
            v = nv;
        }
        fill(s, v + (size_t)n++ * size);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(v);
        return rc == SQLITE_NOMEM ? gs_fail("%s: out of memory %s", st->path, what) : st_fail(st, what);
    }
    *out = v;
    return n;
}

int64_t store_newest_analysed_run(store *st) {
    sqlite3_stmt *s = st_prepare(st, "SELECT ifnull(max(run_id), 0) FROM analyses");
    if (!s) return -1;
    int64_t run = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return run < 0 ? st_fail(st, "finding a run with analyses") : run;
}

int store_analysis_names(store *st, int64_t run_id, char (*names)[64], int max, int by_first) {
    sqlite3_stmt *s = st_prepare(st, by_first ? "SELECT name FROM analyses WHERE run_id = ?1 GROUP BY name ORDER BY min(id)"
                                              : "SELECT DISTINCT name FROM analyses WHERE run_id = ?1 ORDER BY name");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int n = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && n < max) st_copy_text(s, 0, names[n++], sizeof names[0]);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? n : st_fail(st, "listing the analyses of a run");
}

int64_t store_analysis_get_labels(store *st, int64_t analysis_id, const char *series, char ***labels) {
    *labels = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT label FROM analysis_series WHERE analysis_id = ?1 AND series = ?2 ORDER BY idx");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, series, -1, SQLITE_STATIC);
    int64_t n = 0, cap = 0;
    char **out = NULL;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nl = realloc(out, (size_t)cap * sizeof *nl);
            if (!nl) { rc = SQLITE_NOMEM; break; }
            out = nl;
        }
        const unsigned char *t = sqlite3_column_text(s, 0);
        out[n] = NULL;
        if (t) {
            int len = sqlite3_column_bytes(s, 0);
            out[n] = malloc((size_t)len + 1);
            if (!out[n]) { rc = SQLITE_NOMEM; break; }
            memcpy(out[n], t, (size_t)len);
            out[n][len] = 0;
        }
        n++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        store_free_labels(out, n);
        return rc == SQLITE_NOMEM ? gs_fail("%s: out of memory reading labels of '%s'", st->path, series)
                                  : st_fail(st, "reading the labels of a series");
    }
    *labels = out;
    return n;
}

void store_free_labels(char **labels, int64_t n) {
    if (!labels) return;
    for (int64_t i = 0; i < n; i++) free(labels[i]);
    free(labels);
}

int store_analysis_get_note(store *st, int64_t analysis_id, const char *key, char *buf, size_t size) {
    buf[0] = 0;
    sqlite3_stmt *s = st_prepare(st, "SELECT note FROM analysis_scalars WHERE analysis_id = ?1 AND key = ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) st_copy_text(s, 0, buf, size);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : st_fail(st, "reading a scalar's note");
}

int store_analysis_each_scalar(store *st, int64_t analysis_id, void (*fn)(void *ctx, const char *key, double value),
                               void *ctx) {
    sqlite3_stmt *s = st_prepare(st, "SELECT key, value FROM analysis_scalars WHERE analysis_id = ?1 AND value IS NOT NULL "
                                     "ORDER BY key");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) fn(ctx, (const char *)sqlite3_column_text(s, 0), sqlite3_column_double(s, 1));
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : st_fail(st, "reading an analysis' scalars");
}

static void fill_ablation(sqlite3_stmt *s, void *row) {
    store_ablation_ref *r = row;
    r->id = sqlite3_column_int64(s, 0);
    st_copy_text(s, 1, r->what, sizeof r->what);
    st_copy_text(s, 2, r->scope, sizeof r->scope);
}

int store_newest_ablations(store *st, int64_t run_id, store_ablation_ref **out) {
    sqlite3_stmt *s = st_prepare(st,
        "SELECT id, ifnull(json_extract(settings, '$.what'), name), "
        "ifnull(json_extract(settings, '$.scope'), '') || "
        "ifnull(json_extract(settings, '$.heads_at'), '') FROM analyses a "
        "WHERE run_id = ?1 AND name LIKE 'ablation%' AND id = (SELECT max(id) FROM analyses b "
        "WHERE b.run_id = a.run_id AND b.name = a.name AND "
        "ifnull(json_extract(b.settings, '$.what'), '') = ifnull(json_extract(a.settings, '$.what'), '') AND "
        "ifnull(json_extract(b.settings, '$.scope'), '') = ifnull(json_extract(a.settings, '$.scope'), '') AND "
        "ifnull(json_extract(b.settings, '$.heads_at'), '') = ifnull(json_extract(a.settings, '$.heads_at'), '')) "
        "ORDER BY id");
    if (s) sqlite3_bind_int64(s, 1, run_id);
    void *rows = NULL;
    int n = st_read_rows(st, s, sizeof **out, fill_ablation, &rows, "listing ablations");
    *out = rows;
    return n;
}

static void fill_analysis(sqlite3_stmt *s, void *row) {
    store_analysis_ref *r = row;
    r->id = sqlite3_column_int64(s, 0);
    st_copy_text(s, 1, r->name, sizeof r->name);
    st_copy_text(s, 2, r->settings, sizeof r->settings);
    st_copy_text(s, 3, r->created_at, sizeof r->created_at);
    st_copy_text(s, 4, r->code_version, sizeof r->code_version);
}

int store_newest_analyses(store *st, int64_t run_id, store_analysis_ref **out) {
    sqlite3_stmt *s = st_prepare(st,
        "SELECT id, name, settings, created_at, ifnull(code_version, '') FROM analyses "
        /* the newest per name, and per intervention for ablations */
        "WHERE run_id = ?1 AND id IN (SELECT max(id) FROM analyses WHERE run_id = ?1 GROUP BY name, "
        "CASE WHEN name LIKE 'ablation%' THEN ifnull(json_extract(settings, '$.what'), '') || '|' || "
        "ifnull(json_extract(settings, '$.scope'), '') || '|' || "
        "ifnull(json_extract(settings, '$.heads_at'), '') ELSE '' END) "
        "ORDER BY id");
    if (s) sqlite3_bind_int64(s, 1, run_id);
    void *rows = NULL;
    int n = st_read_rows(st, s, sizeof **out, fill_analysis, &rows, "listing the analyses of a run");
    *out = rows;
    return n;
}

static void fill_scalar(sqlite3_stmt *s, void *row) {
    store_scalar_row *r = row;
    st_copy_text(s, 0, r->key, sizeof r->key);
    r->value = sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
    st_copy_text(s, 2, r->note, sizeof r->note);
}

int store_analysis_scalar_rows(store *st, int64_t analysis_id, store_scalar_row **out) {
    sqlite3_stmt *s = st_prepare(st, "SELECT key, value, ifnull(note, '') FROM analysis_scalars WHERE analysis_id = ?1 "
                                     "ORDER BY key");
    if (s) sqlite3_bind_int64(s, 1, analysis_id);
    void *rows = NULL;
    int n = st_read_rows(st, s, sizeof **out, fill_scalar, &rows, "reading an analysis' scalars");
    *out = rows;
    return n;
}

static void fill_kind_count(sqlite3_stmt *s, void *row) {
    store_kind_count *r = row;
    st_copy_text(s, 0, r->kind, sizeof r->kind);
    r->n = sqlite3_column_int64(s, 1);
}

int store_state_counts(store *st, int64_t run_id, store_kind_count **out) {
    sqlite3_stmt *s = st_prepare(st, "SELECT kind, count(*) FROM states WHERE run_id = ?1 GROUP BY kind ORDER BY kind");
    if (s) sqlite3_bind_int64(s, 1, run_id);
    void *rows = NULL;
    int n = st_read_rows(st, s, sizeof **out, fill_kind_count, &rows, "counting the run's states");
    *out = rows;
    return n;
}

int64_t store_count_head_steps(store *st, int64_t run_id) {
    sqlite3_stmt *s = st_prepare(st, "SELECT count(*) FROM head_steps WHERE run_id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return n < 0 ? st_fail(st, "counting the run's head steps") : n;
}

int64_t store_analysis_newest(store *st, int64_t run_id, const char *name) {
    sqlite3_stmt *s = st_prepare(st, "SELECT ifnull(max(id), 0) FROM analyses WHERE name = ?1 AND (?2 <= 0 OR run_id = ?2)");
    if (!s) return -1;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, run_id);
    int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : st_fail(st, "finding an analysis");
    sqlite3_finalize(s);
    return id;
}
