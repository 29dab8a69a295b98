/* Readers of the causal tools' tables beyond one matrix (store/causal.h). */
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
