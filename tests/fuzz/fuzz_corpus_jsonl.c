/* Fuzz target: a JSONL corpus (and the same bytes as a text corpus split on
 * blank lines), as `--corpus FILE.jsonl` reads it. The input is the file.
 * It is opened with and without --skip-bad, tokenized with the tiny
 * tokenizer of fuzz.h, every window read, and a corpus that opens must
 * survive export to shards and back unchanged (checked once per input, on
 * the lenient JSONL open: it is the slowest check). The window length
 * (1..5) comes from the input's size, so short corpora still make windows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz_corpus.h"

static gs_tokenizer *tok;

/* export: also check the export to shards and back (the slowest check, so
 * once per input) */
static gs_corpus *open_as(const char *path, corpus_format format, int skip_bad, int64_t seq_len, int export) {
    corpus_options o;
    corpus_options_default(&o);
    o.format = format;
    o.seq_len = seq_len;
    o.skip_bad = skip_bad;
    if (format == CORPUS_TEXT) o.separator = "\n\n";
    gs_corpus *c = corpus_open(path, tok, &o);
    if (c) {
        /* text and JSONL hold their tokens in memory, checked when made */
        FUZZ_ASSERT(fuzz_read_corpus(c) == 0, "a window of an open corpus does not read: %s", gs_error());
        if (export) fuzz_export_roundtrip(c, tok);
    }
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tok = fuzz_corpus_tokenizer();
    const char *path = fuzz_write("c.jsonl", data, size);
    int64_t seq_len = 1 + (int64_t)(size % 5);
    gs_corpus *strict = open_as(path, CORPUS_JSONL, 0, seq_len, 0);
    gs_corpus *lenient = open_as(path, CORPUS_JSONL, 1, seq_len, 1);
    /* a file that opens strictly has no bad line to skip */
    if (strict) {
        FUZZ_ASSERT(lenient && corpus_n_bad(lenient) == 0 && !strcmp(corpus_hash(strict), corpus_hash(lenient)),
                    "--skip-bad changed a corpus without bad lines");
    }
    corpus_free(strict);
    corpus_free(lenient);
    corpus_free(open_as(path, CORPUS_TEXT, 0, seq_len, 0));
    return 0;
}
