/* The recording lock (store/lock.h): an open-file-description lock (Linux's
 * F_OFD_SETLK) on one byte of the store file itself, run N at offset 2^62 +
 * N, far past SQLite's own lock bytes (at 1 GiB). It is the file's, by
 * device and inode: every name of the store (a hard or symbolic link)
 * meets it, and removing a file beside the store cannot drop it. The kernel
 * drops it when its holder dies.
 *
 * The descriptor is opened once per store file and never closed: closing any
 * descriptor of a file drops every classic fcntl lock the process holds on
 * it, SQLite's own SHARED lock among them. A lock is let go by unlocking its
 * byte; the runs this process holds are kept here, since its own OFD locks on
 * one descriptor never conflict. The sidecar STORE.run-N.lock only tells a
 * refused process who holds it. */
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
#define MAX_FILES 32
#define MAX_HELD 64

struct store_lock {
    int fd;      /* the store's descriptor (kept open: see above) */
    int64_t run;
    char *note;  /* the sidecar that names the holder */
};

static struct { dev_t dev; ino_t ino; int fd; } files[MAX_FILES];
static int n_files;
static const store_lock *held[MAX_HELD];
static pid_t owner; /* the process the tables are of: a forked child starts its own (its inherited descriptors
                     * share the parent's open file descriptions, and so its locks) */

static void own_tables(void) {
    if (owner == getpid()) return;
    owner = getpid();
    n_files = 0;
    memset(held, 0, sizeof held);
}

/* The process's descriptor of the store file at real (opened the first time); -1 with errno set. */
static int store_fd(const char *real) {
    struct stat sb;
    if (stat(real, &sb) != 0) return -1;
    for (int i = 0; i < n_files; i++)
        if (files[i].dev == sb.st_dev && files[i].ino == sb.st_ino) return files[i].fd;
    if (n_files == MAX_FILES) { errno = EMFILE; return -1; }
    int fd = open(real, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    files[n_files].dev = sb.st_dev;
    files[n_files].ino = sb.st_ino;
    files[n_files++].fd = fd;
    return fd;
}

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
    own_tables();
    int fd = store_fd(real);
    free(real);
    if (fd < 0) {
        gs_fail("%s: cannot open it to lock run %lld: %s", path, (long long)run_id, strerror(errno));
        goto fail;
    }
    int slot = -1;
    for (int i = 0; i < MAX_HELD; i++) {
        if (held[i] && held[i]->fd == fd && held[i]->run == run_id) {
            gs_fail("%s: run %lld is in use by this process (%s)", path, (long long)run_id, who && *who ? who : "gpnscope");
            goto fail;
        }
        if (!held[i] && slot < 0) slot = i;
    }
    if (slot < 0) { gs_fail("%s: too many runs locked at once", path); goto fail; }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = RUN_LOCK_BASE + (off_t)run_id, .l_len = 1};
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int e = errno;
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
    l->run = run_id;
    l->note = note;
    held[slot] = l;
    return l;
fail:
    free(note);
    free(l);
    return NULL;
}

void store_lock_release(store_lock *l) {
    if (!l) return;
    unlink(l->note); /* before the lock goes: a later holder writes its own */
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = RUN_LOCK_BASE + (off_t)l->run, .l_len = 1};
    if (fcntl(l->fd, F_OFD_SETLK, &fl) != 0) {} /* the descriptor stays open (see the top of this file) */
    for (int i = 0; i < MAX_HELD; i++)
        if (held[i] == l) held[i] = NULL;
    free(l->note);
    free(l);
}
