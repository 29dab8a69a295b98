/* Hostile checkpoints: each malformed file gives a one-line error naming the
 * problem (never a crash; the ASan build runs this too). */
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/model.h"
#include "io/checkpoint/safetensors.h"
#include "testlib.h"

static const char *dir;

static int under_asan(void) {
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#endif
#endif
    return 0;
}

static const char *write_file(const char *name, const void *data, size_t n) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (n) fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

/* header JSON + `data_bytes` zero bytes of data; `claimed` overrides the length field */
static const char *make(const char *name, const char *json, size_t data_bytes, int64_t claimed) {
    size_t jl = strlen(json);
    size_t n = 8 + jl + data_bytes;
    unsigned char *buf = calloc(1, n);
    uint64_t len = claimed >= 0 ? (uint64_t)claimed : jl;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(len >> (8 * i));
    memcpy(buf + 8, json, jl);
    const char *p = write_file(name, buf, n);
    free(buf);
    return p;
}

static void expect_fail(const char *what, const char *path, const char *needle) {
    gs_clear_error();
    st_file *f = safetensors_open(path);
    gs_model *m = NULL;
    if (f) { /* file-level checks passed: the model-level ones must fail */
        safetensors_close(f);
        m = gs_model_load(path);
    }
    CHECK(m == NULL, "%s: accepted", what);
    gs_model_free(m);
    const char *msg = gs_error();
    CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, msg, needle);
    CHECK(strchr(msg, '\n') == NULL, "%s: message is not one line", what);
    CHECK(strstr(msg, dir) != NULL, "%s: message does not name the file: %s", what, msg);
    printf("  %-22s -> %s\n", what, msg);
}

int main(void) {
    dir = scratch_dir("checkpoint_hostile");
    expect_fail("empty file", write_file("empty.st", "", 0), "too short");
    expect_fail("truncated length", write_file("short.st", "\x10\x00\x00", 3), "too short");
    expect_fail("length beyond file", make("beyond.st", "{}", 0, 1000), "beyond the end");
    expect_fail("huge length", make("huge.st", "{}", 0, INT64_MAX), "beyond the end");
    expect_fail("truncated header", make("trunc.st", "{\"a\":{\"dtype\":\"F32\",", 0, -1), "not valid JSON");
    expect_fail("invalid JSON", make("json.st", "{not json}", 0, -1), "not valid JSON");
    expect_fail("header not object", make("arr.st", "[1,2]", 0, -1), "not a JSON object");
    expect_fail("offsets out of range", make("range.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, -1),
                "out of range");
    expect_fail("negative offsets", make("neg.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 8, -1),
                "data_offsets");
    expect_fail("overlapping tensors",
                make("overlap.st",
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, -1),
                "overlap");
    expect_fail("wrong byte size", make("size.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, -1),
                "wrong byte size");
    expect_fail("unknown dtype", make("dtype.st", "{\"a\":{\"dtype\":\"F12\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1),
                "unknown dtype");
    expect_fail("shape not integers", make("shape.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, -1),
                "shape");
    expect_fail("duplicate tensor",
                make("dup.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                               "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, -1),
                "twice");
    /* a heap overflow before: the second table was filled from the first's count */
    expect_fail("__metadata__ twice", make("meta2.st", "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"},\"__metadata__\":{\"d\":\"4\"}}", 0, -1),
                "\"__metadata__\" appears twice"); /* the strict JSON reader names any key twice */
    expect_fail("not a GPN", make("other.st", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1),
                "embedding");
    /* sizes are inferred from a few shapes, and a tensor shaped [f, 0] holds
     * no data: found by fuzzing, this 200-byte file made gs_model_load ask
     * for 12 GB before it looked for the other tensors */
    const char *zero = make("zero.st",
                            "{\"embedding\":{\"dtype\":\"F32\",\"shape\":[1,1],\"data_offsets\":[0,4]},"
                            "\"decode_norm_w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                            "\"ffn_w2_k\":{\"dtype\":\"F32\",\"shape\":[1073741823,0],\"data_offsets\":[8,8]}}", 8, -1);
    expect_fail("zero-size tensor, huge sizes", zero, "missing tensor 'decode_proj_k'");
    if (!under_asan()) { /* the sanitizer's own reservations need more address space than the limit */
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit lim = {1u << 30, 1u << 30};
            setrlimit(RLIMIT_AS, &lim);
            gs_model *m = gs_model_load(zero);
            _exit(!m && strstr(gs_error(), "missing tensor") ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "with 1 GB of address space the file is not refused for what it is");
    }
    expect_fail("dimension beyond int",
                make("dim.st", "{\"embedding\":{\"dtype\":\"F32\",\"shape\":[1,1],\"data_offsets\":[0,4]},"
                               "\"x\":{\"dtype\":\"F32\",\"shape\":[0,4294967296],\"data_offsets\":[4,4]}}", 4, -1),
                "more than a model can have");

    /* model-level: start from the real fixture and damage one thing at a time */
    gs_model *good = gs_model_load(fixture("reference/gpnm1.weights.safetensors"));
    CHECK(good != NULL, "fixture: %s", gs_error());
    if (!good) return test_summary();
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&good->cfg, specs);
    char path[4096];
    /* missing tensor */
    st_writer *w = st_writer_new();
    for (int i = 0; i < n; i++)
        if (strcmp(specs[i].name, "L0_read_W_o_k"))
            st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, good->block + specs[i].offset);
    snprintf(path, sizeof path, "%s/missing.safetensors", dir);
    st_writer_save(w, path);
    st_writer_free(w);
    expect_fail("missing tensor", path, "missing tensor 'L0_read_W_o_k'");
    /* wrong shape */
    w = st_writer_new();
    for (int i = 0; i < n; i++) {
        int64_t shape[2] = {specs[i].shape[0], specs[i].shape[1]};
        if (!strcmp(specs[i].name, "L0_pg_gate_k")) { shape[0] = specs[i].shape[1] / 2; shape[1] = specs[i].shape[0] * 2; }
        st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, shape, good->block + specs[i].offset);
    }
    snprintf(path, sizeof path, "%s/shape.safetensors", dir);
    st_writer_save(w, path);
    st_writer_free(w);
    expect_fail("wrong shape", path, "L0_pg_gate_k' has shape");
    /* metadata contradicting the shapes */
    w = st_writer_new();
    for (int i = 0; i < n; i++) st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, good->block + specs[i].offset);
    st_writer_meta(w, "d_state", "41");
    snprintf(path, sizeof path, "%s/meta.safetensors", dir);
    st_writer_save(w, path);
    st_writer_free(w);
    expect_fail("metadata contradicts", path, "d_state=41");
    /* an extra tensor is reported, not fatal */
    w = st_writer_new();
    float extra[3] = {1, 2, 3};
    int64_t three = 3;
    for (int i = 0; i < n; i++) st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, good->block + specs[i].offset);
    st_writer_add(w, "mystery_tensor", ST_F32, 1, &three, extra);
    snprintf(path, sizeof path, "%s/extra.safetensors", dir);
    st_writer_save(w, path);
    st_writer_free(w);
    gs_model *m = gs_model_load(path);
    CHECK(m && m->n_extra == 1 && !strcmp(m->extra_tensors[0], "mystery_tensor"), "extra tensor not reported");
    gs_model_free(m);

    /* the CLI prints the same one line and exits 1 */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' info '%s/overlap.st' 2>'%s/cli.err'", getenv("GPNSCOPE_BIN"), dir, dir);
    int rc = system(cmd);
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "gpnscope info exit status %d", rc);
    snprintf(path, sizeof path, "%s/cli.err", dir);
    FILE *f = fopen(path, "r");
    char line[2048] = "", more[16] = "";
    if (f) { if (!fgets(line, sizeof line, f)) line[0] = 0; if (!fgets(more, sizeof more, f)) more[0] = 0; fclose(f); }
    CHECK(strstr(line, "gpnscope info:") && strstr(line, "overlap") && more[0] == 0, "CLI error: %s%s", line, more);
    gs_model_free(good);
    return test_summary();
}
