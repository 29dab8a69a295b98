/* A run's tables row by row, for the exporter (notebooks-export/): each
 * table it writes is a named query of the store's (one table, store/rows.c),
 * read through a cursor of typed columns, so that no SQL lives outside
 * store/. The columns and their order are what docs/export.md lists. */
#ifndef GS_STORE_ROWS_H
#define GS_STORE_ROWS_H

#include <stdint.h>

#include "store/store.h"

typedef enum {
    STORE_ROWS_RUN,              /* the run's row of runs (every column) */
    STORE_ROWS_TOKENS_TEXT,      /* tokens_text by (window, position) */
    STORE_ROWS_VOCABULARY,       /* token id -> piece of the run's tokenizer */
    STORE_ROWS_HEAD_STEPS,       /* window, position, head, alpha, beta, mem_norm by (window, position, head) */
    STORE_ROWS_ANALYSES,         /* the run's analyses by id */
    STORE_ROWS_ANALYSIS_SCALARS, /* analysis_id, analysis, key, value, note */
    STORE_ROWS_ANALYSIS_SERIES,  /* analysis_id, analysis, series, idx, x, y, label */
    STORE_ROWS_ANALYSIS_VECTORS, /* analysis_id, analysis, key, vector (float32 little-endian blob) */
    STORE_ROWS_COUNT
} store_rows_table;

/* a column's value type in the current row */
typedef enum { STORE_VALUE_NULL, STORE_VALUE_INT, STORE_VALUE_FLOAT, STORE_VALUE_TEXT, STORE_VALUE_BLOB } store_value_type;

typedef struct store_rows store_rows;
/* NULL with gs_error() set on failure. */
store_rows *store_rows_open(store *st, int64_t run_id, store_rows_table table);
/* 1: a row is current, 0: the end, -1: an error (gs_error() set). */
int store_rows_next(store_rows *r);
int store_rows_columns(const store_rows *r);
const char *store_rows_name(const store_rows *r, int col);
store_value_type store_rows_type(store_rows *r, int col);
int64_t store_rows_int(store_rows *r, int col);
double store_rows_double(store_rows *r, int col); /* an integer widened; NULL reads 0, text its numeric prefix */
const char *store_rows_text(store_rows *r, int col); /* NULL for a NULL value; valid until the next row */
const void *store_rows_blob(store_rows *r, int col, int *bytes);
void store_rows_close(store_rows *r); /* NULL is fine */

/* ---------- checks and sizes the exporter needs before it writes ---------- */
int64_t store_count_tokens(store *st, int64_t run_id);
int64_t store_count_analyses(store *st, int64_t run_id);
/* The first token row (by window, position) whose column (0 token_id, 1 next_token_id, 2 top1) holds an
 * integer outside int32: 1 with its window, position and value, 0 when none, -1 on error. */
int store_first_token_past_int32(store *st, int64_t run_id, int column, int64_t *window, int64_t *position,
                                 int64_t *value);
/* A state of that kind whose window or position lies outside int32: 1 with them, 0 when none, -1 on error. */
int store_first_state_past_int32(store *st, int64_t run_id, const char *kind, int64_t *window, int64_t *position);
/* The extent of the run's head_steps: rows, distinct windows, max position + 1 and max head + 1 (0 when none),
 * the smallest position and head, the smallest and largest window. */
typedef struct {
    int64_t rows, n_windows, n_positions, n_heads, min_position, min_head, min_window, max_window;
} store_head_extent;
int store_head_steps_extent(store *st, int64_t run_id, store_head_extent *out);

#endif
