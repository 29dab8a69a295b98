/* torch.save archives through libzip; see torch_zip.h for the checks. */
#include "io/checkpoint/torch_zip.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "base/error.h"

struct torch_storage {
    int loaded, dtype, referenced, deflated;
    uint64_t size; /* as the zip directory declares it */
    uint64_t need; /* the prefix the kept tensors reach: all that is read */
    unsigned char *data;
    size_t n;
};

/* Bytes that deflated storages may hold beyond what their tensors reach
 * (views of a re-compressed archive); more is refused, never inflated. */
#define TORCH_DEFLATED_UNUSED (1u << 20)

void torch_default_limits(torch_limits *lim) {
    pk_default_limits(&lim->pickle);
    lim->max_entries = 1u << 20;
    lim->max_pickle = 1u << 30;
    lim->max_inflated = 64u << 20;
}

int torch_zip_sniff(const void *head, size_t n) { return n >= 4 && memcmp(head, "PK\3\4", 4) == 0; }

int torch_legacy_sniff(const void *head, size_t n) {
    /* PROTO 2, LONG1 of 10 bytes: torch/serialization.py's MAGIC_NUMBER 0x1950a86a20f9469cfc6c */
    static const unsigned char magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
    return n >= sizeof magic && memcmp(head, magic, sizeof magic) == 0;
}

/* An entry name that stays inside the archive's folder. */
static int safe_name(const char *s) {
    if (!*s || s[0] == '/' || strchr(s, '\\') || strchr(s, ':')) return 0;
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if ((len == 2 && p[0] == '.' && p[1] == '.') || (len == 0 && e)) return 0;
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)p[i] < 0x20) return 0;
        if (!e) break;
        p = e + 1;
    }
    return 1;
}

/* Entry i's directory record, checked: stored, or deflated under the cap. */
static int entry_stat(torch_ckpt *c, const torch_limits *lim, zip_uint64_t i, zip_stat_t *st) {
    zip_t *z = c->zip;
    const char *name = zip_get_name(z, i, ZIP_FL_ENC_RAW);
    if (zip_stat_index(z, i, 0, st) != 0) return gs_fail("%s: %s", name, zip_strerror(z));
    zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((st->valid & need) != need) return gs_fail("%s: the zip directory lacks its sizes", name);
    if ((st->valid & ZIP_STAT_ENCRYPTION_METHOD) && st->encryption_method != ZIP_EM_NONE) return gs_fail("%s: encrypted entry", name);
    if (st->comp_method == ZIP_CM_STORE) {
        if (st->comp_size != st->size)
            return gs_fail("%s: a stored entry of %" PRIu64 " bytes declares %" PRIu64 " bytes of data", name, (uint64_t)st->size,
                           (uint64_t)st->comp_size);
    } else if (st->comp_method == ZIP_CM_DEFLATE) {
        if (st->size > lim->max_inflated)
            return gs_fail("%s: a deflated entry of %" PRIu64 " bytes (from %" PRIu64 ") exceeds the %" PRIu64
                           "-byte cap (torch.save stores entries uncompressed; a zip bomb?)",
                           name, (uint64_t)st->size, (uint64_t)st->comp_size, lim->max_inflated);
    } else {
        return gs_fail("%s: compression method %d is not supported (only stored or deflated entries)", name, (int)st->comp_method);
    }
    if (st->size > SIZE_MAX - 1) return gs_fail("%s: too large", name);
    return 0;
}

/* Read entry i: whole (want >= its size: exactly its declared size, no
 * more), or only its first want bytes, inflating nothing past them. */
static int read_entry(torch_ckpt *c, const torch_limits *lim, zip_uint64_t i, uint64_t cap, uint64_t want, unsigned char **out,
                      size_t *n) {
    zip_t *z = c->zip;
    zip_stat_t st;
    const char *name = zip_get_name(z, i, ZIP_FL_ENC_RAW);
    if (entry_stat(c, lim, i, &st) != 0) return -1;
    if (st.size > cap) return gs_fail("%s: %" PRIu64 " bytes exceed the %" PRIu64 "-byte limit", name, (uint64_t)st.size, cap);
    int whole = want >= st.size;
    zip_uint64_t size = whole ? st.size : want, ask = whole ? size + 1 : size;
    unsigned char *buf = malloc((size_t)size + 1);
    if (!buf) return gs_fail("%s: out of memory (%" PRIu64 " bytes)", name, (uint64_t)size);
    zip_file_t *f = zip_fopen_index(z, i, 0);
    if (!f) { free(buf); return gs_fail("%s: %s", name, zip_strerror(z)); }
    zip_int64_t got = 0;
    while ((zip_uint64_t)got < ask) {
        zip_int64_t k = zip_fread(f, buf + got, ask - (zip_uint64_t)got);
        if (k < 0) {
            gs_fail("%s: %s", name, zip_file_strerror(f));
            zip_fclose(f);
            free(buf);
            return -1;
        }
        if (k == 0) break;
        got += k;
    }
    zip_fclose(f);
    if ((zip_uint64_t)got != size) {
        free(buf);
        return gs_fail("%s: holds %s than its declared %" PRIu64 " bytes (truncated or forged)", name,
                       (zip_uint64_t)got < size ? "fewer bytes" : "more bytes", (uint64_t)st.size);
    }
    *out = buf;
    *n = (size_t)size;
    return 0;
}

static int open_archive(torch_ckpt *c, const torch_limits *lim) {
    int err = 0;
    c->zip = zip_open(c->path, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    if (!c->zip) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, err);
        gs_fail("not a readable zip archive: %s", zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return -1;
    }
    zip_int64_t n = zip_get_num_entries(c->zip, 0);
    if (n <= 0) return gs_fail("the archive is empty");
    if ((uint64_t)n > lim->max_entries) return gs_fail("%" PRId64 " entries (at most %" PRIu64 ")", (int64_t)n, lim->max_entries);
    c->n_entries = (uint64_t)n;
    for (zip_uint64_t i = 0; i < (zip_uint64_t)n; i++) {
        const char *name = zip_get_name(c->zip, i, ZIP_FL_ENC_RAW);
        if (!name) return gs_fail("entry %" PRIu64 ": %s", (uint64_t)i, zip_strerror(c->zip));
        if (!safe_name(name)) return gs_fail("entry '%.200s' names a path outside the archive; refusing it", name);
        const char *slash = strchr(name, '/');
        if (!slash) return gs_fail("entry '%.200s' is not inside the archive's top folder", name);
        size_t tl = (size_t)(slash - name);
        if (!c->top) {
            c->top = strndup(name, tl);
            if (!c->top) return gs_fail("out of memory");
        } else if (strlen(c->top) != tl || memcmp(c->top, name, tl) != 0) {
            return gs_fail("entries in two top folders ('%.100s' and '%.100s')", c->top, name);
        }
    }
    c->storages = calloc((size_t)n, sizeof *c->storages);
    return c->storages ? 0 : gs_fail("out of memory");
}

static zip_int64_t locate(torch_ckpt *c, const char *rel) {
    char name[1024];
    snprintf(name, sizeof name, "%s/%s", c->top, rel);
    return zip_name_locate(c->zip, name, ZIP_FL_ENC_RAW);
}

static int read_byteorder(torch_ckpt *c, const torch_limits *lim) {
    zip_int64_t i = locate(c, "byteorder");
    if (i < 0) return 0; /* before PyTorch 1.10: little-endian */
    unsigned char *b;
    size_t n;
    if (read_entry(c, lim, (zip_uint64_t)i, 16, UINT64_MAX, &b, &n) != 0) return -1;
    int rc = 0;
    if (n == 6 && !memcmp(b, "little", 6)) c->big_endian = 0;
    else if (n == 3 && !memcmp(b, "big", 3)) c->big_endian = 1;
    else rc = gs_fail("byteorder is neither 'little' nor 'big'");
    free(b);
    return rc;
}

/* The storage a persistent id names: ('storage', torch.XStorage, key, location, numel),
 * checked against its zip directory record (nothing is read yet). */
static int storage_of(torch_ckpt *c, const torch_limits *lim, const pk_value *pid, torch_storage **out) {
    if (pid->kind != PK_PERSID || pid->u.pid->kind != PK_TUPLE || pid->u.pid->u.seq.n != 5)
        return gs_fail("the tensor's storage is not a persistent id ('storage', type, key, location, size)");
    pk_value **t = pid->u.pid->u.seq.v;
    int64_t numel;
    if (!pk_str_eq(t[0], "storage")) return gs_fail("persistent id of an unknown kind");
    if (t[1]->kind != PK_GLOBAL || t[1]->u.glob.g != PK_G_TORCH_STORAGE) return gs_fail("the storage type is not a torch.*Storage");
    if (t[2]->kind != PK_STR || t[2]->u.s.n == 0 || t[2]->u.s.n > 64) return gs_fail("the storage key is not a short string");
    for (size_t i = 0; i < t[2]->u.s.n; i++) {
        unsigned char ch = t[2]->u.s.p[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'))
            return gs_fail("the storage key '%.*s' is not alphanumeric", (int)t[2]->u.s.n, (const char *)t[2]->u.s.p);
    }
    if (pk_int(t[4], &numel) != 0 || numel < 0) return gs_fail("the storage size is not a non-negative integer");
    char rel[80];
    snprintf(rel, sizeof rel, "data/%.*s", (int)t[2]->u.s.n, (const char *)t[2]->u.s.p);
    zip_int64_t i = locate(c, rel);
    if (i < 0) return gs_fail("storage %s/%s is missing from the archive", c->top, rel);
    torch_storage *s = &c->storages[i];
    int dtype = t[1]->u.glob.dtype;
    size_t es = st_dtype_size((st_dtype)dtype);
    if (!s->referenced) {
        zip_stat_t st;
        if (entry_stat(c, lim, (zip_uint64_t)i, &st) != 0) return -1;
        s->referenced = 1;
        s->dtype = dtype;
        s->size = st.size;
        s->deflated = st.comp_method == ZIP_CM_DEFLATE;
    } else if (s->dtype != dtype) {
        return gs_fail("storage %s is used as both %s and %s", rel, st_dtype_name((st_dtype)s->dtype), st_dtype_name((st_dtype)dtype));
    }
    if ((uint64_t)numel > SIZE_MAX / es || s->size != (uint64_t)numel * es)
        return gs_fail("storage %s holds %" PRIu64 " bytes; its persistent id declares %" PRId64 " x %s (%zu bytes each)", rel, s->size,
                       numel, st_dtype_name((st_dtype)dtype), es);
    *out = s;
    return 0;
}

static int int_tuple(const pk_value *v, int64_t *out, int *n, const char *what) {
    if (v->kind != PK_TUPLE) return gs_fail("the tensor's %s is not a tuple", what);
    if (v->u.seq.n > ST_MAX_DIMS) return gs_fail("the tensor has %zu dimensions (at most %d supported)", v->u.seq.n, ST_MAX_DIMS);
    for (size_t i = 0; i < v->u.seq.n; i++)
        if (pk_int(v->u.seq.v[i], &out[i]) != 0) return gs_fail("the tensor's %s holds a non-integer", what);
    *n = (int)v->u.seq.n;
    return 0;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]):
 * a's shape, the storage, and where in it the tensor lies. */
typedef struct {
    torch_storage *s;
    int64_t offset, stride[ST_MAX_DIMS];
} tensor_ref;

static int tensor_of(torch_ckpt *c, const torch_limits *lim, const pk_value *v, ck_array *a, tensor_ref *r) {
    pk_value **arg = v->u.obj.args->u.seq.v;
    int64_t shape[ST_MAX_DIMS];
    int nd = 0, ns = 0;
    memset(a, 0, sizeof *a);
    if (storage_of(c, lim, arg[0], &r->s) != 0) return -1;
    if (pk_int(arg[1], &r->offset) != 0) return gs_fail("the storage offset is not an integer");
    if (int_tuple(arg[2], shape, &nd, "size") != 0 || int_tuple(arg[3], r->stride, &ns, "stride") != 0) return -1;
    if (nd != ns) return gs_fail("the tensor has %d sizes but %d strides", nd, ns);
    a->dtype = (st_dtype)r->s->dtype;
    return ck_array_shape(a, nd, shape);
}

static int by_name(const void *a, const void *b) { return strcmp(((const ck_named *)a)->name, ((const ck_named *)b)->name); }

/* Names unique, checked by sorting a copy (no quadratic scan). */
static int check_unique(const torch_ckpt *c) {
    ck_named *t = malloc(((size_t)c->n_tensors + 1) * sizeof *t);
    if (!t) return gs_fail("out of memory");
    memcpy(t, c->tensors, (size_t)c->n_tensors * sizeof *t);
    qsort(t, (size_t)c->n_tensors, sizeof *t, by_name);
    int rc = 0;
    for (int i = 1; i < c->n_tensors && rc == 0; i++)
        if (!strcmp(t[i].name, t[i - 1].name)) rc = gs_fail("tensor '%s' appears twice", t[i].name);
    free(t);
    return rc;
}

/* What the tensors need, before anything is inflated: each storage's prefix
 * they reach, in all at most cap; and deflated storages may hold little
 * more than that prefix, so an archive of small entries that inflate to much
 * more than the tensors use (a zip bomb) is refused from its directory. */
static int check_plan(const torch_ckpt *c, uint64_t cap) {
    uint64_t need = 0, unused = 0, deflated = 0;
    for (uint64_t i = 0; i < c->n_entries; i++) {
        const torch_storage *s = &c->storages[i];
        if (!s->referenced) continue;
        need += s->need;
        if (s->deflated) deflated += s->size, unused += s->size - s->need;
    }
    if (need > cap)
        return gs_fail("the tensors reach %" PRIu64 " bytes of their storages, more than %" PRIu64 " (4 times the archive)", need, cap);
    if (unused > TORCH_DEFLATED_UNUSED)
        return gs_fail("deflated storages inflate to %" PRIu64 " bytes, %" PRIu64 " of which no tensor uses; refusing them "
                       "(torch.save stores entries uncompressed: a zip bomb?)", deflated, unused);
    return 0;
}

static int read_state_dict(torch_ckpt *c, const torch_limits *lim, uint64_t file_bytes) {
    const pk_value *root = pk_root(c->doc), *sd = root;
    if (root->kind != PK_DICT) return gs_fail("data.pkl holds a %s, not a state dict", pk_kind_name(root));
    const pk_value *model = pk_dict_get(root, "model");
    if (model && model->kind == PK_DICT) {
        sd = model;
        c->companion_layout = 1;
        c->has_step = pk_int(pk_dict_get(root, "step"), &c->step) == 0;
    }
    size_t n = sd->u.seq.n / 2;
    if (n > ST_MAX_TENSORS) return gs_fail("the state dict holds %zu entries: at most %d tensors are read", n, ST_MAX_TENSORS);
    /* views and tied weights may share a storage, but not without bound: a
     * tensor shared through the memo under many names would multiply it */
    uint64_t total = 0, cap = 4 * file_bytes + (1u << 20);
    c->tensors = calloc(n + 1, sizeof *c->tensors);
    tensor_ref *refs = calloc(n + 1, sizeof *refs);
    if (!c->tensors || !refs) { free(refs); return gs_fail("out of memory"); }
    /* first every tensor's shape and reach, from the pickle and the zip directory */
    for (size_t i = 0; i < n; i++) {
        const pk_value *k = sd->u.seq.v[2 * i], *v = sd->u.seq.v[2 * i + 1];
        if (k->kind != PK_STR) { free(refs); return gs_fail("a state dict key is a %s, not a string", pk_kind_name(k)); }
        if (v->kind != PK_OBJECT || v->u.obj.g != PK_G_TORCH_REBUILD) { c->n_skipped++; continue; }
        ck_named *t = &c->tensors[c->n_tensors];
        tensor_ref *r = &refs[c->n_tensors];
        uint64_t end;
        int contiguous;
        if (memchr(k->u.s.p, 0, k->u.s.n)) { free(refs); return gs_fail("a tensor name holds a NUL byte"); }
        if (!(t->name = strndup((const char *)k->u.s.p, k->u.s.n))) { free(refs); return gs_fail("out of memory"); }
        c->n_tensors++;
        if (tensor_of(c, lim, v, &t->a, r) != 0 ||
            ck_array_reach(&t->a, r->s->size / st_dtype_size(t->a.dtype), r->offset, r->stride, &end, &contiguous) != 0) {
            free(refs);
            return gs_fail_context("tensor '%s': ", t->name);
        }
        uint64_t es = st_dtype_size(t->a.dtype);
        if (end * es > r->s->need) r->s->need = end * es;
        total += t->a.nbytes;
        if (total > cap) {
            free(refs);
            return gs_fail("tensor '%s': the tensors add up to more than %" PRIu64 " bytes, 4 times the archive (one storage under "
                           "many names?)", t->name, cap);
        }
    }
    if (c->n_tensors == 0) { free(refs); return gs_fail("the state dict holds no tensors"); }
    int rc = check_plan(c, cap);
    /* then the storages, each read only as far as its tensors reach */
    for (int i = 0; rc == 0 && i < c->n_tensors; i++) {
        ck_named *t = &c->tensors[i];
        torch_storage *s = refs[i].s;
        zip_uint64_t e = (zip_uint64_t)(s - c->storages);
        if (!s->loaded && read_entry(c, lim, e, UINT64_MAX, s->need, &s->data, &s->n) != 0) rc = -1;
        else if ((s->loaded = 1) && ck_array_gather(&t->a, s->data, s->n, refs[i].offset, refs[i].stride, c->big_endian) != 0) rc = -1;
        if (rc) gs_fail_context("tensor '%s': ", t->name);
    }
    free(refs);
    return rc ? -1 : check_unique(c);
}

torch_ckpt *torch_ckpt_open(const char *path, const torch_limits *lim_in) {
    torch_limits lim;
    if (lim_in) lim = *lim_in;
    else torch_default_limits(&lim);
    torch_ckpt *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) { free(c); gs_fail("out of memory"); return NULL; }
    if (open_archive(c, &lim) != 0) goto fail;
    zip_int64_t i = locate(c, "data.pkl");
    if (i < 0) { gs_fail("no %s/data.pkl in the archive (not a torch.save checkpoint)", c->top); goto fail; }
    size_t n;
    if (read_byteorder(c, &lim) != 0 || read_entry(c, &lim, (zip_uint64_t)i, lim.max_pickle, UINT64_MAX, &c->pkl, &n) != 0) goto fail;
    if (!(c->doc = pk_load(c->pkl, n, &lim.pickle))) { gs_fail_context("%s/data.pkl: ", c->top); goto fail; }
    struct stat sb;
    if (stat(path, &sb) != 0) { gs_fail("cannot stat: %s", strerror(errno)); goto fail; }
    if (read_state_dict(c, &lim, (uint64_t)sb.st_size) != 0) goto fail;
    return c;
fail:
    gs_fail_context("%s: ", path);
    torch_ckpt_close(c);
    return NULL;
}

void torch_ckpt_close(torch_ckpt *c) {
    if (!c) return;
    for (int i = 0; i < c->n_tensors; i++) { free(c->tensors[i].name); ck_array_free(&c->tensors[i].a); }
    free(c->tensors);
    for (uint64_t i = 0; c->storages && i < c->n_entries; i++) free(c->storages[i].data);
    free(c->storages);
    if (c->zip) zip_discard(c->zip);
    pk_close(c->doc);
    free(c->pkl);
    free(c->top);
    free(c->path);
    free(c);
}
