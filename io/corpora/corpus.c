/* Corpus core: options, format detection, window selection, reading
 * windows, unigram counts and the content hash. The sources live in
 * corpus_text.c (text, JSONL) and corpus_shards.c (token shards). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/prng.h"
#include "base/error.h"
#include "io/corpora/corpus_impl.h"

void corpus_options_default(corpus_options *o) {
    memset(o, 0, sizeof *o);
    o->seq_len = 2048;
    o->field = "text";
    o->add_bos = 1;
}

const char *corpus_format_name(corpus_format f) {
    switch (f) {
    case CORPUS_TEXT: return "text";
    case CORPUS_JSONL: return "jsonl";
    case CORPUS_SHARDS: return "shards";
    default: return "auto";
    }
}

int corpus_ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void corpus_free_list(char **list, int n) {
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
}

int corpus_list_dir(const char *dir, int (*keep)(const char *name), char ***out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return gs_fail("cannot open directory %s: %s", dir, strerror(errno));
    char **list = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (keep && !keep(e->d_name))) continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) break;
        snprintf(p, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) { free(p); continue; }
        if (n == cap) {
            char **q = realloc(list, (size_t)(cap = cap ? cap * 2 : 16) * sizeof *q);
            if (!q) { free(p); break; }
            list = q;
        }
        list[n++] = p;
    }
    closedir(d);
    if (e) { corpus_free_list(list, n); return gs_fail("out of memory listing %s", dir); }
    if (n) qsort(list, (size_t)n, sizeof *list, cmp_str);
    *out = list;
    return n;
}

static int is_shard_name(const char *name) { return strncmp(name, "data_", 5) == 0 && corpus_ends_with(name, ".bin"); }
static int is_jsonl_name(const char *name) { return corpus_ends_with(name, ".jsonl") || corpus_ends_with(name, ".json"); }

corpus_format corpus_detect(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return CORPUS_TEXT; /* the reader reports the error */
    if (!S_ISDIR(st.st_mode)) {
        if (corpus_ends_with(path, ".bin")) return CORPUS_SHARDS;
        if (is_jsonl_name(path)) return CORPUS_JSONL;
        return CORPUS_TEXT;
    }
    char **list;
    int n = corpus_list_dir(path, is_shard_name, &list);
    corpus_free_list(list, n > 0 ? n : 0);
    if (n > 0) return CORPUS_SHARDS;
    n = corpus_list_dir(path, NULL, &list);
    int all_jsonl = n > 0;
    for (int i = 0; i < n; i++) all_jsonl &= is_jsonl_name(list[i]);
    corpus_free_list(list, n > 0 ? n : 0);
    return all_jsonl ? CORPUS_JSONL : CORPUS_TEXT;
}

int corpus_push_doc(gs_corpus *c, const int32_t *ids, size_t n) {
    if (c->total + (int64_t)n > c->cap_tokens) {
        int64_t cap = c->cap_tokens ? c->cap_tokens : 1 << 16;
        while (cap < c->total + (int64_t)n) cap *= 2;
        int32_t *p = realloc(c->tokens, (size_t)cap * sizeof *p);
        if (!p) return gs_fail("out of memory: the corpus needs more than %lld tokens in memory", (long long)cap);
        c->tokens = p;
        c->cap_tokens = cap;
    }
    if (corpus_push_len(c, (int64_t)n)) return -1;
    memcpy(c->tokens + c->total, ids, n * sizeof *ids);
    c->total += (int64_t)n;
    return 0;
}

int corpus_push_len(gs_corpus *c, int64_t n) {
    if (c->n_docs == c->cap_docs) {
        int64_t cap = c->cap_docs ? c->cap_docs * 2 : 1024;
        int64_t *p = realloc(c->doc_len, (size_t)cap * sizeof *p);
        if (!p) return gs_fail("out of memory");
        c->doc_len = p;
        c->cap_docs = cap;
    }
    c->doc_len[c->n_docs++] = n;
    return 0;
}

static int select_windows(gs_corpus *c, const corpus_options *o) {
    int64_t n = c->n_windows_total;
    if (o->skip < 0 || o->windows < 0 || o->sample < 0) return gs_fail("skip, windows and sample must not be negative");
    if (o->skip >= n && c->by_document)
        return gs_fail("skipping %lld documents leaves none: the corpus has %lld", (long long)o->skip, (long long)n);
    if (o->skip >= n)
        return gs_fail("skipping %lld windows leaves none: the corpus has %lld windows of %lld tokens", (long long)o->skip, (long long)n,
                       (long long)c->seq_len);
    int64_t avail = n - o->skip, take = o->windows ? o->windows : avail;
    if (take > avail && c->by_document)
        return gs_fail("asked for %lld documents after skipping %lld, but the corpus has only %lld (of %lld): ask for %lld or "
                       "fewer (--windows all takes every one)", (long long)take, (long long)o->skip, (long long)avail,
                       (long long)n, (long long)avail);
    if (take > avail)
        return gs_fail("asked for %lld windows after skipping %lld, but the corpus has only %lld (%lld windows of %lld tokens): "
                       "ask for %lld or fewer (--windows all takes every one), or shorter windows (--seq-len %lld gives %lld)",
                       (long long)take, (long long)o->skip, (long long)avail, (long long)n, (long long)c->seq_len,
                       (long long)avail, (long long)(c->total / (take + o->skip)), (long long)(take + o->skip));
    c->first = o->skip;
    c->n_sel = take;
    if (!o->sample) return 0;
    if (o->sample > take)
        return gs_fail("cannot sample %lld windows out of %lld", (long long)o->sample, (long long)take);
    c->sel = malloc((size_t)o->sample * sizeof *c->sel);
    if (!c->sel) return gs_fail("out of memory");
    /* Knuth's selection sampling (Algorithm S): each candidate is kept with
     * probability needed/remaining; the result is uniform and in order. */
    uint64_t s = o->seed;
    int64_t needed = o->sample, k = 0;
    for (int64_t i = 0; i < take && needed > 0; i++) {
        double u = (double)(gs_splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
        if ((double)(take - i) * u < (double)needed) { c->sel[k++] = o->skip + i; needed--; }
    }
    c->n_sel = k;
    return 0;
}

/* By document: the documents' offsets, the selection, the window length
 * (seq_len 0: the longest selected document, capped) and what it cuts. */
static int select_documents(gs_corpus *c, const corpus_options *o) {
    c->n_windows_total = c->n_docs;
    if (!(c->doc_start = malloc((size_t)(c->n_docs ? c->n_docs : 1) * sizeof *c->doc_start))) return gs_fail("out of memory");
    for (int64_t d = 0, at = 0; d < c->n_docs; at += c->doc_len[d++]) c->doc_start[d] = at;
    if (select_windows(c, o)) return -1;
    if (!c->seq_len) {
        for (int64_t i = 0; i < c->n_sel; i++) {
            int64_t n = c->doc_len[corpus_window_index(c, i)];
            if (n > c->seq_len) c->seq_len = n;
        }
        if (c->seq_len > CORPUS_DOC_MAX_LEN) c->seq_len = CORPUS_DOC_MAX_LEN;
        if (c->seq_len < 1) c->seq_len = 1; /* documents of no tokens (shards allow them) */
    }
    for (int64_t i = 0; i < c->n_sel; i++) {
        int64_t n = c->doc_len[corpus_window_index(c, i)];
        if (n > c->seq_len) c->n_cut++, c->cut_tokens += n - c->seq_len;
    }
    return 0;
}

gs_corpus *corpus_open(const char *path, const gs_tokenizer *tok, const corpus_options *opt) {
    corpus_options def;
    if (!opt) { corpus_options_default(&def); opt = &def; }
    if (opt->seq_len < 0 || (opt->seq_len == 0 && !opt->by_document)) {
        gs_fail("the window length must be positive (got %lld)", (long long)opt->seq_len);
        return NULL;
    }
    gs_corpus *c = calloc(1, sizeof *c);
    if (!c) { gs_fail("out of memory"); return NULL; }
    c->path = strdup(path);
    c->seq_len = opt->seq_len;
    c->by_document = opt->by_document;
    c->format = opt->format == CORPUS_AUTO ? corpus_detect(path) : opt->format;
    int rc;
    if (c->format == CORPUS_SHARDS) {
        rc = corpus_load_shards(c, tok, opt);
    } else {
        rc = tok ? corpus_load_text(c, tok, opt, c->format == CORPUS_JSONL)
                 : gs_fail("%s is a %s corpus: it needs a tokenizer", path, corpus_format_name(c->format));
    }
    if (rc == 0 && c->total == 0) rc = gs_fail("%s: empty corpus (no tokens)", path);
    if (rc == 0 && c->by_document) {
        if (select_documents(c, opt)) rc = gs_fail_context("%s: ", path);
    } else if (rc == 0 && c->total < c->seq_len) {
        rc = gs_fail("%s: %lld tokens, fewer than one window of %lld: use --seq-len %lld or less", path, (long long)c->total,
                     (long long)c->seq_len, (long long)c->total);
    } else if (rc == 0) {
        c->n_windows_total = c->total / c->seq_len;
        if (select_windows(c, opt)) rc = gs_fail_context("%s: ", path);
    }
    if (rc) { corpus_free(c); return NULL; }
    return c;
}

void corpus_free(gs_corpus *c) {
    if (!c) return;
    corpus_unmap_shards(c);
    free(c->tokens);
    free(c->doc_len);
    free(c->doc_start);
    free(c->sel);
    free(c->path);
    free(c);
}

int64_t corpus_seq_len(const gs_corpus *c) { return c->seq_len; }
int64_t corpus_n_windows(const gs_corpus *c) { return c->n_sel; }
int64_t corpus_n_windows_total(const gs_corpus *c) { return c->n_windows_total; }
int64_t corpus_total_tokens(const gs_corpus *c) { return c->total; }
int64_t corpus_n_docs(const gs_corpus *c) { return c->n_docs; }
int64_t corpus_n_bad(const gs_corpus *c) { return c->n_bad; }
corpus_format corpus_get_format(const gs_corpus *c) { return c->format; }
const char *corpus_path(const gs_corpus *c) { return c->path; }
int64_t corpus_vocab_size(const gs_corpus *c) { return c->vocab; }

int64_t corpus_window_index(const gs_corpus *c, int64_t i) {
    if (i < 0 || i >= c->n_sel) return -1;
    return c->sel ? c->sel[i] : c->first + i;
}

/* Copy ids [start, start+n) of a shard corpus, checking each against the vocabulary. */
static int read_shards(const gs_corpus *c, int64_t start, int64_t n, int32_t *out) {
    int lo = 0, hi = c->n_shards - 1;
    while (lo < hi) { /* last shard whose start <= start */
        int mid = (lo + hi + 1) / 2;
        if (c->shards[mid].start <= start) lo = mid; else hi = mid - 1;
    }
    for (int s = lo; n > 0 && s < c->n_shards; s++) {
        const corpus_shard *sh = &c->shards[s];
        int64_t off = start - sh->start, k = sh->n - off < n ? sh->n - off : n;
        for (int64_t j = 0; j < k; j++) {
            uint32_t id = sh->ids[off + j];
            if ((c->vocab > 0 && id >= (uint64_t)c->vocab) || id > INT32_MAX)
                return gs_fail("%s: token id %u at token %lld (byte offset %lld) is >= the vocabulary size %lld", sh->path, id,
                               (long long)(off + j), (long long)(4 * (off + j)), (long long)c->vocab);
            out[j] = (int32_t)id;
        }
        out += k;
        start += k;
        n -= k;
    }
    return 0;
}

int64_t corpus_window_len(const gs_corpus *c, int64_t i) {
    int64_t w = corpus_window_index(c, i);
    if (w < 0) return -1;
    if (!c->by_document) return c->seq_len;
    return c->doc_len[w] < c->seq_len ? c->doc_len[w] : c->seq_len;
}

int64_t corpus_window_offset(const gs_corpus *c, int64_t i) {
    int64_t w = corpus_window_index(c, i);
    if (w < 0) return -1;
    return c->by_document ? c->doc_start[w] : w * c->seq_len;
}

int corpus_by_document(const gs_corpus *c) { return c->by_document; }

int64_t corpus_n_cut(const gs_corpus *c, int64_t *cut_tokens) {
    if (cut_tokens) *cut_tokens = c->cut_tokens;
    return c->n_cut;
}

int corpus_window(const gs_corpus *c, int64_t i, int32_t *out) {
    int64_t w = corpus_window_index(c, i);
    if (w < 0) return gs_fail("window %lld is outside the %lld selected", (long long)i, (long long)c->n_sel);
    int64_t start = corpus_window_offset(c, i), n = corpus_window_len(c, i);
    if (c->tokens) memcpy(out, c->tokens + start, (size_t)n * sizeof *out);
    else if (n && read_shards(c, start, n, out)) return -1;
    /* by document: pad with the last token (a causal model's earlier positions never see it) */
    for (int64_t t = n; t < c->seq_len; t++) out[t] = n ? out[n - 1] : 0;
    return 0;
}

int corpus_unigram_counts(const gs_corpus *c, int64_t V, int64_t *counts) {
    memset(counts, 0, (size_t)V * sizeof *counts);
    if (c->tokens) {
        for (int64_t i = 0; i < c->total; i++) {
            int32_t id = c->tokens[i];
            if (id < 0 || id >= V) return gs_fail("%s: token id %d at token %lld is >= %lld", c->path, id, (long long)i, (long long)V);
            counts[id]++;
        }
        return 0;
    }
    for (int s = 0; s < c->n_shards; s++) {
        const corpus_shard *sh = &c->shards[s];
        for (int64_t i = 0; i < sh->n; i++) {
            uint32_t id = sh->ids[i];
            if (id >= (uint64_t)V)
                return gs_fail("%s: token id %u at token %lld (byte offset %lld) is >= %lld", sh->path, id, (long long)i,
                               (long long)(4 * i), (long long)V);
            counts[id]++;
        }
    }
    return 0;
}

const char *corpus_hash(gs_corpus *c) {
    if (c->hash[0]) return c->hash;
    gs_hasher *h = gs_hasher_new();
    if (!h) return NULL;
    if (c->tokens) {
        uint32_t buf[4096];
        for (int64_t i = 0; i < c->total;) {
            int64_t k = c->total - i < 4096 ? c->total - i : 4096;
            for (int64_t j = 0; j < k; j++) {
                uint32_t v = (uint32_t)c->tokens[i + j];
                unsigned char *b = (unsigned char *)&buf[j]; /* little-endian whatever the host */
                b[0] = (unsigned char)v; b[1] = (unsigned char)(v >> 8); b[2] = (unsigned char)(v >> 16); b[3] = (unsigned char)(v >> 24);
            }
            gs_hasher_update(h, buf, (size_t)k * 4);
            i += k;
        }
    } else {
        for (int s = 0; s < c->n_shards; s++)
            if (c->shards[s].n) gs_hasher_update(h, c->shards[s].ids, (size_t)c->shards[s].n * 4);
    }
    gs_hasher_finish(h, c->hash);
    return c->hash;
}

int corpus_export_shards(const gs_corpus *c, const char *dir, const char *tokenizer_name, int64_t shard_tokens) {
    if (!c->tokens) return gs_fail("%s is already a shard corpus", c->path);
    shard_writer *w = shard_writer_open(dir, c->vocab, tokenizer_name, shard_tokens);
    if (!w) return -1;
    int64_t at = 0;
    for (int64_t d = 0; d < c->n_docs; d++) {
        if (shard_writer_add(w, c->tokens + at, (size_t)c->doc_len[d])) { shard_writer_abort(w); return -1; }
        at += c->doc_len[d];
    }
    return shard_writer_close(w);
}
