/* The exporter's tables as named queries (store/rows.h): one table of SQL,
 * a cursor that is a prepared statement underneath. */
#include "store/rows.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "store/store_internal.h"

/* ?1 is the run id in every one; the column names become the CSV headers. */
static const struct {
    store_rows_table table;
    const char *what; /* for errors: "reading %s" */
    const char *sql;
} tables[] = {
    {STORE_ROWS_RUN, "the run's row", "SELECT * FROM runs WHERE id = ?1"},
    {STORE_ROWS_TOKENS_TEXT, "the run's tokens",
     "SELECT window, position, token_id, piece, next_token_id, next_piece, top1, top1_piece, nll, entropy"
     " FROM tokens_text WHERE run_id = ?1 ORDER BY window, position"},
    {STORE_ROWS_VOCABULARY, "the run's vocabulary",
     "SELECT v.token_id, v.piece FROM vocabulary v JOIN runs r ON r.tokenizer_id = v.tokenizer_id"
     " WHERE r.id = ?1 ORDER BY v.token_id"},
    {STORE_ROWS_HEAD_STEPS, "the run's head steps",
     "SELECT window, position, head, alpha, beta, mem_norm FROM head_steps WHERE run_id = ?1"
     " ORDER BY window, position, head"},
    {STORE_ROWS_ANALYSES, "the run's analyses",
     "SELECT id AS analysis_id, name, settings, settings_hash, created_at, code_version FROM analyses"
     " WHERE run_id = ?1 ORDER BY id"},
    {STORE_ROWS_ANALYSIS_SCALARS, "the run's analysis scalars",
     "SELECT a.id AS analysis_id, a.name AS analysis, s.key, s.value, s.note FROM analysis_scalars s"
     " JOIN analyses a ON a.id = s.analysis_id WHERE a.run_id = ?1 ORDER BY a.id, s.key"},
    {STORE_ROWS_ANALYSIS_SERIES, "the run's analysis series",
     "SELECT a.id AS analysis_id, a.name AS analysis, s.series, s.idx, s.x, s.y, s.label"
     " FROM analysis_series s JOIN analyses a ON a.id = s.analysis_id WHERE a.run_id = ?1"
     " ORDER BY a.id, s.series, s.idx"},
    {STORE_ROWS_ANALYSIS_VECTORS, "the run's analysis vectors",
     "SELECT a.id, a.name, v.key, v.vector FROM analysis_vectors v"
     " JOIN analyses a ON a.id = v.analysis_id WHERE a.run_id = ?1 ORDER BY a.id, v.key"},
};

struct store_rows {
    store *st;
    sqlite3_stmt *s;
    const char *what;
};

store_rows *store_rows_open(store *st, int64_t run_id, store_rows_table table) {
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        if (tables[i].table != table) continue;
        store_rows *r = calloc(1, sizeof *r);
        if (!r) { gs_fail("out of memory"); return NULL; }
        r->st = st;
        r->what = tables[i].what;
        r->s = st_prepare(st, tables[i].sql);
        if (!r->s) { free(r); return NULL; }
        sqlite3_bind_int64(r->s, 1, run_id);
        return r;
    }
    gs_fail("%s: no table %d to read", store_path(st), (int)table);
    return NULL;
}

int store_rows_next(store_rows *r) {
    int rc = sqlite3_step(r->s);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    char what[96];
    snprintf(what, sizeof what, "reading %s", r->what);
    return st_fail(r->st, what);
}

int store_rows_columns(const store_rows *r) { return sqlite3_column_count(r->s); }
const char *store_rows_name(const store_rows *r, int col) { return sqlite3_column_name(r->s, col); }

store_value_type store_rows_type(store_rows *r, int col) {
    switch (sqlite3_column_type(r->s, col)) {
    case SQLITE_NULL: return STORE_VALUE_NULL;
    case SQLITE_INTEGER: return STORE_VALUE_INT;
    case SQLITE_FLOAT: return STORE_VALUE_FLOAT;
    case SQLITE_BLOB: return STORE_VALUE_BLOB;
    default: return STORE_VALUE_TEXT;
    }
}

int64_t store_rows_int(store_rows *r, int col) { return sqlite3_column_int64(r->s, col); }
double store_rows_double(store_rows *r, int col) { return sqlite3_column_double(r->s, col); }
const char *store_rows_text(store_rows *r, int col) { return (const char *)sqlite3_column_text(r->s, col); }

const void *store_rows_blob(store_rows *r, int col, int *bytes) {
    const void *b = sqlite3_column_blob(r->s, col);
    *bytes = sqlite3_column_bytes(r->s, col);
    return b;
}

void store_rows_close(store_rows *r) {
    if (!r) return;
    sqlite3_finalize(r->s);
    free(r);
}

/* ---------- checks and sizes ---------- */

/* count(*) of a query over ?1 = the run */
static int64_t count_of(store *st, int64_t run_id, const char *sql, const char *what) {
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : st_fail(st, what);
    sqlite3_finalize(s);
    return n;
}

int64_t store_count_tokens(store *st, int64_t run_id) {
    return count_of(st, run_id, "SELECT count(*) FROM tokens WHERE run_id = ?1", "counting the run's tokens");
}

int64_t store_count_analyses(store *st, int64_t run_id) {
    return count_of(st, run_id, "SELECT count(*) FROM analyses WHERE run_id = ?1", "counting the run's analyses");
}

/* Step a check query whose one row (if any) is the offender: 1 with its first n columns in v, 0 none, -1 error. */
static int first_row(store *st, sqlite3_stmt *s, int64_t *v, int n, const char *what) {
    int rc = sqlite3_step(s);
    for (int i = 0; rc == SQLITE_ROW && i < n; i++) v[i] = sqlite3_column_int64(s, i);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : st_fail(st, what);
}

int store_first_token_past_int32(store *st, int64_t run_id, int column, int64_t *window, int64_t *position,
                                 int64_t *value) {
    static const char *const cols[3] = {"token_id", "next_token_id", "top1"};
    if (column < 0 || column > 2) return gs_fail("%s: no token column %d", store_path(st), column);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT window, position, %s FROM tokens WHERE run_id = ?1 AND typeof(%s) = 'integer'"
             " AND %s NOT BETWEEN -2147483648 AND 2147483647 ORDER BY window, position LIMIT 1",
             cols[column], cols[column], cols[column]);
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int64_t v[3] = {0, 0, 0};
    int rc = first_row(st, s, v, 3, "checking the run's token ids");
    *window = v[0];
    *position = v[1];
    *value = v[2];
    return rc;
}

int store_first_state_past_int32(store *st, int64_t run_id, const char *kind, int64_t *window, int64_t *position) {
    sqlite3_stmt *s = st_prepare(st, "SELECT window, position FROM states WHERE run_id = ?1 AND kind = ?2 AND"
                                     " (window NOT BETWEEN -2147483648 AND 2147483647 OR"
                                     " position NOT BETWEEN -2147483648 AND 2147483647) LIMIT 1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, kind, -1, SQLITE_TRANSIENT);
    int64_t v[2] = {0, 0};
    int rc = first_row(st, s, v, 2, "checking the run's state windows and positions");
    *window = v[0];
    *position = v[1];
    return rc;
}

int store_head_steps_extent(store *st, int64_t run_id, store_head_extent *out) {
    sqlite3_stmt *s = st_prepare(st, "SELECT count(*), count(DISTINCT window), ifnull(max(position), -1) + 1,"
                                     " ifnull(max(head), -1) + 1, min(position), min(head), min(window), max(window)"
                                     " FROM head_steps WHERE run_id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    int64_t v[8] = {0};
    int rc = first_row(st, s, v, 8, "measuring the run's head steps");
    if (rc == 0) return st_fail(st, "measuring the run's head steps");
    *out = (store_head_extent){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    return rc < 0 ? -1 : 0;
}
