/* The causal tools' tables (store/causal.h, docs/schema.md). */
#include "store/experiments.h"

#include <math.h>
#include <sqlite3.h>

#include "base/error.h"

static const char tables[] =
    "CREATE TABLE IF NOT EXISTS causal_experiments ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL CHECK (kind IN ('patch', 'steer', 'lens')),"
    " model_path TEXT, model_sha256 TEXT, input_path TEXT,"
    " settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),"
    " code_version TEXT,"
    " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));"
    "CREATE TABLE IF NOT EXISTS patch_baselines ("
    " experiment_id INTEGER NOT NULL REFERENCES causal_experiments(id) ON DELETE CASCADE,"
    " pair INTEGER NOT NULL, ld_clean REAL, ld_corrupted REAL,"
    " PRIMARY KEY (experiment_id, pair)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS patch_results ("
    " experiment_id INTEGER NOT NULL REFERENCES causal_experiments(id) ON DELETE CASCADE,"
    " component_index INTEGER NOT NULL, component TEXT NOT NULL,"
    " position INTEGER NOT NULL, pair INTEGER NOT NULL,"
    " logit_diff REAL, score REAL,"
    " PRIMARY KEY (experiment_id, component_index, position, pair)) WITHOUT ROWID;"
    "CREATE VIEW IF NOT EXISTS patch_summary AS"
    " SELECT experiment_id, component_index, component, position, count(score) AS n_pairs, avg(score) AS mean_score,"
    "  min(score) AS min_score, max(score) AS max_score"
    " FROM patch_results GROUP BY experiment_id, component_index, position;"
    "CREATE TABLE IF NOT EXISTS steer_results ("
    " experiment_id INTEGER NOT NULL REFERENCES causal_experiments(id) ON DELETE CASCADE,"
    " c REAL NOT NULL, n_tokens INTEGER, nll REAL, delta_nll REAL, top1_changed REAL,"
    " top_tokens TEXT CHECK (top_tokens IS NULL OR json_valid(top_tokens)),"
    " PRIMARY KEY (experiment_id, c)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS lens_tokens ("
    " experiment_id INTEGER NOT NULL REFERENCES causal_experiments(id) ON DELETE CASCADE,"
    " site TEXT NOT NULL, position INTEGER NOT NULL, rank INTEGER NOT NULL,"
    " token_id INTEGER NOT NULL, logit REAL, piece TEXT,"
    " PRIMARY KEY (experiment_id, site, position, rank)) WITHOUT ROWID;";

int store_causal_tables(store *st) {
    char *err = NULL;
    if (sqlite3_exec(store_db(st), tables, NULL, NULL, &err) != SQLITE_OK) {
        gs_fail("creating the causal tables: %s", err ? err : sqlite3_errmsg(store_db(st)));
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

static int exec(store *st, const char *sql) {
    if (sqlite3_exec(store_db(st), sql, NULL, NULL, NULL) != SQLITE_OK)
        return gs_fail("%s: %s", sql, sqlite3_errmsg(store_db(st)));
    return 0;
}

int64_t store_causal_begin(store *st, const char *kind, const char *model_path, const char *model_sha256,
                           const char *input_path, const char *settings_json, const char *code_version) {
    if (exec(st, "BEGIN IMMEDIATE")) return -1;
    if (store_causal_tables(st)) { store_causal_rollback(st); return -1; }
    sqlite3_stmt *s;
    sqlite3 *db = store_db(st);
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO causal_experiments(kind, model_path, model_sha256, input_path, settings, code_version)"
                           " VALUES (?1, ?2, ?3, ?4, json(?5), ?6)", -1, &s, NULL) != SQLITE_OK) {
        gs_fail("recording the experiment: %s", sqlite3_errmsg(db));
        store_causal_rollback(st);
        return -1;
    }
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, model_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, model_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, input_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, settings_json ? settings_json : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, code_version, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        gs_fail("recording the experiment: %s", sqlite3_errmsg(db));
        store_causal_rollback(st);
        return -1;
    }
    return sqlite3_last_insert_rowid(db);
}

int store_causal_commit(store *st) { return exec(st, "COMMIT"); }
void store_causal_rollback(store *st) { sqlite3_exec(store_db(st), "ROLLBACK", NULL, NULL, NULL); }

static void bind_real(sqlite3_stmt *s, int i, double v) {
    if (isfinite(v)) sqlite3_bind_double(s, i, v);
    else sqlite3_bind_null(s, i);
}

/* a statement per row: these tables take thousands of rows, not millions */
static int put(store *st, const char *sql, sqlite3_stmt **s) {
    if (sqlite3_prepare_v2(store_db(st), sql, -1, s, NULL) != SQLITE_OK)
        return gs_fail("writing results: %s", sqlite3_errmsg(store_db(st)));
    return 0;
}
static int done(store *st, sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : gs_fail("writing results: %s", sqlite3_errmsg(store_db(st)));
}

int store_put_patch_baseline(store *st, int64_t exp, int pair, double ld_clean, double ld_corrupted) {
    sqlite3_stmt *s;
    if (put(st, "INSERT INTO patch_baselines VALUES (?1, ?2, ?3, ?4)", &s)) return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int(s, 2, pair);
    bind_real(s, 3, ld_clean);
    bind_real(s, 4, ld_corrupted);
    return done(st, s);
}

int store_put_patch(store *st, int64_t exp, int component_index, const char *component, int position, int pair,
                    double logit_diff, double score) {
    sqlite3_stmt *s;
    if (put(st, "INSERT INTO patch_results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &s)) return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int(s, 2, component_index);
    sqlite3_bind_text(s, 3, component, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, position);
    sqlite3_bind_int(s, 5, pair);
    bind_real(s, 6, logit_diff);
    bind_real(s, 7, score);
    return done(st, s);
}

int store_put_steer(store *st, int64_t exp, double c, int64_t n_tokens, double nll, double delta_nll,
                    double top1_changed, const char *top_tokens) {
    sqlite3_stmt *s;
    if (put(st, "INSERT OR REPLACE INTO steer_results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &s)) return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_double(s, 2, c);
    sqlite3_bind_int64(s, 3, n_tokens);
    bind_real(s, 4, nll);
    bind_real(s, 5, delta_nll);
    bind_real(s, 6, top1_changed);
    if (top_tokens) sqlite3_bind_text(s, 7, top_tokens, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 7);
    return done(st, s);
}

int store_put_lens(store *st, int64_t exp, const char *site, int position, int rank, int32_t token_id, double logit,
                   const char *piece) {
    sqlite3_stmt *s;
    if (put(st, "INSERT INTO lens_tokens VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &s)) return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, site, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, position);
    sqlite3_bind_int(s, 4, rank);
    sqlite3_bind_int(s, 5, token_id);
    bind_real(s, 6, logit);
    if (piece) sqlite3_bind_text(s, 7, piece, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(s, 7);
    return done(st, s);
}
