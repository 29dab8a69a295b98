/* Where the analyses get their states from.
 *
 * A gs_state_source yields float32 state rows in blocks, each with its
 * (window, position): the store's reader (float16 widened on read), or plain
 * arrays (gs_states) in tests and benchmarks. Contract for the producer:
 *   - the rows of one window come consecutively, positions strictly
 *     increasing (ORDER BY window, position);
 *   - rewind() restarts at the first row (analyses may make several passes);
 *   - next() copies up to `cap` rows and returns how many (0 at the end), or
 *     -1 with gs_error() set.
 * Analyses check the contract and every value (a NaN or infinity names its
 * window and position), so a corrupt recording gives a message, not a NaN. */
#ifndef GS_ANALYSES_STATES_H
#define GS_ANALYSES_STATES_H

#include <stdint.h>

typedef struct gs_state_source {
    int d;
    int64_t n_hint;        /* total rows if known, else 0 */
    int32_t max_span_hint; /* largest (last - first position) of any window if known, else 0 */
    void *ctx;
    int (*rewind)(void *ctx);
    int64_t (*next)(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap);
} gs_state_source;

/* States held in memory: row i is x[i*d .. i*d+d) at (window[i], pos[i]). */
typedef struct {
    int64_t n;
    int d;
    const float *x;
    const int64_t *window;
    const int32_t *pos;
} gs_states;

/* A source over plain arrays; `cursor` is the caller's storage for the
 * read position and must outlive the source. */
typedef struct {
    gs_states s;
    int64_t at;
} gs_states_cursor;
void gs_states_source(gs_state_source *src, gs_states_cursor *cursor, const gs_states *s);

/* Read a whole source into memory (at most max_rows rows when > 0; whole
 * windows only unless one window alone is larger). Arrays are malloc'd and
 * owned by `out`; free with gs_states_free. */
int gs_states_load(gs_state_source *src, int64_t max_rows, gs_states *out);
void gs_states_free(gs_states *s);

/* One window at a time, whatever the producer's block boundaries. */
typedef struct gs_window_reader gs_window_reader;
/* rewinds the source */
gs_window_reader *gs_window_reader_new(gs_state_source *src);
/* One whole window: its rows (n x d, n the count gs_window_reader_read
 * returns), their positions, and which window it is; valid until the next
 * read. */
typedef struct {
    const float *rows;
    const int32_t *pos;
    int64_t window;
} gs_window;
/* The next whole window into *w: returns its row count (> 0), 0 after the
 * last, or -1. */
int64_t gs_window_reader_read(gs_window_reader *r, gs_window *w);
void gs_window_reader_free(gs_window_reader *r);

/* Check a block of rows: finite values; returns 0 or -1 naming the state. */
int gs_check_rows(const float *x, const int64_t *window, const int32_t *pos, int64_t n, int d);

#endif
