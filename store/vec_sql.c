/* Vector SQL functions (see vec_sql.h and docs/sql.md).
 *
 * A vector argument is a float32 BLOB (little-endian, sqlite-vec's layout) or
 * a JSON array of numbers; float16 BLOBs are widened with vec_f32(v, 'f16').
 * NULL in gives NULL out, as SQL's own functions do; a result that is
 * undefined (the cosine of a zero vector) is NULL, as SQLite's 1/0 is.
 * Everything else that is wrong is an SQL error naming the function and the
 * problem. Inputs are hostile: no cast, index or allocation here depends on an
 * unchecked value, and BLOB bytes are copied out before use (SQLite's pointer
 * may be unaligned). NaN and Inf elements in BLOBs are accepted and follow
 * IEEE arithmetic, so broken states can still be found with SQL. */
#ifdef GS_VEC_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "store/vec_sql.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpnscope's vector BLOBs are little-endian and read by memcpy: a little-endian host is required"
#endif

#ifndef SQLITE_INNOCUOUS
#define SQLITE_INNOCUOUS 0x000200000
#endif
#ifndef SQLITE_RESULT_SUBTYPE /* SQLite >= 3.45 wants it on functions that set subtypes */
#define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* sqlite-vec tags float32 results with subtype 223 and JSON with 74; using the
 * same tags lets both extensions be loaded into one connection. */
#define VEC_SUBTYPE_F32 223
#define JSON_SUBTYPE 74
#define MAX_NUMBER_CHARS 350 /* a JSON number longer than this is refused */

typedef struct {
    float *v; /* sqlite3_malloc64'd, n elements */
    int64_t n;
} vec;

enum { ARG_OK = 0, ARG_NULL = 1, ARG_ERROR = -1 };

static const char *fn_name(sqlite3_context *c) { return (const char *)sqlite3_user_data(c); }

/* Set "vec_xxx: <message>" as the SQL error. */
static void vfail(sqlite3_context *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vfail(sqlite3_context *c, const char *fmt, ...) {
    char msg[512];
    int k = snprintf(msg, sizeof msg, "%s: ", fn_name(c));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    va_end(ap);
    sqlite3_result_error(c, msg, -1);
}

static const char *type_name(int t) {
    switch (t) {
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT: return "REAL";
    case SQLITE_TEXT: return "TEXT";
    case SQLITE_BLOB: return "BLOB";
    default: return "NULL";
    }
}

/* double -> float without relying on the (undefined) out-of-range cast */
static float to_f32(double x) {
    if (isnan(x)) return NAN;
    if (x > FLT_MAX) return INFINITY;
    if (x < -FLT_MAX) return -INFINITY;
    return (float)x;
}

static int is_ws(int ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }

/* Parse a JSON array of numbers (strict JSON number grammar, so "nan", "inf"
 * and hex floats are refused as JSON refuses them). */
static int parse_json(sqlite3_context *c, const char *what, const char *s, int64_t len, vec *out) {
#define AT(i) ((i) < len ? (unsigned char)s[i] : 0)
    int64_t i = 0;
    while (is_ws(AT(i))) i++;
    if (AT(i) != '[') {
        vfail(c, "%sTEXT is not a JSON array of numbers (expected '[' at offset %lld)", what, (long long)i);
        return ARG_ERROR;
    }
    i++;
    while (is_ws(AT(i))) i++;
    if (AT(i) == ']') {
        vfail(c, "%sthe JSON array is empty; vectors need at least one element", what);
        return ARG_ERROR;
    }
    int64_t n = 0, cap = 16;
    float *v = sqlite3_malloc64((sqlite3_uint64)cap * sizeof *v);
    if (!v) { sqlite3_result_error_nomem(c); return ARG_ERROR; }
    for (;;) {
        while (is_ws(AT(i))) i++;
        int64_t start = i;
        if (AT(i) == '-') i++;
        if (AT(i) == '0') i++;
        else if (AT(i) >= '1' && AT(i) <= '9') while (is_digit(AT(i))) i++;
        else {
            vfail(c, "%sexpected a number at offset %lld of the JSON array", what, (long long)start);
            goto fail;
        }
        if (AT(i) == '.') {
            i++;
            if (!is_digit(AT(i))) { vfail(c, "%sbad number at offset %lld (digits must follow '.')", what, (long long)start); goto fail; }
            while (is_digit(AT(i))) i++;
        }
        if (AT(i) == 'e' || AT(i) == 'E') {
            i++;
            if (AT(i) == '+' || AT(i) == '-') i++;
            if (!is_digit(AT(i))) { vfail(c, "%sbad number at offset %lld (digits must follow the exponent)", what, (long long)start); goto fail; }
            while (is_digit(AT(i))) i++;
        }
        if (i - start > MAX_NUMBER_CHARS) {
            vfail(c, "%sthe number at offset %lld is longer than %d characters", what, (long long)start, MAX_NUMBER_CHARS);
            goto fail;
        }
        char buf[MAX_NUMBER_CHARS + 1];
        memcpy(buf, s + start, (size_t)(i - start));
        buf[i - start] = 0;
        double d = strtod(buf, NULL);
        /* values up to half an ulp above FLT_MAX round to it ("3.4028235e38" is FLT_MAX) */
        if (!(fabs(d) < (double)FLT_MAX + ldexp(1.0, 103))) {
            vfail(c, "%selement %lld (%s) is out of float32 range", what, (long long)n, buf);
            goto fail;
        }
        if (n == cap) {
            cap *= 2;
            float *w = sqlite3_realloc64(v, (sqlite3_uint64)cap * sizeof *v);
            if (!w) { sqlite3_result_error_nomem(c); goto fail; }
            v = w;
        }
        v[n++] = fabs(d) > FLT_MAX ? copysignf(FLT_MAX, (float)(d > 0 ? 1 : -1)) : (float)d;
        while (is_ws(AT(i))) i++;
        if (AT(i) == ',') { i++; continue; }
        if (AT(i) == ']') { i++; break; }
        vfail(c, "%sexpected ',' or ']' at offset %lld of the JSON array", what, (long long)i);
        goto fail;
    }
    while (is_ws(AT(i))) i++;
    if (i != len) {
        vfail(c, "%sunexpected text after the JSON array at offset %lld", what, (long long)i);
        goto fail;
    }
    out->v = v;
    out->n = n;
    return ARG_OK;
fail:
    sqlite3_free(v);
    return ARG_ERROR;
#undef AT
}

/* Read a vector argument. `what` prefixes messages ("1st vector: "). */
static int vec_arg(sqlite3_context *c, sqlite3_value *val, const char *what, vec *out) {
    out->v = NULL;
    out->n = 0;
    int t = sqlite3_value_type(val);
    if (t == SQLITE_NULL) return ARG_NULL;
    if (t == SQLITE_BLOB) {
        const void *p = sqlite3_value_blob(val);
        int bytes = sqlite3_value_bytes(val);
        if (bytes == 0 || !p) {
            vfail(c, "%sthe BLOB is empty; vectors need at least one element", what);
            return ARG_ERROR;
        }
        if (bytes % 4) {
            vfail(c, "%sa BLOB of %d bytes is not a float32 vector (its length must be a multiple of 4; "
                     "a float16 BLOB needs vec_f32(v, 'f16'))", what, bytes);
            return ARG_ERROR;
        }
        out->v = sqlite3_malloc64((sqlite3_uint64)bytes);
        if (!out->v) { sqlite3_result_error_nomem(c); return ARG_ERROR; }
        memcpy(out->v, p, (size_t)bytes);
        out->n = bytes / 4;
        return ARG_OK;
    }
    if (t == SQLITE_TEXT) {
        const char *s = (const char *)sqlite3_value_text(val);
        int len = sqlite3_value_bytes(val);
        if (!s) { sqlite3_result_error_nomem(c); return ARG_ERROR; }
        return parse_json(c, what, s, len, out);
    }
    vfail(c, "%sexpected a vector (a float32 BLOB or a JSON array), got %s", what, type_name(t));
    return ARG_ERROR;
}

/* Two vectors of the same length; ARG_NULL if either is NULL. */
static int vec_pair(sqlite3_context *c, sqlite3_value **argv, vec *a, vec *b) {
    b->v = NULL;
    int ra = vec_arg(c, argv[0], "1st vector: ", a);
    if (ra != ARG_OK) return ra;
    int rb = vec_arg(c, argv[1], "2nd vector: ", b);
    if (rb != ARG_OK) { sqlite3_free(a->v); a->v = NULL; return rb; }
    if (a->n != b->n) {
        vfail(c, "the vectors have different lengths (%lld and %lld)", (long long)a->n, (long long)b->n);
        sqlite3_free(a->v);
        sqlite3_free(b->v);
        a->v = b->v = NULL;
        return ARG_ERROR;
    }
    return ARG_OK;
}

/* An integer argument (an integral REAL is accepted; 1.5 is not). */
static int int_arg(sqlite3_context *c, sqlite3_value *val, const char *name, int64_t *out) {
    int t = sqlite3_value_type(val);
    if (t == SQLITE_NULL) return ARG_NULL;
    if (t == SQLITE_INTEGER) { *out = sqlite3_value_int64(val); return ARG_OK; }
    if (t == SQLITE_FLOAT) {
        double d = sqlite3_value_double(val);
        if (d == floor(d) && fabs(d) < 9.0e15) { *out = (int64_t)d; return ARG_OK; }
        vfail(c, "%s must be an integer, got %g", name, d);
        return ARG_ERROR;
    }
    vfail(c, "%s must be an integer, got %s", name, type_name(t));
    return ARG_ERROR;
}

static int num_arg(sqlite3_context *c, sqlite3_value *val, const char *name, double *out) {
    int t = sqlite3_value_type(val);
    if (t == SQLITE_NULL) return ARG_NULL;
    if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) { *out = sqlite3_value_double(val); return ARG_OK; }
    vfail(c, "%s must be a number, got %s", name, type_name(t));
    return ARG_ERROR;
}

/* Hand v (sqlite3_malloc64'd) to SQLite as the float32 BLOB result. */
static void result_vec(sqlite3_context *c, float *v, int64_t n) {
    sqlite3_result_blob64(c, v, (sqlite3_uint64)n * sizeof *v, sqlite3_free);
    sqlite3_result_subtype(c, VEC_SUBTYPE_F32);
}

static float *new_floats(sqlite3_context *c, int64_t n) {
    float *v = sqlite3_malloc64((sqlite3_uint64)n * sizeof *v);
    if (!v) sqlite3_result_error_nomem(c);
    return v;
}

/* ---- the functions ---- */

static void fn_length(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    sqlite3_result_int64(c, a.n);
    sqlite3_free(a.v);
}

/* Shortest of %.6g..%.9g that reads back as the same float; NaN -> null and
 * +-Inf -> +-1e999 (what JSON readers such as Python's turn into inf). */
static int format_float(char *buf, size_t size, float x) {
    if (isnan(x)) return snprintf(buf, size, "null");
    if (isinf(x)) return snprintf(buf, size, x > 0 ? "1e999" : "-1e999");
    int k = 0;
    for (int p = 6; p <= 9; p++) {
        k = snprintf(buf, size, "%.*g", p, (double)x);
        for (char *q = buf; *q; q++)
            if (*q == ',') *q = '.'; /* a decimal-comma locale must not break the JSON */
        if ((float)strtod(buf, NULL) == x) break;
    }
    return k;
}

static void fn_to_json(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    enum { PER = 24 };
    char *s = sqlite3_malloc64((sqlite3_uint64)a.n * PER + 3);
    if (!s) { sqlite3_result_error_nomem(c); sqlite3_free(a.v); return; }
    int64_t k = 0;
    s[k++] = '[';
    for (int64_t i = 0; i < a.n; i++) {
        if (i) s[k++] = ',';
        k += format_float(s + k, PER, a.v[i]);
    }
    s[k++] = ']';
    s[k] = 0;
    sqlite3_result_text64(c, s, (sqlite3_uint64)k, sqlite3_free, SQLITE_UTF8);
    sqlite3_result_subtype(c, JSON_SUBTYPE);
    sqlite3_free(a.v);
}

/* vec_f32(v) validates and returns a float32 BLOB; vec_f32(v, dtype) with
 * dtype 'f16' widens a float16 BLOB, with 'f32' is vec_f32(v). */
static void fn_f32(sqlite3_context *c, int argc, sqlite3_value **argv) {
    if (argc == 2) {
        if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { sqlite3_result_null(c); return; }
        const char *dt = sqlite3_value_type(argv[1]) == SQLITE_TEXT ? (const char *)sqlite3_value_text(argv[1]) : NULL;
        if (!dt || (strcmp(dt, "f16") && strcmp(dt, "f32"))) {
            vfail(c, "dtype must be 'f32' or 'f16', got %s%s%s", dt ? "'" : "", dt ? dt : type_name(sqlite3_value_type(argv[1])), dt ? "'" : "");
            return;
        }
        if (!strcmp(dt, "f16")) {
            if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
                vfail(c, "dtype 'f16' describes a BLOB, got %s", type_name(sqlite3_value_type(argv[0])));
                return;
            }
            const unsigned char *p = sqlite3_value_blob(argv[0]);
            int bytes = sqlite3_value_bytes(argv[0]);
            if (bytes == 0 || !p) { vfail(c, "the BLOB is empty; vectors need at least one element"); return; }
            if (bytes % 2) {
                vfail(c, "a BLOB of %d bytes is not a float16 vector (its length must be a multiple of 2)", bytes);
                return;
            }
            int64_t n = bytes / 2;
            float *v = new_floats(c, n);
            if (!v) return;
            for (int64_t i = 0; i < n; i++) {
                uint16_t h;
                memcpy(&h, p + 2 * i, 2);
                v[i] = f16_to_f32(h);
            }
            result_vec(c, v, n);
            return;
        }
    }
    vec a;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    result_vec(c, a.v, a.n);
}

static void fn_at(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    int64_t i;
    int r = vec_arg(c, argv[0], "", &a);
    if (r != ARG_OK) return;
    r = int_arg(c, argv[1], "the index", &i);
    if (r == ARG_OK) {
        if (i < 0 || i >= a.n)
            vfail(c, "index %lld is out of range for a vector of %lld elements (valid: 0..%lld)", (long long)i,
                  (long long)a.n, (long long)a.n - 1);
        else
            sqlite3_result_double(c, a.v[i]);
    }
    sqlite3_free(a.v);
}

/* vec_slice(v, start, end): elements start..end-1, as in sqlite-vec. */
static void fn_slice(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    int64_t s, e;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    if (int_arg(c, argv[1], "the start index", &s) != ARG_OK || int_arg(c, argv[2], "the end index", &e) != ARG_OK) {
        sqlite3_free(a.v);
        return; /* NULL index: NULL result (already the default) */
    }
    if (s < 0) vfail(c, "start index %lld is negative", (long long)s);
    else if (e < 0) vfail(c, "end index %lld is negative", (long long)e);
    else if (e > a.n) vfail(c, "end index %lld is out of range for a vector of %lld elements", (long long)e, (long long)a.n);
    else if (s > e) vfail(c, "start index %lld is greater than end index %lld", (long long)s, (long long)e);
    else if (s == e) vfail(c, "start index equals end index (%lld): the slice would be empty", (long long)s);
    else {
        float *v = new_floats(c, e - s);
        if (v) {
            memcpy(v, a.v + s, (size_t)(e - s) * sizeof *v);
            result_vec(c, v, e - s);
        }
    }
    sqlite3_free(a.v);
}

/* Scalar functions of two vectors share one shape: accumulate in double. */
typedef enum { OP_DOT, OP_COSINE, OP_DIST_COSINE, OP_DIST_L2, OP_PROJECT } pair_op;

static void pair_scalar(sqlite3_context *c, sqlite3_value **argv, pair_op op) {
    vec a, b;
    if (vec_pair(c, argv, &a, &b) != ARG_OK) return;
    double dot = 0, na = 0, nb = 0, d2 = 0;
    for (int64_t i = 0; i < a.n; i++) {
        double x = a.v[i], y = b.v[i];
        dot += x * y;
        na += x * x;
        nb += y * y;
        d2 += (x - y) * (x - y);
    }
    double r = NAN; /* NaN becomes SQL NULL */
    switch (op) {
    case OP_DOT: r = dot; break;
    case OP_DIST_L2: r = sqrt(d2); break;
    case OP_COSINE:
        if (na > 0 && nb > 0) r = dot / (sqrt(na) * sqrt(nb));
        break;
    case OP_DIST_COSINE:
        if (na > 0 && nb > 0) r = 1.0 - dot / (sqrt(na) * sqrt(nb));
        break;
    case OP_PROJECT:
        if (nb > 0) r = dot / sqrt(nb);
        break;
    }
    if (isnan(r)) sqlite3_result_null(c);
    else sqlite3_result_double(c, r);
    sqlite3_free(a.v);
    sqlite3_free(b.v);
}

static void fn_dot(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; pair_scalar(c, argv, OP_DOT); }
static void fn_cosine(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; pair_scalar(c, argv, OP_COSINE); }
static void fn_dist_cos(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; pair_scalar(c, argv, OP_DIST_COSINE); }
static void fn_dist_l2(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; pair_scalar(c, argv, OP_DIST_L2); }
static void fn_project(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; pair_scalar(c, argv, OP_PROJECT); }

/* The first argument as a vector and its L2 norm (double sums); 0, or -1
 * when there is none (vec_arg has set the result). */
static int vec_with_norm(sqlite3_context *c, sqlite3_value **argv, vec *a, double *norm) {
    if (vec_arg(c, argv[0], "", a) != ARG_OK) return -1;
    double s = 0;
    for (int64_t i = 0; i < a->n; i++) s += (double)a->v[i] * a->v[i];
    *norm = sqrt(s);
    return 0;
}

static void fn_norm(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    double r;
    if (vec_with_norm(c, argv, &a, &r)) return;
    if (isnan(r)) sqlite3_result_null(c);
    else sqlite3_result_double(c, r);
    sqlite3_free(a.v);
}

static void elementwise(sqlite3_context *c, sqlite3_value **argv, double sign) {
    vec a, b;
    if (vec_pair(c, argv, &a, &b) != ARG_OK) return;
    for (int64_t i = 0; i < a.n; i++) a.v[i] = to_f32((double)a.v[i] + sign * b.v[i]);
    result_vec(c, a.v, a.n);
    sqlite3_free(b.v);
}

static void fn_add(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; elementwise(c, argv, 1.0); }
static void fn_sub(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; elementwise(c, argv, -1.0); }

static void fn_scale(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    double x;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    if (num_arg(c, argv[1], "the factor", &x) != ARG_OK) { sqlite3_free(a.v); return; }
    for (int64_t i = 0; i < a.n; i++) a.v[i] = to_f32(a.v[i] * x);
    result_vec(c, a.v, a.n);
}

/* A zero vector has no direction: NULL, as 0/0 is NULL in SQLite. */
static void fn_normalize(sqlite3_context *c, int argc, sqlite3_value **argv) {
    (void)argc;
    vec a;
    double norm;
    if (vec_with_norm(c, argv, &a, &norm)) return;
    if (!(norm > 0) || isinf(norm)) { sqlite3_free(a.v); sqlite3_result_null(c); return; }
    for (int64_t i = 0; i < a.n; i++) a.v[i] = to_f32(a.v[i] / norm);
    result_vec(c, a.v, a.n);
}

/* vec_avg: the element-wise mean of the non-NULL vectors (double sums), as an
 * aggregate and as a window function (xInverse subtracts a leaving row). */
typedef struct {
    double *sum;
    int64_t n;     /* vector length, fixed by the first vector */
    int64_t count; /* vectors in the current frame */
} avg_state;

static void avg_add(sqlite3_context *c, sqlite3_value **argv, double sign) {
    avg_state *st = sqlite3_aggregate_context(c, sizeof *st);
    if (!st) { sqlite3_result_error_nomem(c); return; }
    vec a;
    if (vec_arg(c, argv[0], "", &a) != ARG_OK) return;
    if (!st->sum) {
        st->sum = sqlite3_malloc64((sqlite3_uint64)a.n * sizeof *st->sum);
        if (!st->sum) { sqlite3_free(a.v); sqlite3_result_error_nomem(c); return; }
        memset(st->sum, 0, (size_t)a.n * sizeof *st->sum);
        st->n = a.n;
    } else if (a.n != st->n) {
        vfail(c, "the vectors have different lengths (%lld and %lld)", (long long)st->n, (long long)a.n);
        sqlite3_free(a.v);
        return;
    }
    for (int64_t i = 0; i < a.n; i++) st->sum[i] += sign * a.v[i];
    st->count += sign > 0 ? 1 : -1;
    sqlite3_free(a.v);
}

static void avg_step(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; avg_add(c, argv, 1.0); }
static void avg_inverse(sqlite3_context *c, int argc, sqlite3_value **argv) { (void)argc; avg_add(c, argv, -1.0); }

static void avg_value(sqlite3_context *c) {
    avg_state *st = sqlite3_aggregate_context(c, 0);
    if (!st || !st->sum || st->count <= 0) { sqlite3_result_null(c); return; }
    float *v = new_floats(c, st->n);
    if (!v) return;
    for (int64_t i = 0; i < st->n; i++) v[i] = to_f32(st->sum[i] / (double)st->count);
    result_vec(c, v, st->n);
}

static void avg_final(sqlite3_context *c) {
    avg_value(c);
    avg_state *st = sqlite3_aggregate_context(c, 0);
    if (st) {
        sqlite3_free(st->sum);
        st->sum = NULL;
    }
}

int store_register_vec_functions(sqlite3 *db) {
    static const struct {
        const char *name;
        int nargs, vector_result;
        void (*fn)(sqlite3_context *, int, sqlite3_value **);
    } fns[] = {
        {"vec_length", 1, 0, fn_length},
        {"vec_to_json", 1, 1, fn_to_json},
        {"vec_f32", 1, 1, fn_f32},
        {"vec_f32", 2, 1, fn_f32},
        {"vec_at", 2, 0, fn_at},
        {"vec_slice", 3, 1, fn_slice},
        {"vec_dot", 2, 0, fn_dot},
        {"vec_norm", 1, 0, fn_norm},
        {"vec_cosine", 2, 0, fn_cosine},
        {"vec_distance_cosine", 2, 0, fn_dist_cos},
        {"vec_distance_l2", 2, 0, fn_dist_l2},
        {"vec_add", 2, 1, fn_add},
        {"vec_sub", 2, 1, fn_sub},
        {"vec_scale", 2, 1, fn_scale},
        {"vec_normalize", 1, 1, fn_normalize},
        {"vec_project", 2, 0, fn_project},
    };
    const int base = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        int flags = base | (fns[i].vector_result ? SQLITE_RESULT_SUBTYPE : 0);
        int rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs, flags, (void *)fns[i].name, fns[i].fn,
                                            NULL, NULL, NULL);
        if (rc != SQLITE_OK) return rc;
    }
    return sqlite3_create_window_function(db, "vec_avg", 1, base | SQLITE_RESULT_SUBTYPE, (void *)"vec_avg",
                                          avg_step, avg_final, avg_value, avg_inverse, NULL);
}

#ifdef GS_VEC_EXTENSION
/* The loadable extension's entry point; SQLite derives its name from the
 * file name gpnscope_vec.so. */
__attribute__((visibility("default"))) int sqlite3_gpnscopevec_init(sqlite3 *db, char **err,
                                                                     const sqlite3_api_routines *api) {
    SQLITE_EXTENSION_INIT2(api);
    int rc = store_register_vec_functions(db);
    if (rc != SQLITE_OK && err) *err = sqlite3_mprintf("gpnscope_vec: cannot register the vector functions: %s", sqlite3_errstr(rc));
    return rc;
}
#endif
