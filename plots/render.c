/* Running gnuplot on a written script, with its stderr captured: gnuplot
 * reports problems (an empty range, a missing file, a bad label) as
 * warnings and still exits 0, so any output on stderr counts as a failure. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "plots/gp.h"

int gp_find_program(const char *program, char *buf, size_t size) {
    if (!program || !*program) return -1;
    if (strchr(program, '/')) {
        /* absolute: gnuplot runs from the output folder */
        char abs[PATH_MAX];
        if (!realpath(program, abs) || strlen(abs) >= size) return -1;
        snprintf(buf, size, "%s", abs);
        return access(buf, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)len, path, program) < size) {
            struct stat sb;
            if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0) return 0;
        }
        path = e ? e + 1 : path + len;
    }
    return -1;
}

/* the first lines of gnuplot's messages, on one line */
static void one_line(char *msg) {
    size_t o = 0;
    int space = 0;
    for (size_t i = 0; msg[i]; i++) {
        char ch = msg[i];
        if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') { space = o > 0; continue; }
        if (space) { msg[o++] = ' '; space = 0; }
        msg[o++] = ch;
    }
    msg[o] = 0;
}

int gp_render(const char *program, const char *dir, const char *name, const char *fmt, const char *out) {
    char script[64], expr[256];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(expr, sizeof expr, "fmt='%s'; out='%s'", fmt, out); /* both ours: plain names */
    int pipefd[2];
    if (pipe(pipefd) != 0) return gs_fail("cannot run %s: pipe: %s", program, strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return gs_fail("cannot run %s: fork: %s", program, strerror(errno));
    }
    if (pid == 0) {
        /* gnuplot must not outlive us: killed with us (even by SIGKILL,
         * which runs no handler) through the parent-death signal, and in its
         * own process group, so a signal meant for it cannot reach the
         * terminal's other jobs; if we died before prctl, leave now */
        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
        close(pipefd[0]);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) { dup2(null, 0); dup2(null, 1); }
        dup2(pipefd[1], 2);
        if (chdir(dir) != 0) {
            dprintf(2, "cannot enter %s: %s\n", dir, strerror(errno));
            _exit(126);
        }
        execl(program, program, "-e", expr, script, (char *)NULL);
        dprintf(2, "cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever of the two runs first */
    close(pipefd[1]);
    char msg[GS_ERROR_MAX - 128];
    size_t got = 0;
    for (;;) {
        char chunk[512];
        ssize_t k = read(pipefd[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        size_t take = (size_t)k < sizeof msg - 1 - got ? (size_t)k : sizeof msg - 1 - got;
        memcpy(msg + got, chunk, take);
        got += take;
    }
    msg[got] = 0;
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return gs_fail("%s/%s: waiting for %s: %s", dir, script, program, strerror(errno));
    }
    one_line(msg);
    if (WIFSIGNALED(status))
        return gs_fail("%s/%s: %s was killed by signal %d%s%s", dir, script, program, WTERMSIG(status),
                       msg[0] ? ": " : "", msg);
    if (WEXITSTATUS(status) != 0)
        return gs_fail("%s/%s: %s failed (exit %d)%s%s", dir, script, program, WEXITSTATUS(status), msg[0] ? ": " : "",
                       msg);
    if (got > 0) return gs_fail("%s/%s: %s warned: %s", dir, script, program, msg);
    return 0;
}
