/* store/automaton.h */
#include "store/automaton.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/store_internal.h"

static const char tables[] =
    "CREATE TABLE IF NOT EXISTS automaton_experiments ("
    " id INTEGER PRIMARY KEY,"
    " model_path TEXT, model_sha256 TEXT, task TEXT NOT NULL,"
    " monoid_size INTEGER NOT NULL, dfa_states INTEGER NOT NULL, n_strings INTEGER, n_nodes INTEGER,"
    " settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),"
    " code_version TEXT,"
    " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));"
    "CREATE TABLE IF NOT EXISTS automaton_cells ("
    " experiment_id INTEGER NOT NULL REFERENCES automaton_experiments(id) ON DELETE CASCADE,"
    " grouping TEXT NOT NULL CHECK (grouping IN ('level', 'length')),"
    " in_distribution INTEGER NOT NULL CHECK (in_distribution IN (0, 1)),"
    " bucket INTEGER NOT NULL, min_span INTEGER, max_span INTEGER,"
    " n_nodes INTEGER, n_points INTEGER, n_elements INTEGER, majority REAL,"
    " kmeans_purity REAL, kmeans_ari REAL,"
    " auto_points INTEGER, auto_elements INTEGER, auto_k INTEGER, auto_silhouette REAL, auto_purity REAL, auto_ari REAL,"
    " PRIMARY KEY (experiment_id, grouping, in_distribution, bucket)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS automaton_geometry ("
    " experiment_id INTEGER NOT NULL REFERENCES automaton_experiments(id) ON DELETE CASCADE,"
    " states TEXT NOT NULL CHECK (states IN ('prefix', 'node')),"
    " in_distribution INTEGER NOT NULL CHECK (in_distribution IN (0, 1)),"
    " n_seen INTEGER, n_states INTEGER, d INTEGER, norm_mean REAL, mean_norm REAL, total_variance REAL,"
    " components_90 INTEGER, components_99 INTEGER, participation_ratio REAL, stable_rank REAL,"
    " cumulative_explained TEXT CHECK (json_valid(cumulative_explained)),"
    " vectors BLOB," /* n_states x d little-endian float32: the sample measured */
    " PRIMARY KEY (experiment_id, states, in_distribution)) WITHOUT ROWID;";

int store_automaton_tables(store *st) { return st_exec(st, tables, "creating the automaton tables"); }

static int put_cell(store *st, sqlite3_stmt *s, int64_t id, const store_automaton_cell *c) {
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, c->grouping ? "length" : "level", -1, SQLITE_STATIC);
    const int ints[] = {c->in_distribution, c->bucket, c->min_span, c->max_span};
    for (int i = 0; i < 4; i++) sqlite3_bind_int(s, 3 + i, ints[i]);
    sqlite3_bind_int64(s, 7, c->n_nodes);
    sqlite3_bind_int(s, 8, c->n_points);
    sqlite3_bind_int(s, 9, c->n_elements);
    st_bind_float(s, 10, c->majority);
    st_bind_float(s, 11, c->kmeans_purity);
    st_bind_float(s, 12, c->kmeans_ari);
    sqlite3_bind_int(s, 13, c->auto_points);
    sqlite3_bind_int(s, 14, c->auto_elements);
    sqlite3_bind_int(s, 15, c->auto_k);
    st_bind_float(s, 16, c->auto_silhouette);
    st_bind_float(s, 17, c->auto_purity);
    st_bind_float(s, 18, c->auto_ari);
    return st_step_done(st, s, "writing an automaton cell");
}

static int put_geometry(store *st, sqlite3_stmt *s, int64_t id, const store_automaton_geometry *g) {
    size_t size = (size_t)g->d * 24 + 3;
    char *curve = malloc(size);
    if (!curve) return gs_fail("out of memory for the explained-variance curve");
    size_t at = 0;
    curve[at++] = '[';
    for (int i = 0; i < g->d; i++) at += (size_t)snprintf(curve + at, size - at, "%s%.17g", i ? "," : "", g->cum_explained[i]);
    snprintf(curve + at, size - at, "]");
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, g->states, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, g->in_distribution);
    sqlite3_bind_int64(s, 4, g->n_seen);
    sqlite3_bind_int(s, 5, g->n_states);
    sqlite3_bind_int(s, 6, g->d);
    const double reals[] = {g->norm_mean, g->mean_norm, g->total_variance};
    for (int i = 0; i < 3; i++) st_bind_float(s, 7 + i, reals[i]);
    sqlite3_bind_int(s, 10, g->components_90);
    sqlite3_bind_int(s, 11, g->components_99);
    st_bind_float(s, 12, g->participation_ratio);
    st_bind_float(s, 13, g->stable_rank);
    sqlite3_bind_text(s, 14, curve, -1, SQLITE_TRANSIENT);
    _Static_assert(sizeof(float) == 4, "the vectors are stored as float32");
    sqlite3_bind_blob64(s, 15, g->vectors, (sqlite3_uint64)g->n_states * g->d * sizeof(float), SQLITE_STATIC);
    free(curve);
    return st_step_done(st, s, "writing an automaton geometry row");
}

int64_t store_put_automaton(store *st, const store_automaton_experiment *e, const store_automaton_cell *cells, int n) {
    if (st_exec(st, "BEGIN IMMEDIATE", "starting the automaton experiment")) return -1;
    int64_t id = -1;
    sqlite3_stmt *s = store_automaton_tables(st) ? NULL
                      : st_prepare(st, "INSERT INTO automaton_experiments(model_path, model_sha256, task, monoid_size,"
                                       " dfa_states, n_strings, n_nodes, settings, code_version)"
                                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, json(?8), ?9)");
    if (s) {
        st_bind_text(s, 1, e->model_path);
        st_bind_text(s, 2, e->model_sha256);
        sqlite3_bind_text(s, 3, e->task, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(s, 4, e->monoid_size);
        sqlite3_bind_int(s, 5, e->dfa_states);
        sqlite3_bind_int(s, 6, e->n_strings);
        sqlite3_bind_int64(s, 7, e->n_nodes);
        sqlite3_bind_text(s, 8, e->settings[0] ? e->settings : "{}", -1, SQLITE_TRANSIENT);
        st_bind_text(s, 9, e->code_version);
        if (!st_step_done(st, s, "writing the automaton experiment")) id = sqlite3_last_insert_rowid(store_db(st));
        sqlite3_finalize(s);
    }
    s = id < 0 ? NULL
               : st_prepare(st, "INSERT INTO automaton_cells VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
                                " ?13, ?14, ?15, ?16, ?17, ?18)");
    int rc = s ? 0 : -1;
    for (int i = 0; !rc && i < n; i++) rc = put_cell(st, s, id, &cells[i]);
    sqlite3_finalize(s);
    if (!rc && e->n_geometry) {
        s = st_prepare(st, "INSERT INTO automaton_geometry VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
                           " ?13, json(?14), ?15)");
        rc = s ? 0 : -1;
        for (int i = 0; !rc && i < e->n_geometry; i++) rc = put_geometry(st, s, id, &e->geometry[i]);
        sqlite3_finalize(s);
    }
    if (!rc) rc = st_exec(st, "COMMIT", "committing the automaton experiment");
    if (rc) {
        sqlite3_exec(store_db(st), "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return id;
}

static double real_or_nan(sqlite3_stmt *s, int col) {
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

static void fill_cell(sqlite3_stmt *s, void *row) {
    store_automaton_cell *c = row;
    c->grouping = !strcmp((const char *)sqlite3_column_text(s, 0), "length");
    c->in_distribution = sqlite3_column_int(s, 1);
    c->bucket = sqlite3_column_int(s, 2);
    c->min_span = sqlite3_column_int(s, 3);
    c->max_span = sqlite3_column_int(s, 4);
    c->n_nodes = sqlite3_column_int64(s, 5);
    c->n_points = sqlite3_column_int(s, 6);
    c->n_elements = sqlite3_column_int(s, 7);
    c->majority = real_or_nan(s, 8);
    c->kmeans_purity = real_or_nan(s, 9);
    c->kmeans_ari = real_or_nan(s, 10);
    c->auto_points = sqlite3_column_int(s, 11);
    c->auto_elements = sqlite3_column_int(s, 12);
    c->auto_k = sqlite3_column_int(s, 13);
    c->auto_silhouette = real_or_nan(s, 14);
    c->auto_purity = real_or_nan(s, 15);
    c->auto_ari = real_or_nan(s, 16);
}

int store_get_automaton(store *st, int64_t *id, store_automaton_experiment *e, store_automaton_cell **cells) {
    *cells = NULL;
    memset(e, 0, sizeof *e);
    sqlite3_stmt *s = st_prepare(st, "SELECT 1 FROM sqlite_schema WHERE name = 'automaton_cells'");
    int have = s && sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    if (!s) return -1;
    if (!have)
        return gs_fail("%s has no automaton experiments (gpnscope automaton MODEL --task NAME --db %s makes one)",
                       store_path(st), store_path(st));
    s = st_prepare(st, "SELECT id, model_path, model_sha256, task, monoid_size, dfa_states, n_strings,"
                                     " n_nodes, settings, code_version FROM automaton_experiments"
                                     " WHERE id = ?1 OR (?1 = 0 AND id = (SELECT max(id) FROM automaton_experiments))");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, *id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        st_copy_text(s, 1, e->model_path, sizeof e->model_path);
        st_copy_text(s, 2, e->model_sha256, sizeof e->model_sha256);
        st_copy_text(s, 3, e->task, sizeof e->task);
        e->monoid_size = sqlite3_column_int(s, 4);
        e->dfa_states = sqlite3_column_int(s, 5);
        e->n_strings = sqlite3_column_int(s, 6);
        e->n_nodes = sqlite3_column_int64(s, 7);
        st_copy_text(s, 8, e->settings, sizeof e->settings);
        st_copy_text(s, 9, e->code_version, sizeof e->code_version);
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE) {
        if (*id) return gs_fail("%s has no automaton experiment %lld", store_path(st), (long long)*id);
        return gs_fail("%s has no automaton experiment yet", store_path(st));
    }
    if (rc != SQLITE_ROW) return st_fail(st, "reading the automaton experiment");
    s = st_prepare(st, "SELECT grouping, in_distribution, bucket, min_span, max_span, n_nodes, n_points, n_elements,"
                       " majority, kmeans_purity, kmeans_ari, auto_points, auto_elements, auto_k, auto_silhouette,"
                       " auto_purity, auto_ari FROM automaton_cells WHERE experiment_id = ?1"
                       " ORDER BY grouping = 'length', in_distribution DESC, bucket");
    if (s) sqlite3_bind_int64(s, 1, *id);
    void *rows = NULL;
    int n = st_read_rows(st, s, sizeof **cells, fill_cell, &rows, "reading the automaton cells");
    *cells = rows;
    return n;
}
