/* run_sites (schema version 2): which sites a run recorded and where each
 * lives, and reading a per-head site by name wherever it is stored. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/store_internal.h"

int store_put_site(store *st, int64_t run_id, const store_site *x) {
    if (!st->writable) return gs_fail("%s: opened read-only; cannot write", st->path);
    sqlite3_stmt *s = st_prepare(st, "INSERT OR REPLACE INTO run_sites(run_id, site, shape, layer, width, dtype, "
                                     "stored_in, stored_as, role) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, x->site, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, x->shape, -1, SQLITE_TRANSIENT);
    if (x->layer >= 0) sqlite3_bind_int(s, 4, x->layer);
    else sqlite3_bind_null(s, 4);
    sqlite3_bind_int(s, 5, x->width);
    if (x->dtype[0]) sqlite3_bind_text(s, 6, x->dtype, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(s, 6);
    sqlite3_bind_text(s, 7, x->stored_in, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 8, x->stored_as, -1, SQLITE_TRANSIENT);
    if (x->role[0]) sqlite3_bind_text(s, 9, x->role, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(s, 9);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : st_fail(st, "writing a run's site");
}

/* rows of run_sites WHERE run_id = ?1 AND <cond> ORDER BY site, into out (up to max) */
static int select_sites(store *st, int64_t run_id, const char *cond, const char *arg, store_site *out, int max) {
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT site, shape, ifnull(layer, -1), width, ifnull(dtype, ''), stored_in, stored_as, ifnull(role, '')"
             " FROM run_sites WHERE run_id = ?1%s ORDER BY site", cond);
    sqlite3_stmt *s = st_prepare(st, sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run_id);
    if (arg) sqlite3_bind_text(s, 2, arg, -1, SQLITE_TRANSIENT);
    int n = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n < max) {
            store_site *x = &out[n];
            st_copy_text(s, 0, x->site, sizeof x->site);
            st_copy_text(s, 1, x->shape, sizeof x->shape);
            x->layer = sqlite3_column_int(s, 2);
            x->width = sqlite3_column_int(s, 3);
            st_copy_text(s, 4, x->dtype, sizeof x->dtype);
            st_copy_text(s, 5, x->stored_in, sizeof x->stored_in);
            st_copy_text(s, 6, x->stored_as, sizeof x->stored_as);
            st_copy_text(s, 7, x->role, sizeof x->role);
        }
        n++;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? n : st_fail(st, "reading a run's sites");
}

int store_run_sites(store *st, int64_t run_id, store_site *out, int max) { return select_sites(st, run_id, "", NULL, out, max); }

int store_find_site(store *st, int64_t run_id, const char *site, store_site *out) {
    int n = select_sites(st, run_id, " AND site = ?2", site, out, 1);
    return n < 0 ? -1 : n == 0;
}

int store_site_of_role(store *st, int64_t run_id, const char *role, store_site *out) {
    int n = select_sites(st, run_id, " AND role = ?2", role, out, 1);
    return n < 0 ? -1 : n == 0;
}

/* A per-head site stored as vectors (one of H floats per token) in states. */
static int heads_from_states(store *st, int64_t run_id, const store_site *x, store_head_array *out) {
    int64_t n = store_count_states(st, run_id, x->stored_as);
    if (n < 0) return -1;
    if (n == 0) return gs_fail("%s: run %lld has no rows of %s", st->path, (long long)run_id, x->site);
    store_states *r = store_states_open(st, run_id, x->stored_as, -1, -1);
    if (!r) return -1;
    int H = store_states_dim(r);
    float *rows = malloc((size_t)n * H * sizeof *rows);
    int32_t *win = malloc((size_t)n * sizeof *win), *pos = malloc((size_t)n * sizeof *pos);
    int rc = -1;
    if (!rows || !win || !pos) { gs_fail("%s: out of memory", st->path); goto out; }
    if (store_states_read(r, rows, win, pos, n) != n) { gs_fail_context("%s: reading %s: ", st->path, x->site); goto out; }
    int64_t nw = 0, P = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || win[i] != win[i - 1]) nw++;
        if (pos[i] < 0) { gs_fail("%s: %s has a negative position", st->path, x->site); goto out; }
        if (pos[i] + 1 > P) P = pos[i] + 1;
    }
    out->n_windows = nw;
    out->n_positions = P;
    out->n_heads = H;
    out->window_ids = malloc((size_t)nw * sizeof *out->window_ids);
    out->values = malloc((size_t)(nw * P * H) * sizeof *out->values);
    if (!out->window_ids || !out->values) { gs_fail("%s: out of memory", st->path); goto out; }
    for (int64_t i = 0; i < nw * P * H; i++) out->values[i] = NAN;
    for (int64_t i = 0, w = -1; i < n; i++) {
        if (i == 0 || win[i] != win[i - 1]) out->window_ids[++w] = win[i];
        memcpy(out->values + (w * P + pos[i]) * H, rows + i * H, (size_t)H * sizeof *rows);
    }
    rc = 0;
out:
    if (rc) store_head_array_free(out);
    store_states_close(r);
    free(rows);
    free(win);
    free(pos);
    return rc;
}

int store_read_site_heads(store *st, int64_t run_id, const char *site, store_head_array *out) {
    memset(out, 0, sizeof *out);
    store_site x;
    int found = store_find_site(st, run_id, site, &x);
    if (found < 0) return -1;
    /* a run without run_sites rows for them: the memory's decays and write strengths live in head_steps */
    if (found == 1 && !strcmp(site, "mem.alpha")) return store_read_heads(st, run_id, "alpha", out);
    if (found == 1 && !strcmp(site, "mem.beta")) return store_read_heads(st, run_id, "beta", out);
    if (found == 1) return gs_fail("%s: run %lld did not record the site %s", st->path, (long long)run_id, site);
    if (strcmp(x.shape, "per-head scalar")) return gs_fail("%s: %s is a %s site, not a per-head scalar", st->path, site, x.shape);
    if (!strcmp(x.stored_in, "head_steps")) return store_read_heads(st, run_id, x.stored_as, out);
    return heads_from_states(st, run_id, &x, out);
}
