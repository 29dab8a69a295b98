/* A tiny pickle writer for tests and fuzz seeds: raw opcodes appended to a
 * growing buffer, plus helpers for the shapes numpy and torch.save write
 * (so the tests do not need Python). Aborts on out of memory: test code. */
#ifndef GS_TESTS_PICKLE_WRITER_H
#define GS_TESTS_PICKLE_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *p;
    size_t n, cap;
    uint32_t memo; /* next MEMOIZE/BINPUT index the helpers use */
} pkw;

static inline void pkw_raw(pkw *w, const void *data, size_t n) {
    if (w->n + n > w->cap) {
        while (w->n + n > w->cap) w->cap = w->cap ? 2 * w->cap : 256;
        w->p = realloc(w->p, w->cap);
        if (!w->p) abort();
    }
    if (n) memcpy(w->p + w->n, data, n);
    w->n += n;
}
static inline void pkw_op(pkw *w, unsigned char op) { pkw_raw(w, &op, 1); }
static inline void pkw_le(pkw *w, uint64_t v, int k) {
    for (int i = 0; i < k; i++) pkw_op(w, (unsigned char)(v >> (8 * i)));
}
static inline void pkw_text(pkw *w, const char *s) { pkw_raw(w, s, strlen(s)); }
static inline void pkw_proto(pkw *w, int v) { pkw_op(w, 0x80); pkw_op(w, (unsigned char)v); }
static inline void pkw_int(pkw *w, int32_t v) {
    if (v >= 0 && v < 256) { pkw_op(w, 'K'); pkw_op(w, (unsigned char)v); }
    else { pkw_op(w, 'J'); pkw_le(w, (uint32_t)v, 4); }
}
/* any int64: BININT1/BININT when it fits, else LONG1 of 8 bytes */
static inline void pkw_long(pkw *w, int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) { pkw_int(w, (int32_t)v); return; }
    pkw_op(w, 0x8a);
    pkw_op(w, 8);
    pkw_le(w, (uint64_t)v, 8);
}
/* SHORT_BINUNICODE or BINUNICODE */
static inline void pkw_str(pkw *w, const char *s) {
    size_t n = strlen(s);
    if (n < 256) { pkw_op(w, 0x8c); pkw_op(w, (unsigned char)n); }
    else { pkw_op(w, 'X'); pkw_le(w, n, 4); }
    pkw_raw(w, s, n);
}
/* SHORT_BINBYTES or BINBYTES */
static inline void pkw_bytes(pkw *w, const void *b, size_t n) {
    if (n < 256) { pkw_op(w, 'C'); pkw_op(w, (unsigned char)n); }
    else { pkw_op(w, 'B'); pkw_le(w, n, 4); }
    pkw_raw(w, b, n);
}
/* GLOBAL (text form, protocols 0-3) */
static inline void pkw_global(pkw *w, const char *module, const char *name) {
    pkw_op(w, 'c');
    pkw_text(w, module);
    pkw_op(w, '\n');
    pkw_text(w, name);
    pkw_op(w, '\n');
}
/* STACK_GLOBAL (protocol 4) */
static inline void pkw_stack_global(pkw *w, const char *module, const char *name) {
    pkw_str(w, module);
    pkw_str(w, name);
    pkw_op(w, 0x93);
}
static inline uint32_t pkw_memoize(pkw *w) { pkw_op(w, 0x94); return w->memo++; }
static inline void pkw_binput(pkw *w, uint32_t i) { pkw_op(w, 'q'); pkw_op(w, (unsigned char)i); }
static inline void pkw_binget(pkw *w, uint32_t i) {
    if (i < 256) { pkw_op(w, 'h'); pkw_op(w, (unsigned char)i); }
    else { pkw_op(w, 'j'); pkw_le(w, i, 4); }
}
static inline void pkw_tuple_ints(pkw *w, int n, const int64_t *v) {
    pkw_op(w, '(');
    for (int i = 0; i < n; i++) pkw_long(w, v[i]);
    pkw_op(w, 't');
}

/* numpy.dtype(name) with its state, as numpy pickles it (order '<', '>' or '|'). */
static inline void pkw_np_dtype(pkw *w, const char *name, const char *order, int flags) {
    pkw_global(w, "numpy", "dtype");
    pkw_str(w, name);
    pkw_op(w, 0x89);
    pkw_op(w, 0x88);
    pkw_op(w, 0x87);
    pkw_op(w, 'R');
    pkw_op(w, '(');
    pkw_int(w, 3);
    pkw_str(w, order);
    pkw_op(w, 'N');
    pkw_op(w, 'N');
    pkw_op(w, 'N');
    pkw_int(w, -1);
    pkw_int(w, -1);
    pkw_int(w, flags);
    pkw_op(w, 't');
    pkw_op(w, 'b');
}

/* A numpy array as protocol 3-4 pickle it: _reconstruct(ndarray, (0,), b'b')
 * then BUILD (1, shape, dtype, is_fortran, data). module: numpy.core or numpy._core. */
static inline void pkw_np_array(pkw *w, const char *core, const char *dtype, const char *order, int ndim, const int64_t *shape,
                                int fortran, const void *data, size_t nbytes) {
    char mod[64];
    snprintf(mod, sizeof mod, "%s.multiarray", core);
    pkw_global(w, mod, "_reconstruct");
    pkw_global(w, "numpy", "ndarray");
    pkw_int(w, 0);
    pkw_op(w, 0x85);
    pkw_bytes(w, "b", 1);
    pkw_op(w, 0x87);
    pkw_op(w, 'R');
    pkw_op(w, '(');
    pkw_int(w, 1);
    pkw_tuple_ints(w, ndim, shape);
    pkw_np_dtype(w, dtype, order, 0);
    pkw_op(w, fortran ? 0x88 : 0x89);
    pkw_bytes(w, data, nbytes);
    pkw_op(w, 't');
    pkw_op(w, 'b');
}

/* torch._utils._rebuild_tensor_v2(persid('storage', torch.<type>, key, 'cpu', numel), offset, size, stride, False, OrderedDict()) */
static inline void pkw_torch_tensor(pkw *w, const char *storage_type, const char *key, int64_t numel, int64_t offset, int ndim,
                                    const int64_t *size, const int64_t *stride) {
    pkw_global(w, "torch._utils", "_rebuild_tensor_v2");
    pkw_op(w, '(');
    pkw_op(w, '(');
    pkw_str(w, "storage");
    pkw_global(w, "torch", storage_type);
    pkw_str(w, key);
    pkw_str(w, "cpu");
    pkw_long(w, numel);
    pkw_op(w, 't');
    pkw_op(w, 'Q');
    pkw_long(w, offset);
    pkw_tuple_ints(w, ndim, size);
    pkw_tuple_ints(w, ndim, stride);
    pkw_op(w, 0x89);
    pkw_global(w, "collections", "OrderedDict");
    pkw_op(w, ')');
    pkw_op(w, 'R');
    pkw_op(w, 't');
    pkw_op(w, 'R');
}

static inline void pkw_free(pkw *w) { free(w->p); memset(w, 0, sizeof *w); }

#endif
