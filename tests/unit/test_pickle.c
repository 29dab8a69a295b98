/* The restricted pickle VM (io/checkpoint/pickle.h) and numpy arrays
 * from it: hand-built pickles for every opcode group, and the hostile
 * inputs of issue 17 (huge lengths in tiny files, memo bombs, cycles, deep
 * nesting, forged dtypes, code-running globals, every truncation), each of
 * which must fail with one line, quickly. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "io/checkpoint/convert.h"
#include "io/checkpoint/numpy_array.h"
#include "io/checkpoint/pickle.h"
#include "pickle_writer.h"
#include "testlib.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int one_line(const char *s) { return s && *s && !strchr(s, '\n') && !strchr(s, '\r'); }

/* pk_load must fail, with one line containing `want` (NULL: any), in under a second. */
static void expect_refused(const char *what, const void *p, size_t n, const char *want) {
    gs_clear_error();
    double t0 = now();
    pk_doc *d = pk_load(p, n, NULL);
    double dt = now() - t0;
    CHECK(d == NULL, "%s: accepted", what);
    pk_close(d);
    const char *e = gs_error();
    CHECK(one_line(e), "%s: message is not one line: %s", what, e);
    CHECK(!want || strstr(e, want), "%s: message lacks '%s': %s", what, want, e);
    CHECK(dt < 1.0, "%s: took %.2f s", what, dt);
}

static const pk_value *item(const pk_value *v, size_t i) { return v && i < v->u.seq.n ? v->u.seq.v[i] : NULL; }

static int is_int(const pk_value *v, int64_t want) {
    int64_t x;
    return pk_int(v, &x) == 0 && x == want;
}

static int is_bytes(const pk_value *v, const char *s, size_t n) {
    return v && v->kind == PK_BYTES && v->u.s.n == n && !memcmp(v->u.s.p, s, n);
}

static void test_scalars(void) {
    pkw w = {0};
    pkw_proto(&w, 2);
    pkw_op(&w, '(');
    pkw_op(&w, 'J'); pkw_le(&w, (uint32_t)-5, 4);                        /* 0 BININT */
    pkw_op(&w, 'K'); pkw_op(&w, 200);                                    /* 1 BININT1 */
    pkw_op(&w, 'M'); pkw_le(&w, 65535, 2);                               /* 2 BININT2 */
    pkw_op(&w, 0x8a); pkw_op(&w, 1); pkw_op(&w, 0xff);                   /* 3 LONG1 -1 */
    pkw_op(&w, 0x8a); pkw_op(&w, 9); pkw_le(&w, 0, 8); pkw_op(&w, 1);    /* 4 LONG1 2^64: big */
    pkw_op(&w, 0x8b); pkw_le(&w, 2, 4); pkw_le(&w, 0x1234, 2);           /* 5 LONG4 */
    pkw_text(&w, "I42\n");                                               /* 6 INT */
    pkw_text(&w, "I01\n");                                               /* 7 INT True */
    pkw_text(&w, "L-123L\n");                                            /* 8 LONG */
    pkw_op(&w, 'N');                                                     /* 9 */
    pkw_op(&w, 0x88); pkw_op(&w, 0x89);                                  /* 10, 11 */
    pkw_op(&w, 'G'); { unsigned char b[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0}; pkw_raw(&w, b, 8); } /* 12 BINFLOAT 1.5 */
    pkw_text(&w, "F2.25\n");                                             /* 13 FLOAT */
    pkw_str(&w, "h\xc3\xa9");                                            /* 14 SHORT_BINUNICODE */
    pkw_op(&w, 'X'); pkw_le(&w, 2, 4); pkw_text(&w, "ab");               /* 15 BINUNICODE */
    pkw_op(&w, 0x8d); pkw_le(&w, 1, 8); pkw_text(&w, "c");               /* 16 BINUNICODE8 */
    pkw_text(&w, "S'a\\nb\\x41'\n");                                     /* 17 STRING */
    pkw_text(&w, "Vx\\u00e9\n");                                         /* 18 UNICODE */
    pkw_op(&w, 'U'); pkw_op(&w, 1); pkw_text(&w, "d");                   /* 19 SHORT_BINSTRING */
    pkw_op(&w, 'T'); pkw_le(&w, 1, 4); pkw_text(&w, "e");                /* 20 BINSTRING */
    pkw_op(&w, 'C'); pkw_op(&w, 2); pkw_raw(&w, "\x00\x01", 2);            /* 21 SHORT_BINBYTES */
    pkw_op(&w, 'B'); pkw_le(&w, 1, 4); pkw_text(&w, "z");                /* 22 BINBYTES */
    pkw_op(&w, 0x8e); pkw_le(&w, 3, 8); pkw_text(&w, "xyz");             /* 23 BINBYTES8 */
    pkw_op(&w, 0x96); pkw_le(&w, 1, 8); pkw_text(&w, "q");               /* 24 BYTEARRAY8 */
    pkw_global(&w, "_codecs", "encode"); pkw_str(&w, "\xc3\xbf" "A"); pkw_str(&w, "latin1"); pkw_op(&w, 0x86); pkw_op(&w, 'R'); /* 25 */
    pkw_op(&w, 'l');
    pkw_op(&w, '.');
    pk_doc *d = pk_load(w.p, w.n, NULL);
    CHECK(d != NULL, "scalars: %s", gs_error());
    if (d) {
        const pk_value *r = pk_root(d);
        CHECK(r->kind == PK_LIST && r->u.seq.n == 26, "root: %s of %zu", pk_kind_name(r), r->u.seq.n);
        CHECK(is_int(item(r, 0), -5) && is_int(item(r, 1), 200) && is_int(item(r, 2), 65535), "binints");
        CHECK(is_int(item(r, 3), -1) && item(r, 4)->big && is_int(item(r, 5), 0x1234), "longs");
        CHECK(is_int(item(r, 6), 42) && item(r, 7)->kind == PK_BOOL && item(r, 7)->u.i == 1 && is_int(item(r, 8), -123), "text ints");
        CHECK(item(r, 9)->kind == PK_NONE && item(r, 10)->u.i == 1 && item(r, 11)->u.i == 0, "none, bools");
        CHECK(item(r, 12)->kind == PK_FLOAT && item(r, 12)->u.f == 1.5 && item(r, 13)->u.f == 2.25, "floats");
        CHECK(pk_str_eq(item(r, 14), "h\xc3\xa9") && pk_str_eq(item(r, 15), "ab") && pk_str_eq(item(r, 16), "c"), "unicode");
        CHECK(pk_str_eq(item(r, 17), "a\nbA"), "STRING escapes");
        CHECK(pk_str_eq(item(r, 18), "x\xc3\xa9"), "UNICODE raw-unicode-escape");
        CHECK(pk_str_eq(item(r, 19), "d") && pk_str_eq(item(r, 20), "e"), "py2 strings");
        CHECK(is_bytes(item(r, 21), "\x00\x01", 2) && is_bytes(item(r, 22), "z", 1) && is_bytes(item(r, 23), "xyz", 3) &&
                  is_bytes(item(r, 24), "q", 1),
              "bytes");
        CHECK(is_bytes(item(r, 25), "\xff" "A", 2), "_codecs.encode latin1");
    }
    pk_close(d);
    pkw_free(&w);
}

static void test_containers_memo(void) {
    pkw w = {0};
    pkw_proto(&w, 4);
    pkw_op(&w, 0x95); pkw_le(&w, 0, 8); /* FRAME of nothing: legal */
    pkw_op(&w, '(');
    /* list: EMPTY_LIST + APPEND + APPENDS */
    pkw_op(&w, ']'); pkw_int(&w, 1); pkw_op(&w, 'a'); pkw_op(&w, '('); pkw_int(&w, 2); pkw_int(&w, 3); pkw_op(&w, 'e');
    /* LIST, TUPLE, TUPLE1-3, EMPTY_TUPLE */
    pkw_op(&w, '('); pkw_int(&w, 4); pkw_op(&w, 'l');
    pkw_op(&w, '('); pkw_int(&w, 5); pkw_int(&w, 6); pkw_op(&w, 't');
    pkw_int(&w, 7); pkw_op(&w, 0x85);
    pkw_int(&w, 7); pkw_int(&w, 8); pkw_op(&w, 0x86);
    pkw_int(&w, 7); pkw_int(&w, 8); pkw_int(&w, 9); pkw_op(&w, 0x87);
    pkw_op(&w, ')');
    /* dict: EMPTY_DICT + SETITEM + SETITEMS, DICT */
    pkw_op(&w, '}'); pkw_str(&w, "a"); pkw_int(&w, 1); pkw_op(&w, 's');
    pkw_op(&w, '('); pkw_str(&w, "b"); pkw_int(&w, 2); pkw_str(&w, "a"); pkw_int(&w, 3); pkw_op(&w, 'u');
    pkw_op(&w, '('); pkw_str(&w, "k"); pkw_op(&w, 'N'); pkw_op(&w, 'd');
    /* set: EMPTY_SET + ADDITEMS, FROZENSET */
    pkw_op(&w, 0x8f); pkw_op(&w, '('); pkw_int(&w, 1); pkw_int(&w, 2); pkw_op(&w, 0x90);
    pkw_op(&w, '('); pkw_int(&w, 3); pkw_op(&w, 0x91);
    /* stack: POP, POP_MARK, DUP */
    pkw_int(&w, 99); pkw_op(&w, '0');
    pkw_op(&w, '('); pkw_int(&w, 98); pkw_int(&w, 97); pkw_op(&w, '1');
    pkw_str(&w, "dup"); pkw_op(&w, '2');
    /* memo: MEMOIZE, BINPUT/BINGET, LONG_BINPUT/LONG_BINGET, PUT/GET text */
    pkw_str(&w, "m0"); pkw_op(&w, 0x94); pkw_op(&w, '0');
    pkw_str(&w, "m5"); pkw_op(&w, 'q'); pkw_op(&w, 5); pkw_op(&w, '0');
    pkw_str(&w, "m300"); pkw_op(&w, 'r'); pkw_le(&w, 300, 4); pkw_op(&w, '0');
    pkw_str(&w, "m7"); pkw_text(&w, "p7\n"); pkw_op(&w, '0');
    pkw_op(&w, 'h'); pkw_op(&w, 0);
    pkw_op(&w, 'h'); pkw_op(&w, 5);
    pkw_op(&w, 'j'); pkw_le(&w, 300, 4);
    pkw_text(&w, "g7\n");
    /* OrderedDict via REDUCE, with SETITEMS and BUILD of its attributes */
    pkw_global(&w, "collections", "OrderedDict"); pkw_op(&w, ')'); pkw_op(&w, 'R');
    pkw_op(&w, '('); pkw_str(&w, "w"); pkw_int(&w, 1); pkw_op(&w, 'u');
    pkw_op(&w, '}'); pkw_op(&w, 'b');
    /* skipped classes: NEWOBJ, NEWOBJ_EX, REDUCE, BUILD */
    pkw_stack_global(&w, "optax._src.transform", "ScaleByAdamState"); pkw_op(&w, ')'); pkw_op(&w, 0x81);
    pkw_op(&w, '}'); pkw_str(&w, "mu"); pkw_int(&w, 1); pkw_op(&w, 's'); pkw_op(&w, 'b');
    pkw_stack_global(&w, "flax.core.frozen_dict", "FrozenDict"); pkw_op(&w, ')'); pkw_op(&w, '}'); pkw_op(&w, 0x92);
    pkw_global(&w, "jax._src.array", "_reconstruct_array"); pkw_op(&w, ')'); pkw_op(&w, 'R');
    /* persistent ids: BINPERSID and PERSID */
    pkw_str(&w, "pid"); pkw_op(&w, 'Q');
    pkw_text(&w, "Pabc\n");
    /* torch.Size */
    pkw_global(&w, "torch", "Size"); pkw_int(&w, 4); pkw_op(&w, 0x85); pkw_op(&w, 0x85); pkw_op(&w, 'R');
    pkw_op(&w, 't');
    pkw_op(&w, '.');
    pk_doc *d = pk_load(w.p, w.n, NULL);
    CHECK(d != NULL, "containers: %s", gs_error());
    if (d) {
        const pk_value *r = pk_root(d);
        CHECK(r->kind == PK_TUPLE && r->u.seq.n == 24, "root: %s of %zu", pk_kind_name(r), r->u.seq.n);
        const pk_value *l = item(r, 0);
        CHECK(l->kind == PK_LIST && l->u.seq.n == 3 && is_int(item(l, 2), 3), "APPEND/APPENDS");
        CHECK(item(r, 1)->kind == PK_LIST && is_int(item(item(r, 1), 0), 4), "LIST");
        CHECK(item(r, 2)->kind == PK_TUPLE && item(r, 2)->u.seq.n == 2, "TUPLE");
        CHECK(item(r, 3)->u.seq.n == 1 && item(r, 4)->u.seq.n == 2 && item(r, 5)->u.seq.n == 3 && is_int(item(item(r, 5), 2), 9), "TUPLE1-3");
        CHECK(item(r, 6)->kind == PK_TUPLE && item(r, 6)->u.seq.n == 0, "EMPTY_TUPLE");
        CHECK(is_int(pk_dict_get(item(r, 7), "a"), 3) && is_int(pk_dict_get(item(r, 7), "b"), 2), "SETITEM/SETITEMS: the last value wins");
        CHECK(pk_dict_get(item(r, 8), "k") && pk_dict_get(item(r, 8), "k")->kind == PK_NONE, "DICT");
        CHECK(item(r, 9)->kind == PK_SET && item(r, 9)->u.seq.n == 2 && item(r, 10)->kind == PK_SET, "sets");
        CHECK(pk_str_eq(item(r, 11), "dup") && item(r, 11) == item(r, 12), "DUP shares the value");
        CHECK(pk_str_eq(item(r, 13), "m0") && pk_str_eq(item(r, 14), "m5") && pk_str_eq(item(r, 15), "m300") &&
                  pk_str_eq(item(r, 16), "m7"),
              "memo round trips");
        CHECK(is_int(pk_dict_get(item(r, 17), "w"), 1), "OrderedDict is a dict");
        CHECK(item(r, 18)->kind == PK_SKIPPED && item(r, 19)->kind == PK_SKIPPED && item(r, 20)->kind == PK_SKIPPED, "skipped");
        CHECK(item(r, 21)->kind == PK_PERSID && pk_str_eq(item(r, 21)->u.pid, "pid"), "BINPERSID");
        CHECK(item(r, 22)->kind == PK_PERSID && pk_str_eq(item(r, 22)->u.pid, "abc"), "PERSID");
        CHECK(item(r, 23)->kind == PK_TUPLE && is_int(item(item(r, 23), 0), 4), "torch.Size is its tuple");
    }
    pk_close(d);
    pkw_free(&w);
}

/* How protocols 0-3 spell b'', bytearrays and sets; frozensets as keys. */
static void test_builtin_spellings(void) {
    pkw w = {0};
    pkw_proto(&w, 2);
    pkw_op(&w, '(');
    pkw_global(&w, "__builtin__", "bytes"); pkw_op(&w, ')'); pkw_op(&w, 'R');
    pkw_global(&w, "builtins", "bytearray"); pkw_bytes(&w, "ab", 2); pkw_op(&w, 0x85); pkw_op(&w, 'R');
    pkw_global(&w, "__builtin__", "set"); pkw_op(&w, ']'); pkw_op(&w, '('); pkw_int(&w, 1); pkw_int(&w, 2); pkw_op(&w, 'e');
    pkw_op(&w, 0x85); pkw_op(&w, 'R');
    pkw_op(&w, '}'); pkw_op(&w, '('); pkw_int(&w, 3); pkw_op(&w, 0x91); pkw_str(&w, "v"); pkw_op(&w, 's');
    pkw_op(&w, 'l');
    pkw_op(&w, '.');
    pk_doc *d = pk_load(w.p, w.n, NULL);
    CHECK(d != NULL, "builtin spellings: %s", gs_error());
    if (d) {
        const pk_value *r = pk_root(d);
        CHECK(is_bytes(item(r, 0), "", 0) && is_bytes(item(r, 1), "ab", 2), "bytes() and bytearray(b)");
        CHECK(item(r, 2)->kind == PK_SET && item(r, 2)->u.seq.n == 2 && is_int(item(item(r, 2), 1), 2), "set([1, 2])");
        CHECK(item(r, 3)->kind == PK_DICT && item(item(r, 3), 0)->frozen, "a frozenset as a dict key");
    }
    pk_close(d);
    pkw_free(&w);
    /* protocols 0-1: an optimizer object via copyreg._reconstructor is skipped; any other class is refused */
    pkw_op(&w, '(');
    pkw_global(&w, "copy_reg", "_reconstructor");
    pkw_op(&w, '('); pkw_global(&w, "optax._src.base", "EmptyState"); pkw_global(&w, "__builtin__", "object"); pkw_op(&w, 'N');
    pkw_op(&w, 't'); pkw_op(&w, 'R');
    pkw_op(&w, '}'); pkw_op(&w, 'b');
    pkw_op(&w, 'l'); pkw_op(&w, '.');
    d = pk_load(w.p, w.n, NULL);
    CHECK(d && item(pk_root(d), 0)->kind == PK_SKIPPED, "copy_reg._reconstructor of an optax class: %s", gs_error());
    pk_close(d);
    pkw_free(&w);
    pkw_global(&w, "copy_reg", "_reconstructor");
    pkw_op(&w, '('); pkw_global(&w, "numpy", "ndarray"); pkw_global(&w, "__builtin__", "object"); pkw_op(&w, 'N');
    pkw_op(&w, 't'); pkw_op(&w, 'R'); pkw_op(&w, '.');
    expect_refused("copy_reg._reconstructor of numpy.ndarray", w.p, w.n, "only for optax/flax/jax classes");
    pkw_free(&w);
    pkw_global(&w, "__builtin__", "dict"); pkw_op(&w, ')'); pkw_op(&w, 'R'); pkw_op(&w, '.');
    expect_refused("calling __builtin__.dict", w.p, w.n, "calling __builtin__.dict");
    pkw_free(&w);
    /* a plain set is not a key */
    static const unsigned char setkey[] = {0x80, 4, '}', 0x8f, 'N', 's', '.'};
    expect_refused("a set as a dict key", setkey, sizeof setkey, "unhashable");
}

static void test_numpy(void) {
    float f[6] = {0, 1, 2, 3, 4, 5};
    /* Fortran order of [[0,1,2],[3,4,5]] is 0,3,1,4,2,5 */
    float fo[6] = {0, 3, 1, 4, 2, 5};
    unsigned char be[16] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0}; /* >f8 1, -2 */
    int64_t s23[2] = {2, 3}, s2[1] = {2};
    pkw w = {0};
    pkw_proto(&w, 3);
    pkw_op(&w, '(');
    pkw_np_array(&w, "numpy.core", "f4", "<", 2, s23, 0, f, sizeof f);
    pkw_np_array(&w, "numpy._core", "f4", "<", 2, s23, 1, fo, sizeof fo);
    pkw_np_array(&w, "numpy.core", "f8", ">", 1, s2, 0, be, sizeof be);
    /* protocol 5's _frombuffer(buffer, dtype, shape, order) */
    pkw_global(&w, "numpy.core.numeric", "_frombuffer");
    pkw_op(&w, '(');
    pkw_op(&w, 0x96); pkw_le(&w, sizeof f, 8); pkw_raw(&w, f, sizeof f);
    pkw_np_dtype(&w, "f4", "<", 0);
    pkw_tuple_ints(&w, 2, s23);
    pkw_str(&w, "C");
    pkw_op(&w, 't');
    pkw_op(&w, 'R');
    /* a scalar: numpy.core.multiarray.scalar(dtype, bytes) */
    pkw_global(&w, "numpy.core.multiarray", "scalar");
    pkw_np_dtype(&w, "i4", "<", 0);
    pkw_bytes(&w, "\x07\x00\x00\x00", 4);
    pkw_op(&w, 0x86);
    pkw_op(&w, 'R');
    pkw_op(&w, 'l');
    pkw_op(&w, '.');
    pk_doc *d = pk_load(w.p, w.n, NULL);
    CHECK(d != NULL, "numpy: %s", gs_error());
    if (d) {
        const pk_value *r = pk_root(d);
        ck_array a;
        for (int i = 0; i < 2; i++) {
            CHECK(pk_numpy_array(item(r, (size_t)i), &a) == 0, "array %d: %s", i, gs_error());
            CHECK(a.dtype == ST_F32 && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.nbytes == 24 &&
                      !memcmp(a.data, f, sizeof f),
                  "array %d (%s order) is [[0,1,2],[3,4,5]] in C order", i, i ? "Fortran" : "C");
            ck_array_free(&a);
        }
        CHECK(pk_numpy_array(item(r, 2), &a) == 0 && a.dtype == ST_F64, "big-endian f8: %s", gs_error());
        double dv[2];
        memcpy(dv, a.data, 16);
        CHECK(dv[0] == 1 && dv[1] == -2, "big-endian f8 swapped: %g %g", dv[0], dv[1]);
        ck_array_free(&a);
        CHECK(pk_numpy_array(item(r, 3), &a) == 0 && a.numel == 6 && !memcmp(a.data, f, sizeof f), "_frombuffer: %s", gs_error());
        ck_array_free(&a);
        CHECK(pk_is_numpy_scalar(item(r, 4)) && pk_numpy_array(item(r, 4), &a) == 0 && a.ndim == 0 && a.dtype == ST_I32 &&
                  !memcmp(a.data, "\x07\0\0\0", 4),
              "scalar");
        ck_array_free(&a);
    }
    pk_close(d);
    pkw_free(&w);

    /* data of the wrong length is refused when the array is interpreted */
    pkw_proto(&w, 3);
    pkw_np_array(&w, "numpy.core", "f4", "<", 2, s23, 0, f, sizeof f - 4);
    pkw_op(&w, '.');
    d = pk_load(w.p, w.n, NULL);
    ck_array a;
    CHECK(d && pk_numpy_array(pk_root(d), &a) != 0 && strstr(gs_error(), "20 bytes"), "short array data: %s", gs_error());
    pk_close(d);
    pkw_free(&w);
}

/* ---- hostile input ---- */

static void test_tiny_lies(void) {
    /* LONG_BINPUT 2^32-1 */
    static const unsigned char put[] = {0x80, 4, 0x95, 3, 0, 0, 0, 0, 0, 0, 0, 'N', 'r', 0xff, 0xff, 0xff, 0xff, '.'};
    expect_refused("LONG_BINPUT 2^32-1", put, sizeof put, "memo index 4294967295");
    /* LONG_BINGET of an index never stored */
    static const unsigned char get[] = {0x80, 4, 'j', 0xff, 0xff, 0xff, 0xff, '.'};
    expect_refused("LONG_BINGET 2^32-1", get, sizeof get, "never stored");
    /* BINBYTES8 of 2^62 bytes in a 14-byte file */
    static const unsigned char bb8[14] = {0x80, 4, 0x8e, 0, 0, 0, 0, 0, 0, 0, 0x40, 'N', '.', '.'};
    expect_refused("BINBYTES8 2^62", bb8, sizeof bb8, "4611686018427387904 bytes");
    /* FRAME of 2^60 bytes */
    static const unsigned char fr[14] = {0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0x10, 'N', '.', '.'};
    expect_refused("FRAME 2^60", fr, sizeof fr, "frame");
    /* BINUNICODE8, BYTEARRAY8, LONG4, BINSTRING lengths beyond the data */
    static const unsigned char bu8[] = {0x80, 4, 0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '.'};
    expect_refused("BINUNICODE8 2^64-1", bu8, sizeof bu8, "remain");
    static const unsigned char l4[] = {0x80, 2, 0x8b, 0xff, 0xff, 0xff, 0x7f, '.'};
    expect_refused("LONG4 2^31-1", l4, sizeof l4, "remain");
    static const unsigned char bs[] = {'T', 0xff, 0xff, 0xff, 0xff, '.'};
    expect_refused("BINSTRING negative", bs, sizeof bs, "negative");
    static const unsigned char proto9[] = {0x80, 9, 'N', '.'};
    expect_refused("PROTO 9", proto9, sizeof proto9, "protocol 9");
    static const unsigned char trailing[] = {0x80, 2, 'N', '.', 'x'};
    expect_refused("bytes after STOP", trailing, sizeof trailing, "after STOP");
    static const unsigned char two[] = {0x80, 2, 'N', 'N', '.'};
    expect_refused("two values at STOP", two, sizeof two, "STOP with 2 values");
    static const unsigned char unknown[] = {0x80, 2, 0xff, '.'};
    expect_refused("unknown opcode", unknown, sizeof unknown, "unknown opcode 0xff");
    static const unsigned char inst[] = {'(', 'i', 'o', 's', '\n', 's', 'y', 's', 't', 'e', 'm', '\n', '.'};
    expect_refused("INST", inst, sizeof inst, "instantiation");
    static const unsigned char ext[] = {0x80, 2, 0x82, 1, '.'};
    expect_refused("EXT1", ext, sizeof ext, "extension");
    expect_refused("empty input", "", 0, "without STOP");
}

/* dict_i = {"a": dict_{i-1}, "b": dict_{i-1}}: 2^levels leaves from a few bytes per level */
static void test_memo_bomb(void) {
    pkw w = {0};
    pkw_proto(&w, 4);
    pkw_op(&w, '}');
    pkw_op(&w, 'r'); pkw_le(&w, 0, 4);
    for (uint32_t i = 1; i <= 40; i++) {
        pkw_op(&w, '}');
        pkw_op(&w, '(');
        pkw_str(&w, "a"); pkw_binget(&w, i - 1);
        pkw_str(&w, "b"); pkw_binget(&w, i - 1);
        pkw_op(&w, 'u');
        pkw_op(&w, 'r'); pkw_le(&w, i, 4);
        pkw_op(&w, '0');
    }
    pkw_binget(&w, 40);
    pkw_op(&w, '.');
    /* pad it with a large honest list in front, as a 125 KB pickle would be */
    expect_refused("memo-shared dict bomb", w.p, w.n, "expands to more than 16777216 values");
    pkw_free(&w);

    /* the same with a list shared 2^30 ways, of bytes: the byte bound */
    pk_limits lim;
    pk_default_limits(&lim);
    lim.max_bytes = 1 << 20;
    pkw_proto(&w, 4);
    char big[4096];
    memset(big, 'x', sizeof big);
    pkw_bytes(&w, big, sizeof big);
    pkw_op(&w, 'r'); pkw_le(&w, 0, 4);
    for (uint32_t i = 1; i <= 30; i++) {
        pkw_binget(&w, i - 1);
        pkw_binget(&w, i - 1);
        pkw_op(&w, 0x86);
        pkw_op(&w, 'r'); pkw_le(&w, i, 4);
        pkw_op(&w, '0');
    }
    pkw_binget(&w, 30);
    pkw_op(&w, '.');
    gs_clear_error();
    pk_doc *d = pk_load(w.p, w.n, &lim);
    CHECK(!d && strstr(gs_error(), "bytes of strings"), "shared bytes bomb: %s", gs_error());
    pk_close(d);
    pkw_free(&w);
}

static void test_cycles_depth(void) {
    static const unsigned char self[] = {0x80, 2, ']', 'q', 0, 'h', 0, 'a', '.'};
    expect_refused("self-referencing list", self, sizeof self, "contain itself");
    /* A = []; B = [A]; A.append(B) */
    static const unsigned char two[] = {0x80, 2, ']', 'q', 0, ']', 'h', 0, 'a', 'q', 1, '0', 'h', 0, 'h', 1, 'a', '.'};
    expect_refused("two-list cycle", two, sizeof two, "already inside another value");
    /* a dict holding itself through SETITEMS */
    static const unsigned char dself[] = {0x80, 2, '}', 'q', 0, '(', 'K', 1, 'h', 0, 'u', '.'};
    expect_refused("self-referencing dict", dself, sizeof dself, "contain itself");
    /* BUILD on an array already placed in a list */
    pkw w = {0};
    int64_t s1[1] = {1};
    pkw_proto(&w, 3);
    pkw_op(&w, ']');
    pkw_global(&w, "numpy.core.multiarray", "_reconstruct");
    pkw_global(&w, "numpy", "ndarray");
    pkw_int(&w, 0); pkw_op(&w, 0x85); pkw_bytes(&w, "b", 1); pkw_op(&w, 0x87); pkw_op(&w, 'R');
    pkw_op(&w, 'q'); pkw_op(&w, 0);
    pkw_op(&w, 'a');
    pkw_op(&w, 'h'); pkw_op(&w, 0);
    pkw_op(&w, '('); pkw_int(&w, 1); pkw_tuple_ints(&w, 1, s1); pkw_np_dtype(&w, "f4", "<", 0); pkw_op(&w, 0x89);
    pkw_bytes(&w, "\0\0\0\0", 4); pkw_op(&w, 't');
    pkw_op(&w, 'b');
    pkw_op(&w, '0');
    pkw_op(&w, '.');
    expect_refused("BUILD after sharing", w.p, w.n, "already inside another value");
    pkw_free(&w);

    /* 100000 nested lists: ]]]]...aaaa */
    size_t n = 100000;
    unsigned char *p = malloc(2 * n + 3);
    p[0] = 0x80; p[1] = 2;
    memset(p + 2, ']', n);
    memset(p + 2 + n, 'a', n - 1);
    p[2 * n + 1] = '.';
    expect_refused("100000-deep lists", p, 2 * n + 2, "nested deeper");
    /* 100000 nested tuples: ((((...tttt */
    memset(p + 2, '(', n);
    memset(p + 2 + n, 't', n);
    p[2 + 2 * n] = '.';
    expect_refused("100000-deep tuples", p, 2 * n + 3, "nested deeper");
    /* 100000 open marks */
    memset(p + 2, '(', n);
    p[2 + n] = '.';
    expect_refused("100000 open marks", p, n + 3, "STOP inside an open MARK");
    free(p);
}

static void test_globals(void) {
    pkw w = {0};
    pkw_proto(&w, 2);
    pkw_global(&w, "os", "system"); pkw_str(&w, "touch /tmp/PWNED"); pkw_op(&w, 0x85); pkw_op(&w, 'R');
    pkw_op(&w, '.');
    expect_refused("os.system", w.p, w.n, "os.system");
    pkw_free(&w);
    pkw_proto(&w, 4);
    pkw_stack_global(&w, "builtins", "eval"); pkw_str(&w, "1"); pkw_op(&w, 0x85); pkw_op(&w, 'R');
    pkw_op(&w, '.');
    expect_refused("builtins.eval", w.p, w.n, "builtins.eval");
    pkw_free(&w);
    pkw_proto(&w, 4);
    pkw_stack_global(&w, "numpy", "load\nos.system"); pkw_op(&w, '.');
    expect_refused("a name with a newline", w.p, w.n, "numpy.load?os.system");
    pkw_free(&w);
    /* numpy.dtype with object / structured / forged state */
    pkw_proto(&w, 2); pkw_np_dtype(&w, "O8", "|", 63); pkw_op(&w, '.');
    expect_refused("object dtype", w.p, w.n, "O8");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_np_dtype(&w, "V8", "|", 0); pkw_op(&w, '.');
    expect_refused("void dtype", w.p, w.n, "not a plain numeric dtype");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_np_dtype(&w, "f4", "<", 63); pkw_op(&w, '.');
    expect_refused("f4 with forged flags", w.p, w.n, "flags");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_np_dtype(&w, "f4", "=", 0); pkw_op(&w, '.');
    expect_refused("f4 with byte order '='", w.p, w.n, "byte order");
    pkw_free(&w);
    /* fields: (3, '|', None, ('a',), {...}, 4, 1, 16) */
    pkw_proto(&w, 2);
    pkw_global(&w, "numpy", "dtype"); pkw_str(&w, "f4"); pkw_op(&w, 0x89); pkw_op(&w, 0x88); pkw_op(&w, 0x87); pkw_op(&w, 'R');
    pkw_op(&w, '('); pkw_int(&w, 3); pkw_str(&w, "<"); pkw_op(&w, 'N'); pkw_str(&w, "a"); pkw_op(&w, 0x85); pkw_op(&w, '}');
    pkw_int(&w, -1); pkw_int(&w, -1); pkw_int(&w, 0); pkw_op(&w, 't'); pkw_op(&w, 'b'); pkw_op(&w, '.');
    expect_refused("dtype with fields", w.p, w.n, "fields");
    pkw_free(&w);
    /* calling numpy.ndarray directly, NEWOBJ of a recognised function, REDUCE of a dict */
    pkw_proto(&w, 2); pkw_global(&w, "numpy", "ndarray"); pkw_op(&w, ')'); pkw_op(&w, 'R'); pkw_op(&w, '.');
    expect_refused("numpy.ndarray()", w.p, w.n, "numpy.ndarray");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_global(&w, "numpy", "dtype"); pkw_op(&w, ')'); pkw_op(&w, 0x81); pkw_op(&w, '.');
    expect_refused("NEWOBJ numpy.dtype", w.p, w.n, "NEWOBJ");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_op(&w, '}'); pkw_op(&w, ')'); pkw_op(&w, 'R'); pkw_op(&w, '.');
    expect_refused("REDUCE of a dict", w.p, w.n, "calls a dict");
    pkw_free(&w);
    pkw_proto(&w, 2); pkw_global(&w, "_codecs", "encode"); pkw_str(&w, "x"); pkw_str(&w, "rot13"); pkw_op(&w, 0x86); pkw_op(&w, 'R'); pkw_op(&w, '.');
    expect_refused("_codecs.encode rot13", w.p, w.n, "latin1");
    pkw_free(&w);
}

/* Every prefix of a valid pickle fails cleanly; so does every one-byte change
 * that the VM cannot accept (and none crashes: the ASan suite runs this). */
static void test_truncations(void) {
    float f[6] = {0, 1, 2, 3, 4, 5};
    int64_t s23[2] = {2, 3}, st[2] = {3, 1};
    pkw w = {0};
    pkw_proto(&w, 2);
    pkw_op(&w, '}');
    pkw_op(&w, '(');
    pkw_str(&w, "params");
    pkw_op(&w, '}'); pkw_op(&w, '('); pkw_str(&w, "embedding");
    pkw_np_array(&w, "numpy.core", "f4", "<", 2, s23, 0, f, sizeof f);
    pkw_op(&w, 'q'); pkw_op(&w, 0);
    pkw_str(&w, "copy"); pkw_op(&w, 'h'); pkw_op(&w, 0);
    pkw_op(&w, 'u');
    pkw_str(&w, "t");
    pkw_torch_tensor(&w, "FloatStorage", "0", 6, 0, 2, s23, st);
    pkw_str(&w, "opt_state");
    pkw_global(&w, "optax._src.base", "EmptyState"); pkw_op(&w, ')'); pkw_op(&w, 0x81);
    pkw_str(&w, "step"); pkw_op(&w, 0x8a); pkw_op(&w, 2); pkw_le(&w, 1000, 2);
    pkw_str(&w, "f"); pkw_text(&w, "F0.5\n");
    pkw_op(&w, 'u');
    pkw_op(&w, '.');
    pk_doc *d = pk_load(w.p, w.n, NULL);
    CHECK(d != NULL, "the full pickle loads: %s", gs_error());
    pk_close(d);
    int bad = 0, slow = 0;
    for (size_t n = 0; n < w.n; n++) {
        gs_clear_error();
        d = pk_load(w.p, n, NULL);
        if (d || !one_line(gs_error())) bad++;
        pk_close(d);
    }
    CHECK(bad == 0, "%d of %zu truncations were accepted or gave no one-line error", bad, w.n);
    /* flip each byte: accepted or refused, never a crash */
    unsigned char *copy = malloc(w.n);
    double t0 = now();
    for (size_t i = 0; i < w.n; i++)
        for (int x = 1; x < 256; x <<= 1) {
            memcpy(copy, w.p, w.n);
            copy[i] ^= (unsigned char)x;
            gs_clear_error();
            d = pk_load(copy, w.n, NULL);
            if (!d && !one_line(gs_error())) bad++;
            pk_close(d);
        }
    if (now() - t0 > 10) slow = 1;
    CHECK(bad == 0 && !slow, "bit flips: %d bad messages, slow %d", bad, slow);
    free(copy);
    pkw_free(&w);
}

/* The companion's layout (ck_companion_read): a tied array under two names
 * is read once; a shared dict, or an array shared under so many names that
 * the output would dwarf the pickle, is refused. */
static void companion_params(pkw *w, int tied_names, int share_dict) {
    float f[256] = {0};
    int64_t s43[2] = {4, 3}, s5[1] = {5}, s256[1] = {256};
    pkw_proto(w, 2);
    pkw_op(w, '}');
    pkw_str(w, "step"); pkw_int(w, 9);
    pkw_op(w, 's');
    pkw_str(w, "params");
    pkw_op(w, '}');
    pkw_str(w, "embedding"); pkw_np_array(w, "numpy.core", "f4", "<", 2, s43, 0, f, 48); pkw_op(w, 's');
    pkw_str(w, "decode_norm_w"); pkw_np_array(w, "numpy.core", "f4", "<", 1, s5, 0, f, 20); pkw_op(w, 's');
    pkw_str(w, "ffn_w2_k"); pkw_np_array(w, "numpy.core", "f4", "<", 1, s256, 0, f, sizeof f);
    pkw_op(w, 'r'); pkw_le(w, 0, 4);
    pkw_op(w, 's');
    for (int i = 0; i < tied_names; i++) {
        char name[32];
        snprintf(name, sizeof name, "tied%d", i);
        pkw_str(w, name);
        pkw_binget(w, 0);
        pkw_op(w, 's');
    }
    if (share_dict) {
        pkw_str(w, "a"); pkw_op(w, '}'); pkw_op(w, 'r'); pkw_le(w, 1, 4); pkw_op(w, 's');
        pkw_str(w, "b"); pkw_binget(w, 1); pkw_op(w, 's');
    }
    pkw_op(w, 's');
    pkw_op(w, '.');
}

static void test_companion(void) {
    pkw w = {0};
    companion_params(&w, 1, 0);
    pk_doc *d = pk_load(w.p, w.n, NULL);
    ck_companion c;
    CHECK(d && ck_companion_read(pk_root(d), "x.pkl", w.n, &c) == 0, "companion: %s", gs_error());
    if (d) {
        CHECK(c.n == 4 && !strcmp(c.names[3], "tied0") && c.arrays[3].data == c.arrays[2].data && !strcmp(c.arch, "gpn"),
              "a tied array under two names, read once (%d names)", c.n);
        int found = 0;
        for (int i = 0; i < c.n_meta; i++) found += !strcmp(c.meta_keys[i], "source_step") && !strcmp(c.meta_values[i], "9");
        CHECK(found == 1, "source_step in the metadata");
        ck_companion_free(&c);
    }
    pk_close(d);
    pkw_free(&w);
    companion_params(&w, 0, 1);
    d = pk_load(w.p, w.n, NULL);
    CHECK(d && ck_companion_read(pk_root(d), "x.pkl", w.n, &c) != 0 && strstr(gs_error(), "dict met before"), "shared dict: %s", gs_error());
    if (d) ck_companion_free(&c);
    pk_close(d);
    pkw_free(&w);
    companion_params(&w, 5000, 0); /* 5000 names x 1 KB from a ~60 KB pickle */
    double t0 = now();
    d = pk_load(w.p, w.n, NULL);
    CHECK(d && ck_companion_read(pk_root(d), "x.pkl", w.n, &c) != 0 && strstr(gs_error(), "add up to more than"),
          "an array under 5000 names: %s", gs_error());
    CHECK(now() - t0 < 1, "refused quickly");
    if (d) ck_companion_free(&c);
    pk_close(d);
    pkw_free(&w);
}

int main(void) {
    test_scalars();
    test_containers_memo();
    test_builtin_spellings();
    test_numpy();
    test_tiny_lies();
    test_memo_bomb();
    test_cycles_depth();
    test_globals();
    test_truncations();
    test_companion();
    return test_summary();
}
