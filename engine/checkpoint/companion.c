/* The companion trainer's JAX checkpoint.pkl: find the parameter dict,
 * flatten it, infer the config. A C transcription of what
 * tools/convert_checkpoint.py did, so converted files stay identical. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/checkpoint/convert.h"
#include "engine/checkpoint/numpy_array.h"

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

static int add(ck_companion *c, const char *name, const pk_value *v, size_t cap) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name)) return gs_fail("parameter %s appears twice", name);
    if ((size_t)c->n == cap) return gs_fail("too many parameters");
    if (pk_numpy_array(v, &c->arrays[c->n]) != 0) return gs_fail_context("parameter %s: ", name);
    if (!(c->names[c->n] = strdup(name))) { ck_array_free(&c->arrays[c->n]); return gs_fail("out of memory"); }
    c->n++;
    return 0;
}

/* Nested dicts joined with "_"; depth is bounded by the pickle's max_depth. */
static int flatten(ck_companion *c, const pk_value *params, const char *prefix, size_t cap) {
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
            strcat(name, "_");
            if (flatten(c, v, name, cap) != 0) return -1;
        } else if (pk_is_numpy_array(v)) {
            if (add(c, name, v, cap) != 0) return -1;
        } else {
            return gs_fail("parameter %s is a %s, not an array", name, pk_kind_name(v));
        }
    }
    return 0;
}

/* Upper bound on the number of arrays under params (for the allocation). */
static size_t count_leaves(const pk_value *v, int depth) {
    if (v->kind != PK_DICT || depth > 4096) return 1;
    size_t n = 0;
    for (size_t i = 1; i < v->u.seq.n; i += 2) n += count_leaves(v->u.seq.v[i], depth + 1);
    return n;
}

static const ck_array *find(const ck_companion *c, const char *name) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name)) return &c->arrays[i];
    return NULL;
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

int ck_companion_read(const pk_value *root, const char *source_name, ck_companion *c) {
    memset(c, 0, sizeof *c);
    const pk_value *params = find_params(root, 0);
    if (!params)
        return gs_fail("no parameter dictionary with an 'embedding' array found (expected the companion's {'params': {...}} "
                       "checkpoint layout)");
    size_t cap = count_leaves(params, 0);
    c->names = calloc(cap + 1, sizeof *c->names);
    c->arrays = calloc(cap + 1, sizeof *c->arrays);
    if (!c->names || !c->arrays) return gs_fail("out of memory");
    if (flatten(c, params, "", cap) != 0 || infer_config(c) != 0) return -1;
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
