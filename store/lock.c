/* The recording lock (store/lock.h): flock on STORE.run-N.lock. Removing
 * the file on release is safe because a taker checks, once it holds the
 * lock, that the name still leads to the file it locked: one that locked a
 * file just removed by its releaser starts again, so two processes never
 * both hold a lock the name leads to. */
#include "store/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

struct store_lock {
    int fd;
    char *path;
};

/* The holder's line from the sidecar, for the message (empty: unknown). */
static void holder_text(int fd, char *buf, size_t size) {
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

store_lock *store_lock_run(const char *path, int64_t run_id, const char *who) {
    char *real = realpath(path, NULL);
    if (!real) { gs_fail("%s: %s", path, strerror(errno)); return NULL; }
    size_t n = strlen(real) + 48;
    store_lock *l = calloc(1, sizeof *l);
    char *lp = malloc(n);
    if (!l || !lp) { free(real); free(l); free(lp); gs_fail("%s: out of memory", path); return NULL; }
    snprintf(lp, n, "%s.run-%lld.lock", real, (long long)run_id);
    free(real);
    int failed = 0;
    for (int attempt = 0; attempt < 100 && !failed; attempt++) {
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            gs_fail("%s: cannot create the lock file %s: %s (the store's folder must be writable to record)", path, lp,
                    strerror(errno));
            failed = 1;
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char holder[512];
            holder_text(fd, holder, sizeof holder);
            close(fd);
            if (e == EWOULDBLOCK)
                gs_fail("%s: run %lld is in use by another process (%s; lock file %s): wait for it to finish, or stop "
                        "that process", path, (long long)run_id, holder[0] ? holder : "holder unknown", lp);
            else
                gs_fail("%s: cannot lock %s: %s", path, lp, strerror(e));
            failed = 1;
            continue;
        }
        struct stat held, named;
        if (fstat(fd, &held) != 0 || stat(lp, &named) != 0 || held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
            close(fd); /* its holder removed it meanwhile: lock the file the name leads to now */
            continue;
        }
        char host[256] = "?", since[32] = "?", line[700];
        if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
        host[sizeof host - 1] = 0;
        time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm)) strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
        int len = snprintf(line, sizeof line, "%.200s, pid %ld on host %s since %s\n", who && *who ? who : "gpnscope",
                           (long)getpid(), host, since);
        /* the text only informs a second recorder; the lock is the flock */
        if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {}
        l->fd = fd;
        l->path = lp;
        return l;
    }
    if (!failed) gs_fail("%s: cannot take the lock %s (it keeps being replaced)", path, lp);
    free(lp);
    free(l);
    return NULL;
}

void store_lock_release(store_lock *l) {
    if (!l) return;
    unlink(l->path); /* while still holding it: see the top of this file */
    close(l->fd);
    free(l->path);
    free(l);
}
