/* PyTorch zip checkpoints (io/checkpoint/torch_zip.h): the reference
 * fixtures' .pt files give exactly the tensors of their .weights.safetensors,
 * strided and big-endian storages are read right, and hostile archives (path
 * traversal, sizes that lie, a deflate bomb, short storages, no data.pkl)
 * are refused with one line each. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <zip.h>

#include "base/error.h"
#include "io/checkpoint/torch_zip.h"
#include "io/checkpoint/safetensors.h"
#include "pickle_writer.h"
#include "testlib.h"

static const char *dir;

/* ---- a stored-only zip writer whose sizes can be forged ---- */

typedef struct { const char *name; const void *data; size_t n; int64_t declared; /* -1: n */ } zent;

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void le(FILE *f, uint64_t v, int k) {
    for (int i = 0; i < k; i++) fputc((int)(v >> (8 * i)) & 0xff, f);
}

static const char *write_zip(const char *file, const zent *e, int n) {
    static char path[4][4096];
    static int slot;
    char *p = path[slot++ % 4];
    snprintf(p, 4096, "%s/%s", dir, file);
    FILE *f = fopen(p, "wb");
    long *off = calloc((size_t)n, sizeof *off);
    for (int i = 0; i < n; i++) {
        off[i] = ftell(f);
        uint64_t size = e[i].declared >= 0 ? (uint64_t)e[i].declared : e[i].n;
        le(f, 0x04034b50, 4); le(f, 20, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0x21, 2);
        le(f, crc32_of(e[i].data, e[i].n), 4); le(f, size, 4); le(f, size, 4);
        le(f, strlen(e[i].name), 2); le(f, 0, 2);
        fputs(e[i].name, f);
        fwrite(e[i].data, 1, e[i].n, f);
    }
    long cd = ftell(f);
    for (int i = 0; i < n; i++) {
        uint64_t size = e[i].declared >= 0 ? (uint64_t)e[i].declared : e[i].n;
        le(f, 0x02014b50, 4); le(f, 20, 2); le(f, 20, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0x21, 2);
        le(f, crc32_of(e[i].data, e[i].n), 4); le(f, size, 4); le(f, size, 4);
        le(f, strlen(e[i].name), 2); le(f, 0, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0, 2); le(f, 0, 4);
        le(f, (uint64_t)off[i], 4);
        fputs(e[i].name, f);
    }
    long end = ftell(f);
    le(f, 0x06054b50, 4); le(f, 0, 2); le(f, 0, 2); le(f, (uint64_t)n, 2); le(f, (uint64_t)n, 2);
    le(f, (uint64_t)(end - cd), 4); le(f, (uint64_t)cd, 4); le(f, 0, 2);
    fclose(f);
    free(off);
    return p;
}

static int one_line(const char *s) { return s && *s && !strchr(s, '\n'); }

static void expect_refused(const char *what, const char *path, const torch_limits *lim, const char *want) {
    gs_clear_error();
    clock_t t0 = clock();
    torch_ckpt *c = torch_ckpt_open(path, lim);
    double dt = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(c == NULL, "%s: accepted", what);
    torch_ckpt_close(c);
    CHECK(one_line(gs_error()), "%s: not one line: %s", what, gs_error());
    CHECK(!want || strstr(gs_error(), want), "%s: message lacks '%s': %s", what, want, gs_error());
    CHECK(dt < 2.0, "%s: took %.2f s", what, dt);
    if (getenv("SHOW")) /* SHOW=1: print every refusal, to read them */
        printf("%s: %s\n", what, gs_error());
}

/* ---- the reference fixtures ---- */

static void test_fixtures(void) {
    static const char *const names[] = {"tpp2", "gdn2", "rt2"};
    for (int k = 0; k < 3; k++) {
        torch_ckpt *c = torch_ckpt_open(reference_fixture(names[k], "checkpoint.pt"), NULL);
        st_file *f = safetensors_open(reference_fixture(names[k], "weights.safetensors"));
        CHECK(c && f, "%s: %s", names[k], gs_error());
        if (!c || !f) { torch_ckpt_close(c); safetensors_close(f); continue; }
        CHECK(c->n_tensors == f->n_tensors, "%s: %d tensors in the .pt, %d in the safetensors", names[k], c->n_tensors, f->n_tensors);
        int same = 0;
        for (int i = 0; i < c->n_tensors; i++) {
            const ck_named *t = &c->tensors[i];
            const st_tensor *r = safetensors_find(f, t->name);
            int ok = r && r->dtype == t->a.dtype && r->ndim == t->a.ndim && r->nbytes == t->a.nbytes &&
                     !memcmp(r->shape, t->a.shape, sizeof(int64_t) * (size_t)r->ndim) && !memcmp(r->data, t->a.data, r->nbytes);
            CHECK(ok, "%s: tensor '%s' differs from the safetensors", names[k], t->name);
            same += ok;
        }
        CHECK(same == f->n_tensors, "%s: %d of %d tensors equal bit for bit", names[k], same, f->n_tensors);
        /* tpp2 and gdn2 are the companion trainer's layout; rt2 is a bare state dict */
        CHECK(c->companion_layout == (k < 2), "%s: layout", names[k]);
        torch_ckpt_close(c);
        safetensors_close(f);
    }
}

/* The tpp2 fixture's entries, for rebuilding it with one thing broken. */
typedef struct { char *name; unsigned char *data; size_t n; } blob;

static int read_fixture_entries(blob *b, int cap) {
    int err;
    zip_t *z = zip_open(fixture("reference/tpp2.checkpoint.pt"), ZIP_RDONLY, &err);
    if (!z) return 0;
    int n = (int)zip_get_num_entries(z, 0);
    if (n > cap) n = cap;
    for (int i = 0; i < n; i++) {
        zip_stat_t st;
        zip_stat_index(z, (zip_uint64_t)i, 0, &st);
        b[i].name = strdup(st.name);
        b[i].n = (size_t)st.size;
        b[i].data = malloc(b[i].n + 1);
        zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)i, 0);
        zip_fread(f, b[i].data, st.size);
        zip_fclose(f);
    }
    zip_discard(z);
    return n;
}

static void test_hostile(void) {
    blob b[64];
    int n = read_fixture_entries(b, 64);
    CHECK(n == 20, "tpp2 has %d entries", n);
    zent e[64];
    for (int i = 0; i < n; i++) e[i] = (zent){b[i].name, b[i].data, b[i].n, -1};
    /* the rebuilt archive itself loads */
    torch_ckpt *c = torch_ckpt_open(write_zip("rebuilt.pt", e, n), NULL);
    CHECK(c && c->n_tensors == 18, "rebuilt tpp2: %s", gs_error());
    torch_ckpt_close(c);

    static const char *const traversal[] = {"../tpp2.checkpoint/data.pkl", "/tpp2.checkpoint/data.pkl", "tpp2.checkpoint/../../x",
                                            "tpp2.checkpoint\\..\\x", "C:/x/data.pkl"};
    for (int k = 0; k < 5; k++) {
        zent t[2] = {e[0], {traversal[k], "x", 1, -1}};
        expect_refused(traversal[k], write_zip("traversal.pt", t, 2), NULL, k == 3 || k == 4 ? "outside" : "outside the archive");
    }
    zent two[2] = {e[0], {"other/data/0", "x", 1, -1}};
    expect_refused("two top folders", write_zip("two.pt", two, 2), NULL, "two top folders");

    /* declared size larger than the data (the last storage claims 1 MB) */
    zent big[64];
    memcpy(big, e, sizeof(zent) * (size_t)n);
    big[n - 1].declared = 1 << 20;
    expect_refused("declared size larger than the data", write_zip("declared.pt", big, n), NULL, NULL);

    /* a storage shorter than its tensor: data/0 (embedding.weight, 89 x 32 floats) loses 4 bytes */
    memcpy(big, e, sizeof(zent) * (size_t)n);
    for (int i = 0; i < n; i++)
        if (!strcmp(e[i].name, "tpp2.checkpoint/data/0")) big[i].n -= 4;
    expect_refused("short storage", write_zip("short.pt", big, n), NULL, "holds 11388 bytes");

    /* no data.pkl */
    expect_refused("missing data.pkl", write_zip("nopkl.pt", e + 1, n - 1), NULL, "no tpp2.checkpoint/data.pkl");

    /* a tensor reaching past a storage whose size is as declared */
    pkw w = {0};
    int64_t size5[1] = {5}, stride1[1] = {1};
    pkw_proto(&w, 2);
    pkw_op(&w, '}'); pkw_str(&w, "w");
    pkw_torch_tensor(&w, "FloatStorage", "0", 4, 0, 1, size5, stride1);
    pkw_op(&w, 's'); pkw_op(&w, '.');
    float four[4] = {1, 2, 3, 4};
    zent reach[2] = {{"a/data.pkl", w.p, w.n, -1}, {"a/data/0", four, sizeof four, -1}};
    expect_refused("tensor beyond its storage", write_zip("reach.pt", reach, 2), NULL, "reaches past its storage's 4 elements");
    pkw_free(&w);

    /* an offset near 2^63 whose reach wraps around 2^64 back into the storage */
    /* (2^63 - 2) + 2 x (2^62 + 2) = 2^64 + 2: element 2 once wrapped */
    int64_t size3[1] = {3}, wrap[1] = {((int64_t)1 << 62) + 2};
    pkw_proto(&w, 2);
    pkw_op(&w, '}'); pkw_str(&w, "w");
    pkw_torch_tensor(&w, "FloatStorage", "0", 4, INT64_MAX - 1, 1, size3, wrap);
    pkw_op(&w, 's'); pkw_op(&w, '.');
    zent wr[2] = {{"a/data.pkl", w.p, w.n, -1}, {"a/data/0", four, sizeof four, -1}};
    expect_refused("offset and stride wrapping around 2^64", write_zip("wrap.pt", wr, 2), NULL, "past its 4 elements");
    pkw_free(&w);

    /* tied weights: two names of one tensor are fine; 5000 names of it are a bomb */
    static float kb[256];
    int64_t s256[1] = {256};
    for (int names = 2; names <= 5000; names += 4998) {
        pkw_proto(&w, 2);
        pkw_op(&w, '}');
        pkw_str(&w, "w0");
        pkw_torch_tensor(&w, "FloatStorage", "0", 256, 0, 1, s256, stride1);
        pkw_op(&w, 'q'); pkw_op(&w, 0);
        pkw_op(&w, 's');
        for (int i = 1; i < names; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "w%d", i);
            pkw_str(&w, nm); pkw_op(&w, 'h'); pkw_op(&w, 0); pkw_op(&w, 's');
        }
        pkw_op(&w, '.');
        zent tied[2] = {{"a/data.pkl", w.p, w.n, -1}, {"a/data/0", kb, sizeof kb, -1}};
        const char *path = write_zip("tied.pt", tied, 2);
        if (names == 2) {
            c = torch_ckpt_open(path, NULL);
            CHECK(c && c->n_tensors == 2 && c->tensors[0].a.data == c->tensors[1].a.data, "tied weights: %s", gs_error());
            torch_ckpt_close(c);
        } else {
            expect_refused("one tensor under 5000 names", path, NULL, "add up to more than");
        }
        pkw_free(&w);
    }
    /* the same name twice */
    pkw_proto(&w, 2);
    int64_t size4[1] = {4};
    pkw_op(&w, '('); pkw_str(&w, "w");
    pkw_torch_tensor(&w, "FloatStorage", "0", 4, 0, 1, size4, stride1);
    pkw_op(&w, 'q'); pkw_op(&w, 0);
    pkw_str(&w, "w"); pkw_op(&w, 'h'); pkw_op(&w, 0);
    pkw_op(&w, 'd'); pkw_op(&w, '.');
    zent dup[2] = {{"a/data.pkl", w.p, w.n, -1}, {"a/data/0", four, sizeof four, -1}};
    expect_refused("a name twice", write_zip("dup.pt", dup, 2), NULL, "appears twice");
    pkw_free(&w);

    /* a hostile global inside data.pkl */
    pkw_proto(&w, 2);
    pkw_global(&w, "os", "system"); pkw_str(&w, "true"); pkw_op(&w, 0x85); pkw_op(&w, 'R'); pkw_op(&w, '.');
    zent evil[1] = {{"a/data.pkl", w.p, w.n, -1}};
    expect_refused("os.system in data.pkl", write_zip("evil.pt", evil, 1), NULL, "os.system");
    pkw_free(&w);

    /* a deflate bomb: 4 MB of zeros, under a 1 MB cap (the default is 64 MiB) */
    char bomb[4096];
    snprintf(bomb, sizeof bomb, "%s/bomb.pt", dir);
    int err;
    zip_t *z = zip_open(bomb, ZIP_CREATE | ZIP_TRUNCATE, &err);
    size_t zn = 4u << 20;
    void *zeros = calloc(1, zn);
    zip_source_t *src = zip_source_buffer(z, zeros, zn, 1);
    zip_int64_t idx = zip_file_add(z, "a/data.pkl", src, 0);
    zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9);
    CHECK(zip_close(z) == 0, "writing the bomb");
    torch_limits lim;
    torch_default_limits(&lim);
    lim.max_inflated = 1 << 20;
    expect_refused("deflate bomb", bomb, &lim, "zip bomb");

    for (int i = 0; i < n; i++) { free(b[i].name); free(b[i].data); }
}

/* Strides and byte order: a transposed view of a big-endian storage. */
static void test_layouts(void) {
    pkw w = {0};
    int64_t size[2] = {2, 3}, stride[2] = {1, 2}; /* the transpose of a 3 x 2 row-major matrix */
    pkw_proto(&w, 2);
    pkw_op(&w, '}'); pkw_str(&w, "t");
    pkw_torch_tensor(&w, "IntStorage", "s", 7, 1, 2, size, stride);
    pkw_op(&w, 's'); pkw_op(&w, '.');
    /* storage: 7 int32 big-endian 100, 0, 1, 2, 3, 4, 5; offset 1 */
    unsigned char be[28];
    for (int i = 0; i < 7; i++) {
        uint32_t v = i == 0 ? 100u : (uint32_t)(i - 1);
        be[4 * i] = (unsigned char)(v >> 24); be[4 * i + 1] = (unsigned char)(v >> 16);
        be[4 * i + 2] = (unsigned char)(v >> 8); be[4 * i + 3] = (unsigned char)v;
    }
    zent e[3] = {{"x/data.pkl", w.p, w.n, -1}, {"x/byteorder", "big", 3, -1}, {"x/data/s", be, sizeof be, -1}};
    torch_ckpt *c = torch_ckpt_open(write_zip("strided.pt", e, 3), NULL);
    CHECK(c && c->n_tensors == 1, "strided big-endian: %s", gs_error());
    if (c) {
        int32_t v[6];
        memcpy(v, c->tensors[0].a.data, sizeof v);
        /* row-major [[0,1],[2,3],[4,5]] transposed is [[0,2,4],[1,3,5]] */
        CHECK(c->tensors[0].a.dtype == ST_I32 && v[0] == 0 && v[1] == 2 && v[2] == 4 && v[3] == 1 && v[4] == 3 && v[5] == 5,
              "values %d %d %d %d %d %d", v[0], v[1], v[2], v[3], v[4], v[5]);
    }
    torch_ckpt_close(c);
    zent bad[3] = {e[0], {"x/byteorder", "middle", 6, -1}, e[2]};
    expect_refused("byteorder middle", write_zip("middle.pt", bad, 3), NULL, "byteorder");
    pkw_free(&w);
}

int main(void) {
    dir = scratch_dir("torch_zip");
    test_fixtures();
    test_hostile();
    test_layouts();
    return test_summary();
}
