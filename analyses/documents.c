#include "analyses/documents.h"

#include <stdlib.h>
#include <string.h>

int64_t gs_window_documents(const int32_t *tokens, int64_t W, int T, int32_t bos, int32_t eos, int64_t *doc) {
    if (bos < 0 && eos < 0) {
        for (int64_t w = 0; w < W; w++) doc[w] = w;
        return 0;
    }
    /* running document number over the concatenated windows */
    int64_t cur = 0, prev_doc = -1, ndoc = 0;
    int prev_eos = 0, any = 0;
    for (int64_t w = 0; w < W; w++) {
        /* segments of this window: (document, tokens), at most T */
        int64_t best_doc = cur, best_n = -1, seg_doc = -1, seg_n = 0;
        for (int t = 0; t < T; t++) {
            int32_t x = tokens[w * T + t];
            if (x < 0) continue;
            int starts = any && ((bos >= 0 && x == bos) || prev_eos);
            if (starts) cur++;
            any = 1;
            prev_eos = eos >= 0 && x == eos;
            if (cur != seg_doc) {
                if (seg_doc >= 0 && seg_n > best_n) { best_n = seg_n; best_doc = seg_doc; }
                seg_doc = cur;
                seg_n = 0;
            }
            seg_n++;
        }
        if (seg_doc >= 0 && seg_n > best_n) best_doc = seg_doc;
        /* dense numbers in window order: windows' documents never decrease */
        if (best_doc != prev_doc) { ndoc++; prev_doc = best_doc; }
        doc[w] = ndoc - 1;
    }
    return ndoc;
}

void gs_run_boundary_tokens(store *st, int64_t run_id, int V, int32_t *bos, int32_t *eos) {
    static const char *const bos_names[] = {"<s>", "<bos>", "<|begin_of_text|>", "<|startoftext|>"};
    static const char *const eos_names[] = {"</s>", "<eos>", "<|end_of_text|>", "<|endoftext|>"};
    *bos = *eos = -1;
    for (int k = 0; k < 32 && k < V; k++) {
        int32_t id = k < 16 ? k : V - 1 - (k - 16);
        if (id < 0 || (k >= 16 && id < 16)) continue;
        char piece[64];
        if (store_token_piece(st, run_id, id, piece, sizeof piece) != 0) continue;
        for (size_t i = 0; i < sizeof bos_names / sizeof *bos_names; i++) {
            if (*bos < 0 && !strcmp(piece, bos_names[i])) *bos = id;
            if (*eos < 0 && !strcmp(piece, eos_names[i])) *eos = id;
        }
    }
}
