/* Internals shared by the tokenizer core (tokenizer.c) and its two readers
 * (tokenizer_json.c, tokenizer_spm.c). Not a public header. */
#ifndef GS_IO_TOKENIZER_IMPL_H
#define GS_IO_TOKENIZER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "io/tokenizer/tokenizer.h"

/* SentencePiece's piece types (sentencepiece_model.proto numbering). */
enum { PIECE_NORMAL = 1, PIECE_UNKNOWN = 2, PIECE_CONTROL = 3, PIECE_USER = 4, PIECE_UNUSED = 5, PIECE_BYTE = 6 };

typedef struct {
    uint64_t key;   /* left << 32 | right, both + 1 so that 0 marks an empty slot */
    int32_t rank;   /* lower merges first */
    int32_t result; /* the merged piece */
} tok_pair;

struct gs_tokenizer {
    char *path;
    const char *format;
    char hash[GS_HASH_HEX];
    int32_t n;          /* pieces */
    char *text;         /* piece strings, each NUL-terminated */
    size_t text_len, text_cap;
    uint32_t *off, *len;
    float *score;
    uint8_t *type;
    uint32_t *slots;    /* piece hash: id + 1, 0 = empty */
    uint32_t slot_mask;
    tok_pair *pairs;
    uint32_t pair_mask, n_pairs;
    int32_t ascii[128]; /* piece of each ASCII character as a symbol, or -1 */
    int32_t byte_id[256];
    int32_t unk, bos, eos, pad;
    int32_t space_id, fffd_id; /* pieces of the escaped space and of U+FFFD as symbols */
    /* USER_DEFINED pieces (matched whole, longest first, never merged), in a
     * byte trie: node 0 is the root; children are a list (first child, next
     * sibling); id is the piece a node ends, or -1 */
    struct user_node { int32_t child, sibling, id; uint8_t byte; } *user;
    int32_t n_user, cap_user;
    int dummy_prefix, escape_ws, remove_extra_ws, byte_fallback, fuse_unk;
    int invalid_mode;
    /* No piece has a (escaped) space after another character, so no merge
     * crosses the start of a space run: the text is encoded word by word. */
    int word_split;
};

/* Builder used by the readers, in this order: tok_alloc, set the flags
 * (dummy_prefix, escape_ws, ...: tok_index reads escape_ws), tok_set_piece
 * for every id, tok_index (hash, byte pieces, user pieces), then the merges,
 * then tok_finish. Each returns 0 or -1 with gs_error(). */
gs_tokenizer *tok_alloc(int32_t n_pieces);
int tok_set_piece(gs_tokenizer *t, int32_t id, const char *s, size_t len, float score, int type);
int tok_index(gs_tokenizer *t);
int32_t tok_lookup(const gs_tokenizer *t, const char *s, size_t len);
/* The longest user-defined piece that s[0..n) begins with, or -1. */
int32_t tok_user_match(const gs_tokenizer *t, const unsigned char *s, size_t n);
/* Add merge (left, right) -> the piece left+right, with a rank. */
int tok_add_merge(gs_tokenizer *t, int32_t left, int32_t right, int32_t rank);
/* SentencePiece BPE: every split of a mergeable piece into two pieces is a
 * merge, ranked by the piece's score (higher first, equal scores equal rank). */
int tok_merges_from_scores(gs_tokenizer *t);
int tok_finish(gs_tokenizer *t);

gs_tokenizer *tok_load_json(const char *path, const char *data, size_t size);
gs_tokenizer *tok_load_spm(const char *path, const unsigned char *data, size_t size);

/* ---- small helpers shared by tokenizer.c and tokenizer_encode.c (hot: inline) */

static inline const char *tok_piece_str(const gs_tokenizer *t, int32_t id) { return t->text + t->off[id]; }

static inline uint64_t tok_mix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* The slot of pair (l, r): its entry, or the empty slot where it would go. */
static inline tok_pair *tok_pair_find(const gs_tokenizer *t, int32_t l, int32_t r) {
    uint64_t key = ((uint64_t)(uint32_t)(l + 1) << 32) | (uint32_t)(r + 1);
    for (uint32_t i = (uint32_t)tok_mix64(key) & t->pair_mask;; i = (i + 1) & t->pair_mask) {
        tok_pair *p = &t->pairs[i];
        if (p->key == key || p->key == 0) return p;
    }
}

/* Whether a piece can be a symbol of the text (SentencePiece's pieces_ map):
 * control, unknown and byte pieces are only ever produced by rule. */
static inline int tok_symbol_piece(const gs_tokenizer *t, int32_t id) {
    return id >= 0 && (t->type[id] == PIECE_NORMAL || t->type[id] == PIECE_USER || t->type[id] == PIECE_UNUSED);
}

static inline int32_t tok_symbol_lookup(const gs_tokenizer *t, const char *s, size_t len) {
    int32_t id = tok_lookup(t, s, len);
    return tok_symbol_piece(t, id) ? id : -1;
}

#endif
