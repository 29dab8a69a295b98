/* Readers of the causal experiments' tables for their figures
 * (plots/causal_plots.c), declared in store/experiments.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/experiments.h"
#include "store/store_internal.h"

int store_experiment_model_path(store *st, int64_t experiment, char *buf, size_t size) {
    buf[0] = 0;
    sqlite3_stmt *s = st_prepare(st, "SELECT model_path FROM causal_experiments WHERE id = ?1");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, experiment);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) st_copy_text(s, 0, buf, size);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : st_fail(st, "reading an experiment's model");
}

int64_t store_newest_experiment(store *st, const char *kind) {
    /* a store that never held an experiment has no such table: none */
    if (sqlite3_table_column_metadata(st->db, NULL, "causal_experiments", "id", NULL, NULL, NULL, NULL, NULL) != SQLITE_OK)
        return 0;
    sqlite3_stmt *s = st_prepare(st, "SELECT max(id) FROM causal_experiments WHERE kind = ?1");
    if (!s) return -1;
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? id : st_fail(st, "reading the experiments");
}

/* a REAL column, NaN for NULL */
static double real_or_nan(sqlite3_stmt *s, int col) {
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

static void fill_patch_cell(sqlite3_stmt *s, void *row) {
    store_patch_cell *c = row;
    st_copy_text(s, 0, c->component, sizeof c->component);
    c->position = sqlite3_column_int(s, 1);
    c->mean_score = real_or_nan(s, 2);
}

/* The rows of an experiment's query (?1 the experiment), one struct of `size` bytes each, by fill. */
static int experiment_rows(store *st, int64_t experiment, const char *sql, size_t size,
                           void (*fill)(sqlite3_stmt *, void *), void **out, const char *what) {
    sqlite3_stmt *s = st_prepare(st, sql);
    if (s) sqlite3_bind_int64(s, 1, experiment);
    return st_read_rows(st, s, size, fill, out, what);
}

int64_t store_patch_summary(store *st, int64_t experiment, store_patch_cell **out) {
    void *rows = NULL;
    int n = experiment_rows(st, experiment, "SELECT component, position, mean_score FROM patch_summary"
                            " WHERE experiment_id = ?1 ORDER BY component_index, position < 0, position",
                            sizeof **out, fill_patch_cell, &rows, "reading a patch experiment");
    *out = rows;
    return n;
}

static void fill_steer_point(sqlite3_stmt *s, void *row) {
    store_steer_point *p = row;
    p->c = sqlite3_column_double(s, 0);
    p->delta_nll = real_or_nan(s, 1);
    p->top1_changed = real_or_nan(s, 2);
}

int store_steer_points(store *st, int64_t experiment, store_steer_point **out) {
    void *rows = NULL;
    int n = experiment_rows(st, experiment, "SELECT c, delta_nll, top1_changed FROM steer_results"
                            " WHERE experiment_id = ?1 ORDER BY c", sizeof **out, fill_steer_point, &rows,
                            "reading a steer experiment");
    *out = rows;
    return n;
}

/* The pieces are JSON text in the settings; json_each reads them in order. */
int store_patch_clean_tokens(store *st, int64_t experiment, char ***out) {
    *out = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT j.value FROM causal_experiments e, json_each(e.settings, '$.clean_tokens') j"
                                     " WHERE e.id = ?1 AND json_valid(e.settings) ORDER BY j.key");
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, experiment);
    int n = 0, cap = 0;
    char **v = NULL;
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (n == cap) {
            char **a = realloc(v, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *a);
            if (!a) break;
            v = a;
        }
        const char *t = (const char *)sqlite3_column_text(s, 0);
        if (!(v[n] = strdup(t ? t : ""))) break;
        n++;
    }
    sqlite3_finalize(s);
    *out = v;
    return n;
}

static void fill_lens_cell(sqlite3_stmt *s, void *row) {
    store_lens_cell *c = row;
    st_copy_text(s, 0, c->site, sizeof c->site);
    c->position = sqlite3_column_int(s, 1);
    c->token_id = sqlite3_column_int(s, 2);
    c->logit = real_or_nan(s, 3);
    st_copy_text(s, 4, c->piece, sizeof c->piece);
    c->tie = sqlite3_column_int(s, 5);
}

int store_lens_top1(store *st, int64_t experiment, store_lens_cell **out) {
    void *rows = NULL;
    /* sites in the order the lens ran them: the order of their first rows is lost (WITHOUT ROWID), so by layer
     * number where the name has one, then by name */
    int n = experiment_rows(st, experiment, "SELECT site, position, token_id, logit, piece, EXISTS (SELECT 1 FROM lens_tokens"
                            " b WHERE b.experiment_id = a.experiment_id AND b.site = a.site AND b.position = a.position"
                            " AND b.rank = 1 AND b.logit = a.logit) FROM lens_tokens a"
                            " WHERE experiment_id = ?1 AND rank = 0 ORDER BY"
                            " CASE WHEN site LIKE 'blocks.%' THEN CAST(substr(site, 8) AS INTEGER) ELSE 1e9 END, site, position",
                            sizeof **out, fill_lens_cell, &rows, "reading a lens experiment");
    *out = rows;
    return n;
}
