/* Readers of the causal tools' tables beyond one matrix (store/causal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/causal.h"
#include "store/store_internal.h"

int store_attention_first_panel(store *st, int64_t analysis_id, int32_t *window, int32_t *layer, int *heads, int max) {
    sqlite3_stmt *s = st_prepare(st, "SELECT window, layer, head FROM attention_matrices WHERE analysis_id = ?1"
                                     " AND kind = 'exact' AND (window, layer) = (SELECT window, layer FROM"
                                     " attention_matrices WHERE analysis_id = ?1 ORDER BY window, layer LIMIT 1)"
                                     " ORDER BY head LIMIT ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_int(s, 2, max);
    int n = 0, rc = SQLITE_DONE;
    while (n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        *window = sqlite3_column_int(s, 0);
        *layer = sqlite3_column_int(s, 1);
        heads[n++] = sqlite3_column_int(s, 2);
    }
    if (n < max && rc != SQLITE_DONE) n = st_fail(st, "reading attention_matrices");
    sqlite3_finalize(s);
    return n;
}

int store_attention_heads(store *st, int64_t analysis_id, int32_t *layers, int32_t *heads, int max) {
    sqlite3_stmt *s = st_prepare(st, "SELECT DISTINCT layer, head FROM attention_matrices WHERE analysis_id = ?1"
                                     " AND kind = 'exact' ORDER BY layer, head LIMIT ?2");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_int(s, 2, max);
    int n = 0, rc = SQLITE_DONE;
    while (n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        layers[n] = sqlite3_column_int(s, 0);
        heads[n++] = sqlite3_column_int(s, 1);
    }
    if (n < max && rc != SQLITE_DONE) n = st_fail(st, "reading attention_matrices");
    sqlite3_finalize(s);
    return n;
}

int64_t store_read_logit_parts(store *st, int64_t analysis_id, int32_t window, int32_t max_position,
                               store_logit_row **rows) {
    *rows = NULL;
    sqlite3_stmt *s = st_prepare(st, "SELECT position, part, layer, head, token_id, logit FROM logit_attribution"
                                     " WHERE analysis_id = ?1 AND window = ?2 AND position < ?3"
                                     " ORDER BY position, part, layer, head");
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_int(s, 2, window);
    sqlite3_bind_int(s, 3, max_position);
    int64_t n = 0, cap = 0;
    store_logit_row *v = NULL;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            store_logit_row *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) { free(v); sqlite3_finalize(s); return gs_fail("out of memory reading logit_attribution"); }
            v = nv;
        }
        store_logit_row *r = &v[n++];
        const unsigned char *part = sqlite3_column_text(s, 1);
        r->position = sqlite3_column_int(s, 0);
        snprintf(r->part, sizeof r->part, "%s", part ? (const char *)part : "");
        r->layer = sqlite3_column_int(s, 2);
        r->head = sqlite3_column_int(s, 3);
        r->token_id = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 4);
        r->logit = sqlite3_column_type(s, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 5);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) { free(v); return st_fail(st, "reading logit_attribution"); }
    *rows = v;
    return n;
}
