/* numpy arrays from pickle values; see numpy_array.h. */
#include "io/checkpoint/numpy_array.h"

#include <string.h>

#include "base/error.h"

int pk_is_numpy_array(const pk_value *v) {
    return v && v->kind == PK_OBJECT && (v->u.obj.g == PK_G_NP_RECONSTRUCT || v->u.obj.g == PK_G_NP_FROMBUFFER);
}

int pk_is_numpy_scalar(const pk_value *v) { return v && v->kind == PK_OBJECT && v->u.obj.g == PK_G_NP_SCALAR; }

/* dtype object -> st_dtype and byte order (the state was checked when built) */
static int dtype_of(const pk_value *dt, st_dtype *t, int *swap) {
    if (!dt || dt->kind != PK_OBJECT || dt->u.obj.g != PK_G_NP_DTYPE) return gs_fail("the array's dtype is a %s, not a numpy.dtype", dt ? pk_kind_name(dt) : "nothing");
    if (!dt->u.obj.state) return gs_fail("numpy.dtype without its state (byte order unknown)");
    *t = (st_dtype)dt->u.obj.dtype;
    *swap = pk_str_eq(dt->u.obj.state->u.seq.v[1], ">");
    return 0;
}

static int shape_of(const pk_value *s, int64_t *shape, int *ndim) {
    if (!s || s->kind != PK_TUPLE) return gs_fail("the array's shape is not a tuple");
    if (s->u.seq.n > ST_MAX_DIMS) return gs_fail("%zu dimensions (at most %d supported)", s->u.seq.n, ST_MAX_DIMS);
    for (size_t i = 0; i < s->u.seq.n; i++)
        if (pk_int(s->u.seq.v[i], &shape[i]) != 0 || shape[i] < 0) return gs_fail("shape entry %zu is not a non-negative integer", i);
    *ndim = (int)s->u.seq.n;
    return 0;
}

static int fill(ck_array *a, const pk_value *data, int fortran, int swap) {
    if (!data || data->kind != PK_BYTES)
        return gs_fail("the array's data is a %s, not bytes (object arrays are refused)", data ? pk_kind_name(data) : "nothing");
    if (data->u.s.n != a->nbytes)
        return gs_fail("the array's data holds %zu bytes; its shape and dtype need %zu", data->u.s.n, a->nbytes);
    int64_t stride[ST_MAX_DIMS];
    int64_t s = 1;
    for (int k = 0; k < a->ndim; k++) {
        int i = fortran ? k : a->ndim - 1 - k;
        stride[i] = s;
        s *= a->shape[i];
    }
    return ck_array_gather(a, data->u.s.p, data->u.s.n, 0, stride, swap);
}

int pk_numpy_array(const pk_value *v, ck_array *out) {
    memset(out, 0, sizeof *out);
    int64_t shape[ST_MAX_DIMS];
    int ndim = 0, swap = 0, fortran = 0;
    const pk_value *data;
    if (pk_is_numpy_scalar(v)) {
        pk_value **a = v->u.obj.args->u.seq.v;
        if (dtype_of(a[0], &out->dtype, &swap) != 0 || ck_array_shape(out, 0, shape) != 0) return -1;
        data = a[1];
    } else if (v && v->kind == PK_OBJECT && v->u.obj.g == PK_G_NP_FROMBUFFER) {
        pk_value **a = v->u.obj.args->u.seq.v; /* (buffer, dtype, shape, order) */
        if (!pk_str_eq(a[3], "C") && !pk_str_eq(a[3], "F")) return gs_fail("numpy _frombuffer order is not 'C' or 'F'");
        fortran = pk_str_eq(a[3], "F");
        if (dtype_of(a[1], &out->dtype, &swap) != 0 || shape_of(a[2], shape, &ndim) != 0 || ck_array_shape(out, ndim, shape) != 0) return -1;
        data = a[0];
    } else if (v && v->kind == PK_OBJECT && v->u.obj.g == PK_G_NP_RECONSTRUCT) {
        const pk_value *st = v->u.obj.state; /* (version, shape, dtype, is_fortran, data) */
        if (!st) return gs_fail("numpy array without its state");
        int64_t version, f;
        if (pk_int(st->u.seq.v[0], &version) != 0 || version != 1) return gs_fail("numpy array state version is not 1");
        if (pk_int(st->u.seq.v[3], &f) != 0) return gs_fail("numpy array's is_fortran is not a bool");
        fortran = f != 0;
        if (shape_of(st->u.seq.v[1], shape, &ndim) != 0 || dtype_of(st->u.seq.v[2], &out->dtype, &swap) != 0 ||
            ck_array_shape(out, ndim, shape) != 0)
            return -1;
        data = st->u.seq.v[4];
    } else {
        return gs_fail("a %s, not a numpy array", v ? pk_kind_name(v) : "missing value");
    }
    if (fill(out, data, fortran, swap) != 0) { ck_array_free(out); return -1; }
    return 0;
}
