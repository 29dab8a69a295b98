/* The recording lock (store/lock.h): an open-file-description lock (Linux's
 * F_OFD_SETLK) on one byte of the store file itself, run N at offset 2^62 +
 * N, far past SQLite's own lock bytes (at 1 GiB). It is the file's, by
 * device and inode: every name of the store (a hard or symbolic link)
 * meets it, and removing a file beside the store cannot drop it. Unlike a
 * classic fcntl lock it is not lost when SQLite closes another descriptor
 * of the same file, and the kernel drops it when its holder dies. The
 * sidecar STORE.run-N.lock only tells a refused process who holds it. */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "store/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

#define RUN_LOCK_BASE ((off_t)1 << 62)

struct store_lock {
    int fd;      /* the store, locked */
    char *note;  /* the sidecar that names the holder */
};

/* The holder's line from the sidecar, for the message (empty: unknown). */
static void holder_text(const char *note, char *buf, size_t size) {
    buf[0] = 0;
    int fd = open(note, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* Write who holds the lock into the sidecar (best effort: it only informs). */
static void write_note(const char *note, const char *who) {
    char host[256] = "?", since[32] = "?", line[700];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = 0;
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int len = snprintf(line, sizeof line, "%.200s, pid %ld on host %s since %s\n", who && *who ? who : "gpnscope",
                       (long)getpid(), host, since);
    int fd = open(note, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) return;
    if (write(fd, line, (size_t)len) != len) {}
    close(fd);
}

store_lock *store_lock_run(const char *path, int64_t run_id, const char *who) {
    if (run_id < 0) { gs_fail("%s: run %lld: no such run", path, (long long)run_id); return NULL; }
    char *real = realpath(path, NULL);
    if (!real) { gs_fail("%s: %s", path, strerror(errno)); return NULL; }
    size_t n = strlen(real) + 48;
    store_lock *l = calloc(1, sizeof *l);
    char *note = malloc(n);
    if (!l || !note) { free(real); free(l); free(note); gs_fail("%s: out of memory", path); return NULL; }
    snprintf(note, n, "%s.run-%lld.lock", real, (long long)run_id);
    int fd = open(real, O_RDWR | O_CLOEXEC);
    free(real);
    if (fd < 0) {
        gs_fail("%s: cannot open it to lock run %lld: %s", path, (long long)run_id, strerror(errno));
        goto fail;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = RUN_LOCK_BASE + (off_t)run_id, .l_len = 1};
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int e = errno;
        close(fd);
        if (e == EAGAIN || e == EACCES) {
            char holder[512];
            holder_text(note, holder, sizeof holder);
            gs_fail("%s: run %lld is in use by another process (%s): wait for it to finish, or stop that process", path,
                    (long long)run_id, holder[0] ? holder : "holder unknown");
        } else
            gs_fail("%s: cannot lock run %lld: %s", path, (long long)run_id, strerror(e));
        goto fail;
    }
    write_note(note, who);
    l->fd = fd;
    l->note = note;
    return l;
fail:
    free(note);
    free(l);
    return NULL;
}

void store_lock_release(store_lock *l) {
    if (!l) return;
    unlink(l->note); /* before the lock goes: a later holder writes its own */
    close(l->fd);    /* drops the lock */
    free(l->note);
    free(l);
}
