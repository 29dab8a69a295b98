/* A minimal test harness: CHECK records a failure and continues, the test's
 * main returns test_summary(), which prints "N passed, M failed". Exit code 77
 * (test_skip) tells ctest the test was skipped, with the reason printed. */
#ifndef GS_TESTLIB_H
#define GS_TESTLIB_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_passed, tl_failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            tl_passed++;                                                   \
        } else {                                                           \
            tl_failed++;                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline int test_summary(void) {
    printf("%d passed, %d failed\n", tl_passed, tl_failed);
    return tl_failed ? 1 : 0;
}

static inline int test_skip(const char *why) {
    printf("SKIPPED: %s\n", why);
    return 77;
}

/* The Python the numpy oracles run ($GPNSCOPE_PYTHON, else /usr/bin/python3), or NULL when it cannot
 * import numpy: the caller returns test_skip(TEST_NO_NUMPY). */
#define TEST_NO_NUMPY "no python3 with numpy (set GPNSCOPE_PYTHON; Debian python3-numpy)"
static inline const char *test_numpy_python(void) {
    const char *py = getenv("GPNSCOPE_PYTHON");
    if (!py || !*py) py = "/usr/bin/python3";
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import numpy' >/dev/null 2>&1", py);
    return system(cmd) == 0 ? py : NULL;
}

/* Path of a fixture file: $GPNSCOPE_FIXTURES/name. */
static inline const char *fixture(const char *name) {
    static char buf[8][4096];
    static int slot;
    const char *dir = getenv("GPNSCOPE_FIXTURES");
    char *out = buf[slot++ % 8];
    snprintf(out, 4096, "%s/%s", dir ? dir : "tests/fixtures", name);
    return out;
}

/* A reference fixture's file, fixture("reference/NAME.KIND"), KIND e.g.
 * "weights.safetensors", "expect.safetensors" or "checkpoint.pt". */
static inline const char *reference_fixture(const char *name, const char *kind) {
    char rel[256];
    snprintf(rel, sizeof rel, "reference/%s.%s", name, kind);
    return fixture(rel);
}

/* The parity tests' arguments: WEIGHTS EXPECT pairs, each checked by
 * fn(label, weights, expect) with the label the weights' file name up to its
 * first dot; returns the number of pairs (0: none given, use the fixtures). */
static inline int test_each_pair(int argc, char **argv, void (*fn)(const char *, const char *, const char *)) {
    int n = 0;
    for (int i = 1; i + 1 < argc; i += 2, n++) {
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
        fn(name, argv[i], argv[i + 1]);
    }
    return n;
}

/* A scratch directory for this test, created fresh. */
static inline const char *scratch_dir(const char *test_name) {
    static char buf[4096];
    const char *build = getenv("GPNSCOPE_BUILD");
    snprintf(buf, sizeof buf, "%s/test-scratch/%s", build ? build : "/tmp", test_name);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0) { fprintf(stderr, "cannot create %s\n", buf); exit(1); }
    return buf;
}

/* The whole file, NUL-terminated (malloc'd; *len its size when len is not
 * NULL), or NULL when it cannot be read. */
static inline char *read_whole_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    if (b) b[n] = 0;
    fclose(f);
    if (b && len) *len = (size_t)n;
    return b;
}

/* ||a - b|| / ||b|| in double */
static inline double rel_err(const float *a, const float *b, long n) {
    double num = 0, den = 0;
    for (long i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif
