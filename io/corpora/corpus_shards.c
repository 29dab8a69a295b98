/* The companion's token shards (scripts/data/download_n_tokenize.py):
 *   data_XXXX.bin        flat little-endian uint32 token ids
 *   data_XXXX.index.json JSON array of document lengths in tokens
 *   meta.json            {tokenizer, vocab_size, total_tokens, total_docs, num_shards}
 * Reading maps every data_*.bin of the directory in name order (as
 * TokenDataset does) and checks what can be checked cheaply at open: sizes
 * are multiples of 4, index lengths add up to the shard, meta.json agrees.
 * Token ids are checked against the vocabulary when windows are read. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json.h"
#include "base/fs.h"
#include "io/corpora/corpus_impl.h"

#define DEFAULT_SHARD_TOKENS 500000000LL /* the companion's DEFAULT_SHARD_SIZE */

static cJSON *read_json(const char *path, int *missing) {
    *missing = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) *missing = 1;
        else gs_fail("cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0 || n > (1L << 30)) { fclose(f); gs_fail("%s: unreadable or larger than 1 GB", path); return NULL; }
    char *data = malloc((size_t)n + 1);
    if (!data) { fclose(f); gs_fail("out of memory reading %s", path); return NULL; }
    size_t got = fread(data, 1, (size_t)n, f);
    fclose(f);
    cJSON *j = got == (size_t)n ? gs_json_parse_strict(data, (size_t)n, path) : NULL;
    free(data);
    if (got != (size_t)n) gs_fail("%s: cannot read it whole", path);
    return j;
}

static int is_shard_name(const char *name) { return strncmp(name, "data_", 5) == 0 && corpus_ends_with(name, ".bin"); }

void corpus_unmap_shards(gs_corpus *c) {
    for (int i = 0; i < c->n_shards; i++) {
        if (c->shards[i].ids) munmap((void *)c->shards[i].ids, c->shards[i].map_size);
        free(c->shards[i].path);
    }
    free(c->shards);
    c->shards = NULL;
    c->n_shards = 0;
}

static int map_shard(corpus_shard *sh) {
    int fd = open(sh->path, O_RDONLY);
    if (fd < 0) return gs_fail("cannot open %s: %s", sh->path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return gs_fail("cannot stat %s: %s", sh->path, strerror(errno)); }
    if (st.st_size % 4) {
        close(fd);
        return gs_fail("%s: size %lld bytes is not a multiple of 4, so it is not a file of uint32 token ids (truncated?)", sh->path,
                       (long long)st.st_size);
    }
    sh->n = st.st_size / 4;
    sh->map_size = (size_t)st.st_size;
    if (st.st_size > 0) {
        void *p = mmap(NULL, sh->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) { close(fd); return gs_fail("cannot map %s: %s", sh->path, strerror(errno)); }
        sh->ids = p;
    }
    close(fd);
    return 0;
}

/* Document count of a shard from its index file; -1 if there is none, -2 on
 * error. By document the lengths are kept too (corpus_push_len). */
static int64_t shard_docs(gs_corpus *c, const corpus_shard *sh) {
    size_t len = strlen(sh->path);
    char *ix = malloc(len + 16);
    if (!ix) { gs_fail("out of memory"); return -2; }
    memcpy(ix, sh->path, len - 4);
    strcpy(ix + len - 4, ".index.json");
    int missing;
    cJSON *j = read_json(ix, &missing);
    int64_t docs = -2;
    if (missing) docs = -1;
    else if (j && !cJSON_IsArray(j)) gs_fail("%s: not a JSON array of document lengths", ix);
    else if (j) {
        int64_t sum = 0, k = 0;
        const cJSON *x;
        docs = 0;
        cJSON_ArrayForEach(x, j) {
            /* range first: casting a double beyond int64 is undefined */
            if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 9.0e15) || x->valuedouble != floor(x->valuedouble)) {
                gs_fail("%s: entry %lld is not a document length", ix, (long long)k);
                docs = -2;
                break;
            }
            sum += (int64_t)x->valuedouble;
            k++;
            if (c->by_document && corpus_push_len(c, (int64_t)x->valuedouble)) {
                docs = -2;
                break;
            }
            if (sum > sh->n) { /* stop before a hostile list overflows the sum */
                gs_fail("%s: document lengths add up to more than the %lld tokens %s holds", ix, (long long)sh->n, sh->path);
                docs = -2;
                break;
            }
        }
        if (docs == 0 && sum != sh->n) {
            gs_fail("%s: document lengths add up to %lld tokens but %s holds %lld", ix, (long long)sum, sh->path, (long long)sh->n);
            docs = -2;
        } else if (docs == 0) {
            docs = k;
        }
    }
    cJSON_Delete(j);
    free(ix);
    return docs;
}

int corpus_load_shards(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *o) {
    struct stat st;
    if (stat(c->path, &st) != 0) return gs_fail("cannot open corpus %s: %s", c->path, strerror(errno));
    char **files = NULL;
    int n;
    char *dir;
    if (S_ISDIR(st.st_mode)) {
        n = corpus_list_dir(c->path, is_shard_name, &files);
        if (n < 0) return -1;
        if (n == 0) { free(files); return gs_fail("%s: no data_*.bin shards in the directory", c->path); }
        dir = strdup(c->path);
    } else { /* one shard file; meta.json beside it */
        n = 1;
        files = malloc(sizeof *files);
        if (!files) return gs_fail("out of memory");
        files[0] = strdup(c->path);
        dir = strdup(c->path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0; else strcpy(dir, ".");
    }
    c->shards = calloc((size_t)n, sizeof *c->shards);
    if (!c->shards) { corpus_free_list(files, n); free(dir); return gs_fail("out of memory"); }
    int rc = 0;
    c->n_docs = 0;
    for (int i = 0; i < n; i++) {
        corpus_shard *sh = &c->shards[i];
        sh->path = files[i];
        files[i] = NULL;
        c->n_shards = i + 1;
        if ((rc = map_shard(sh))) break;
        sh->start = c->total;
        c->total += sh->n;
        int64_t d = shard_docs(c, sh);
        if (d == -2) { rc = -1; break; }
        if (d == -1 && c->by_document) {
            const char *base = strrchr(sh->path, '/') ? strrchr(sh->path, '/') + 1 : sh->path;
            rc = gs_fail("%s has no %.*s.index.json beside it: per-document windows need every shard's index file (the "
                         "documents' lengths)", sh->path, (int)strlen(base) - 4, base);
            break;
        }
        /* by document, corpus_push_len counted them already */
        if (!c->by_document) c->n_docs = d < 0 || c->n_docs < 0 ? -1 : c->n_docs + d;
    }
    corpus_free_list(files, n);

    /* meta.json: the vocabulary size (needed unless given), and a cross-check */
    char meta_path[4200];
    snprintf(meta_path, sizeof meta_path, "%s/meta.json", dir);
    free(dir);
    int missing = 0;
    cJSON *meta = rc ? NULL : read_json(meta_path, &missing);
    if (!rc && !meta && !missing) rc = -1;
    int64_t meta_vocab = 0;
    if (!rc && meta) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "vocab_size");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(meta, "total_tokens");
        /* token ids are uint32 read into int32: a vocabulary is at most 2^31 pieces */
        if (!cJSON_IsObject(meta)) rc = gs_fail("%s: not a JSON object", meta_path);
        else if (v && (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= 2147483648.0) ||
                       v->valuedouble != floor(v->valuedouble)))
            rc = gs_fail("%s: vocab_size is not an integer from 1 to 2^31", meta_path);
        else if (t && cJSON_IsNumber(t) && t->valuedouble != (double)c->total && S_ISDIR(st.st_mode))
            rc = gs_fail("%s: total_tokens is %.16g but the shards hold %lld tokens (a shard missing or truncated?)", meta_path,
                         t->valuedouble, (long long)c->total);
        if (!rc && v) meta_vocab = (int64_t)v->valuedouble;
        if (!rc && tok && meta_vocab && meta_vocab != tokenizer_vocab_size(tok))
            rc = gs_fail("%s: vocab_size %lld, but the tokenizer has %d pieces: the shards were made with another tokenizer", meta_path,
                         (long long)meta_vocab, tokenizer_vocab_size(tok));
    }
    cJSON_Delete(meta);
    if (rc) return -1;
    c->vocab = o->vocab_size > 0 ? o->vocab_size : tok ? tokenizer_vocab_size(tok) : meta_vocab;
    if (c->vocab <= 0)
        return gs_fail("%s is missing: it gives the vocabulary size that token ids are checked against; pass a tokenizer or a model", meta_path);
    return 0;
}

/* ------------------------------------------------------------------ writer */

struct shard_writer {
    char *dir, *tok_name;
    int64_t vocab, shard_tokens;
    FILE *bin;
    int shard;
    int64_t in_shard, total, docs;
    int64_t *lens;
    size_t n_lens, cap_lens;
};

static void shard_name(const shard_writer *w, int shard, const char *ext, char *out, size_t cap) {
    snprintf(out, cap, "%s/data_%04d%s", w->dir, shard, ext);
}

shard_writer *shard_writer_open(const char *dir, int64_t vocab_size, const char *tokenizer_name, int64_t shard_tokens) {
    if (gs_mkdir_p(dir)) return NULL;
    char **old;
    int n = corpus_list_dir(dir, is_shard_name, &old);
    if (n < 0) return NULL;
    corpus_free_list(old, n);
    if (n > 0) { gs_fail("%s already holds data_*.bin shards; write into an empty directory", dir); return NULL; }
    shard_writer *w = calloc(1, sizeof *w);
    if (!w) { gs_fail("out of memory"); return NULL; }
    w->dir = strdup(dir);
    w->tok_name = strdup(tokenizer_name ? tokenizer_name : "");
    w->vocab = vocab_size;
    w->shard_tokens = shard_tokens > 0 ? shard_tokens : DEFAULT_SHARD_TOKENS;
    return w;
}

/* Close the current shard: rename data_XXXX.bin.tmp into place, write its index. */
static int finish_shard(shard_writer *w) {
    char tmp[4200], bin[4200], ix[4200];
    shard_name(w, w->shard, ".bin.tmp", tmp, sizeof tmp);
    shard_name(w, w->shard, ".bin", bin, sizeof bin);
    shard_name(w, w->shard, ".index.json", ix, sizeof ix);
    int bad = fclose(w->bin) != 0;
    w->bin = NULL;
    if (bad) return gs_fail("cannot write %s: %s", tmp, strerror(errno));
    FILE *f = fopen(ix, "w");
    if (!f) return gs_fail("cannot create %s: %s", ix, strerror(errno));
    fputc('[', f);
    for (size_t i = 0; i < w->n_lens; i++) fprintf(f, i ? ", %lld" : "%lld", (long long)w->lens[i]);
    fputs("]", f);
    if (fclose(f) != 0) return gs_fail("cannot write %s", ix);
    if (rename(tmp, bin) != 0) return gs_fail("cannot rename %s to %s: %s", tmp, bin, strerror(errno));
    w->shard++;
    w->in_shard = 0;
    w->n_lens = 0;
    return 0;
}

int shard_writer_add(shard_writer *w, const int32_t *ids, size_t n) {
    if (!w->bin) {
        char tmp[4200];
        shard_name(w, w->shard, ".bin.tmp", tmp, sizeof tmp);
        w->bin = fopen(tmp, "wb");
        if (!w->bin) return gs_fail("cannot create %s: %s", tmp, strerror(errno));
    }
    unsigned char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || (w->vocab > 0 && id >= w->vocab))
            return gs_fail("document %lld: token id %d at position %zu is outside the vocabulary (0..%lld)", (long long)w->docs, id, i,
                           (long long)w->vocab - 1);
        uint32_t v = (uint32_t)id;
        buf[k++] = (unsigned char)v; buf[k++] = (unsigned char)(v >> 8); buf[k++] = (unsigned char)(v >> 16); buf[k++] = (unsigned char)(v >> 24);
        if (k == sizeof buf || i + 1 == n) {
            if (fwrite(buf, 1, k, w->bin) != k) return gs_fail("cannot write a shard in %s: %s", w->dir, strerror(errno));
            k = 0;
        }
    }
    if (w->n_lens == w->cap_lens) {
        size_t cap = w->cap_lens ? w->cap_lens * 2 : 1024;
        int64_t *p = realloc(w->lens, cap * sizeof *p);
        if (!p) return gs_fail("out of memory");
        w->lens = p;
        w->cap_lens = cap;
    }
    w->lens[w->n_lens++] = (int64_t)n;
    w->in_shard += (int64_t)n;
    w->total += (int64_t)n;
    w->docs++;
    if (w->in_shard >= w->shard_tokens) return finish_shard(w);
    return 0;
}

void shard_writer_abort(shard_writer *w) {
    if (!w) return;
    if (w->bin) fclose(w->bin);
    free(w->lens);
    free(w->dir);
    free(w->tok_name);
    free(w);
}

int shard_writer_close(shard_writer *w) {
    int rc = 0;
    if (w->bin) rc = finish_shard(w);
    if (rc == 0) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "tokenizer", w->tok_name);
        if (w->vocab > 0) cJSON_AddNumberToObject(m, "vocab_size", (double)w->vocab);
        cJSON_AddNumberToObject(m, "total_tokens", (double)w->total);
        cJSON_AddNumberToObject(m, "total_docs", (double)w->docs);
        cJSON_AddNumberToObject(m, "num_shards", w->shard);
        char *s = cJSON_Print(m);
        cJSON_Delete(m);
        char path[4200], tmp[4300];
        snprintf(path, sizeof path, "%s/meta.json", w->dir);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f || !s || fputs(s, f) < 0 || fputc('\n', f) == EOF) rc = gs_fail("cannot write %s", tmp);
        if (f && fclose(f) != 0 && rc == 0) rc = gs_fail("cannot write %s", tmp);
        if (rc == 0 && rename(tmp, path) != 0) rc = gs_fail("cannot rename %s: %s", tmp, strerror(errno));
        cJSON_free(s);
    }
    shard_writer_abort(w);
    return rc;
}
