/* Tokenizer core: the piece and merge tables (open-addressing hash tables),
 * the tok_* builder the readers (tokenizer_json.c, tokenizer_spm.c) fill them
 * through, loading with format detection, and the accessors. Encoding and
 * decoding are in tokenizer_encode.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "io/tokenizer/tokenizer_impl.h"

static const char SPACE_ESC[] = "\xE2\x96\x81"; /* U+2581 */
static const char FFFD[] = "\xEF\xBF\xBD";       /* U+FFFD */

/* ---------------------------------------------------------------- tables */

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

gs_tokenizer *tok_alloc(int32_t n) {
    if (n <= 0 || n > (1 << 24)) { gs_fail("vocabulary of %d pieces (expected 1 to 16M)", n); return NULL; }
    gs_tokenizer *t = calloc(1, sizeof *t);
    if (!t) { gs_fail("out of memory"); return NULL; }
    t->n = n;
    t->off = calloc((size_t)n, sizeof *t->off);
    t->len = calloc((size_t)n, sizeof *t->len);
    t->score = calloc((size_t)n, sizeof *t->score);
    t->type = calloc((size_t)n, 1);
    t->unk = t->bos = t->eos = t->pad = -1;
    if (!t->off || !t->len || !t->score || !t->type) { tokenizer_free(t); gs_fail("out of memory"); return NULL; }
    return t;
}

int tok_set_piece(gs_tokenizer *t, int32_t id, const char *s, size_t len, float score, int type) {
    if (id < 0 || id >= t->n) return gs_fail("piece id %d outside 0..%d", id, t->n - 1);
    if (t->type[id]) return gs_fail("piece id %d given twice", id);
    if (len == 0) return gs_fail("piece %d is empty", id);
    if (len > 4096) return gs_fail("piece %d is %zu bytes long (limit 4096)", id, len);
    if (memchr(s, 0, len)) return gs_fail("piece %d contains a NUL byte", id);
    if (t->text_len + len + 1 > t->text_cap) {
        size_t cap = t->text_cap ? t->text_cap * 2 : 1 << 16;
        while (cap < t->text_len + len + 1) cap *= 2;
        char *p = realloc(t->text, cap);
        if (!p) return gs_fail("out of memory");
        t->text = p;
        t->text_cap = cap;
    }
    memcpy(t->text + t->text_len, s, len);
    t->text[t->text_len + len] = 0;
    t->off[id] = (uint32_t)t->text_len;
    t->len[id] = (uint32_t)len;
    t->text_len += len + 1;
    t->score[id] = score;
    t->type[id] = (uint8_t)type;
    return 0;
}

int32_t tok_lookup(const gs_tokenizer *t, const char *s, size_t len) {
    for (uint32_t i = hash_bytes(s, len) & t->slot_mask;; i = (i + 1) & t->slot_mask) {
        uint32_t v = t->slots[i];
        if (!v) return -1;
        int32_t id = (int32_t)v - 1;
        if (t->len[id] == len && memcmp(tok_piece_str(t, id), s, len) == 0) return id;
    }
}

static int user_insert(gs_tokenizer *t, int32_t id);
static void sort_ids(int32_t *v, size_t n, int (*cmp)(const void *, const void *, void *), void *ctx);

int tok_index(gs_tokenizer *t) {
    uint32_t cap = 1;
    while (cap < 2u * (uint32_t)t->n) cap <<= 1;
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots) return gs_fail("out of memory");
    t->slot_mask = cap - 1;
    for (int32_t id = 0; id < t->n; id++) {
        if (!t->type[id]) return gs_fail("piece id %d is missing (ids must be 0..%d without gaps)", id, t->n - 1);
        const char *s = tok_piece_str(t, id);
        uint32_t i = hash_bytes(s, t->len[id]) & t->slot_mask;
        for (; t->slots[i]; i = (i + 1) & t->slot_mask) {
            int32_t o = (int32_t)t->slots[i] - 1;
            if (t->len[o] == t->len[id] && memcmp(tok_piece_str(t, o), s, t->len[id]) == 0)
                return gs_fail("piece \"%s\" appears twice (ids %d and %d)", s, o, id);
        }
        t->slots[i] = (uint32_t)id + 1;
    }
    for (int c = 0; c < 128; c++) {
        char ch = (char)c;
        t->ascii[c] = tok_symbol_lookup(t, &ch, 1);
    }
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_id[b] = tok_lookup(t, name, 6);
    }
    t->space_id = t->escape_ws ? tok_symbol_lookup(t, SPACE_ESC, 3) : t->ascii[' '];
    t->fffd_id = tok_symbol_lookup(t, FFFD, 3);
    /* user-defined pieces are matched longest first (SentencePiece's prefix
     * matcher) by walking a byte trie of them from each position: as many
     * steps as the match is long, however many pieces there are */
    for (int32_t id = 0; id < t->n; id++)
        if (t->type[id] == PIECE_USER && user_insert(t, id)) return -1;
    return 0;
}

/* the child of node p for byte c, or -1 */
static int32_t user_child(const gs_tokenizer *t, int32_t p, unsigned char c) {
    for (int32_t k = t->user[p].child; k >= 0; k = t->user[k].sibling)
        if (t->user[k].byte == c) return k;
    return -1;
}

static int user_insert(gs_tokenizer *t, int32_t id) {
    if (!t->user) {
        t->cap_user = 64;
        if (!(t->user = malloc((size_t)t->cap_user * sizeof *t->user))) return gs_fail("out of memory");
        t->user[0] = (struct user_node){-1, -1, -1, 0};
        t->n_user = 1;
    }
    const unsigned char *s = (const unsigned char *)tok_piece_str(t, id);
    int32_t p = 0;
    for (uint32_t i = 0; i < t->len[id]; i++) {
        int32_t k = user_child(t, p, s[i]);
        if (k < 0) {
            if (t->n_user == t->cap_user) {
                if (t->cap_user > INT32_MAX / 2) return gs_fail("too many user-defined piece bytes");
                struct user_node *q = realloc(t->user, (size_t)t->cap_user * 2 * sizeof *q);
                if (!q) return gs_fail("out of memory for the user-defined pieces");
                t->user = q;
                t->cap_user *= 2;
            }
            k = t->n_user++;
            t->user[k] = (struct user_node){-1, t->user[p].child, -1, s[i]};
            t->user[p].child = k;
        }
        p = k;
    }
    t->user[p].id = id;
    return 0;
}

int32_t tok_user_match(const gs_tokenizer *t, const unsigned char *s, size_t n) {
    int32_t best = -1, p = 0;
    for (size_t i = 0; i < n && p >= 0; i++) {
        p = user_child(t, p, s[i]);
        if (p >= 0 && t->user[p].id >= 0) best = t->user[p].id;
    }
    return best;
}

static int pairs_reserve(gs_tokenizer *t, uint32_t more) {
    if (t->pairs && 2 * (t->n_pairs + more) <= t->pair_mask + 1) return 0;
    uint32_t cap = 1024;
    while (cap < 2 * (t->n_pairs + more) + 2) cap <<= 1;
    tok_pair *old = t->pairs;
    uint32_t old_cap = old ? t->pair_mask + 1 : 0;
    t->pairs = calloc(cap, sizeof *t->pairs);
    if (!t->pairs) { t->pairs = old; return gs_fail("out of memory"); }
    t->pair_mask = cap - 1;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].key) {
            tok_pair *p = tok_pair_find(t, (int32_t)(old[i].key >> 32) - 1, (int32_t)(old[i].key & 0xffffffffu) - 1);
            *p = old[i];
        }
    free(old);
    return 0;
}

int tok_add_merge(gs_tokenizer *t, int32_t l, int32_t r, int32_t rank) {
    if (l < 0 || l >= t->n || r < 0 || r >= t->n) return gs_fail("merge of unknown pieces %d, %d", l, r);
    uint32_t a = t->len[l], b = t->len[r];
    char buf[8192];
    memcpy(buf, tok_piece_str(t, l), a);
    memcpy(buf + a, tok_piece_str(t, r), b);
    int32_t result = tok_lookup(t, buf, a + b);
    if (result < 0)
        return gs_fail("merge \"%s\" + \"%s\" makes \"%.*s\", which is not in the vocabulary", tok_piece_str(t, l), tok_piece_str(t, r),
                       (int)(a + b), buf);
    if (pairs_reserve(t, 1)) return -1;
    tok_pair *p = tok_pair_find(t, l, r);
    if (!p->key) t->n_pairs++;
    /* a pair listed twice keeps its last rank, as Hugging Face's and
     * llama-tokenizer-js's merge maps do */
    p->key = ((uint64_t)(uint32_t)(l + 1) << 32) | (uint32_t)(r + 1);
    p->rank = rank;
    p->result = result;
    return 0;
}

static int cmp_score_desc(const void *a, const void *b, void *ctx) {
    const gs_tokenizer *t = ctx;
    float x = t->score[*(const int32_t *)a], y = t->score[*(const int32_t *)b];
    if (x != y) return x > y ? -1 : 1;
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return (i > j) - (i < j);
}

static void sort_ids(int32_t *v, size_t n, int (*cmp)(const void *, const void *, void *), void *ctx) {
    /* merge sort with a scratch copy: qsort_r is not C11 */
    if (n < 2) return;
    size_t h = n / 2;
    sort_ids(v, h, cmp, ctx);
    sort_ids(v + h, n - h, cmp, ctx);
    int32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) { /* fall back to insertion sort: slow but correct */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && cmp(&v[j - 1], &v[j], ctx) > 0; j--) { int32_t x = v[j]; v[j] = v[j - 1]; v[j - 1] = x; }
        return;
    }
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(&v[j], &v[i], ctx) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *tmp);
    free(tmp);
}

int tok_merges_from_scores(gs_tokenizer *t) {
    int32_t *order = malloc((size_t)t->n * sizeof *order);
    if (!order) return gs_fail("out of memory");
    size_t m = 0;
    for (int32_t id = 0; id < t->n; id++)
        if (t->type[id] == PIECE_NORMAL || t->type[id] == PIECE_USER) order[m++] = id;
    sort_ids(order, m, cmp_score_desc, t);
    int32_t rank = -1;
    for (size_t k = 0; k < m; k++) {
        int32_t id = order[k];
        if (k == 0 || t->score[id] != t->score[order[k - 1]]) rank++;
        const char *s = tok_piece_str(t, id);
        uint32_t len = t->len[id];
        for (uint32_t cut = 1; cut < len; cut++) {
            if (((unsigned char)s[cut] & 0xC0) == 0x80) continue; /* only between characters */
            int32_t l = tok_symbol_lookup(t, s, cut), r = tok_symbol_lookup(t, s + cut, len - cut);
            if (l < 0 || r < 0) continue;
            if (pairs_reserve(t, 1)) { free(order); return -1; }
            tok_pair *p = tok_pair_find(t, l, r);
            if (!p->key) t->n_pairs++;
            p->key = ((uint64_t)(uint32_t)(l + 1) << 32) | (uint32_t)(r + 1);
            p->rank = rank;
            p->result = id;
        }
    }
    free(order);
    return 0;
}

/* See word_split in tokenizer_impl.h: in every piece, spaces may only form a prefix. */
static int spaces_only_leading(const gs_tokenizer *t) {
    const char *ws = t->escape_ws ? SPACE_ESC : " ";
    size_t wl = t->escape_ws ? 3 : 1;
    for (int32_t id = 0; id < t->n; id++) {
        const char *s = tok_piece_str(t, id);
        size_t n = t->len[id], i = 0;
        while (i + wl <= n && memcmp(s + i, ws, wl) == 0) i += wl;
        for (; i + wl <= n; i++)
            if (memcmp(s + i, ws, wl) == 0) return 0;
    }
    return 1;
}

int tok_finish(gs_tokenizer *t) {
    if (!t->pairs && pairs_reserve(t, 1)) return -1; /* a vocabulary without merges is legal */
    if (t->byte_fallback) {
        for (int b = 0; b < 256; b++)
            if (t->byte_id[b] < 0) return gs_fail("byte fallback is on but piece <0x%02X> is missing", b);
    }
    if (!t->byte_fallback && t->unk < 0)
        return gs_fail("the model has neither byte fallback nor an <unk> piece, so unknown characters cannot be encoded");
    t->word_split = spaces_only_leading(t);
    return 0;
}

/* ---------------------------------------------------------------- public */

void tokenizer_free(gs_tokenizer *t) {
    if (!t) return;
    free(t->path); free(t->text); free(t->off); free(t->len); free(t->score); free(t->type);
    free(t->slots); free(t->pairs); free(t->user);
    free(t);
}

gs_tokenizer *tokenizer_load(const char *path) {
    size_t size;
    char *data = gs_read_file(path, "tokenizer ", 1 << 20, (size_t)1 << 30, &size);
    if (!data) return NULL;
    size_t i = 0;
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) i++;
    gs_tokenizer *t = NULL;
    if (size == 0) gs_fail("tokenizer %s is empty", path);
    else if (data[i] == '{' || data[i] == '[') { data[size] = 0; t = tok_load_json(path, data, size); }
    else if ((unsigned char)data[0] == 0x0A) t = tok_load_spm(path, (const unsigned char *)data, size);
    else gs_fail("tokenizer %s is neither a tokenizer.json (JSON) nor a SentencePiece tokenizer.model (protobuf)", path);
    if (t) {
        gs_hash_bytes(data, size, t->hash);
        t->path = strdup(path);
    }
    free(data);
    return t;
}

void tokenizer_set_invalid_utf8(gs_tokenizer *t, tokenizer_invalid_utf8 mode) { t->invalid_mode = (int)mode; }
const char *tokenizer_piece(const gs_tokenizer *t, int32_t id) { return id >= 0 && id < t->n ? tok_piece_str(t, id) : NULL; }
int32_t tokenizer_piece_id(const gs_tokenizer *t, const char *piece) { return tok_lookup(t, piece, strlen(piece)); }
int32_t tokenizer_vocab_size(const gs_tokenizer *t) { return t->n; }
int32_t tokenizer_bos(const gs_tokenizer *t) { return t->bos; }
int32_t tokenizer_eos(const gs_tokenizer *t) { return t->eos; }
int32_t tokenizer_unk(const gs_tokenizer *t) { return t->unk; }
const char *tokenizer_format(const gs_tokenizer *t) { return t->format; }
const char *tokenizer_hash(const gs_tokenizer *t) { return t->hash; }
const char *tokenizer_path(const gs_tokenizer *t) { return t->path ? t->path : ""; }
