/* Shared by the corpus fuzz targets: everything a recording asks of an open
 * corpus, with the invariants that must hold whatever the files held. */
#ifndef GS_TESTS_FUZZ_CORPUS_H
#define GS_TESTS_FUZZ_CORPUS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/corpora/corpus.h"
#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz.h"

/* Unigram counts are only asked for vocabularies up to this size (the
 * caller's array; a model's vocabulary in practice). */
#define FUZZ_MAX_VOCAB (1 << 20)

/* Read every selected window (ids in the vocabulary, or a one-line error for
 * shards), count unigrams, hash; returns 0 when every window read. */
static inline int fuzz_read_corpus(gs_corpus *c) {
    int64_t T = corpus_seq_len(c), n = corpus_n_windows(c), V = corpus_vocab_size(c);
    FUZZ_ASSERT(T > 0 && n > 0 && n <= corpus_n_windows_total(c), "%lld windows of %lld selected out of %lld", (long long)n,
                (long long)T, (long long)corpus_n_windows_total(c));
    FUZZ_ASSERT(corpus_n_windows_total(c) * T <= corpus_total_tokens(c), "windows beyond the tokens");
    int32_t *w = malloc((size_t)T * sizeof *w);
    if (!w) abort();
    int ok = 1;
    int64_t prev = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = corpus_window_index(c, i);
        FUZZ_ASSERT(at > prev && at < corpus_n_windows_total(c), "window %lld has index %lld", (long long)i, (long long)at);
        prev = at;
        if (corpus_window(c, i, w) != 0) { ok = 0; continue; }
        for (int64_t t = 0; t < T; t++)
            FUZZ_ASSERT(w[t] >= 0 && (V <= 0 || w[t] < V), "id %d in window %lld is outside the vocabulary %lld", w[t],
                        (long long)i, (long long)V);
    }
    FUZZ_ASSERT(corpus_window(c, n, w) != 0 && corpus_window(c, -1, w) != 0, "a window outside the selection was read");
    free(w);
    if (V > 0 && V <= FUZZ_MAX_VOCAB) {
        int64_t *counts = calloc((size_t)V, sizeof *counts);
        if (!counts) abort();
        if (corpus_unigram_counts(c, V, counts) == 0) {
            int64_t sum = 0;
            for (int64_t i = 0; i < V; i++) sum += counts[i];
            FUZZ_ASSERT(sum == corpus_total_tokens(c), "unigram counts add up to %lld of %lld tokens", (long long)sum,
                        (long long)corpus_total_tokens(c));
        }
        free(counts);
    }
    FUZZ_ASSERT(corpus_hash(c) != NULL, "no hash: %s", gs_error());
    return ok ? 0 : -1;
}

/* By document: each selected window is a document of at most seq_len real
 * tokens inside the stream, in order, read whole (padding included) with
 * ids in the vocabulary; the cut count matches the documents' lengths. */
static inline void fuzz_read_documents(gs_corpus *c) {
    int64_t T = corpus_seq_len(c), n = corpus_n_windows(c), V = corpus_vocab_size(c), end = 0, cut = 0;
    FUZZ_ASSERT(corpus_by_document(c) && T > 0 && n > 0 && corpus_n_windows_total(c) == corpus_n_docs(c),
                "%lld documents selected of %lld, windows of %lld", (long long)n, (long long)corpus_n_docs(c), (long long)T);
    int32_t *w = malloc((size_t)T * sizeof *w);
    if (!w) abort();
    for (int64_t i = 0; i < n; i++) {
        int64_t len = corpus_window_len(c, i), at = corpus_window_offset(c, i);
        FUZZ_ASSERT(len >= 0 && len <= T && at >= end && at + len <= corpus_total_tokens(c),
                    "window %lld: %lld tokens at %lld (previous end %lld)", (long long)i, (long long)len, (long long)at,
                    (long long)end);
        end = at + len;
        cut += len == T; /* an upper bound: a document of exactly T is not cut */
        if (corpus_window(c, i, w) != 0) continue;
        for (int64_t t = 0; t < T; t++)
            FUZZ_ASSERT(w[t] >= 0 && (V <= 0 || w[t] < V), "id %d in document %lld is outside the vocabulary", w[t], (long long)i);
    }
    FUZZ_ASSERT(corpus_window_len(c, n) == -1 && corpus_window_offset(c, -1) == -1, "a window outside the selection");
    FUZZ_ASSERT(corpus_n_cut(c, NULL) <= cut, "%lld documents cut, at most %lld reach the length", (long long)corpus_n_cut(c, NULL),
                (long long)cut);
    free(w);
}

/* A text or JSONL corpus exported as shards (several small ones) and read
 * back holds the same token stream. */
static inline void fuzz_export_roundtrip(gs_corpus *c, const gs_tokenizer *tok) {
    if (corpus_total_tokens(c) > (1 << 16)) return;
    fuzz_rmdir("export");
    const char *dir = fuzz_path("export");
    FUZZ_ASSERT(corpus_export_shards(c, dir, "fuzz", 7) == 0, "export failed: %s", gs_error());
    corpus_options o;
    corpus_options_default(&o);
    o.format = CORPUS_SHARDS;
    o.seq_len = corpus_seq_len(c);
    gs_corpus *back = corpus_open(dir, tok, &o);
    FUZZ_ASSERT(back != NULL, "the exported shards do not open: %s", gs_error());
    FUZZ_ASSERT(corpus_total_tokens(back) == corpus_total_tokens(c) && corpus_n_docs(back) == corpus_n_docs(c),
                "export changed the corpus: %lld tokens in %lld docs became %lld in %lld", (long long)corpus_total_tokens(c),
                (long long)corpus_n_docs(c), (long long)corpus_total_tokens(back), (long long)corpus_n_docs(back));
    FUZZ_ASSERT(!strcmp(corpus_hash(c), corpus_hash(back)), "export changed the token stream");
    corpus_free(back);
    fuzz_rmdir("export");
}

/* The tiny tokenizer the corpus targets read text with, built on first use. */
static inline gs_tokenizer *fuzz_corpus_tokenizer(void) {
    static gs_tokenizer *tok;
    if (!tok) {
        char *json = fuzz_tiny_tokenizer_json(1, 0);
        tok = tok_load_json("tiny.json", json, strlen(json));
        free(json);
        if (!tok) abort();
    }
    return tok;
}

#endif
