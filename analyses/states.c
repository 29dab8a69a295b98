#include "analyses/states.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* ---- plain arrays as a source ---- */

static int arr_rewind(void *ctx) {
    ((gs_states_cursor *)ctx)->at = 0;
    return 0;
}

static int64_t arr_next(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap) {
    gs_states_cursor *c = ctx;
    int64_t k = c->s.n - c->at;
    if (k > cap) k = cap;
    if (k <= 0) return 0;
    memcpy(rows, c->s.x + c->at * c->s.d, (size_t)(k * c->s.d) * sizeof *rows);
    memcpy(window, c->s.window + c->at, (size_t)k * sizeof *window);
    memcpy(pos, c->s.pos + c->at, (size_t)k * sizeof *pos);
    c->at += k;
    return k;
}

void gs_states_source(gs_state_source *src, gs_states_cursor *cursor, const gs_states *s) {
    memset(src, 0, sizeof *src);
    cursor->s = *s;
    cursor->at = 0;
    src->d = s->d;
    src->n_hint = s->n;
    int32_t span = 0;
    for (int64_t i = 0; i < s->n;) {
        int64_t j = i;
        while (j + 1 < s->n && s->window[j + 1] == s->window[i]) j++;
        if (s->pos[j] - s->pos[i] > span) span = s->pos[j] - s->pos[i];
        i = j + 1;
    }
    src->max_span_hint = span;
    src->ctx = cursor;
    src->rewind = arr_rewind;
    src->next = arr_next;
}

int gs_check_rows(const float *x, const int64_t *window, const int32_t *pos, int64_t n, int d) {
    for (int64_t i = 0; i < n; i++) {
        const float *r = x + i * d;
        for (int j = 0; j < d; j++)
            if (!isfinite(r[j]))
                return gs_fail("the state at window %lld, position %d has a non-finite value (%g) at coordinate %d: "
                               "the recording is corrupt or the model diverged; re-record it or leave that window out",
                               (long long)window[i], (int)pos[i], (double)r[j], j);
    }
    return 0;
}

/* ---- whole windows from any block boundaries ---- */

#define WR_BLOCK 256

struct gs_window_reader {
    gs_state_source *src;
    int d;
    float *blk;
    int64_t *bwin;
    int32_t *bpos;
    int64_t blk_n, blk_at;
    int eof;
    float *rows;
    int32_t *pos;
    int64_t cap;
    /* windows already seen (open addressing), to reject non-contiguous windows */
    int64_t *seen;
    unsigned char *used;
    int64_t seen_cap, seen_n;
};

static int seen_insert(gs_window_reader *r, int64_t w) {
    if (2 * (r->seen_n + 1) > r->seen_cap) {
        int64_t nc = r->seen_cap ? 2 * r->seen_cap : 64;
        int64_t *keys = malloc((size_t)nc * sizeof *keys);
        unsigned char *used = calloc((size_t)nc, 1);
        if (!keys || !used) { free(keys); free(used); return gs_fail("out of memory"); }
        for (int64_t i = 0; i < r->seen_cap; i++) {
            if (!r->used[i]) continue;
            int64_t p = (int64_t)(((uint64_t)r->seen[i] * 0x9E3779B97F4A7C15ull) % (uint64_t)nc);
            while (used[p]) p = (p + 1) % nc;
            keys[p] = r->seen[i];
            used[p] = 1;
        }
        free(r->seen);
        free(r->used);
        r->seen = keys;
        r->used = used;
        r->seen_cap = nc;
    }
    int64_t p = (int64_t)(((uint64_t)w * 0x9E3779B97F4A7C15ull) % (uint64_t)r->seen_cap);
    while (r->used[p]) {
        if (r->seen[p] == w)
            return gs_fail("the rows of window %lld are not consecutive in the state stream: "
                           "the reader must yield states ordered by window, then position",
                           (long long)w);
        p = (p + 1) % r->seen_cap;
    }
    r->seen[p] = w;
    r->used[p] = 1;
    r->seen_n++;
    return 0;
}

gs_window_reader *gs_window_reader_new(gs_state_source *src) {
    if (!src || src->d < 1 || !src->next || !src->rewind) {
        gs_fail("state source without rows (d < 1 or no reader)");
        return NULL;
    }
    gs_window_reader *r = calloc(1, sizeof *r);
    if (!r) { gs_fail("out of memory"); return NULL; }
    r->src = src;
    r->d = src->d;
    r->blk = malloc((size_t)WR_BLOCK * r->d * sizeof *r->blk);
    r->bwin = malloc(WR_BLOCK * sizeof *r->bwin);
    r->bpos = malloc(WR_BLOCK * sizeof *r->bpos);
    if (!r->blk || !r->bwin || !r->bpos) { gs_window_reader_free(r); gs_fail("out of memory"); return NULL; }
    if (src->rewind(src->ctx) != 0) { gs_window_reader_free(r); return NULL; }
    return r;
}

void gs_window_reader_free(gs_window_reader *r) {
    if (!r) return;
    free(r->blk); free(r->bwin); free(r->bpos);
    free(r->rows); free(r->pos);
    free(r->seen);
    free(r->used);
    free(r);
}

int64_t gs_window_reader_read(gs_window_reader *r, gs_window *out) {
    const int d = r->d;
    int64_t n = 0, cur = 0;
    for (;;) {
        if (r->blk_at == r->blk_n) {
            if (r->eof) break;
            int64_t k = r->src->next(r->src->ctx, r->blk, r->bwin, r->bpos, WR_BLOCK);
            if (k < 0) return -1;
            if (k > WR_BLOCK) return gs_fail("state reader returned %lld rows for a block of %d", (long long)k, WR_BLOCK);
            if (k == 0) { r->eof = 1; break; }
            if (gs_check_rows(r->blk, r->bwin, r->bpos, k, d) != 0) return -1;
            r->blk_n = k;
            r->blk_at = 0;
        }
        int64_t w = r->bwin[r->blk_at];
        int32_t p = r->bpos[r->blk_at];
        if (n == 0) {
            cur = w;
            if (seen_insert(r, w) != 0) return -1;
        } else if (w != cur) {
            break;
        } else if (p <= r->pos[n - 1]) {
            return gs_fail("window %lld: position %d follows position %d; the reader must yield positions in "
                           "increasing order without repeats",
                           (long long)w, (int)p, (int)r->pos[n - 1]);
        }
        if (p < 0) return gs_fail("window %lld has a negative position %d", (long long)w, (int)p);
        if (n == r->cap) {
            int64_t nc = r->cap ? 2 * r->cap : 1024;
            float *nr = realloc(r->rows, (size_t)(nc * d) * sizeof *nr);
            if (!nr) return gs_fail("out of memory for a window of %lld states", (long long)nc);
            r->rows = nr;
            int32_t *np = realloc(r->pos, (size_t)nc * sizeof *np);
            if (!np) return gs_fail("out of memory");
            r->pos = np;
            r->cap = nc;
        }
        memcpy(r->rows + n * d, r->blk + r->blk_at * d, (size_t)d * sizeof(float));
        r->pos[n] = p;
        n++;
        r->blk_at++;
    }
    out->rows = r->rows;
    out->pos = r->pos;
    out->window = cur;
    return n;
}

/* ---- a whole source in memory ---- */

void gs_states_free(gs_states *s) {
    free((void *)s->x);
    free((void *)s->window);
    free((void *)s->pos);
    memset(s, 0, sizeof *s);
}

int gs_states_load(gs_state_source *src, int64_t max_rows, gs_states *out) {
    memset(out, 0, sizeof *out);
    gs_window_reader *r = gs_window_reader_new(src);
    if (!r) return -1;
    const int d = src->d;
    int64_t n = 0, cap = 0;
    float *x = NULL;
    int64_t *win = NULL;
    int32_t *pos = NULL;
    for (;;) {
        gs_window cur;
        int64_t k = gs_window_reader_read(r, &cur);
        if (k < 0) goto fail;
        if (k == 0) break;
        if (max_rows > 0 && n > 0 && n + k > max_rows) break;
        if (max_rows > 0 && k > max_rows) k = max_rows; /* one window larger than the budget */
        if (n + k > cap) {
            int64_t nc = cap ? cap : 4096;
            while (nc < n + k) nc *= 2;
            float *nx = realloc(x, (size_t)(nc * d) * sizeof *nx);
            if (!nx) { gs_fail("out of memory for %lld states of %d dims", (long long)nc, d); goto fail; }
            x = nx;
            int64_t *nw = realloc(win, (size_t)nc * sizeof *nw);
            if (!nw) { gs_fail("out of memory"); goto fail; }
            win = nw;
            int32_t *np = realloc(pos, (size_t)nc * sizeof *np);
            if (!np) { gs_fail("out of memory"); goto fail; }
            pos = np;
            cap = nc;
        }
        memcpy(x + n * d, cur.rows, (size_t)(k * d) * sizeof *x);
        for (int64_t i = 0; i < k; i++) { win[n + i] = cur.window; pos[n + i] = cur.pos[i]; }
        n += k;
        if (max_rows > 0 && n >= max_rows) break;
    }
    gs_window_reader_free(r);
    out->n = n;
    out->d = d;
    out->x = x;
    out->window = win;
    out->pos = pos;
    return 0;
fail:
    gs_window_reader_free(r);
    free(x); free(win); free(pos);
    return -1;
}
