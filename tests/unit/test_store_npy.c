/* The .npy reader on files written byte by byte: every supported dtype and
 * version, and hostile files (each refused with a one-line error that says
 * what is wrong). tests/cli/import*.sh check files written by numpy itself. */
#include "base/error.h"
#include "base/half.h"
#include "store/npy.h"
#include "testlib.h"

static char dir[4096];

/* Write magic + version + header (padded like numpy) + data. */
static const char *write_npy(const char *name, int major, const char *header, const void *data, size_t bytes) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    size_t prefix = major == 1 ? 10 : 12, hlen = strlen(header) + 1;
    while ((prefix + hlen) % 64) hlen++;
    fwrite("\x93NUMPY", 1, 6, f);
    fputc(major, f);
    fputc(0, f);
    unsigned char len[4] = {(unsigned char)hlen, (unsigned char)(hlen >> 8), (unsigned char)(hlen >> 16), 0};
    fwrite(len, 1, major == 1 ? 2 : 4, f);
    fputs(header, f);
    for (size_t i = strlen(header) + 1; i < hlen; i++) fputc(' ', f);
    fputc('\n', f);
    if (bytes) fwrite(data, 1, bytes, f);
    fclose(f);
    return path;
}

static const char *write_raw(const char *name, const void *data, size_t bytes) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, bytes, f);
    fclose(f);
    return path;
}

static void test_good(void) {
    float f4[6] = {1, 2, 3, 4, 5, -6.5f};
    const char *p = write_npy("f4.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4);
    npy_file *f = npy_open(p);
    CHECK(f && f->ndim == 2 && f->shape[0] == 2 && f->shape[1] == 3 && f->count == 6 && f->dtype == NPY_F4, "f4 header: %s", gs_error());
    float out[6];
    CHECK(f && npy_read_f32(f, out, 4) == 0 && npy_read_f32(f, out + 4, 2) == 0 && out[5] == -6.5f && out[0] == 1, "f4 data in two reads");
    CHECK(f && npy_read_f32(f, out, 1) < 0 && strstr(gs_error(), "past the end"), "no reading past the end");
    int64_t ids[6];
    char shape[64];
    if (f) npy_shape_str(f, shape, sizeof shape);
    CHECK(f && !strcmp(shape, "(2, 3)"), "shape string %s", shape);
    npy_close(f);
    f = npy_open(p);
    CHECK(f && npy_read_i64(f, ids, 6) < 0 && strstr(gs_error(), "floating-point values, but integers are needed"), "floats are not ids");
    npy_close(f);

    uint16_t f2[3] = {f32_to_f16(1.5f), f32_to_f16(-2), f32_to_f16(65504)};
    f = npy_open(write_npy("f2.npy", 2, "{\"descr\":\"<f2\",\"fortran_order\":False,\"shape\":(3,)}", f2, sizeof f2));
    CHECK(f && f->ndim == 1 && npy_read_f32(f, out, 3) == 0 && out[0] == 1.5f && out[1] == -2 && out[2] == 65504, "f2, version 2");
    if (f) npy_shape_str(f, shape, sizeof shape);
    CHECK(f && !strcmp(shape, "(3,)"), "1-d shape string %s", shape);
    npy_close(f);

    double f8[2] = {0.1, 1e300};
    f = npy_open(write_npy("f8.npy", 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f8, sizeof f8));
    CHECK(f && npy_read_f32(f, out, 2) == 0 && out[0] == 0.1f && isinf(out[1]), "f8 narrowed (overflow to inf), version 3");
    npy_close(f);

    int32_t i4[3] = {-1, 7, 2147483647};
    f = npy_open(write_npy("i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3), }", i4, sizeof i4));
    CHECK(f && npy_read_i64(f, ids, 3) == 0 && ids[0] == -1 && ids[2] == 2147483647, "i4");
    npy_close(f);
    f = npy_open(write_npy("i4f.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", i4, sizeof i4));
    CHECK(f && npy_read_f32(f, out, 3) < 0 && strstr(gs_error(), "holds integers"), "ids are not floats");
    npy_close(f);
    uint32_t u4[2] = {4000000000u, 1};
    f = npy_open(write_npy("u4.npy", 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", u4, sizeof u4));
    CHECK(f && npy_read_i64(f, ids, 2) == 0 && ids[0] == 4000000000LL, "u4");
    npy_close(f);
    int64_t i8[2] = {-5, 1LL << 40};
    f = npy_open(write_npy("i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i8, sizeof i8));
    CHECK(f && npy_read_i64(f, ids, 2) == 0 && ids[0] == -5 && ids[1] == 1LL << 40, "i8");
    npy_close(f);
    uint16_t u2[2] = {65535, 3};
    f = npy_open(write_npy("u2.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", u2, sizeof u2));
    CHECK(f && npy_read_i64(f, ids, 2) == 0 && ids[0] == 65535, "u2");
    npy_close(f);
    f = npy_open(write_npy("empty.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", NULL, 0));
    CHECK(f && f->count == 0, "an empty array is fine to open");
    npy_close(f);
    f = npy_open(write_npy("scalar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f4, 4));
    CHECK(f && f->ndim == 0 && f->count == 1, "a scalar");
    npy_close(f);
    f = npy_open(write_npy("py2.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", f4, sizeof f4));
    CHECK(f && f->count == 6, "Python 2 long suffixes");
    npy_close(f);
    f = npy_open(write_npy("order.npy", 1, "{'shape': (6,), 'fortran_order': False, 'descr': '<f4'}", f4, sizeof f4));
    CHECK(f && f->count == 6, "keys in any order");
    npy_close(f);
}

#define REFUSED(path, part)                                                                                    \
    do {                                                                                                       \
        npy_file *f_ = npy_open(path);                                                                         \
        CHECK(!f_ && strstr(gs_error(), part) && !strchr(gs_error(), '\n'), "want '%s', got '%s'", part,      \
              f_ ? "(opened)" : gs_error());                                                                   \
        npy_close(f_);                                                                                         \
    } while (0)

static void test_hostile(void) {
    float f4[6] = {0};
    REFUSED(write_npy("trunc.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4, 20),
            "truncated: the file has 20 bytes of data, but shape (2, 3) of <f4 needs 24");
    REFUSED(write_npy("long.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f4, 24),
            "size mismatch: the file has 24 bytes of data, but shape (2, 2) of <f4 needs 16");
    REFUSED(write_npy("fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f4, 24), "Fortran order");
    REFUSED(write_npy("big.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", f4, 24), "big-endian dtype '>f4'");
    REFUSED(write_npy("c8.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", f4, 24), "unsupported dtype '<c8'");
    REFUSED(write_npy("obj.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", f4, 24), "unsupported dtype '|O'");
    REFUSED(write_npy("struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", f4, 24), "structured");
    REFUSED(write_npy("noshape.npy", 1, "{'descr': '<f4', 'fortran_order': False, }", f4, 24), "needs 'descr', 'fortran_order' and 'shape'");
    REFUSED(write_npy("badshape.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", f4, 24), "'shape' must be a tuple");
    REFUSED(write_npy("shape9.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", f4, 4), "more than 8");
    REFUSED(write_npy("overflow.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", f4, 4), "overflows");
    REFUSED(write_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f4, 4), "'shape' must be");
    REFUSED(write_npy("extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", f4, 24), "unexpected key 'x'");
    REFUSED(write_npy("bool.npy", 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }", f4, 24), "True or False");
    REFUSED(write_npy("nobrace.npy", 1, "'descr': '<f4'", f4, 24), "expected '{'");
    REFUSED(write_npy("trail.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), } x", f4, 24), "after the closing");
    REFUSED(write_npy("v9.npy", 9, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4, 24), "version 9.0");
    REFUSED(write_raw("magic.npy", "PK\x03\x04 not numpy at all", 20), "not a .npy file");
    REFUSED(write_raw("tiny.npy", "\x93NUM", 4), "not a .npy file");
    REFUSED(write_raw("hdr.npy", "\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated .npy header");
    REFUSED(write_raw("hdr0.npy", "\x93NUMPY\x01\x00\x00\x00", 10), "header length 0");
    REFUSED(write_raw("hdrbig.npy", "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12), "implausible .npy header length");
    REFUSED("/nonexistent/x.npy", "cannot open");
    /* random bytes after a valid prefix: refused or opened, never a crash */
    unsigned seed = 7;
    for (int i = 0; i < 300; i++) {
        char hdr[96] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        size_t n = strlen(hdr);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            hdr[(seed >> 16) % n] = (char)(" ()',:{}0123456789Lx"[(seed >> 8) % 20]);
        }
        npy_close(npy_open(write_npy("fuzz.npy", 1, hdr, f4, 24)));
    }
    CHECK(1, "fuzzed headers did not crash");
}

int main(void) {
    snprintf(dir, sizeof dir, "%s", scratch_dir("test_store_npy"));
    test_good();
    test_hostile();
    return test_summary();
}
