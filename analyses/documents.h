/* Which document each recorded window belongs to, from its tokens alone: a
 * document starts at a BOS token or right after an EOS token (the corpus
 * reader puts BOS first and EOS last in every document, io/corpora/corpus.h).
 * Windows are taken as consecutive in the corpus in the order given (true of
 * a run that did not --sample; when it did, windows that are not neighbours
 * may be put in one document, which only makes intervals wider). A window
 * belongs to the document holding most of its tokens (the earliest on a
 * tie), so a document that spills a few tokens into the next window does not
 * tie the two together.
 *
 * Used to resample documents, not windows, for ablation intervals and to
 * split probes by document: windows cut from one document are not
 * independent. */
#ifndef GS_ANALYSES_DOCUMENTS_H
#define GS_ANALYSES_DOCUMENTS_H

#include <stdint.h>

#include "store/store.h"

/* tokens: W rows of T ids (-1: missing, skipped). bos / eos: the ids, or -1
 * when the vocabulary has none. doc[w] gets dense document numbers 0, 1, ...
 * in window order; returns how many documents, or 0 when neither boundary
 * token is known (then doc[w] = w: each window its own unit, and callers say
 * so). */
int64_t gs_window_documents(const int32_t *tokens, int64_t W, int T, int32_t bos, int32_t eos, int64_t *doc);

/* The documents of a run's windows, by window id (the default direction's
 * batches by document): window[i] ascending, doc[i] dense in window order;
 * n_docs 0 when the run's vocabulary has no boundary token (then every window
 * is its own, and a caller says the documents are unknown). */
typedef struct {
    int64_t n, n_docs;
    int64_t *window, *doc;
} gs_doc_map;
/* From the token rows of one run, or of the shards of one run in rank order
 * (their windows ascend with the rank, so the rows concatenate in corpus
 * order; a shard without token rows adds no window); V: the vocabulary size
 * (0: the largest token id + 1), for the boundary tokens' lookup in the first
 * store with token rows. 0, or -1 with gs_error(). */
int gs_doc_map_read(store *const *st, const int64_t *run, int n_stores, int V, gs_doc_map *m);
/* The document of a window id, or -1 when the map has no such window. */
int64_t gs_doc_map_find(const gs_doc_map *m, int64_t window);
void gs_doc_map_free(gs_doc_map *m);

/* BOS and EOS ids of a run's vocabulary, by their piece text ("<s>", "</s>",
 * "<|endoftext|>", "<bos>", "<eos>", "<|begin_of_text|>", "<|end_of_text|>"),
 * looked for among the first and last 16 ids where tokenizers keep their
 * special tokens; -1 for one not found. */
void gs_run_boundary_tokens(store *st, int64_t run_id, int V, int32_t *bos, int32_t *eos);

#endif
