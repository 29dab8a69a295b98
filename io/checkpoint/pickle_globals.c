/* The globals the pickle VM recognises, and what REDUCE, NEWOBJ and BUILD
 * mean for each. Nothing here calls anything: a recognised call becomes a
 * PK_OBJECT (interpreted later, e.g. by numpy_array.c), a plain value
 * (OrderedDict() is a dict, _codecs.encode(s, "latin1") is bytes), or a
 * PK_SKIPPED node for the ML libraries' optimizer classes. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/pickle_impl.h"
#include "io/checkpoint/safetensors.h"
#include "io/tokenizer/utf8.h"

static const struct { const char *module, *name; pk_global g; int dtype; } known[] = {
    {"numpy.core.multiarray", "_reconstruct", PK_G_NP_RECONSTRUCT, -1},
    {"numpy._core.multiarray", "_reconstruct", PK_G_NP_RECONSTRUCT, -1},
    {"numpy.core.multiarray", "scalar", PK_G_NP_SCALAR, -1},
    {"numpy._core.multiarray", "scalar", PK_G_NP_SCALAR, -1},
    {"numpy.core.numeric", "_frombuffer", PK_G_NP_FROMBUFFER, -1},
    {"numpy._core.numeric", "_frombuffer", PK_G_NP_FROMBUFFER, -1},
    {"numpy", "ndarray", PK_G_NP_NDARRAY, -1},
    {"numpy", "dtype", PK_G_NP_DTYPE, -1},
    {"collections", "OrderedDict", PK_G_ORDERED_DICT, -1},
    {"_codecs", "encode", PK_G_CODECS_ENCODE, -1},
    {"builtins", "bytes", PK_G_BYTES, -1},
    {"__builtin__", "bytes", PK_G_BYTES, -1},
    {"builtins", "bytearray", PK_G_BYTES, -1},
    {"__builtin__", "bytearray", PK_G_BYTES, -1},
    {"copyreg", "_reconstructor", PK_G_RECONSTRUCTOR, -1},
    {"copy_reg", "_reconstructor", PK_G_RECONSTRUCTOR, -1},
    {"builtins", "object", PK_G_BASE_TYPE, -1},
    {"__builtin__", "object", PK_G_BASE_TYPE, -1},
    {"builtins", "tuple", PK_G_BASE_TYPE, -1},
    {"__builtin__", "tuple", PK_G_BASE_TYPE, -1},
    {"builtins", "list", PK_G_BASE_TYPE, -1},
    {"__builtin__", "list", PK_G_BASE_TYPE, -1},
    {"builtins", "dict", PK_G_BASE_TYPE, -1},
    {"__builtin__", "dict", PK_G_BASE_TYPE, -1},
    {"builtins", "set", PK_G_SET, 0},
    {"__builtin__", "set", PK_G_SET, 0},
    {"builtins", "frozenset", PK_G_SET, 1},
    {"__builtin__", "frozenset", PK_G_SET, 1},
    {"torch._utils", "_rebuild_tensor_v2", PK_G_TORCH_REBUILD, -1},
    {"torch._utils", "_rebuild_parameter", PK_G_TORCH_PARAMETER, -1},
    {"torch", "Size", PK_G_TORCH_SIZE, -1},
    {"torch", "FloatStorage", PK_G_TORCH_STORAGE, ST_F32},
    {"torch", "HalfStorage", PK_G_TORCH_STORAGE, ST_F16},
    {"torch", "BFloat16Storage", PK_G_TORCH_STORAGE, ST_BF16},
    {"torch", "DoubleStorage", PK_G_TORCH_STORAGE, ST_F64},
    {"torch", "LongStorage", PK_G_TORCH_STORAGE, ST_I64},
    {"torch", "IntStorage", PK_G_TORCH_STORAGE, ST_I32},
    {"torch", "ShortStorage", PK_G_TORCH_STORAGE, ST_I16},
    {"torch", "CharStorage", PK_G_TORCH_STORAGE, ST_I8},
    {"torch", "ByteStorage", PK_G_TORCH_STORAGE, ST_U8},
    {"torch", "BoolStorage", PK_G_TORCH_STORAGE, ST_BOOL},
};

/* Optimizer and training-state classes of the JAX stack: kept as opaque
 * placeholders so a checkpoint's opt_state can be skipped. */
static const char *const skipped_prefixes[] = {"optax", "flax", "jax", "jaxlib", "chex", "ml_collections"};

/* numpy's dtype(str) names of the plain numeric types */
static const struct { const char *name; int dtype; } np_types[] = {
    {"f2", ST_F16}, {"f4", ST_F32}, {"f8", ST_F64}, {"i1", ST_I8}, {"i2", ST_I16}, {"i4", ST_I32}, {"i8", ST_I64},
    {"u1", ST_U8},  {"u2", ST_U16}, {"u4", ST_U32}, {"u8", ST_U64}, {"b1", ST_BOOL},
};

static int eq(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* module.name for a message: printable ASCII only, at most 120 characters. */
static void printable(char *out, size_t cap, const char *m, size_t ml, const char *n, size_t nl) {
    size_t k = 0;
    for (size_t i = 0; i < ml + 1 + nl && k + 4 < cap && k < 120; i++) {
        char c = i < ml ? m[i] : i == ml ? '.' : n[i - ml - 1];
        out[k++] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    out[k] = 0;
}

int pk_resolve_global(pk_doc *d, const char *module, size_t ml, const char *name, size_t nl, pk_value **out) {
    int g = -1, dtype = -1;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (eq(module, ml, known[i].module) && eq(name, nl, known[i].name)) { g = (int)known[i].g; dtype = known[i].dtype; }
    for (size_t i = 0; g < 0 && i < sizeof skipped_prefixes / sizeof *skipped_prefixes; i++) {
        size_t pl = strlen(skipped_prefixes[i]);
        if (ml >= pl && memcmp(module, skipped_prefixes[i], pl) == 0 && (ml == pl || module[pl] == '.')) g = PK_G_SKIP;
    }
    if (g < 0) {
        char what[160];
        printable(what, sizeof what, module, ml, name, nl);
        return pk_fail(d, "the pickle references %s; refusing it (a checkpoint may hold only numpy arrays, torch tensors, "
                       "plain containers and optax/flax/jax state)", what);
    }
    pk_value *v = pk_new(d, PK_GLOBAL);
    char *m = pk_buf(d, ml + 1), *n = pk_buf(d, nl + 1);
    if (!v || !m || !n) return -1;
    memcpy(m, module, ml);
    m[ml] = 0;
    memcpy(n, name, nl);
    n[nl] = 0;
    v->u.glob.g = (pk_global)g;
    v->u.glob.dtype = dtype;
    v->u.glob.module = m;
    v->u.glob.name = n;
    *out = v;
    return 0;
}

/* protocol 2 pickles bytes as _codecs.encode(str, "latin1"): the code points
 * are the bytes. */
static int latin1(pk_doc *d, const pk_value *s, pk_value **out) {
    unsigned char *o = pk_buf(d, s->u.s.n);
    if (!o) return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->u.s.n;) {
        uint32_t cp;
        int k = utf8_decode(s->u.s.p + i, s->u.s.n - i, &cp);
        if (k == 0 || cp > 0xff) return pk_fail(d, "_codecs.encode: a character beyond Latin-1");
        o[n++] = (unsigned char)cp;
        i += (size_t)k;
    }
    pk_value *v = pk_new(d, PK_BYTES);
    if (!v) return -1;
    v->u.s.p = o;
    v->u.s.n = n;
    v->wbytes = n;
    *out = v;
    return 0;
}

static int new_object(pk_doc *d, pk_global g, int dtype, pk_value *args, pk_value **out) {
    pk_value *v = pk_new(d, PK_OBJECT);
    if (!v) return -1;
    v->u.obj.g = g;
    v->u.obj.dtype = dtype;
    v->u.obj.args = args;
    *out = v;
    return pk_adopt(d, v, args);
}

int pk_apply_global(pk_doc *d, pk_value *callable, pk_value *args, int newobj, pk_value **out) {
    if (callable->kind != PK_GLOBAL) return pk_fail(d, "calls a %s (only recognised globals can be applied)", pk_kind_name(callable));
    if (args->kind != PK_TUPLE) return pk_fail(d, "the arguments are a %s, not a tuple", pk_kind_name(args));
    pk_global g = callable->u.glob.g;
    size_t n = args->u.seq.n;
    pk_value **a = args->u.seq.v;
    if (g == PK_G_SKIP) {
        args->sealed = 1; /* dropped, never interpreted */
        *out = pk_new(d, PK_SKIPPED);
        return *out ? 0 : -1;
    }
    if (newobj && g != PK_G_ORDERED_DICT)
        return pk_fail(d, "NEWOBJ of %s.%s is not supported", callable->u.glob.module, callable->u.glob.name);
    switch (g) {
    case PK_G_ORDERED_DICT:
        if (n != 0) return pk_fail(d, "collections.OrderedDict with arguments is not supported");
        *out = pk_new(d, PK_DICT);
        return *out ? 0 : -1;
    case PK_G_CODECS_ENCODE:
        if (n != 2 || a[0]->kind != PK_STR || !(pk_str_eq(a[1], "latin1") || pk_str_eq(a[1], "latin-1")))
            return pk_fail(d, "_codecs.encode is accepted only as (str, \"latin1\")");
        return latin1(d, a[0], out);
    case PK_G_BYTES: /* bytes() is b''; bytearray(b) is b's bytes */
        if (n == 0) {
            if (!(*out = pk_new(d, PK_BYTES))) return -1;
            (*out)->u.s.p = (const unsigned char *)"";
            return 0;
        }
        if (n != 1 || a[0]->kind != PK_BYTES) return pk_fail(d, "%s.%s is accepted only as () or (bytes,)", callable->u.glob.module, callable->u.glob.name);
        *out = a[0];
        return 0;
    case PK_G_SET: { /* set(list) / frozenset(list): the list's items */
        if (n > 1 || (n == 1 && a[0]->kind != PK_LIST && a[0]->kind != PK_TUPLE))
            return pk_fail(d, "%s.%s is accepted only as () or (list,)", callable->u.glob.module, callable->u.glob.name);
        pk_value *set = pk_new(d, PK_SET);
        if (!set) return -1;
        set->frozen = callable->u.glob.dtype == 1;
        for (size_t i = 0; n == 1 && i < a[0]->u.seq.n; i++) {
            pk_value *item = a[0]->u.seq.v[i];
            if (item->kind == PK_LIST || item->kind == PK_DICT || (item->kind == PK_SET && !item->frozen))
                return pk_fail(d, "a %s in a set (unhashable)", pk_kind_name(item));
            if (pk_adopt_item(d, set, item) != 0) return -1;
        }
        *out = set;
        return 0;
    }
    case PK_G_RECONSTRUCTOR: /* (cls, base, state): protocols 0-1 spell instances so; only skipped classes */
        if (n != 3 || a[0]->kind != PK_GLOBAL || a[0]->u.glob.g != PK_G_SKIP || a[1]->kind != PK_GLOBAL ||
            a[1]->u.glob.g != PK_G_BASE_TYPE)
            return pk_fail(d, "copyreg._reconstructor is accepted only for optax/flax/jax classes");
        if (!(*out = pk_new(d, PK_SKIPPED))) return -1;
        return 0;
    case PK_G_TORCH_SIZE:
        if (n != 1 || a[0]->kind != PK_TUPLE) return pk_fail(d, "torch.Size takes one tuple");
        *out = a[0];
        return 0;
    case PK_G_TORCH_PARAMETER:
        if (n < 1 || a[0]->kind != PK_OBJECT || a[0]->u.obj.g != PK_G_TORCH_REBUILD)
            return pk_fail(d, "torch._utils._rebuild_parameter of something that is not a tensor");
        *out = a[0];
        return 0;
    case PK_G_NP_RECONSTRUCT:
        if (n != 3 || a[0]->kind != PK_GLOBAL || a[0]->u.glob.g != PK_G_NP_NDARRAY)
            return pk_fail(d, "numpy _reconstruct is accepted only for numpy.ndarray");
        return new_object(d, g, -1, args, out);
    case PK_G_NP_DTYPE:
        if (n != 3 || a[0]->kind != PK_STR || (a[1]->kind != PK_BOOL && a[1]->kind != PK_INT) ||
            (a[2]->kind != PK_BOOL && a[2]->kind != PK_INT))
            return pk_fail(d, "numpy.dtype is accepted only as dtype(str, align, copy)");
        for (size_t i = 0; i < sizeof np_types / sizeof *np_types; i++)
            if (pk_str_eq(a[0], np_types[i].name)) return new_object(d, g, np_types[i].dtype, args, out);
        {
            char what[64];
            printable(what, sizeof what, "numpy.dtype(", 12, (const char *)a[0]->u.s.p, a[0]->u.s.n < 40 ? a[0]->u.s.n : 40);
            return pk_fail(d, "%s) is not a plain numeric dtype (f2/f4/f8, i1-i8, u1-u8, b1); refusing it", what);
        }
    case PK_G_NP_SCALAR:
        if (n != 2) return pk_fail(d, "numpy scalar takes (dtype, bytes)");
        return new_object(d, g, -1, args, out);
    case PK_G_NP_FROMBUFFER:
        if (n != 4) return pk_fail(d, "numpy _frombuffer takes (buffer, dtype, shape, order)");
        return new_object(d, g, -1, args, out);
    case PK_G_TORCH_REBUILD:
        if (n != 6 && n != 7) return pk_fail(d, "torch._utils._rebuild_tensor_v2 takes 6 or 7 arguments, not %zu", n);
        return new_object(d, g, -1, args, out);
    default:
        return pk_fail(d, "calling %s.%s is not supported", callable->u.glob.module, callable->u.glob.name);
    }
}

/* numpy writes a plain numeric dtype's state as
 * (3, byte order, None, None, None, -1, -1, 0): no subarray, no fields, no
 * itemsize or alignment override and no flags (an object dtype has flags 63). */
static int check_dtype_state(pk_doc *d, const pk_value *dt, const pk_value *st) {
    int64_t x[4];
    if (st->kind != PK_TUPLE || st->u.seq.n != 8)
        return pk_fail(d, "numpy.dtype state is a %s of %zu, not the 8-tuple of a plain numeric dtype", pk_kind_name(st),
                       st->kind == PK_TUPLE ? st->u.seq.n : (size_t)0);
    pk_value **v = st->u.seq.v;
    if (pk_int(v[0], &x[0]) != 0 || x[0] != 3) return pk_fail(d, "numpy.dtype state version is not 3");
    size_t size = st_dtype_size((st_dtype)dt->u.obj.dtype);
    int ok_order = pk_str_eq(v[1], "<") || pk_str_eq(v[1], ">") || (size == 1 && pk_str_eq(v[1], "|"));
    if (!ok_order) return pk_fail(d, "numpy.dtype byte order is not '<', '>' (or '|' for one-byte types)");
    for (int i = 2; i <= 4; i++)
        if (v[i]->kind != PK_NONE) return pk_fail(d, "numpy.dtype with a subarray, field names or fields is refused");
    if (pk_int(v[5], &x[1]) != 0 || pk_int(v[6], &x[2]) != 0 || pk_int(v[7], &x[3]) != 0 || x[1] != -1 || x[2] != -1 || x[3] != 0)
        return pk_fail(d, "numpy.dtype with an itemsize, alignment or flags beyond the plain numeric form is refused");
    return 0;
}

int pk_build(pk_doc *d, pk_value *target, pk_value *state) {
    if (target->kind == PK_SKIPPED) { state->sealed = 1; return 0; }
    /* OrderedDict's instance attributes (torch's state_dict keeps _metadata there): dropped */
    if (target->kind == PK_DICT && (state->kind == PK_DICT || state->kind == PK_NONE)) { state->sealed = 1; return 0; }
    if (target->kind != PK_OBJECT || (target->u.obj.g != PK_G_NP_RECONSTRUCT && target->u.obj.g != PK_G_NP_DTYPE))
        return pk_fail(d, "BUILD on a %s is not supported", pk_kind_name(target));
    if (target->sealed) return pk_fail(d, "BUILD on a %s that is already inside another value", pk_kind_name(target));
    if (target->u.obj.state) return pk_fail(d, "a second BUILD on the same %s", pk_kind_name(target));
    if (target->u.obj.g == PK_G_NP_DTYPE && check_dtype_state(d, target, state) != 0) return -1;
    if (target->u.obj.g == PK_G_NP_RECONSTRUCT && (state->kind != PK_TUPLE || state->u.seq.n != 5))
        return pk_fail(d, "numpy array state is a %s, not (version, shape, dtype, is_fortran, data)", pk_kind_name(state));
    target->u.obj.state = state;
    return pk_adopt(d, target, state);
}
