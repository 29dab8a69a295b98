/* Corpora as token windows, exactly as the companion's TokenDataset cuts
 * them (docs/corpora.md):
 *   documents -> token ids (BOS first by default, EOS last) -> concatenated
 *   -> non-overlapping windows of seq_len tokens: window i is tokens
 *   [i*seq_len, (i+1)*seq_len); a tail shorter than seq_len is dropped.
 * Three sources:
 *   text   a file, or a directory of files (sorted by name; one document
 *          per file, or split on a separator string);
 *   JSONL  one JSON object per line, the text in a field (default "text");
 *   shards the companion's data_XXXX.bin (little-endian uint32 ids, already
 *          ending each document with EOS) + data_XXXX.index.json (document
 *          lengths) + meta.json, memory-mapped, shards in name order.
 * By document (by_document): window i is document i instead (a text file
 * or separator piece, a JSONL line, an index entry of a shard), its first
 * token first; a document longer than seq_len is cut there, a shorter one is
 * padded with its last token up to seq_len (corpus_window_len gives its real
 * tokens); seq_len 0 picks the longest selected document, at most
 * CORPUS_DOC_MAX_LEN. Shards need their index files for it.
 * A selection picks which windows a run uses: skip the first `skip`, keep
 * the next `windows` (0: all), then, with `sample`, keep `sample` of those
 * chosen at random with `seed` (in increasing order).
 *
 * Errors are one line naming the file and the line or offset. A corpus is
 * read-only after corpus_open: threads may read windows concurrently. */
#ifndef GS_IO_CORPUS_H
#define GS_IO_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "io/tokenizer/tokenizer.h"

typedef enum { CORPUS_AUTO = 0, CORPUS_TEXT, CORPUS_JSONL, CORPUS_SHARDS } corpus_format;

typedef struct {
    corpus_format format; /* AUTO: data_*.bin in the directory (or a .bin file) -> shards;
                             a .jsonl/.json file (or a directory of them) -> JSONL; else text */
    int64_t seq_len;      /* tokens per window (default 2048) */
    const char *separator;/* text: split each file into documents on this exact string
                             (e.g. "\n\n"); NULL: one document per file */
    const char *field;    /* JSONL: field holding the text (default "text") */
    int skip_bad;         /* JSONL: skip bad lines (counted) instead of failing */
    int add_bos;          /* text/JSONL: begin each document with BOS (default 1: the
                             companion tokenized with Hugging Face's LLaMA-2 tokenizer,
                             which adds it) */
    int64_t vocab_size;   /* shards: ids must be below this; 0: the tokenizer's if given,
                             else meta.json's */
    int64_t skip, windows;/* selection, see above */
    int64_t sample;
    uint64_t seed;
    int by_document;      /* windows are documents (see above) */
} corpus_options;

/* by_document with seq_len 0: the longest selected document, up to this */
#define CORPUS_DOC_MAX_LEN 2048

typedef struct gs_corpus gs_corpus;

void corpus_options_default(corpus_options *o);
const char *corpus_format_name(corpus_format f);
/* The format corpus_open would pick for path with CORPUS_AUTO. */
corpus_format corpus_detect(const char *path);

/* Open and tokenize (text, JSONL: tok required) or map (shards: tok may be
 * NULL). NULL with gs_error() on any problem, including an empty corpus, one
 * shorter than a window, or a selection outside it. */
gs_corpus *corpus_open(const char *path, const gs_tokenizer *tok, const corpus_options *opt);
void corpus_free(gs_corpus *c);

int64_t corpus_seq_len(const gs_corpus *c);
/* Windows selected / in the whole corpus. */
int64_t corpus_n_windows(const gs_corpus *c);
int64_t corpus_n_windows_total(const gs_corpus *c);
/* Index in the whole corpus (the companion's chunk index) of selected window i. */
int64_t corpus_window_index(const gs_corpus *c, int64_t i);
/* Copy selected window i (seq_len ids) to out. Returns 0, or -1 with
 * gs_error() (shards: an id >= vocab size, named with file and offset). */
int corpus_window(const gs_corpus *c, int64_t i, int32_t *out);
/* Real tokens of selected window i: seq_len, or by document its document's
 * length up to seq_len (the rest is padding); -1 outside the selection. */
int64_t corpus_window_len(const gs_corpus *c, int64_t i);
/* Offset in the token stream of selected window i's first token; -1 outside. */
int64_t corpus_window_offset(const gs_corpus *c, int64_t i);
int corpus_by_document(const gs_corpus *c);
/* By document: how many selected documents are longer than seq_len, and
 * (cut_tokens, may be NULL) how many of their tokens lie past it. */
int64_t corpus_n_cut(const gs_corpus *c, int64_t *cut_tokens);

int64_t corpus_total_tokens(const gs_corpus *c);
int64_t corpus_n_docs(const gs_corpus *c);   /* -1 when unknown (shards without index files) */
int64_t corpus_n_bad(const gs_corpus *c);    /* JSONL lines skipped by skip_bad */
corpus_format corpus_get_format(const gs_corpus *c);
const char *corpus_path(const gs_corpus *c);
int64_t corpus_vocab_size(const gs_corpus *c); /* the bound ids were checked against; 0 if none */

/* counts[0..V) = occurrences of each id in the whole token stream (not only
 * the selection). -1 with gs_error() for an id >= V. */
int corpus_unigram_counts(const gs_corpus *c, int64_t V, int64_t *counts);

/* SHA-256 of the whole token stream as little-endian uint32 (for a corpus of
 * one shard: `sha256sum data_0000.bin`), computed on first call. NULL with
 * gs_error() on failure. Not thread-safe on the first call. */
const char *corpus_hash(gs_corpus *c);

/* Write the corpus's documents as companion shards into dir (created if
 * needed): data_XXXX.bin, data_XXXX.index.json, meta.json. */
int corpus_export_shards(const gs_corpus *c, const char *dir, const char *tokenizer_name, int64_t shard_tokens);

/* ---- shard writer (tests, data preparation, the trainer) ----
 * Documents are appended whole; a shard is closed once it holds at least
 * shard_tokens tokens (0: 500M, the companion's default), as the companion's
 * download_n_tokenize.py does. Each document should already end with EOS. */
typedef struct shard_writer shard_writer;
shard_writer *shard_writer_open(const char *dir, int64_t vocab_size, const char *tokenizer_name, int64_t shard_tokens);
int shard_writer_add(shard_writer *w, const int32_t *ids, size_t n);
/* Finish the last shard and write meta.json; frees w (also on error). */
int shard_writer_close(shard_writer *w);
/* Give up: frees w, leaves whatever was written. */
void shard_writer_abort(shard_writer *w);

#endif
