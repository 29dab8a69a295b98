/* ck_array: layout normalisation (strides, byte order) and dtype casts. */
#include "io/checkpoint/tensor.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"

void ck_array_free(ck_array *a) {
    if (!a) return;
    free(a->owned);
    a->owned = NULL;
    a->data = NULL;
}

int ck_array_shape(ck_array *a, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > ST_MAX_DIMS) return gs_fail("%d dimensions (at most %d supported)", ndim, ST_MAX_DIMS);
    size_t es = st_dtype_size(a->dtype);
    uint64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return gs_fail("dimension %d is negative (%" PRId64 ")", i, shape[i]);
        if (shape[i] && numel > (UINT64_MAX / 16) / (uint64_t)shape[i]) return gs_fail("shape too large");
        numel *= (uint64_t)shape[i];
        a->shape[i] = shape[i];
    }
    if (numel > SIZE_MAX / 16 / es) return gs_fail("shape too large");
    a->ndim = ndim;
    a->numel = (int64_t)numel;
    a->nbytes = (size_t)numel * es;
    return 0;
}

static void put_elem(unsigned char *dst, const unsigned char *src, size_t es, int swap) {
    if (!swap) { memcpy(dst, src, es); return; }
    for (size_t k = 0; k < es; k++) dst[k] = src[es - 1 - k];
}

int ck_array_reach(const ck_array *a, uint64_t elems, int64_t offset, const int64_t *stride, uint64_t *end, int *contiguous) {
    if (offset < 0) return gs_fail("negative storage offset %" PRId64, offset);
    *end = 0;
    *contiguous = 1;
    if (a->numel == 0) return 0;
    /* the last element any index reaches, checked before anything is read;
     * every step stays below the storage's element count, so nothing wraps */
    uint64_t last = (uint64_t)offset;
    if (last >= elems) return gs_fail("the storage offset %" PRId64 " is past its %" PRIu64 " elements", offset, elems);
    int64_t expect = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (stride[i] < 0) return gs_fail("negative stride %" PRId64, stride[i]);
        uint64_t span = (uint64_t)(a->shape[i] - 1);
        if (span && (uint64_t)stride[i] > (elems - 1 - last) / span)
            return gs_fail("the tensor reaches past its storage's %" PRIu64 " elements (offset %" PRId64 ", size %" PRId64
                           ", stride %" PRId64 " in dimension %d)", elems, offset, a->shape[i], stride[i], i);
        last += span * (uint64_t)stride[i];
        if (a->shape[i] != 1 && stride[i] != expect) *contiguous = 0;
        expect *= a->shape[i];
    }
    *end = last + 1;
    return 0;
}

int ck_array_gather(ck_array *a, const unsigned char *src, size_t src_bytes, int64_t offset, const int64_t *stride, int swap) {
    size_t es = st_dtype_size(a->dtype);
    if (es == 1) swap = 0;
    uint64_t end;
    int contiguous;
    if (ck_array_reach(a, src_bytes / es, offset, stride, &end, &contiguous) != 0) return -1;
    if (a->numel == 0) { a->data = src; return 0; }
    const unsigned char *base = src + (size_t)offset * es;
    if (contiguous && !swap) { a->data = base; return 0; }
    unsigned char *out = malloc(a->nbytes);
    if (!out) return gs_fail("out of memory (%zu bytes)", a->nbytes);
    if (contiguous) {
        for (int64_t i = 0; i < a->numel; i++) put_elem(out + (size_t)i * es, base + (size_t)i * es, es, swap);
    } else {
        int64_t idx[ST_MAX_DIMS] = {0};
        size_t pos = 0; /* element offset from base */
        for (int64_t i = 0; i < a->numel; i++) {
            put_elem(out + (size_t)i * es, base + pos * es, es, swap);
            for (int k = a->ndim - 1; k >= 0; k--) { /* odometer: next C-order index */
                if (++idx[k] < a->shape[k]) { pos += (size_t)stride[k]; break; }
                pos -= (size_t)(stride[k] * (a->shape[k] - 1));
                idx[k] = 0;
            }
        }
    }
    free(a->owned);
    a->owned = out;
    a->data = out;
    return 0;
}

static double elem_f64(st_dtype t, const unsigned char *p) {
    switch (t) {
    case ST_F32: { float f; memcpy(&f, p, 4); return f; }
    case ST_F64: { double f; memcpy(&f, p, 8); return f; }
    case ST_F16: return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case ST_BF16: return bf16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case ST_I8: return (int8_t)p[0];
    case ST_U8: case ST_BOOL: return p[0];
    case ST_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ST_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ST_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ST_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case ST_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case ST_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    }
    return 0;
}

int64_t ck_array_nonfinite(const ck_array *a) {
    if (a->dtype != ST_F32 && a->dtype != ST_F64 && a->dtype != ST_F16 && a->dtype != ST_BF16) return 0;
    size_t es = st_dtype_size(a->dtype);
    const unsigned char *p = a->data;
    int64_t bad = 0;
    for (int64_t i = 0; i < a->numel; i++) bad += !isfinite(elem_f64(a->dtype, p + (size_t)i * es));
    return bad;
}

int ck_array_cast(ck_array *a, st_dtype to) {
    if (a->dtype == to) return 0;
    if (to != ST_F32 && to != ST_BF16) return gs_fail("cast to %s is not supported", st_dtype_name(to));
    size_t es = st_dtype_size(a->dtype), os = st_dtype_size(to);
    unsigned char *out = malloc(a->numel ? (size_t)a->numel * os : 1);
    if (!out) return gs_fail("out of memory");
    const unsigned char *p = a->data;
    for (int64_t i = 0; i < a->numel; i++) {
        /* through float32 first, as numpy's astype(float32) then the bf16 rounding */
        float f = (float)elem_f64(a->dtype, p + (size_t)i * es);
        if (to == ST_F32) memcpy(out + 4 * i, &f, 4);
        else {
            uint16_t h = f32_to_bf16(f);
            out[2 * i] = (unsigned char)h;
            out[2 * i + 1] = (unsigned char)(h >> 8);
        }
    }
    free(a->owned);
    a->owned = out;
    a->data = out;
    a->dtype = to;
    a->nbytes = (size_t)a->numel * os;
    return 0;
}
