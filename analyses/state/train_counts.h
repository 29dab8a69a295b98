/* Unigram counts of a model's training corpus, for the like-for-like
 * Spearman of the default direction (the paper's +0.46 is against its
 * training corpus, not the text the states were recorded on). */
#ifndef GS_ANALYSES_TRAIN_COUNTS_H
#define GS_ANALYSES_TRAIN_COUNTS_H

#include <stdint.h>

/* counts[0..V) over the whole corpus at `path` (companion shards, or a
 * JSONL / text corpus tokenized with the tokenizer at tokenizer_path, which
 * may then not be NULL). malloc'd doubles in *out; 0, or -1 with gs_error(). */
int gs_train_unigram_counts(const char *path, const char *tokenizer_path, int64_t V, double **out);

#endif
