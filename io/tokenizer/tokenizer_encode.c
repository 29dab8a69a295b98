/* Encoding and decoding (the tables are built by tokenizer.c).
 *
 * Encoding is the classic linked-list + binary-heap BPE (as SentencePiece's
 * bpe_model.cc): each candidate merge sits in a min-heap keyed by
 * (rank, byte offset of its left symbol), so the best merge comes first and
 * equal ranks go left to right; a popped candidate whose symbols changed
 * since it was pushed is stale and dropped. O(n log n) per word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/tokenizer/tokenizer_impl.h"
#include "io/tokenizer/utf8.h"

/* One call encodes at most this many bytes (offsets are 32-bit). */
#define TOK_MAX_TEXT (1u << 30)

static const char SPACE_ESC[] = "\xE2\x96\x81"; /* U+2581 */
static const char FFFD[] = "\xEF\xBF\xBD";       /* U+FFFD */

/* ---------------------------------------------------------------- encode */

typedef struct {
    int32_t id;      /* piece, or -1 for a character without one (byte fallback) */
    uint32_t off, len; /* bytes of the normalized text */
    int32_t prev, next;
    uint8_t frozen;  /* user-defined piece or raw invalid byte: never merged */
} tsym;

typedef struct {
    uint64_t key;    /* rank << 32 | offset of the left symbol */
    int32_t left, right;
    uint32_t len;    /* combined length when pushed; a change means stale */
    int32_t result;  /* the merged piece */
} tcand;

typedef struct {
    tcand *v;
    size_t n, cap;
} theap;

static int heap_push(theap *h, tcand c) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        tcand *p = realloc(h->v, cap * sizeof *p);
        if (!p) return gs_fail("out of memory");
        h->v = p;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->v[parent].key <= c.key) break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = c;
    return 0;
}

static tcand heap_pop(theap *h) {
    tcand top = h->v[0], last = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h->v[c + 1].key < h->v[c].key) c++;
        if (last.key <= h->v[c].key) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n) h->v[i] = last;
    return top;
}

static int try_pair(const gs_tokenizer *t, const tsym *s, int32_t l, theap *h) {
    if (l < 0) return 0;
    int32_t r = s[l].next;
    if (r < 0 || s[l].id < 0 || s[r].id < 0 || s[l].frozen || s[r].frozen) return 0;
    const tok_pair *p = tok_pair_find(t, s[l].id, s[r].id);
    if (!p->key) return 0;
    tcand c = {((uint64_t)(uint32_t)p->rank << 32) | s[l].off, l, r, s[l].len + s[r].len, p->result};
    return heap_push(h, c);
}

/* Normalize a segment of the text into norm[] and split it into symbols;
 * returns the count. Only the first segment gets the leading-space removal
 * and the dummy prefix, only the last the trailing-space removal. */
static size_t split_symbols(const gs_tokenizer *t, const unsigned char *in, size_t len, char *norm, tsym *sym, int first, int last) {
    size_t i = 0, o = 0, n = 0;
    if (t->remove_extra_ws && first)
        while (i < len && in[i] == ' ') i++;
    if (i == len) return 0;
#define EMIT(bytes, nb, pid, frz)                                          \
    do {                                                                   \
        memcpy(norm + o, (bytes), (nb));                                   \
        sym[n] = (tsym){(pid), (uint32_t)o, (uint32_t)(nb), (int32_t)n - 1, (int32_t)n + 1, (frz)}; \
        o += (nb); n++;                                                    \
    } while (0)
    const char *ws = t->escape_ws ? SPACE_ESC : " ";
    size_t ws_len = t->escape_ws ? 3 : 1;
    if (t->dummy_prefix && first) EMIT(ws, ws_len, t->space_id, 0);
    int prev_space = 0;
    while (i < len) {
        unsigned c = in[i];
        if (t->n_user) {
            int32_t id = tok_user_match(t, in + i, len - i);
            if (id >= 0) {
                EMIT(in + i, t->len[id], id, 1);
                i += t->len[id];
                prev_space = 0;
                continue;
            }
        }
        if (c == ' ') {
            i++;
            if (t->remove_extra_ws && prev_space) continue;
            EMIT(ws, ws_len, t->space_id, 0);
            prev_space = 1;
            continue;
        }
        prev_space = 0;
        if (c < 0x80) {
            EMIT(in + i, 1, t->ascii[c], 0);
            i++;
            continue;
        }
        uint32_t cp;
        int k = utf8_decode(in + i, len - i, &cp);
        if (k) {
            EMIT(in + i, (size_t)k, tok_symbol_lookup(t, (const char *)in + i, (size_t)k), 0);
            i += (size_t)k;
        } else if (t->invalid_mode == TOKENIZER_INVALID_BYTES) {
            EMIT(in + i, 1, -1, 1);
            i++;
        } else {
            EMIT(FFFD, 3, t->fffd_id, 0);
            i++;
        }
    }
#undef EMIT
    if (t->remove_extra_ws && last)
        while (n > 0 && sym[n - 1].len == ws_len && memcmp(norm + sym[n - 1].off, ws, ws_len) == 0) n--;
    if (n) sym[n - 1].next = -1;
    return n;
}

/* BPE over symbols [a, b) (a linked list from a), using heap h. */
static int merge_range(const gs_tokenizer *t, tsym *sym, int32_t a, int32_t b, theap *h) {
    h->n = 0;
    sym[a].prev = -1;
    sym[b - 1].next = -1;
    for (int32_t i = a; i + 1 < b; i++)
        if (try_pair(t, sym, i, h)) return -1;
    while (h->n) {
        tcand c = heap_pop(h);
        tsym *l = &sym[c.left], *r = &sym[c.right];
        if (l->len == 0 || r->len == 0 || l->next != c.right || l->len + r->len != c.len) continue;
        l->id = c.result;
        l->len += r->len;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = c.left;
        r->len = 0;
        if (try_pair(t, sym, l->prev, h) || try_pair(t, sym, c.left, h)) return -1;
    }
    return 0;
}

/* Append the ids of the merged symbols from a on, with byte fallback. */
static size_t emit_range(const gs_tokenizer *t, const tsym *sym, int32_t a, const char *norm, int32_t *ids, size_t m) {
    for (int32_t i = a; i >= 0; i = sym[i].next) {
        if (sym[i].id >= 0) { ids[m++] = sym[i].id; continue; }
        if (t->byte_fallback) {
            for (uint32_t k = 0; k < sym[i].len; k++) ids[m++] = t->byte_id[(unsigned char)norm[sym[i].off + k]];
        } else if (!(t->fuse_unk && m > 0 && ids[m - 1] == t->unk)) {
            ids[m++] = t->unk;
        }
    }
    return m;
}

/* Long texts are encoded in segments of about this many bytes, cut where no
 * merge can cross (see word_split), so scratch memory stays bounded. */
#define TOK_SEGMENT (1u << 20)

/* The first p >= from where a segment may start: a space after a byte that
 * ends neither a space nor a literal U+2581; len if there is none. */
static size_t next_cut(const unsigned char *s, size_t from, size_t len) {
    for (size_t p = from; p < len; p++)
        if (s[p] == ' ' && s[p - 1] != ' ' && !(p >= 3 && s[p - 3] == 0xE2 && s[p - 2] == 0x96 && s[p - 1] == 0x81)) return p;
    return len;
}

int tokenizer_encode(const gs_tokenizer *t, const char *text, size_t len, int32_t **ids_out, size_t *n_out) {
    *ids_out = NULL;
    *n_out = 0;
    if (len > TOK_MAX_TEXT) return gs_fail("text of %zu bytes is too long to encode in one call (limit %u)", len, TOK_MAX_TEXT);
    const unsigned char *in = (const unsigned char *)text;
    int segmented = t->word_split && t->n_user == 0 && t->space_id >= 0 && t->escape_ws;
    size_t seg_max = segmented && len > TOK_SEGMENT ? 2 * TOK_SEGMENT : len;
    /* each input byte becomes at most 3 normalized bytes (space -> U+2581,
     * invalid byte -> U+FFFD) and one symbol; each symbol at most 4 ids */
    char *norm = malloc(3 * seg_max + 4);
    tsym *sym = malloc((seg_max + 1) * sizeof *sym);
    size_t cap = len / 2 + 16, m = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    theap h = {0};
    int rc = 0;
    if (!norm || !sym || !ids) rc = gs_fail("out of memory encoding %zu bytes", len);
    for (size_t pos = 0, first = 1; rc == 0 && (pos < len || first); first = 0) {
        size_t end = len;
        if (segmented && len - pos > seg_max) {
            end = next_cut(in, pos + TOK_SEGMENT, len);
            if (end - pos > seg_max) { /* no word start for a long stretch: fall back to one piece */
                end = len;
                seg_max = len - pos;
                free(norm);
                free(sym);
                norm = malloc(3 * seg_max + 4);
                sym = malloc((seg_max + 1) * sizeof *sym);
                if (!norm || !sym) { rc = gs_fail("out of memory encoding %zu bytes", len); break; }
            }
        }
        if (m + 4 * (end - pos) + 4 > cap) {
            cap = m + 4 * (end - pos) + 4;
            int32_t *p = realloc(ids, cap * sizeof *ids);
            if (!p) { rc = gs_fail("out of memory encoding %zu bytes", len); break; }
            ids = p;
        }
        int32_t n = (int32_t)split_symbols(t, in + pos, end - pos, norm, sym, (int)first, end == len);
        /* Cut before every space that follows a non-space when no merge can
         * cross there (word_split); otherwise the whole segment is one range. */
        for (int32_t a = 0; a < n && rc == 0;) {
            int32_t b = a + 1;
            if (t->word_split && t->space_id >= 0)
                while (b < n && !(sym[b].id == t->space_id && sym[b - 1].id != t->space_id)) b++;
            else
                b = n;
            rc = merge_range(t, sym, a, b, &h);
            if (rc == 0) m = emit_range(t, sym, a, norm, ids, m);
            a = b;
        }
        pos = end;
    }
    free(norm);
    free(sym);
    free(h.v);
    if (rc) { free(ids); return -1; }
    *ids_out = ids;
    *n_out = m;
    return 0;
}

/* ---------------------------------------------------------------- decode */

char *tokenizer_decode(const gs_tokenizer *t, const int32_t *ids, size_t n, size_t *len_out) {
    size_t cap = 64, o = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n) { gs_fail("token id %d at position %zu is outside the vocabulary (0..%d)", ids[i], i, t->n - 1); return NULL; }
        cap += t->len[ids[i]] + 8;
    }
    char *out = malloc(cap);
    if (!out) { gs_fail("out of memory"); return NULL; }
    int first = 1, strip = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        const char *s = tok_piece_str(t, id);
        switch (t->type[id]) {
        case PIECE_CONTROL: continue;
        case PIECE_UNKNOWN: memcpy(out + o, " \xE2\x81\x87 ", 5); o += 5; break;
        case PIECE_BYTE: {
            unsigned v = 0;
            if (sscanf(s, "<0x%2X>", &v) == 1) out[o++] = (char)v;
            else { memcpy(out + o, s, t->len[id]); o += t->len[id]; }
            break;
        }
        default:
            if (first && t->dummy_prefix && strncmp(s, t->escape_ws ? SPACE_ESC : " ", t->escape_ws ? 3 : 1) == 0) strip = 1;
            for (uint32_t k = 0; k < t->len[id];) {
                if (t->escape_ws && k + 3 <= t->len[id] && memcmp(s + k, SPACE_ESC, 3) == 0) { out[o++] = ' '; k += 3; }
                else out[o++] = s[k++];
            }
        }
        first = 0;
    }
    if (strip) { memmove(out, out + 1, o - 1); o--; }
    out[o] = 0;
    if (len_out) *len_out = o;
    return out;
}
