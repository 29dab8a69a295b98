/* Fuzz target: a folder of the companion's token shards, as `--corpus DIR`
 * reads it. The input packs the files, separated by FUZZ_PART_SEP:
 *   data_0000.bin | data_0000.index.json | meta.json | data_0001.bin | data_0001.index.json
 * (a missing part is a missing file). The folder is opened without a
 * tokenizer (vocabulary from meta.json), with the tiny tokenizer of fuzz.h,
 * and data_0000.bin alone as a file, and by document; every window of an
 * open corpus is read (a bad id is a one-line error). The window length
 * (1..5; by document also 0, the longest) comes from the input's size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz_corpus.h"

static gs_tokenizer *tok;

static void open_read(const char *path, const gs_tokenizer *t, int64_t seq_len) {
    corpus_options o;
    corpus_options_default(&o);
    o.seq_len = seq_len;
    gs_corpus *c = corpus_open(path, t, &o);
    if (!c) return;
    FUZZ_ASSERT(corpus_get_format(c) == CORPUS_SHARDS, "shards detected as %s", corpus_format_name(corpus_get_format(c)));
    fuzz_read_corpus(c);
    corpus_free(c);
}

/* by document: the index files' lengths (seq_len 0: the longest, capped) */
static void open_documents(const char *path, int64_t seq_len) {
    corpus_options o;
    corpus_options_default(&o);
    o.seq_len = seq_len;
    o.by_document = 1;
    gs_corpus *c = corpus_open(path, NULL, &o);
    if (!c) return;
    fuzz_read_documents(c);
    corpus_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tok = fuzz_corpus_tokenizer();
    static const char *const names[] = {"data_0000.bin", "data_0000.index.json", "meta.json", "data_0001.bin",
                                        "data_0001.index.json"};
    fuzz_rmdir("shards");
    if (mkdir(fuzz_path("shards"), 0700) != 0) abort();
    for (int k = 0; k < 5; k++) {
        const uint8_t *p;
        size_t n;
        char name[64];
        snprintf(name, sizeof name, "shards/%s", names[k]);
        if (fuzz_part(data, size, k, &p, &n)) fuzz_write(name, p, n);
    }
    int64_t seq_len = 1 + (int64_t)(size % 5);
    open_read(fuzz_path("shards"), NULL, seq_len);
    open_read(fuzz_path("shards"), tok, seq_len);
    open_read(fuzz_path("shards/data_0000.bin"), NULL, seq_len);
    open_documents(fuzz_path("shards"), size % 2 ? seq_len : 0);
    return 0;
}
