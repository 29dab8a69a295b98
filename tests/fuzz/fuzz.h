/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c), the replay driver and the
 * seed generator.
 *
 * Every target defines LLVMFuzzerTestOneInput and calls the real library
 * API. Readers that take a path get the input written to a file in a
 * per-process scratch folder (fuzz_path); the folder is removed at exit. A
 * target may abort() (FUZZ_ASSERT) only when a property that must hold for
 * every input is broken: a library error on bad input is the expected
 * outcome, never a finding. */
#ifndef GS_TESTS_FUZZ_H
#define GS_TESTS_FUZZ_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: report it and abort, so libFuzzer (or the replay
 * driver, or ctest) records the input as a failure. */
#define FUZZ_ASSERT(cond, ...)                                                  \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* Separates the files packed into one input (the shard target's
 * data_0000.bin, its index, meta.json, ...). */
#define FUZZ_PART_SEP "|--|"

static char fuzz_dir_path[4096];

/* Remove a folder and the files and folders in it (the scratch folder holds
 * nothing deeper than a folder of files). */
static inline void fuzz_rm_tree(const char *path, int depth) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char p[8192];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            if (unlink(p) != 0 && depth > 0) fuzz_rm_tree(p, depth - 1);
        }
        closedir(d);
    }
    rmdir(path);
}

static inline void fuzz_dir_remove(void) {
    if (fuzz_dir_path[0]) fuzz_rm_tree(fuzz_dir_path, 2);
}

/* This process's scratch folder ($TMPDIR or /tmp), created on first use. */
static inline const char *fuzz_dir(void) {
    if (fuzz_dir_path[0]) return fuzz_dir_path;
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/gpnscope-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir_path)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(fuzz_dir_remove);
    return fuzz_dir_path;
}

/* The path of `name` in the scratch folder (a few calls may be live at once). */
static inline const char *fuzz_path(const char *name) {
    static char buf[8][4200];
    static int slot;
    char *p = buf[slot++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", fuzz_dir(), name);
    return p;
}

/* Write data to `name` in the scratch folder; returns its path. */
static inline const char *fuzz_write(const char *name, const void *data, size_t n) {
    const char *p = fuzz_path(name);
    FILE *f = fopen(p, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(p);
        abort();
    }
    return p;
}

static inline void fuzz_unlink(const char *name) { unlink(fuzz_path(name)); }

/* Remove a folder of the scratch folder with everything in it. */
static inline void fuzz_rmdir(const char *name) { fuzz_rm_tree(fuzz_path(name), 1); }

/* Split data at the k-th FUZZ_PART_SEP: part k as (*p, *n); 0 when the input
 * has fewer parts. */
static inline int fuzz_part(const uint8_t *data, size_t size, int k, const uint8_t **p, size_t *n) {
    const size_t sl = sizeof FUZZ_PART_SEP - 1;
    size_t start = 0;
    for (int part = 0;; part++) {
        size_t end = start;
        while (end + sl <= size && memcmp(data + end, FUZZ_PART_SEP, sl) != 0) end++;
        if (end + sl > size) end = size;
        if (part == k) {
            *p = data + start;
            *n = end - start;
            return 1;
        }
        if (end == size) return 0;
        start = end + sl;
    }
}

/* ---- a tiny LLaMA-style tokenizer.json (byte fallback, <unk>, a user piece) ----
 * Pieces: <unk> <s> </s>, the 256 byte pieces, then normal pieces whose
 * merges are listed in order; "<sep>" is a non-special added token (matched
 * whole in the text, never merged). The corpus targets tokenize with it, the
 * encode target uses it next to the LLaMA-2 tokenizer, and it seeds the
 * tokenizer_json target. */
#define FUZZ_SP "\xE2\x96\x81"

/* The JSON text (malloc'ed). byte_fallback 0 leaves unknown characters to
 * <unk>; metaspace 1 uses the Metaspace pre-tokenizer instead of the
 * normalizer (the two spellings LLaMA-2 files use). */
static inline char *fuzz_tiny_tokenizer_json(int byte_fallback, int metaspace) {
    static const char *const normal[] = {
        FUZZ_SP, "a", "b", "c", "\xC3\xA9", "ab", FUZZ_SP "a", FUZZ_SP FUZZ_SP, "bc", "abc", FUZZ_SP "ab", "ca",
    };
    static const char *const merges[] = {
        "a b", FUZZ_SP " a", FUZZ_SP " " FUZZ_SP, "b c", "ab c", FUZZ_SP "a b", "c a",
    };
    const int n_normal = (int)(sizeof normal / sizeof *normal);
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    if (!s) abort();
#define OUT(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
    OUT("{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, "
        "{\"id\": 1, \"content\": \"<s>\", \"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true}, "
        "{\"id\": %d, \"content\": \"<sep>\", \"special\": false}],\n",
        259 + n_normal);
    if (metaspace)
        OUT("\"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"" FUZZ_SP
            "\", \"prepend_scheme\": \"first\", \"split\": false},\n");
    else
        OUT("\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"" FUZZ_SP
            "\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"" FUZZ_SP "\"}]},\n"
            "\"pre_tokenizer\": null,\n");
    OUT("\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": true, \"byte_fallback\": %s,\n\"vocab\": "
        "{\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2",
        byte_fallback ? "true" : "false");
    for (int b = 0; b < 256; b++) OUT(", \"<0x%02X>\": %d", b, 3 + b);
    for (int i = 0; i < n_normal; i++) OUT(", \"%s\": %d", normal[i], 259 + i);
    OUT("},\n\"merges\": [");
    for (size_t i = 0; i < sizeof merges / sizeof *merges; i++) OUT("%s\"%s\"", i ? ", " : "", merges[i]);
    OUT("]}}\n");
#undef OUT
    return s;
}

#endif
