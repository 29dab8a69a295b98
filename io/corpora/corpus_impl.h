/* Internals shared by corpus.c (selection, windows, hash), corpus_text.c
 * (text and JSONL -> tokens in memory) and corpus_shards.c (mapped shards,
 * shard writer). Not a public header. */
#ifndef GS_IO_CORPUS_IMPL_H
#define GS_IO_CORPUS_IMPL_H

#include "io/corpora/corpus.h"

typedef struct {
    char *path;
    const uint32_t *ids; /* into the mapping; NULL for an empty shard */
    int64_t n;           /* tokens */
    int64_t start;       /* offset of its first token in the whole stream */
    size_t map_size;
} corpus_shard;

struct gs_corpus {
    char *path;
    corpus_format format;
    int64_t seq_len, total, n_docs, n_bad, vocab;
    /* text and JSONL: the token stream and document lengths, in memory
     * (shards keep the lengths of their index files only by document) */
    int32_t *tokens;
    int64_t *doc_len;
    int64_t cap_tokens, cap_docs;
    /* by document: each document's offset in the stream; the selected
     * documents longer than seq_len and their tokens past it */
    int by_document;
    int64_t *doc_start;
    int64_t n_cut, cut_tokens;
    /* shards */
    corpus_shard *shards;
    int n_shards;
    /* selection: windows first..first+n_sel-1, or the listed ones */
    int64_t n_windows_total, n_sel, first;
    int64_t *sel;
    char hash[GS_HASH_HEX];
};

/* Append one document (ids already include BOS/EOS). */
int corpus_push_doc(gs_corpus *c, const int32_t *ids, size_t n);
/* Append one document's length only (a shard's, by document). */
int corpus_push_len(gs_corpus *c, int64_t n);
int corpus_load_text(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *opt, int jsonl);
int corpus_load_shards(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *opt);
void corpus_unmap_shards(gs_corpus *c);

/* Regular, non-hidden files of a directory, sorted by name (strcmp); each
 * string and the array are malloc'ed. keep(name) filters. Returns the count
 * or -1 with gs_error(). */
int corpus_list_dir(const char *dir, int (*keep)(const char *name), char ***out);
void corpus_free_list(char **list, int n);
int corpus_ends_with(const char *s, const char *suffix);

#endif
