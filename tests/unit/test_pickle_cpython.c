/* The pickle VM against CPython: tests/unit/pickle_cpython.py writes pickles
 * with CPython's own pickler (protocols 0-5: every scalar, string, bytes and
 * container kind, memo sharing, OrderedDict, numpy arrays of every accepted
 * dtype, byte order and memory order, scalars, empty arrays) and the value
 * CPython loads from each; every one must decode here to the same value.
 * Skips (77) without python3-numpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "base/error.h"
#include "io/checkpoint/numpy_array.h"
#include "io/checkpoint/pickle.h"
#include "testlib.h"

typedef struct { char *p; size_t n, cap; } text;

static void put(text *t, const char *s) {
    size_t n = strlen(s);
    while (t->n + n + 1 > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->p = realloc(t->p, t->cap);
        if (!t->p) abort();
    }
    memcpy(t->p + t->n, s, n + 1);
    t->n += n;
}

static void hex(text *t, const unsigned char *p, size_t n) {
    char b[3];
    for (size_t i = 0; i < n; i++) { snprintf(b, sizeof b, "%02x", p[i]); put(t, b); }
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The canonical text form of pickle_cpython.py's dump(). */
static void dump(text *t, const pk_value *v) {
    char b[64];
    switch (v->kind) {
    case PK_NONE: put(t, "N"); break;
    case PK_BOOL: put(t, v->u.i ? "T" : "F"); break;
    case PK_INT:
        if (v->big) put(t, "BIG");
        else { snprintf(b, sizeof b, "%lld", (long long)v->u.i); put(t, b); }
        break;
    case PK_FLOAT: put(t, "f"); hex(t, (const unsigned char *)&v->u.f, 8); break;
    case PK_STR: put(t, "s"); hex(t, v->u.s.p, v->u.s.n); break;
    case PK_BYTES: put(t, "b"); hex(t, v->u.s.p, v->u.s.n); break;
    case PK_LIST: case PK_TUPLE:
        put(t, v->kind == PK_LIST ? "[" : "(");
        for (size_t i = 0; i < v->u.seq.n; i++) { dump(t, v->u.seq.v[i]); put(t, ","); }
        put(t, v->kind == PK_LIST ? "]" : ")");
        break;
    case PK_DICT:
        put(t, "{");
        for (size_t i = 0; i + 1 < v->u.seq.n; i += 2) { dump(t, v->u.seq.v[i]); put(t, ":"); dump(t, v->u.seq.v[i + 1]); put(t, ","); }
        put(t, "}");
        break;
    case PK_SET: { /* sets print their items sorted, as the Python side does */
        char **parts = calloc(v->u.seq.n + 1, sizeof *parts);
        for (size_t i = 0; i < v->u.seq.n; i++) {
            text one = {0};
            dump(&one, v->u.seq.v[i]);
            parts[i] = one.p ? one.p : strdup("");
        }
        qsort(parts, v->u.seq.n, sizeof *parts, str_cmp);
        put(t, "set<");
        for (size_t i = 0; i < v->u.seq.n; i++) { put(t, parts[i]); put(t, ","); free(parts[i]); }
        put(t, ">");
        free(parts);
        break;
    }
    case PK_OBJECT: {
        ck_array a;
        if (pk_numpy_array(v, &a) != 0) { put(t, "ERROR("); put(t, gs_error()); put(t, ")"); break; }
        snprintf(b, sizeof b, "A%s", st_dtype_name(a.dtype));
        put(t, b);
        for (int i = 0; i < a.ndim; i++) { snprintf(b, sizeof b, ".%lld", (long long)a.shape[i]); put(t, b); }
        put(t, ":");
        hex(t, a.data, a.nbytes);
        ck_array_free(&a);
        break;
    }
    default: put(t, "?"); break;
    }
}

int main(void) {
    const char *py = test_numpy_python(), *src = getenv("GPNSCOPE_SOURCE");
    if (!py) return test_skip(TEST_NO_NUMPY);
    char cmd[8800];
    const char *dir = scratch_dir("pickle_cpython");
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/unit/pickle_cpython.py' '%s'", py, src ? src : ".", dir);
    CHECK(system(cmd) == 0, "pickle_cpython.py failed");
    DIR *dd = opendir(dir);
    struct dirent *e;
    int n = 0, same = 0;
    while (dd && (e = readdir(dd))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".pkl")) continue;
        char path[8600], exp[8600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(exp, sizeof exp, "%s/%.*s.expect", dir, (int)(len - 4), e->d_name);
        size_t pn, en;
        char *p = read_whole_file(path, &pn), *want = read_whole_file(exp, &en);
        n++;
        pk_doc *d = p ? pk_load(p, pn, NULL) : NULL;
        CHECK(d != NULL, "%s: %s", e->d_name, gs_error());
        if (d && want) {
            text t = {0};
            dump(&t, pk_root(d));
            put(&t, "\n");
            int ok = !strcmp(t.p, want);
            CHECK(ok, "%s decodes differently:\n  here:    %.300s\n  CPython: %.300s", e->d_name, t.p, want);
            same += ok;
            free(t.p);
        }
        pk_close(d);
        free(p);
        free(want);
    }
    if (dd) closedir(dd);
    printf("  %d of %d CPython pickles decode to the value CPython loads\n", same, n);
    CHECK(n >= 60, "only %d pickles", n);
    return test_summary();
}
