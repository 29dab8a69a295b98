/* The LLaMA-2 tokenizer (SentencePiece BPE with byte fallback), read from a
 * Hugging Face tokenizer.json (BPE model) or from SentencePiece's own
 * tokenizer.model (protobuf), detected by content.
 *
 * Encoding follows SentencePiece (docs/tokenizer.md has the details):
 * - normalize: a dummy prefix U+2581 before non-empty text, every space
 *   (U+0020) replaced by U+2581; nothing else (LLaMA-2's normalizer is the
 *   identity);
 * - split into characters; a byte that does not start valid UTF-8 becomes
 *   U+FFFD, one per byte, as SentencePiece's normalizer does
 *   (TOKENIZER_INVALID_REPLACE), or stays a raw byte that falls back to its
 *   <0xXX> piece (TOKENIZER_INVALID_BYTES: lossless, not SentencePiece);
 * - merge adjacent pieces, best merge first (lowest merge rank; for a
 *   tokenizer.model, highest score of the merged piece), leftmost on ties;
 * - a character not in the vocabulary becomes the <0xXX> pieces of its
 *   UTF-8 bytes (byte fallback), or <unk> when the model has none.
 * Special tokens written in the text ("<s>") are encoded as text, as
 * SentencePiece and llama-tokenizer-js do. No BOS/EOS is added.
 *
 * A loaded tokenizer is read-only: any number of threads may encode with it. */
#ifndef GS_IO_TOKENIZER_H
#define GS_IO_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

typedef struct gs_tokenizer gs_tokenizer;

typedef enum { TOKENIZER_INVALID_REPLACE = 0, TOKENIZER_INVALID_BYTES = 1 } tokenizer_invalid_utf8;

/* Load tokenizer.json or tokenizer.model; NULL with gs_error() set on any
 * problem (unreadable, not one of the two formats, not BPE, a merge naming an
 * unknown piece, a normalizer other than SentencePiece's, ...). */
gs_tokenizer *tokenizer_load(const char *path);
void tokenizer_free(gs_tokenizer *t);

/* How to encode bytes that are not valid UTF-8 (default REPLACE). */
void tokenizer_set_invalid_utf8(gs_tokenizer *t, tokenizer_invalid_utf8 mode);

/* Encode text[0..len) (any bytes, NULs included). *ids is malloc'ed (free it;
 * non-NULL even for 0 ids), *n its length. Returns 0, or -1 with gs_error(). */
int tokenizer_encode(const gs_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n);

/* Decode ids to text: pieces concatenated, U+2581 -> space, <0xXX> -> that
 * byte, BOS/EOS/pad -> nothing, <unk> -> " \u2047 " (SentencePiece's surface),
 * and the space of the dummy prefix removed from the start. Returns a
 * NUL-terminated malloc'ed string (length in *len, may hold NULs), or NULL
 * with gs_error() for an id out of range. */
char *tokenizer_decode(const gs_tokenizer *t, const int32_t *ids, size_t n, size_t *len);

/* The piece of an id as stored ("\u2581the", "<0x0A>", "<s>"); NULL when out of range. */
const char *tokenizer_piece(const gs_tokenizer *t, int32_t id);
/* The id of a piece, or -1. */
int32_t tokenizer_piece_id(const gs_tokenizer *t, const char *piece);

int32_t tokenizer_vocab_size(const gs_tokenizer *t);
int32_t tokenizer_bos(const gs_tokenizer *t); /* -1 when the model has none */
int32_t tokenizer_eos(const gs_tokenizer *t);
int32_t tokenizer_unk(const gs_tokenizer *t);
/* "tokenizer.json" or "tokenizer.model" */
const char *tokenizer_format(const gs_tokenizer *t);
/* SHA-256 of the file it was loaded from (`sha256sum FILE`). */
const char *tokenizer_hash(const gs_tokenizer *t);
const char *tokenizer_path(const gs_tokenizer *t);

#endif
