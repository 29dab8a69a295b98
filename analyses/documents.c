#include "analyses/documents.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

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

int gs_doc_map_read(store *const *st, const int64_t *run, int n_stores, int V, gs_doc_map *m) {
    memset(m, 0, sizeof *m);
    store_token_array *tk = calloc((size_t)(n_stores > 0 ? n_stores : 1), sizeof *tk);
    int32_t *dense = NULL;
    int rc = -1, read = 0;
    if (!tk) return gs_fail("out of memory");
    int64_t W = 0, T = 1, top = -1;
    int with = -1; /* the first store with token rows: its vocabulary names the boundary tokens */
    for (; read < n_stores; read++) {
        if (store_read_tokens(st[read], run[read], &tk[read]) != 0) {
            if (n_stores == 1) goto out;
            gs_clear_error(); /* a shard without token rows (a rank that recorded no window): none of its windows */
            memset(&tk[read], 0, sizeof tk[read]);
        }
        if (with < 0 && tk[read].n_windows > 0) with = read;
        W += tk[read].n_windows;
        if (tk[read].n_positions > T) T = tk[read].n_positions;
    }
    dense = calloc((size_t)(W * T + 1), sizeof *dense); /* calloc: every entry is written below, which gcc cannot see */
    m->window = malloc((size_t)(W + 1) * sizeof *m->window);
    m->doc = malloc((size_t)(W + 1) * sizeof *m->doc);
    if (!dense || !m->window || !m->doc) { gs_fail("out of memory for the documents"); goto out; }
    int64_t w = 0;
    for (int i = 0; i < n_stores; i++)
        for (int64_t k = 0; k < tk[i].n_windows; k++, w++) {
            const int64_t P = tk[i].n_positions;
            m->window[w] = tk[i].window_ids[k];
            if (w && m->window[w] <= m->window[w - 1]) { gs_fail("token windows out of order"); goto out; }
            for (int64_t t = 0; t < T; t++) {
                const int32_t x = t < P ? tk[i].token_id[k * P + t] : -1;
                dense[w * T + t] = x;
                if (x > top) top = x;
            }
        }
    int32_t bos = -1, eos = -1;
    if (with >= 0) gs_run_boundary_tokens(st[with], run[with], V > 0 ? V : (int)(top + 1), &bos, &eos);
    m->n = W;
    m->n_docs = gs_window_documents(dense, W, (int)T, bos, eos, m->doc);
    rc = 0;
out:
    for (int i = 0; i < read; i++) store_token_array_free(&tk[i]);
    free(tk);
    free(dense);
    if (rc) gs_doc_map_free(m);
    return rc;
}

int64_t gs_doc_map_find(const gs_doc_map *m, int64_t window) {
    int64_t lo = 0, hi = m ? m->n : 0;
    while (lo < hi) { /* the first id >= window */
        const int64_t mid = lo + (hi - lo) / 2;
        if (m->window[mid] < window) lo = mid + 1;
        else hi = mid;
    }
    return lo < (m ? m->n : 0) && m->window[lo] == window ? m->doc[lo] : -1;
}

void gs_doc_map_free(gs_doc_map *m) {
    free(m->window);
    free(m->doc);
    memset(m, 0, sizeof *m);
}
