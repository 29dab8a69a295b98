/* Resuming an interrupted run. A window counts as recorded only once its
 * `windows` row exists (written last, in the batch that completes it). After
 * a kill, rows of windows without one (a window whose rows spanned several
 * batches) are partial: they are deleted and recording continues at the
 * first missing window. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/store_internal.h"

/* Name the first setting that differs between two JSON objects. */
static void describe_difference(const char *a_json, const char *b_json, char *out, size_t size) {
    cJSON *a = cJSON_Parse(a_json), *b = cJSON_Parse(b_json);
    snprintf(out, size, "settings differ");
    for (int pass = 0; pass < 2 && a && b; pass++) {
        cJSON *x = pass ? b : a, *y = pass ? a : b;
        for (cJSON *c = x->child; c; c = c->next) {
            cJSON *d = cJSON_GetObjectItemCaseSensitive(y, c->string);
            if (d && cJSON_Compare(c, d, 1)) continue;
            char *cv = cJSON_PrintUnformatted(c), *dv = d ? cJSON_PrintUnformatted(d) : NULL;
            const char *rec = pass ? (dv ? dv : "absent") : (cv ? cv : "?");
            const char *now = pass ? (cv ? cv : "?") : (dv ? dv : "absent");
            snprintf(out, size, "setting '%s' is %.80s in the run but %.80s now", c->string, rec, now);
            free(cv);
            free(dv);
            pass = 2;
            break;
        }
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int64_t store_resume_run(store *st, int64_t run_id, const char *model_sha256, const char *settings_json) {
    return store_resume_run_at(st, run_id, model_sha256, settings_json, 0);
}

int64_t store_resume_run_at(store *st, int64_t run_id, const char *model_sha256, const char *settings_json,
                            int64_t from) {
    if (!st->writable) return gs_fail("%s: opened read-only; cannot resume", st->path);
    store_run_info info;
    if (store_run_get(st, run_id, &info)) return -1;
    if (model_sha256 && strcmp(model_sha256, info.model_sha256))
        return gs_fail("%s: run %lld was recorded with model sha256 %.12s..., but this model is %.12s...: resume with "
                       "the same checkpoint, or record a new run without --resume",
                       st->path, (long long)run_id, info.model_sha256[0] ? info.model_sha256 : "(none)", model_sha256);
    if (settings_json) {
        char *recorded = store_run_settings(st, run_id);
        if (!recorded) return -1;
        char *a = store_canonical_json(recorded), *b = store_canonical_json(settings_json);
        int same = a && b && !strcmp(a, b);
        char why[256] = "";
        if (!same && a && b) describe_difference(a, b, why, sizeof why);
        free(recorded);
        free(a);
        if (!b) return gs_fail_context("%s: resuming run %lld: settings: ", st->path, (long long)run_id);
        free(b);
        if (!same)
            return gs_fail("%s: cannot resume run %lld with different settings (%s): use the run's settings, or "
                           "record a new run without --resume", st->path, (long long)run_id, why);
    }
    if (store_begin(st)) return -1;
    /* the leading complete windows from, from + 1, ..., next - 1 */
    sqlite3_stmt *s = st_prepare(st, "SELECT window, ifnull(n_tokens, 0) FROM windows WHERE run_id = ?1 AND window >= ?2"
                                     " ORDER BY window");
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int64(s, 2, from);
    int64_t next = from, tokens = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && sqlite3_column_int64(s, 0) == next) {
        next++;
        tokens += sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) { st_fail(st, "reading a run's windows"); goto fail; }
    if (!strcmp(info.status, "complete")) return store_commit(st) ? -1 : next;
    static const char *const sql[] = {
        "DELETE FROM tokens WHERE run_id = ?1 AND window >= ?2",
        "DELETE FROM head_steps WHERE run_id = ?1 AND window >= ?2",
        "DELETE FROM states WHERE run_id = ?1 AND window >= ?2",
        "DELETE FROM windows WHERE run_id = ?1 AND window >= ?2",
        "UPDATE runs SET status = 'running', finished_at = NULL, message = NULL, windows_done = ?4, tokens_done = ?3,"
        " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
    };
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++) {
        s = st_prepare(st, sql[i]);
        if (!s) goto fail;
        sqlite3_bind_int64(s, 1, run_id);
        sqlite3_bind_int64(s, 2, next);
        if (sqlite3_bind_parameter_count(s) >= 3) sqlite3_bind_int64(s, 3, tokens);
        if (sqlite3_bind_parameter_count(s) >= 4) sqlite3_bind_int64(s, 4, next - from);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) { st_fail(st, "removing a run's partial windows"); goto fail; }
    }
    if (store_commit(st)) return -1;
    return next;
fail:
    if (st->depth <= 1) store_rollback(st);
    else st->depth--;
    return -1;
}
