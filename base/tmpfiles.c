#include "base/tmpfiles.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The writer's pid of ".NAME.tmp.PID" or ".NAME.tmp.PID.N"; 0 when name is
 * not such a file. */
static long tmp_owner(const char *name) {
    if (name[0] != '.') return 0;
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp.")) t = p;
    if (!t || t == name) return 0;
    const char *q = t + 5;
    char *end;
    long pid = strtol(q, &end, 10);
    if (end == q || pid <= 0) return 0;
    if (*end == '.') {
        const char *c = end + 1;
        strtol(c, &end, 10);
        if (end == c) return 0;
    }
    return *end ? 0 : pid;
}

int gs_remove_stale_tmp(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = tmp_owner(e->d_name);
        if (!pid || pid == (long)getpid()) continue;
        /* alive (or alive as another user's process): not ours to remove */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char path[4200];
        struct stat sb;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    return removed;
}
