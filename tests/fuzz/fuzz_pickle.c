/* Fuzz target: a pickle, as `gpnscope convert checkpoint.pkl` reads it. The
 * input is the whole pickle, decoded by pk_load under small limits (so one
 * input stays fast). A refusal must be one non-empty line. A pickle that
 * loads must respect its limits everywhere: every value's depth and
 * expanded size are within the bounds and agree with its children (no
 * cycle can hide: a walk deeper than max_depth is a broken invariant);
 * every numpy array that interprets holds exactly numel x itemsize bytes,
 * all readable; the companion's parameter finder
 * either refuses or gives uniquely named arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/convert.h"
#include "io/checkpoint/numpy_array.h"
#include "io/checkpoint/pickle.h"
#include "fuzz.h"

#define MAX_VISITS 200000

static long visits;

static int has_children(const pk_value *v) {
    return v->kind == PK_LIST || v->kind == PK_TUPLE || v->kind == PK_DICT || v->kind == PK_SET;
}

static void check_array(const pk_value *v) {
    ck_array a;
    if (pk_numpy_array(v, &a) != 0) {
        FUZZ_ASSERT(strchr(gs_error(), '\n') == NULL, "array error is not one line");
        return;
    }
    FUZZ_ASSERT(a.nbytes == (size_t)a.numel * st_dtype_size(a.dtype), "array: %zu bytes for %lld elements", a.nbytes, (long long)a.numel);
    const uint8_t *d = a.data;
    if (a.nbytes) {
        /* the data lies in the input, in the document's decoded bytes
         * (_codecs.encode) or in the array's own copy: touch every byte and
         * ASan checks the bounds */
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < a.nbytes; i++) sum ^= d[i];
        (void)sum;
    }
    ck_array_free(&a);
}

/* Depth-first; path = values from the root to v. */
static void walk(const pk_value *v, const pk_limits *lim, uint32_t path) {
    FUZZ_ASSERT(path <= lim->max_depth + 1, "a path of %u values (max_depth %u): a cycle?", path, lim->max_depth);
    FUZZ_ASSERT(v->depth <= lim->max_depth && v->weight <= lim->max_values && v->wbytes <= lim->max_bytes,
                "value beyond the limits: depth %u weight %llu bytes %llu", v->depth, (unsigned long long)v->weight,
                (unsigned long long)v->wbytes);
    if (++visits > MAX_VISITS) return;
    if (v->kind == PK_OBJECT) check_array(v);
    const pk_value *kids[2] = {NULL, NULL};
    size_t n = 0;
    pk_value *const *k = NULL;
    if (has_children(v)) { k = v->u.seq.v; n = v->u.seq.n; }
    else if (v->kind == PK_OBJECT) { kids[0] = v->u.obj.args; kids[1] = v->u.obj.state; }
    else if (v->kind == PK_PERSID) kids[0] = v->u.pid;
    uint64_t w = 1;
    uint32_t depth = 1;
    for (size_t i = 0; i < (k ? n : 2); i++) {
        const pk_value *c = k ? k[i] : kids[i];
        if (!c) continue;
        FUZZ_ASSERT(c->sealed, "a child that is not sealed");
        w = w + c->weight < w ? UINT64_MAX : w + c->weight;
        if (c->depth + 1 > depth) depth = c->depth + 1;
        walk(c, lim, path + 1);
    }
    if (has_children(v) || v->kind == PK_OBJECT || v->kind == PK_PERSID)
        FUZZ_ASSERT(w == v->weight && depth == v->depth, "sizes disagree with the children: %llu/%llu, %u/%u",
                    (unsigned long long)w, (unsigned long long)v->weight, depth, v->depth);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pk_limits lim;
    pk_default_limits(&lim);
    lim.max_values = 1 << 18;
    lim.max_bytes = 1 << 26;
    lim.max_depth = 64;
    gs_clear_error();
    pk_doc *d = pk_load(data, size, &lim);
    if (!d) {
        const char *e = gs_error();
        FUZZ_ASSERT(*e && !strchr(e, '\n'), "a refusal that is not one line: %s", e);
        return 0;
    }
    visits = 0;
    const pk_value *root = pk_root(d);
    FUZZ_ASSERT(root && root->sealed, "no sealed root");
    walk(root, &lim, 1);
    ck_companion c;
    if (ck_companion_read(root, "fuzz.pkl", size, &c) == 0) {
        for (int i = 0; i < c.n; i++)
            for (int j = 0; j < i; j++) FUZZ_ASSERT(strcmp(c.names[i], c.names[j]) != 0, "parameter %s twice", c.names[i]);
        FUZZ_ASSERT(c.n_meta > 0 && c.arch, "parameters without a config");
    }
    ck_companion_free(&c);
    pk_close(d);
    return 0;
}
