/* .npy reader (see npy.h). The header is a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 * spaces; it is parsed by hand, strictly, because it is untrusted input. */
#include "store/npy.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/half.h"

#define MAX_HEADER (1 << 20)

static const struct {
    const char *descr;
    npy_dtype t;
    int size, is_float;
} dtypes[] = {
    {"<f2", NPY_F2, 2, 1}, {"<f4", NPY_F4, 4, 1}, {"<f8", NPY_F8, 8, 1}, {"<i2", NPY_I2, 2, 0},
    {"<i4", NPY_I4, 4, 0}, {"<i8", NPY_I8, 8, 0}, {"|u1", NPY_U1, 1, 0}, {"<u2", NPY_U2, 2, 0},
    {"<u4", NPY_U4, 4, 0},
};

const char *npy_dtype_name(npy_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].t == t) return dtypes[i].descr;
    return "?";
}

void npy_shape_str(const npy_file *f, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < f->ndim && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "", (long long)f->shape[i]);
    if (k < size) snprintf(buf + k, size - k, f->ndim == 1 ? ",)" : ")");
}

/* ---- the header dict ---- */
typedef struct {
    const char *s;
    size_t n, i;
} cursor;

static int peek(cursor *c) { return c->i < c->n ? (unsigned char)c->s[c->i] : 0; }
static void skip_ws(cursor *c) {
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r')) c->i++;
}

/* A quoted string into out (at most size-1 characters). */
static int parse_string(cursor *c, char *out, size_t size) {
    int q = peek(c);
    if (q != '\'' && q != '"') return -1;
    c->i++;
    size_t k = 0;
    while (c->i < c->n && c->s[c->i] != q) {
        if (c->s[c->i] == '\\' || k + 1 >= size) return -1;
        out[k++] = c->s[c->i++];
    }
    if (c->i >= c->n) return -1;
    c->i++;
    out[k] = 0;
    return 0;
}

static int parse_word(cursor *c, const char *w) {
    size_t n = strlen(w);
    if (c->n - c->i < n || memcmp(c->s + c->i, w, n)) return -1;
    c->i += n;
    return 0;
}

static int parse_shape(cursor *c, npy_file *f) {
    if (peek(c) != '(') return -1;
    c->i++;
    f->ndim = 0;
    for (;;) {
        skip_ws(c);
        if (peek(c) == ')') { c->i++; return 0; }
        if (peek(c) < '0' || peek(c) > '9') return -1;
        int64_t v = 0;
        while (peek(c) >= '0' && peek(c) <= '9') {
            if (v > (INT64_MAX - 9) / 10) return -1;
            v = v * 10 + (peek(c) - '0');
            c->i++;
        }
        if (peek(c) == 'L') c->i++; /* Python 2 long */
        if (f->ndim == NPY_MAX_DIMS) return -2;
        f->shape[f->ndim++] = v;
        skip_ws(c);
        if (peek(c) == ',') { c->i++; continue; }
        if (peek(c) == ')') { c->i++; return 0; }
        return -1;
    }
}

static int parse_header(npy_file *f, const char *text, size_t n) {
    cursor c = {text, n, 0};
    char key[32], descr[32] = "";
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    skip_ws(&c);
    if (peek(&c) != '{') return gs_fail("%s: malformed .npy header (expected '{')", f->path);
    c.i++;
    for (;;) {
        skip_ws(&c);
        if (peek(&c) == '}') { c.i++; break; }
        if (parse_string(&c, key, sizeof key)) return gs_fail("%s: malformed .npy header (expected a quoted key)", f->path);
        skip_ws(&c);
        if (peek(&c) != ':') return gs_fail("%s: malformed .npy header (expected ':' after '%s')", f->path, key);
        c.i++;
        skip_ws(&c);
        if (!strcmp(key, "descr")) {
            if (parse_string(&c, descr, sizeof descr))
                return gs_fail("%s: unsupported dtype: structured or malformed 'descr' (a plain numeric dtype such "
                               "as '<f4' is needed)", f->path);
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (!parse_word(&c, "True")) fortran = 1;
            else if (parse_word(&c, "False")) return gs_fail("%s: malformed .npy header ('fortran_order' must be True or False)", f->path);
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            int rc = parse_shape(&c, f);
            if (rc == -2) return gs_fail("%s: more than %d dimensions are not supported", f->path, NPY_MAX_DIMS);
            if (rc) return gs_fail("%s: malformed .npy header ('shape' must be a tuple of integers)", f->path);
            have_shape = 1;
        } else {
            return gs_fail("%s: malformed .npy header (unexpected key '%s')", f->path, key);
        }
        skip_ws(&c);
        if (peek(&c) == ',') { c.i++; continue; }
        if (peek(&c) == '}') { c.i++; break; }
        return gs_fail("%s: malformed .npy header (expected ',' or '}')", f->path);
    }
    skip_ws(&c);
    if (c.i != c.n) return gs_fail("%s: malformed .npy header (text after the closing '}')", f->path);
    if (!have_descr || !have_order || !have_shape)
        return gs_fail("%s: malformed .npy header (it needs 'descr', 'fortran_order' and 'shape')", f->path);
    if (fortran)
        return gs_fail("%s: the array is in Fortran order; save it in C order (np.save(path, np.ascontiguousarray(a)))", f->path);
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (!strcmp(descr, dtypes[i].descr)) {
            f->dtype = dtypes[i].t;
            f->item_size = dtypes[i].size;
            f->is_float = dtypes[i].is_float;
            return 0;
        }
    if (descr[0] == '>')
        return gs_fail("%s: big-endian dtype '%s' is not supported: save a.astype(a.dtype.newbyteorder('<'))", f->path, descr);
    return gs_fail("%s: unsupported dtype '%s' (supported: <f2 <f4 <f8 <i2 <i4 <i8 |u1 <u2 <u4)", f->path, descr);
}

npy_file *npy_open(const char *path) {
    npy_file *f = calloc(1, sizeof *f);
    char *header = NULL;
    if (!f || !(f->path = strdup(path))) { free(f); gs_fail("%s: out of memory", path); return NULL; }
    f->f = fopen(path, "rb");
    if (!f->f) { gs_fail("%s: cannot open: %s", path, strerror(errno)); goto fail; }
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f->f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6)) { gs_fail("%s: not a .npy file (no \\x93NUMPY magic)", path); goto fail; }
    int major = pre[6], minor = pre[7];
    size_t hlen, prefix;
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        prefix = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f->f) != 2) { gs_fail("%s: truncated .npy header", path); goto fail; }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        prefix = 12;
    } else {
        gs_fail("%s: unsupported .npy format version %d.%d (1, 2 and 3 are read)", path, major, minor);
        goto fail;
    }
    if (hlen == 0 || hlen > MAX_HEADER) { gs_fail("%s: implausible .npy header length %zu", path, hlen); goto fail; }
    header = malloc(hlen);
    if (!header) { gs_fail("%s: out of memory", path); goto fail; }
    if (fread(header, 1, hlen, f->f) != hlen) { gs_fail("%s: truncated .npy header", path); goto fail; }
    if (parse_header(f, header, hlen)) goto fail;
    /* the size must match the shape exactly: a short file is truncated, a long one is not what the header says */
    int64_t count = 1, bytes;
    for (int i = 0; i < f->ndim; i++)
        if (__builtin_mul_overflow(count, f->shape[i], &count)) { gs_fail("%s: the shape's element count overflows", path); goto fail; }
    if (__builtin_mul_overflow(count, (int64_t)f->item_size, &bytes)) { gs_fail("%s: the array's size overflows", path); goto fail; }
    f->count = count;
    struct stat sb;
    if (fstat(fileno(f->f), &sb)) { gs_fail("%s: %s", path, strerror(errno)); goto fail; }
    int64_t have = (int64_t)sb.st_size - (int64_t)(prefix + hlen);
    if (have != bytes) {
        char shape[160];
        npy_shape_str(f, shape, sizeof shape);
        gs_fail("%s: %s: the file has %lld bytes of data, but shape %s of %s needs %lld", path,
                have < bytes ? "truncated" : "size mismatch", (long long)have, shape, npy_dtype_name(f->dtype), (long long)bytes);
        goto fail;
    }
    free(header);
    return f;
fail:
    free(header);
    npy_close(f);
    return NULL;
}

void npy_close(npy_file *f) {
    if (!f) return;
    if (f->f) fclose(f->f);
    free(f->path);
    free(f);
}

/* Read n raw elements into buf (n * item_size bytes). */
static int read_raw(npy_file *f, void *buf, int64_t n) {
    if (n < 0 || n > f->count - f->done)
        return gs_fail("%s: reading %lld elements past the end of the array (%lld of %lld read)", f->path, (long long)n,
                       (long long)f->done, (long long)f->count);
    if (n && fread(buf, (size_t)f->item_size, (size_t)n, f->f) != (size_t)n)
        return gs_fail("%s: truncated while reading (did the file change?)", f->path);
    f->done += n;
    return 0;
}

#define CHUNK 4096

int npy_read_f32(npy_file *f, float *out, int64_t n) {
    if (!f->is_float)
        return gs_fail("%s: dtype %s holds integers, but floating-point values are needed here", f->path, npy_dtype_name(f->dtype));
    if (f->dtype == NPY_F4) return read_raw(f, out, n);
    unsigned char buf[CHUNK * 8];
    for (int64_t k = 0; k < n;) {
        int64_t m = n - k < CHUNK ? n - k : CHUNK;
        if (read_raw(f, buf, m)) return -1;
        for (int64_t i = 0; i < m; i++) {
            if (f->dtype == NPY_F2) {
                uint16_t h;
                memcpy(&h, buf + 2 * i, 2);
                out[k + i] = f16_to_f32(h);
            } else {
                double d;
                memcpy(&d, buf + 8 * i, 8);
                out[k + i] = isnan(d) ? NAN : d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
            }
        }
        k += m;
    }
    return 0;
}

int npy_read_i64(npy_file *f, int64_t *out, int64_t n) {
    if (f->is_float)
        return gs_fail("%s: dtype %s holds floating-point values, but integers are needed here (save with "
                       "a.astype('int32'))", f->path, npy_dtype_name(f->dtype));
    unsigned char buf[CHUNK * 8];
    for (int64_t k = 0; k < n;) {
        int64_t m = n - k < CHUNK ? n - k : CHUNK;
        if (read_raw(f, buf, m)) return -1;
        for (int64_t i = 0; i < m; i++) {
            const unsigned char *p = buf + (size_t)f->item_size * i;
            switch (f->dtype) {
            case NPY_U1: out[k + i] = p[0]; break;
            case NPY_I2: { int16_t v; memcpy(&v, p, 2); out[k + i] = v; break; }
            case NPY_U2: { uint16_t v; memcpy(&v, p, 2); out[k + i] = v; break; }
            case NPY_I4: { int32_t v; memcpy(&v, p, 4); out[k + i] = v; break; }
            case NPY_U4: { uint32_t v; memcpy(&v, p, 4); out[k + i] = v; break; }
            default: { int64_t v; memcpy(&v, p, 8); out[k + i] = v; break; }
            }
        }
        k += m;
    }
    return 0;
}
