#include "notebooks-export/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/inputs.h"

int gs_outfile_open(gs_outfile *o, const char *path) {
    memset(o, 0, sizeof *o);
    if (!path || !*path) return gs_fail("no output file name given");
    if (gs_output_check(path)) return -1;
    size_t n = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    o->path = strdup(path);
    o->tmp = malloc(n + 64);
    if (!o->path || !o->tmp) { gs_outfile_abort(o); return gs_fail("%s: out of memory", path); }
    /* a hidden name in the same folder, so the rename stays on one file system */
    static unsigned counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(o->tmp, n + 64, "%.*s.%s.tmp.%ld.%u", (int)dirlen, path, path + dirlen, (long)getpid(), counter++);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            if (errno == EEXIST) continue;
            int e = errno;
            free(o->tmp);
            o->tmp = NULL;
            gs_outfile_abort(o);
            return gs_fail("cannot write in %.*s: %s", dirlen ? (int)dirlen : 1, dirlen ? path : ".", strerror(e));
        }
        o->f = fdopen(fd, "wb");
        if (!o->f) {
            int e = errno;
            close(fd);
            gs_outfile_abort(o);
            return gs_fail("%s: %s", path, strerror(e));
        }
        return 0;
    }
    free(o->tmp);
    o->tmp = NULL;
    gs_outfile_abort(o);
    return gs_fail("%s: cannot find a free temporary name beside it", path);
}

static int write_error(const char *path, int e) {
    if (e == ENOSPC || e == EDQUOT) return gs_fail("%s: the disk is full: free some space and export again", path);
    return gs_fail("%s: write failed: %s", path, strerror(e ? e : EIO));
}

int gs_outfile_write_failed(const gs_outfile *o) { return write_error(o->path ? o->path : "output", errno); }

int gs_outfile_commit(gs_outfile *o) {
    if (!o->f) { gs_outfile_abort(o); return gs_fail("%s: the file was not open", o->path ? o->path : "output"); }
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
    if (!e && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    errno = 0;
    if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    o->f = NULL;
    if (e) {
        int rc = write_error(o->path, e);
        gs_outfile_abort(o);
        return rc;
    }
    if (gs_output_check(o->path)) { /* checked again: the name may lead elsewhere by now */
        gs_outfile_abort(o);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        e = errno;
        int rc = gs_fail("%s: cannot move the finished file into place: %s", o->path, strerror(e));
        gs_outfile_abort(o);
        return rc;
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return 0;
}

void gs_outfile_abort(gs_outfile *o) {
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

int gs_make_dirs(const char *dir) {
    if (!dir || !*dir) return gs_fail("no folder name given");
    char *p = strdup(dir);
    if (!p) return gs_fail("out of memory");
    for (char *q = p + 1;; q++) {
        char ch = *q;
        if (ch == '/' || ch == 0) {
            *q = 0;
            struct stat sb;
            if (stat(p, &sb) != 0) {
                if (errno != ENOENT || (mkdir(p, 0777) != 0 && errno != EEXIST)) {
                    int e = errno;
                    free(p);
                    return gs_fail("cannot create the folder %s: %s", dir, strerror(e));
                }
            } else if (!S_ISDIR(sb.st_mode)) {
                int rc = ch ? gs_fail("%s is not a folder (it is in the way of %s)", p, dir)
                            : gs_fail("%s exists and is not a folder", dir);
                free(p);
                return rc;
            }
            *q = ch;
            if (!ch) break;
        }
    }
    free(p);
    return 0;
}
