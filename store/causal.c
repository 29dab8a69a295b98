/* Writers and readers of the causal tools' tables (store/causal.h). */
#include "store/causal.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "store/store_internal.h"

int store_put_attention_queries(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                                const store_attention_query *q, int n) {
    sqlite3_stmt *qs = st_prepare(st, "INSERT OR REPLACE INTO attention_queries(analysis_id, window, layer, head, query,"
                                      " n_keys, topk_mass, l1, heuristic_l1, read_error, heuristic_error)"
                                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    sqlite3_stmt *ks = qs ? st_prepare(st, "INSERT OR REPLACE INTO attention_topk(analysis_id, window, layer, head, query,"
                                           " rank, key, weight, heuristic) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
                          : NULL;
    int rc = qs && ks ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        const store_attention_query *x = &q[i];
        sqlite3_stmt *both[2] = {qs, ks};
        for (int b = 0; b < 2; b++) {
            sqlite3_bind_int64(both[b], 1, analysis_id);
            sqlite3_bind_int(both[b], 2, window);
            sqlite3_bind_int(both[b], 3, layer);
            sqlite3_bind_int(both[b], 4, head);
            sqlite3_bind_int(both[b], 5, x->query);
        }
        sqlite3_bind_int(qs, 6, x->n_keys);
        st_bind_float(qs, 7, x->topk_mass);
        st_bind_float(qs, 8, x->l1);
        st_bind_float(qs, 9, x->heuristic_l1);
        st_bind_float(qs, 10, x->read_error);
        st_bind_float(qs, 11, x->heuristic_error);
        rc = st_step_done(st, qs, "writing effective-attention queries");
        for (int r = 0; r < x->n_top && rc == 0; r++) {
            sqlite3_bind_int(ks, 6, r);
            sqlite3_bind_int(ks, 7, x->key[r]);
            sqlite3_bind_double(ks, 8, x->weight[r]);
            if (x->heuristic) st_bind_float(ks, 9, x->heuristic[r]);
            else sqlite3_bind_null(ks, 9);
            rc = st_step_done(st, ks, "writing effective-attention top keys");
        }
    }
    sqlite3_finalize(qs);
    sqlite3_finalize(ks);
    return rc;
}

/* ?1..?5 of an attention_matrices statement: the row's key */
static void bind_matrix_key(sqlite3_stmt *s, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                            const char *kind) {
    sqlite3_bind_int64(s, 1, analysis_id);
    sqlite3_bind_int(s, 2, window);
    sqlite3_bind_int(s, 3, layer);
    sqlite3_bind_int(s, 4, head);
    sqlite3_bind_text(s, 5, kind, -1, SQLITE_STATIC);
}

int store_put_attention_matrix(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                               const char *kind, int32_t n, const float *weights) {
    sqlite3_stmt *s = st_prepare(st, "INSERT OR REPLACE INTO attention_matrices(analysis_id, window, layer, head, kind,"
                                     " n, weights) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!s) return -1;
    bind_matrix_key(s, analysis_id, window, layer, head, kind);
    sqlite3_bind_int(s, 6, n);
    /* float32 little-endian, as every vector of the store (the hosts we build for are little-endian) */
    sqlite3_bind_blob64(s, 7, weights, (sqlite3_uint64)n * n * sizeof(float), SQLITE_STATIC);
    int rc = st_step_done(st, s, "writing an effective-attention matrix");
    sqlite3_finalize(s);
    return rc;
}

int store_read_attention_matrix(store *st, int64_t analysis_id, int32_t window, int32_t layer, int32_t head,
                                const char *kind, float **weights, int32_t *n) {
    *weights = NULL;
    *n = 0;
    sqlite3_stmt *s = st_prepare(st, "SELECT n, weights FROM attention_matrices WHERE analysis_id = ?1 AND window = ?2"
                                     " AND layer = ?3 AND head = ?4 AND kind = ?5");
    if (!s) return -1;
    bind_matrix_key(s, analysis_id, window, layer, head, kind);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) { sqlite3_finalize(s); return 1; }
    if (rc != SQLITE_ROW) { rc = st_fail(st, "reading an effective-attention matrix"); sqlite3_finalize(s); return rc; }
    int64_t side = sqlite3_column_int64(s, 0);
    const void *blob = sqlite3_column_blob(s, 1);
    int bytes = sqlite3_column_bytes(s, 1);
    if (side < 1 || side > 65536 || bytes != side * side * 4 || !blob) {
        sqlite3_finalize(s);
        return gs_fail("%s: attention_matrices row (window %d, layer %d, head %d) is %d bytes for n = %lld",
                       store_path(st), window, layer, head, bytes, (long long)side);
    }
    float *w = malloc((size_t)bytes);
    if (!w) { sqlite3_finalize(s); return gs_fail("out of memory for a %lld x %lld matrix", (long long)side, (long long)side); }
    memcpy(w, blob, (size_t)bytes);
    sqlite3_finalize(s);
    *weights = w;
    *n = (int32_t)side;
    return 0;
}

int store_put_logit_parts(store *st, int64_t analysis_id, int32_t window, int32_t position, int32_t token_id,
                          const store_logit_part *parts, int n) {
    sqlite3_stmt *s = st_prepare(st, "INSERT OR REPLACE INTO logit_attribution(analysis_id, window, position, part,"
                                     " layer, head, token_id, logit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!s) return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(s, 1, analysis_id);
        sqlite3_bind_int(s, 2, window);
        sqlite3_bind_int(s, 3, position);
        sqlite3_bind_text(s, 4, parts[i].part, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 5, parts[i].layer);
        sqlite3_bind_int(s, 6, parts[i].head);
        sqlite3_bind_int(s, 7, token_id);
        st_bind_float(s, 8, parts[i].logit);
        rc = st_step_done(st, s, "writing logit attribution");
    }
    sqlite3_finalize(s);
    return rc;
}
