#define _GNU_SOURCE /* hsearch_r: the names' hash table */
#include "io/checkpoint/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json.h"
#include "base/text.h"
#include "base/half.h"

/* A header larger than this is refused before it is read: real checkpoints
 * have headers of a few hundred KB at most. */
#define ST_MAX_HEADER (100u << 20)

static const struct { const char *name; st_dtype t; size_t size; } dtypes[] = {
    {"F32", ST_F32, 4}, {"F16", ST_F16, 2}, {"BF16", ST_BF16, 2}, {"F64", ST_F64, 8},
    {"I32", ST_I32, 4}, {"I64", ST_I64, 8}, {"U32", ST_U32, 4}, {"U8", ST_U8, 1},
    {"I8", ST_I8, 1},   {"I16", ST_I16, 2}, {"U16", ST_U16, 2}, {"BOOL", ST_BOOL, 1}, {"U64", ST_U64, 8},
};

const char *st_dtype_name(st_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].t == t) return dtypes[i].name;
    return "?";
}

size_t st_dtype_size(st_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].t == t) return dtypes[i].size;
    return 0;
}

static int parse_dtype(const char *s, st_dtype *out) {
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(dtypes[i].name, s) == 0) { *out = dtypes[i].t; return 0; }
    return -1;
}

void safetensors_close(st_file *f) {
    if (!f) return;
    for (int i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    for (int i = 0; i < f->n_meta; i++) { free(f->meta_keys[i]); free(f->meta_values[i]); }
    if (f->index) hdestroy_r(f->index);
    free(f->index);
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    if (f->map && f->map != MAP_FAILED) munmap(f->map, f->map_size);
    free(f->path);
    free(f);
}

typedef struct { uint64_t begin, end; int index; } span;

static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

/* Parse one tensor entry; on failure sets the error (without the file name). */
static int parse_tensor(const cJSON *item, st_tensor *t, uint64_t data_size, uint64_t *begin, uint64_t *end) {
    const char *name = item->string;
    if (!cJSON_IsObject(item)) return gs_fail("tensor '%s': entry is not a JSON object", name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt)) return gs_fail("tensor '%s': missing or non-string dtype", name);
    if (parse_dtype(dt->valuestring, &t->dtype) != 0)
        return gs_fail("tensor '%s': unknown dtype '%.32s'", name, dt->valuestring);
    if (!cJSON_IsArray(shape)) return gs_fail("tensor '%s': missing or non-array shape", name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > ST_MAX_DIMS) return gs_fail("tensor '%s': %d dimensions (at most %d supported)", name, nd, ST_MAX_DIMS);
    t->ndim = nd;
    uint64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        const cJSON *d = cJSON_GetArrayItem(shape, i);
        if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble != floor(d->valuedouble) || d->valuedouble > 9.0e15)
            return gs_fail("tensor '%s': shape entry %d is not a non-negative integer", name, i);
        t->shape[i] = (int64_t)d->valuedouble;
        if (t->shape[i] && numel > UINT64_MAX / 16 / (uint64_t)t->shape[i])
            return gs_fail("tensor '%s': shape too large", name);
        numel *= (uint64_t)t->shape[i];
    }
    t->numel = (int64_t)numel;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        return gs_fail("tensor '%s': data_offsets must be an array [begin, end]", name);
    double b = cJSON_GetArrayItem(offs, 0)->valuedouble, e = cJSON_GetArrayItem(offs, 1)->valuedouble;
    if (!cJSON_IsNumber(cJSON_GetArrayItem(offs, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(offs, 1)) ||
        b < 0 || e < b || b != floor(b) || e != floor(e) || e > 9.0e15)
        return gs_fail("tensor '%s': data_offsets [%.0f, %.0f] are not valid integers", name, b, e);
    *begin = (uint64_t)b;
    *end = (uint64_t)e;
    if (*end > data_size)
        return gs_fail("tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] out of range (data section is %" PRIu64
                       " bytes; file truncated?)", name, *begin, *end, data_size);
    uint64_t want = numel * st_dtype_size(t->dtype);
    if (*end - *begin != want)
        return gs_fail("tensor '%s': wrong byte size: %" PRIu64 " bytes for %s x %" PRIu64 " elements (expected %" PRIu64 ")",
                       name, *end - *begin, dt->valuestring, numel, want);
    t->nbytes = (size_t)want;
    return 0;
}

static int parse_metadata(st_file *f, const cJSON *meta) {
    if (!cJSON_IsObject(meta))
        return gs_fail("__metadata__ is a JSON %s: safetensors keeps there an object of text values (\"key\": \"value\")",
                       cJSON_IsArray(meta) ? "array" : cJSON_IsString(meta) ? "string" : cJSON_IsNumber(meta) ? "number" : "value");
    /* JSON allows a key twice; a second table would be written past the first's end */
    if (f->meta_keys) return gs_fail("__metadata__ appears twice");
    int n = cJSON_GetArraySize(meta);
    f->meta_keys = calloc((size_t)n + 1, sizeof *f->meta_keys);
    f->meta_values = calloc((size_t)n + 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values) return gs_fail("out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, meta) {
        if (!cJSON_IsString(it))
            return gs_fail("__metadata__ value for '%s' is not a string: safetensors metadata holds text values only (a config "
                           "as JSON text, e.g. \"config\": \"{\\\"n_heads\\\": 2}\")", it->string);
        f->meta_keys[f->n_meta] = strdup(it->string);
        f->meta_values[f->n_meta] = strdup(it->valuestring);
        f->n_meta++;
    }
    return 0;
}

/* The names' hash table (hsearch_r): the duplicate check and safetensors_find
 * in constant time, whatever the number of tensors. */
static int index_name(st_file *f, int i) {
    ENTRY e = {f->tensors[i].name, (void *)(intptr_t)i}, *found = NULL;
    if (!hsearch_r(e, ENTER, &found, f->index)) return gs_fail("out of memory");
    if ((intptr_t)found->data != i) return gs_fail("tensor '%s' appears twice", f->tensors[i].name);
    return 0;
}

static int parse_header(st_file *f, const char *json, size_t len, uint64_t data_size) {
    cJSON *root = gs_json_parse_strict(json, len, "header");
    if (!root) return -1;
    int rc = 0;
    span *spans = NULL;
    if (!cJSON_IsObject(root)) { rc = gs_fail("header is not a JSON object"); goto done; }
    int n = cJSON_GetArraySize(root);
    if (n > ST_MAX_TENSORS + 1) {
        rc = gs_fail("header lists %d entries: at most %d tensors are read (a hostile header?)", n, ST_MAX_TENSORS);
        goto done;
    }
    f->tensors = calloc((size_t)n + 1, sizeof *f->tensors);
    spans = calloc((size_t)n + 1, sizeof *spans);
    f->index = calloc(1, sizeof(struct hsearch_data));
    if (!f->tensors || !spans || !f->index || !hcreate_r(2 * (size_t)n + 1, f->index)) { rc = gs_fail("out of memory"); goto done; }
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "__metadata__") == 0) {
            if ((rc = parse_metadata(f, item)) != 0) goto done;
            continue;
        }
        st_tensor *t = &f->tensors[f->n_tensors];
        uint64_t b = 0, e = 0;
        if ((rc = parse_tensor(item, t, data_size, &b, &e)) != 0) goto done;
        if (!(t->name = strdup(item->string))) { rc = gs_fail("out of memory"); goto done; }
        t->data = (const char *)f->map + 8 + len + b;
        spans[f->n_tensors] = (span){b, e, f->n_tensors};
        f->n_tensors++;
        if ((rc = index_name(f, f->n_tensors - 1)) != 0) goto done;
    }
    qsort(spans, (size_t)f->n_tensors, sizeof *spans, span_cmp);
    for (int i = 1; i < f->n_tensors; i++) {
        if (spans[i].begin < spans[i - 1].end && spans[i].end > spans[i].begin) {
            rc = gs_fail("tensors '%s' and '%s' overlap (bytes %" PRIu64 "..%" PRIu64 " and %" PRIu64 "..%" PRIu64 ")",
                         f->tensors[spans[i - 1].index].name, f->tensors[spans[i].index].name,
                         spans[i - 1].begin, spans[i - 1].end, spans[i].begin, spans[i].end);
            goto done;
        }
    }
done:
    free(spans);
    cJSON_Delete(root);
    return rc;
}

/* What a file that is not safetensors is, by its first bytes, and what to
 * do: one clause for the error, a format with the file's quoted path where
 * a command is suggested ("" when nothing is recognised). */
static const char *not_safetensors(const unsigned char *p, size_t n) {
    if (n >= 4 && !memcmp(p, "PK\x03\x04", 4))
        return ": it is a zip archive (a PyTorch checkpoint.pt?): convert it first with `gpnscope convert %s "
               "model.safetensors`";
    if (n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
        return ": it is a Python pickle (the companion's JAX checkpoint.pkl?): convert it first with `gpnscope convert "
               "%s model.safetensors`";
    if (n >= 6 && !memcmp(p, "\x93NUMPY", 6)) return ": it is a NumPy .npy array, not a model";
    if (n >= 4 && !memcmp(p, "GGUF", 4)) return ": it is a GGUF file (llama.cpp's format), which gpnscope does not read";
    if (n >= 16 && !memcmp(p, "SQLite format 3", 16)) return ": it is an SQLite database (a gpnscope store?), not a model";
    size_t i = 0, printable = 0, k = n < 512 ? n : 512;
    while (i < k && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    if (i < k && (p[i] == '{' || p[i] == '['))
        return ": it is a JSON file (a tokenizer.json or config.json?), not a model: give the .safetensors file or the "
               "model's folder";
    /* text: no control bytes but tab and line ends, and high bytes only as UTF-8 sequences */
    for (i = 0; i < k;) {
        unsigned char b = p[i];
        int more = b < 0x80 ? 0 : (b & 0xe0) == 0xc0 ? 1 : (b & 0xf0) == 0xe0 ? 2 : (b & 0xf8) == 0xf0 ? 3 : -1;
        if (more < 0 || (b < 0x20 && b != '\n' && b != '\r' && b != '\t') || b == 0x7f) break;
        size_t j = 1;
        while (j <= (size_t)more && i + j < k && (p[i + j] & 0xc0) == 0x80) j++;
        if (j <= (size_t)more && i + j < k) break; /* a sequence cut short inside the sample */
        printable += j;
        i += j;
    }
    if (k && printable >= k) return ": it is a text file, not a model: give the .safetensors file or the model's folder";
    return "";
}

st_file *safetensors_open(const char *path) {
    st_file *f = calloc(1, sizeof *f);
    if (!f) { gs_fail("out of memory"); return NULL; }
    f->path = strdup(path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) { gs_fail("cannot open %s: %s", path, strerror(errno)); goto fail; }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        gs_fail("%s: not a regular file", path);
        goto fail;
    }
    if (sb.st_size < 8) {
        close(fd);
        gs_fail("%s: not a safetensors file: %lld bytes, too short for the 8-byte header length", path, (long long)sb.st_size);
        goto fail;
    }
    f->map_size = (size_t)sb.st_size;
    f->map = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->map == MAP_FAILED) { f->map = NULL; gs_fail("cannot map %s: %s", path, strerror(errno)); goto fail; }
    uint64_t hlen = 0;
    const unsigned char *p = f->map;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | p[i];
    if (hlen > f->map_size - 8) {
        const char *what = not_safetensors(p, f->map_size);
        char clause[600], q[4200];
        snprintf(clause, sizeof clause, what, gs_shell_quote(path, q, sizeof q));
        if (*what) gs_fail("%s is not a safetensors file%s", path, clause);
        else
            gs_fail("%s: header length %" PRIu64 " is beyond the end of the file (%zu bytes); truncated or not safetensors",
                    path, hlen, f->map_size);
        goto fail;
    }
    if (hlen > ST_MAX_HEADER) { gs_fail("%s: header length %" PRIu64 " exceeds the %u-byte limit", path, hlen, ST_MAX_HEADER); goto fail; }
    if (parse_header(f, (const char *)p + 8, (size_t)hlen, f->map_size - 8 - hlen) != 0) {
        gs_fail_context("%s: ", path);
        goto fail;
    }
    return f;
fail:
    safetensors_close(f);
    return NULL;
}

const st_tensor *safetensors_find(const st_file *f, const char *name) {
    ENTRY e = {(char *)name, NULL}, *found = NULL;
    return hsearch_r(e, FIND, &found, f->index) ? &f->tensors[(intptr_t)found->data] : NULL;
}

const char *safetensors_meta(const st_file *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0) return f->meta_values[i];
    return NULL;
}

int st_tensor_to_f32(const st_tensor *t, float *out) {
    const unsigned char *p = t->data;
    int64_t n = t->numel;
    switch (t->dtype) {
    case ST_F32: memcpy(out, p, (size_t)n * 4); return 0;
    case ST_F64:
        for (int64_t i = 0; i < n; i++) { double d; memcpy(&d, p + 8 * i, 8); out[i] = (float)d; }
        return 0;
    case ST_BF16:
        for (int64_t i = 0; i < n; i++) out[i] = bf16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        return 0;
    case ST_F16:
        for (int64_t i = 0; i < n; i++) out[i] = f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        return 0;
    default:
        return gs_fail("tensor '%s' has dtype %s; a floating dtype (F32, F16, BF16, F64) is needed", t->name, st_dtype_name(t->dtype));
    }
}

/* ---- writer ---- */

typedef struct { char *name; st_dtype dtype; int ndim; int64_t shape[ST_MAX_DIMS]; const void *data; size_t nbytes; } st_entry;

struct st_writer {
    st_entry *entries;
    int n, cap;
    cJSON *meta;
};

st_writer *st_writer_new(void) {
    st_writer *w = calloc(1, sizeof *w);
    if (w) w->meta = cJSON_CreateObject();
    if (!w || !w->meta) { free(w); gs_fail("out of memory"); return NULL; }
    return w;
}

int st_writer_add(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape, const void *data) {
    if (ndim < 0 || ndim > ST_MAX_DIMS) return gs_fail("tensor '%s': %d dimensions", name, ndim);
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        st_entry *e = realloc(w->entries, (size_t)cap * sizeof *e);
        if (!e) return gs_fail("out of memory");
        w->entries = e;
        w->cap = cap;
    }
    st_entry *e = &w->entries[w->n];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    e->dtype = dtype;
    e->ndim = ndim;
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) { e->shape[i] = shape[i]; numel *= (size_t)shape[i]; }
    e->data = data;
    e->nbytes = numel * st_dtype_size(dtype);
    w->n++;
    return 0;
}

int st_writer_meta(st_writer *w, const char *key, const char *value) {
    cJSON_DeleteItemFromObjectCaseSensitive(w->meta, key);
    return cJSON_AddStringToObject(w->meta, key, value) ? 0 : gs_fail("out of memory");
}

int st_writer_save(st_writer *w, const char *path) {
    cJSON *root = cJSON_CreateObject();
    if (cJSON_GetArraySize(w->meta) > 0) cJSON_AddItemReferenceToObject(root, "__metadata__", w->meta);
    uint64_t off = 0;
    for (int i = 0; i < w->n; i++) {
        st_entry *e = &w->entries[i];
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "dtype", st_dtype_name(e->dtype));
        cJSON *shape = cJSON_AddArrayToObject(t, "shape");
        for (int d = 0; d < e->ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)e->shape[d]));
        cJSON *offs = cJSON_AddArrayToObject(t, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(off + e->nbytes)));
        off += e->nbytes;
        cJSON_AddItemToObject(root, e->name, t);
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) return gs_fail("out of memory");
    size_t jlen = strlen(json), padded = (jlen + 7) & ~(size_t)7; /* 8-byte aligned data section */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = fopen(tmp, "wb");
    if (!fp) { free(json); return gs_fail("cannot write %s: %s", tmp, strerror(errno)); }
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(json, 1, jlen, fp) == jlen;
    for (size_t i = jlen; ok && i < padded; i++) ok = fputc(' ', fp) != EOF;
    for (int i = 0; ok && i < w->n; i++)
        ok = w->entries[i].nbytes == 0 || fwrite(w->entries[i].data, 1, w->entries[i].nbytes, fp) == w->entries[i].nbytes;
    free(json);
    if (fflush(fp) != 0 || fsync(fileno(fp)) != 0) ok = 0;
    if (fclose(fp) != 0) ok = 0;
    if (!ok) { unlink(tmp); return gs_fail("cannot write %s: %s", path, strerror(errno ? errno : EIO)); }
    if (rename(tmp, path) != 0) { unlink(tmp); return gs_fail("cannot rename %s to %s: %s", tmp, path, strerror(errno)); }
    return 0;
}

void st_writer_free(st_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) free(w->entries[i].name);
    free(w->entries);
    cJSON_Delete(w->meta);
    free(w);
}
