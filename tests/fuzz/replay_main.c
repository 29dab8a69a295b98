/* Replay driver: the main() that links a fuzz target into the ordinary
 * (gcc, and ASan+UBSan) builds, so ctest re-runs every seed and every
 * committed regression input without clang or libFuzzer.
 *
 *   fuzz_TARGET PATH...   each PATH is an input file or a folder of them
 *
 * Folders are read in name order; hidden files and README* are skipped. A
 * folder that does not exist is reported and skipped (git keeps no empty
 * regressions/<target>/ folder), but running no input at all is a failure:
 * a replay that tested nothing must not pass. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *p = realloc(buf, cap *= 2);
            if (!p) { free(buf); buf = NULL; }
            buf = p;
        }
    }
    fclose(f);
    if (!buf) { fprintf(stderr, "%s: out of memory\n", path); return -1; }
    /* an exact-size copy, so ASan sees a read past the input's end */
    uint8_t *in = malloc(n ? n : 1);
    if (!in) { free(buf); return -1; }
    memcpy(in, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Inputs run from a folder (in name order); *bad set when one could not be read. */
static int run_dir(const char *dir, int *bad) {
    DIR *d = opendir(dir);
    if (!d) { perror(dir); *bad = 1; return 0; }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "README", 6)) continue;
        if (n == cap) {
            char **p = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *p);
            if (!p) break;
            names = p;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) == 0) count++;
            else *bad = 1;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s INPUT_FILE_OR_FOLDER...\n", argv[0]);
        return 2;
    }
    int total = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            printf("%s: absent, skipped\n", argv[i]);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int k = run_dir(argv[i], &bad);
            printf("%s: %d inputs\n", argv[i], k);
            total += k;
        } else if (run_file(argv[i]) == 0) {
            total++;
        } else {
            bad = 1;
        }
    }
    printf("%d inputs replayed without a crash\n", total);
    if (total == 0) {
        fprintf(stderr, "no input was run: nothing was tested (are the seeds generated? the fuzz_seeds test makes them)\n");
        return 1;
    }
    return bad;
}
