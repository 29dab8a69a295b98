#include "base/fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/inputs.h"

int gs_mkdir_p(const char *path) {
    size_t n = strlen(path);
    char *buf = malloc(n + 1);
    if (!buf) return gs_fail("out of memory");
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1;; p++) {
        char c = *p;
        if (c == '/' || c == 0) {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                gs_fail("cannot create directory %s: %s", buf, strerror(e));
                free(buf);
                return -1;
            }
            *p = c;
        }
        if (!c) break;
    }
    free(buf);
    return 0;
}

int gs_write_atomic(const char *path, const char *text) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 8);
    if (!tmp) return gs_fail("out of memory");
    snprintf(tmp, n + 8, "%s.tmp", path);
    /* neither the file nor its temporary may be an input of the command (base/inputs.h) */
    if (gs_output_check(path) || gs_output_check(tmp)) { free(tmp); return -1; }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        gs_fail("cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int ok = fputs(text, f) >= 0;
    ok &= fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok &= fclose(f) == 0;
    int rc = 0;
    if (ok && gs_output_check(path)) { /* checked again: the name may lead elsewhere by now */
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (!ok || rename(tmp, path) != 0) {
        rc = gs_fail("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

char *gs_read_file(const char *path, const char *what, size_t first_cap, size_t max_cap, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { gs_fail("cannot open %s%s: %s", what, path, strerror(errno)); return NULL; }
    char *data = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 65536 > cap) {
            cap = cap ? cap * 2 : first_cap;
            if (max_cap && cap > max_cap) {
                free(data);
                fclose(f);
                if (max_cap >= (size_t)1 << 30) gs_fail("%s%s is larger than %zu GB", what, path, max_cap >> 30);
                else gs_fail("%s%s is larger than %zu MB", what, path, max_cap >> 20);
                return NULL;
            }
            char *p = realloc(data, cap + 1);
            if (!p) { free(data); fclose(f); gs_fail("out of memory reading %s", path); return NULL; }
            data = p;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(data); gs_fail("cannot read %s%s", what, path); return NULL; }
    data[n] = 0;
    *len = n;
    return data;
}
