#include "analyses/state/train_counts.h"

#include <stdlib.h>

#include "base/error.h"
#include "io/corpora/corpus.h"
#include "io/tokenizer/tokenizer.h"

int gs_train_unigram_counts(const char *path, const char *tokenizer_path, int64_t V, double **out) {
    *out = NULL;
    corpus_options co;
    corpus_options_default(&co);
    co.seq_len = 1; /* every token counts; the window size only matters to a recording */
    gs_tokenizer *tok = NULL;
    if (corpus_detect(path) != CORPUS_SHARDS) {
        if (!tokenizer_path) return gs_fail("training corpus %s is text: it needs the run's tokenizer", path);
        if (!(tok = tokenizer_load(tokenizer_path))) return gs_fail_context("the tokenizer for %s: ", path);
    }
    gs_corpus *c = corpus_open(path, tok, &co);
    if (!c) { tokenizer_free(tok); return gs_fail_context("training corpus: "); }
    int64_t *counts = calloc((size_t)V, sizeof *counts);
    double *d = malloc((size_t)V * sizeof *d);
    int rc = counts && d ? corpus_unigram_counts(c, V, counts) : gs_fail("out of memory");
    if (rc == 0)
        for (int64_t i = 0; i < V; i++) d[i] = (double)counts[i];
    corpus_free(c);
    tokenizer_free(tok);
    free(counts);
    if (rc != 0) { free(d); return -1; }
    *out = d;
    return 0;
}
