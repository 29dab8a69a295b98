/* The companion trainer's JAX checkpoint.pkl: find the parameter dict,
 * flatten it, infer the config. A C transcription of what
 * tools/convert_checkpoint.py did, so converted files stay identical. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/convert.h"
#include "io/checkpoint/numpy_array.h"

#define MAX_NAME 1024

/* The mapping of names to arrays: params, or params["params"] (flax). */
static const pk_value *find_params(const pk_value *obj, int depth) {
    if (depth > 4 || !obj || obj->kind != PK_DICT) return NULL;
    if (pk_is_numpy_array(pk_dict_get(obj, "embedding"))) return obj;
    static const char *const keys[] = {"params", "model"};
    for (int i = 0; i < 2; i++) {
        const pk_value *found = find_params(pk_dict_get(obj, keys[i]), depth + 1);
        if (found) return found;
    }
    return NULL;
}

typedef struct { char *name; const pk_value *v; } leaf;

/* The leaves found so far, and every dict seen (a pointer set): a dict met
 * twice is refused, so the walk visits each dict of the document once and
 * the memo cannot multiply the work. One array may sit under several names
 * (tied weights); collect() interprets it once. */
typedef struct {
    leaf *l;
    size_t n, cap;
    const pk_value **seen;
    size_t seen_n, seen_cap;
} leaves;

static int seen_before(leaves *ls, const pk_value *v) {
    if (2 * (ls->seen_n + 1) > ls->seen_cap) {
        size_t cap = ls->seen_cap ? 2 * ls->seen_cap : 256;
        const pk_value **t = calloc(cap, sizeof *t);
        if (!t) return gs_fail("out of memory");
        for (size_t i = 0; i < ls->seen_cap; i++) {
            if (!ls->seen[i]) continue;
            size_t h = ((uintptr_t)ls->seen[i] >> 4) * 0x9E3779B97F4A7C15ull % cap;
            while (t[h]) h = (h + 1) % cap;
            t[h] = ls->seen[i];
        }
        free(ls->seen);
        ls->seen = t;
        ls->seen_cap = cap;
    }
    size_t h = ((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull % ls->seen_cap;
    while (ls->seen[h]) {
        if (ls->seen[h] == v) return 1;
        h = (h + 1) % ls->seen_cap;
    }
    ls->seen[h] = v;
    ls->seen_n++;
    return 0;
}

static int add(leaves *ls, const char *name, const pk_value *v) {
    if (ls->n == ST_MAX_TENSORS) return gs_fail("more than %d parameters: at most %d tensors are read", ST_MAX_TENSORS, ST_MAX_TENSORS);
    if (ls->n == ls->cap) {
        size_t cap = ls->cap ? 2 * ls->cap : 64;
        leaf *l = realloc(ls->l, cap * sizeof *l);
        if (!l) return gs_fail("out of memory");
        ls->l = l;
        ls->cap = cap;
    }
    if (!(ls->l[ls->n].name = strdup(name))) return gs_fail("out of memory");
    ls->l[ls->n++].v = v;
    return 0;
}

/* Nested dicts joined with "_"; depth is bounded by the pickle's max_depth.
 * Arrays are only collected here: interpreting comes after the checks. */
static int flatten(leaves *ls, const pk_value *params, const char *prefix) {
    for (size_t i = 0; i + 1 < params->u.seq.n; i += 2) {
        const pk_value *k = params->u.seq.v[i], *v = params->u.seq.v[i + 1];
        char name[MAX_NAME];
        int64_t ik;
        int len;
        if (k->kind == PK_STR) {
            if (memchr(k->u.s.p, 0, k->u.s.n)) return gs_fail("a parameter name holds a NUL byte");
            len = snprintf(name, sizeof name, "%s%.*s", prefix, (int)(k->u.s.n < MAX_NAME ? k->u.s.n : MAX_NAME), (const char *)k->u.s.p);
        } else if (k->kind == PK_INT && pk_int(k, &ik) == 0) {
            len = snprintf(name, sizeof name, "%s%" PRId64, prefix, ik);
        } else {
            return gs_fail("a parameter key is a %s, not a string", pk_kind_name(k));
        }
        if (len < 0 || (size_t)len + 2 >= sizeof name) return gs_fail("a parameter name longer than %d bytes", MAX_NAME - 2);
        if (v->kind == PK_DICT) {
            int r = seen_before(ls, v);
            if (r < 0) return -1;
            if (r) return gs_fail("parameters under %s are a dict met before (shared through the memo); refusing", name);
        }
        if (v->kind == PK_DICT) {
            strcat(name, "_");
            if (flatten(ls, v, name) != 0) return -1;
        } else if (pk_is_numpy_array(v)) {
            if (add(ls, name, v) != 0) return -1;
        } else {
            return gs_fail("parameter %s is a %s, not an array", name, pk_kind_name(v));
        }
    }
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(((const leaf *)a)->name, ((const leaf *)b)->name); }

static const leaf *sort_base;
static int by_value(const void *a, const void *b) {
    const pk_value *x = sort_base[*(const size_t *)a].v, *y = sort_base[*(const size_t *)b].v;
    return x < y ? -1 : x > y;
}

/* Names sorted and checked (no quadratic scan, whatever the count), then
 * each distinct array interpreted once; a second name of the same array
 * borrows its bytes when they lie in the pickle, else gets a copy. The total
 * is bounded by a few times the pickle's size, so names sharing one array
 * cannot blow up the output. */
static int collect(ck_companion *c, leaves *ls, size_t source_bytes) {
    c->names = calloc(ls->n + 1, sizeof *c->names);
    c->arrays = calloc(ls->n + 1, sizeof *c->arrays);
    size_t *order = calloc(ls->n + 1, sizeof *order);
    if (!c->names || !c->arrays || !order) { free(order); return gs_fail("out of memory"); }
    qsort(ls->l, ls->n, sizeof *ls->l, by_name);
    for (size_t i = 1; i < ls->n; i++)
        if (!strcmp(ls->l[i].name, ls->l[i - 1].name)) { free(order); return gs_fail("parameter %s appears twice", ls->l[i].name); }
    for (size_t i = 0; i < ls->n; i++) {
        order[i] = i;
        c->names[i] = ls->l[i].name; /* ownership moves to c */
        ls->l[i].name = NULL;
    }
    c->n = (int)ls->n;
    sort_base = ls->l;
    qsort(order, ls->n, sizeof *order, by_value);
    uint64_t total = 0, cap = 4 * (uint64_t)source_bytes + (1u << 20);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < ls->n; k++) {
        size_t i = order[k];
        ck_array *a = &c->arrays[i];
        if (k && ls->l[order[k - 1]].v == ls->l[i].v) {
            const ck_array *first = &c->arrays[order[k - 1]];
            *a = *first;
            a->owned = NULL;
            if (first->owned) {
                if (!(a->owned = malloc(first->nbytes ? first->nbytes : 1))) { rc = gs_fail("out of memory"); break; }
                memcpy(a->owned, first->data, first->nbytes);
                a->data = a->owned;
            }
        } else if (pk_numpy_array(ls->l[i].v, a) != 0) {
            rc = gs_fail_context("parameter %s: ", c->names[i]);
            break;
        }
        total += a->nbytes;
        if (total > cap)
            rc = gs_fail("the parameters add up to more than %" PRIu64 " bytes from a %zu-byte pickle (arrays shared under many names?)", cap,
                         source_bytes);
    }
    free(order);
    return rc;
}

static int name_cmp(const void *key, const void *elem) { return strcmp(key, *(char *const *)elem); }

/* c->names is sorted (collect): a binary search */
static const ck_array *find(const ck_companion *c, const char *name) {
    char **hit = c->n ? bsearch(name, c->names, (size_t)c->n, sizeof *c->names, name_cmp) : NULL;
    return hit ? &c->arrays[hit - c->names] : NULL;
}

static int dim(const ck_companion *c, const char *name, int axis, int64_t *out) {
    const ck_array *a = find(c, name);
    if (!a) return gs_fail("no parameter '%s' (needed to infer the config)", name);
    if (a->ndim <= axis) return gs_fail("parameter '%s' has %d dimensions; the config needs axis %d", name, a->ndim, axis);
    *out = a->shape[axis];
    return 0;
}

static int meta(ck_companion *c, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int meta(ck_companion *c, const char *k, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->n_meta == (int)(sizeof c->meta_keys / sizeof *c->meta_keys)) return gs_fail("too much metadata");
    c->meta_keys[c->n_meta] = strdup(k);
    c->meta_values[c->n_meta] = strdup(buf);
    if (!c->meta_keys[c->n_meta] || !c->meta_values[c->n_meta]) return gs_fail("out of memory");
    c->n_meta++;
    return 0;
}

/* The same inference as engine/model.c, in tools/convert_checkpoint.py's key order. */
static int infer_config(ck_companion *c) {
    int64_t V, e, d, H, dk, dv, f;
    if (dim(c, "embedding", 1, &e) != 0 || dim(c, "embedding", 0, &V) != 0 || dim(c, "decode_norm_w", 0, &d) != 0) return -1;
    if (find(c, "embedding")->ndim != 2) return gs_fail("parameter 'embedding' is not 2-dimensional");
    if (meta(c, "vocab_size", "%" PRId64, V) || meta(c, "d_emb", "%" PRId64, e) || meta(c, "d_state", "%" PRId64, d) ||
        meta(c, "use_decoder_bias", "%s", find(c, "decode_bias") ? "true" : "false"))
        return -1;
    if (find(c, "write_A_log")) {
        if (dim(c, "write_A_log", 0, &H) != 0 || dim(c, "write_W_k_k", 1, &dk) != 0 || dim(c, "write_W_v_k", 1, &dv) != 0 ||
            dim(c, "L0_ffn_w2_k", 0, &f) != 0)
            return -1;
        if (H <= 0) return gs_fail("write_A_log has no heads");
        int n = 0;
        char name[64];
        for (;; n++) {
            snprintf(name, sizeof name, "L%d_ffn_w2_k", n);
            if (!find(c, name)) break;
        }
        c->arch = "gpn_m";
        return meta(c, "arch", "gpn_m") || meta(c, "n_heads", "%" PRId64, H) || meta(c, "d_key", "%" PRId64, dk / H) ||
               meta(c, "d_val", "%" PRId64, dv / H) || meta(c, "n_layers", "%d", n) || meta(c, "d_ffn", "%" PRId64, f) ? -1 : 0;
    }
    if (dim(c, "ffn_w2_k", 0, &f) != 0) return -1;
    c->arch = "gpn";
    return meta(c, "arch", "gpn") || meta(c, "d_ffn", "%" PRId64, f) ? -1 : 0;
}

/* Python's isinstance(x, (int, np.integer)). */
static int int_value(const pk_value *v, int64_t *out) {
    if (pk_int(v, out) == 0) return 0;
    if (!pk_is_numpy_scalar(v)) return -1;
    ck_array a;
    if (pk_numpy_array(v, &a) != 0) return -1;
    int rc = 0;
    const unsigned char *p = a.data;
    switch (a.dtype) {
    case ST_I8: *out = (int8_t)p[0]; break;
    case ST_U8: *out = p[0]; break;
    case ST_I16: { int16_t x; memcpy(&x, p, 2); *out = x; break; }
    case ST_U16: { uint16_t x; memcpy(&x, p, 2); *out = x; break; }
    case ST_I32: { int32_t x; memcpy(&x, p, 4); *out = x; break; }
    case ST_U32: { uint32_t x; memcpy(&x, p, 4); *out = x; break; }
    case ST_I64: memcpy(out, p, 8); break;
    default: rc = -1; break;
    }
    ck_array_free(&a);
    return rc;
}

int ck_companion_read(const pk_value *root, const char *source_name, size_t source_bytes, ck_companion *c) {
    memset(c, 0, sizeof *c);
    const pk_value *params = find_params(root, 0);
    if (!params)
        return gs_fail("no parameter dictionary with an 'embedding' array found (expected the companion's {'params': {...}} "
                       "checkpoint layout)");
    leaves ls = {0};
    int rc = flatten(&ls, params, "");
    if (rc == 0) rc = collect(c, &ls, source_bytes);
    for (size_t i = 0; i < ls.n; i++) free(ls.l[i].name);
    free(ls.l);
    free(ls.seen);
    if (rc != 0 || infer_config(c) != 0) return -1;
    int64_t v;
    if (root->kind == PK_DICT) {
        if (int_value(pk_dict_get(root, "step"), &v) == 0 && meta(c, "source_step", "%" PRId64, v) != 0) return -1;
        if (int_value(pk_dict_get(root, "data_position"), &v) == 0 && meta(c, "source_data_position", "%" PRId64, v) != 0) return -1;
        c->optimizer_skipped = pk_dict_get(root, "opt_state") != NULL;
    }
    return meta(c, "source", "%s", source_name);
}

void ck_companion_free(ck_companion *c) {
    for (int i = 0; i < c->n; i++) { free(c->names[i]); ck_array_free(&c->arrays[i]); }
    free(c->names);
    free(c->arrays);
    for (int i = 0; i < c->n_meta; i++) { free(c->meta_keys[i]); free(c->meta_values[i]); }
    memset(c, 0, sizeof *c);
}
