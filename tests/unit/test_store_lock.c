/* The pieces behind issue #17's fixes, one by one: the run lock
 * (store/lock.c), a reader's connection being read-only in SQLite itself,
 * outputs that would replace an input (base/inputs.c), the removal of dead
 * writers' temporary files (base/tmpfiles.c) and shell quoting of hints. */
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/inputs.h"
#include "base/text.h"
#include "base/tmpfiles.h"
#include "store/lock.h"
#include "store/store.h"
#include "testlib.h"

static char dir[4096];

static const char *in_dir(const char *name) {
    static char buf[16][4200];
    static int slot;
    char *b = buf[slot++ % 16];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

static void touch(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static void test_lock(void) {
    char db[4200];
    snprintf(db, sizeof db, "%s", in_dir("l.db"));
    store *st = store_open(db, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "create: %s", gs_error());
    store_close(st);
    store_lock *a = store_lock_run(db, 1, "test one");
    CHECK(a != NULL, "lock run 1: %s", gs_error());
    /* a second lock of the run in this process: refused (OFD locks of one descriptor never conflict, so the
     * process keeps the runs it holds) */
    store_lock *b = store_lock_run(db, 1, "test two");
    CHECK(b == NULL && strstr(gs_error(), "run 1 is in use by this process"), "a second lock of run 1 here: %s", gs_error());
    store_lock_release(b);
    /* another spelling of the same store: the same lock */
    CHECK(symlink("l.db", in_dir("link.db")) == 0, "a symbolic link");
    b = store_lock_run(in_dir("link.db"), 1, "test two");
    CHECK(b == NULL, "a symbolic link to the store shares its lock");
    /* a hard link, and the sidecar removed: the lock is the file's, by device and inode (issue 35.9); another
     * process is refused, naming the holder until the sidecar is gone */
    CHECK(link(db, in_dir("l-hard.db")) == 0, "a hard link");
    b = store_lock_run(in_dir("l-hard.db"), 1, "test two");
    CHECK(b == NULL && strstr(gs_error(), "in use by this process"), "a hard link to the store shares its lock: %s",
          b ? "taken" : gs_error());
    char want[128];
    snprintf(want, sizeof want, "in use by another process (test one, pid %ld on host ", (long)getpid());
    for (int gone = 0; gone < 2; gone++) {
        if (gone) CHECK(unlink(in_dir("l.db.run-1.lock")) == 0, "the sidecar removed");
        int fds[2];
        CHECK(pipe(fds) == 0, "a pipe");
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            /* by its own name first (the sidecar is named after it), then through the hard link */
            store_lock *x = store_lock_run(gone ? in_dir("l-hard.db") : db, 1, "child");
            const char *e = gs_error();
            if (write(fds[1], e, strlen(e)) < 0) {}
            _exit(x == NULL ? 0 : 1);
        }
        close(fds[1]);
        char msg[1024] = "";
        ssize_t got = read(fds[0], msg, sizeof msg - 1);
        msg[got > 0 ? got : 0] = 0;
        close(fds[0]);
        int status = 0;
        waitpid(child, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(msg, gone ? "holder unknown" : want),
              "another process is refused%s: %s", gone ? " through the hard link, the sidecar gone" : ", naming the holder", msg);
    }
    store_lock_release(b);
    /* SQLite opening and closing the store in this process does not drop it (an OFD lock, not a classic fcntl one) */
    st = store_open(db, STORE_READ);
    store_close(st);
    pid_t p1 = fork();
    if (p1 == 0) _exit(store_lock_run(db, 1, "child") == NULL ? 0 : 1);
    int st1 = 0;
    waitpid(p1, &st1, 0);
    CHECK(WIFEXITED(st1) && WEXITSTATUS(st1) == 0, "after a connection of this process closed, another process is still refused");
    store_lock *c = store_lock_run(db, 2, "test three");
    CHECK(c != NULL, "run 2 has a lock of its own: %s", gs_error());
    store_lock_release(a);
    CHECK(!exists(in_dir("l.db.run-1.lock")), "released: the lock file is gone");
    a = store_lock_run(db, 1, "test four");
    CHECK(a != NULL, "run 1 can be locked again: %s", gs_error());
    store_lock_release(a);
    store_lock_release(c);
    /* a lock file whose writer died holds no lock: taken over */
    touch(in_dir("l.db.run-3.lock"), "gpnscope record, pid 999999 on host elsewhere since 2020-01-01T00:00:00Z\n");
    a = store_lock_run(db, 3, "test five");
    char *text = read_whole_file(in_dir("l.db.run-3.lock"), NULL);
    CHECK(a != NULL && text && strstr(text, "test five"), "a dead holder's lock file is taken over: %s", a ? (text ? text : "") : gs_error());
    free(text);
    /* a child process is refused while we hold it, and gets it once we let go */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        store_lock *x = store_lock_run(db, 3, "child");
        _exit(x == NULL ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another process is refused the held lock");
    store_lock_release(a);
    pid = fork();
    if (pid == 0) {
        store_lock *x = store_lock_run(db, 3, "child");
        _exit(x != NULL ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "and takes it once released");
    CHECK(store_lock_run(in_dir("missing.db"), 1, "x") == NULL, "no lock for a store that does not exist");
}

static void test_reader_is_read_only(void) {
    char db[4200];
    snprintf(db, sizeof db, "%s", in_dir("r.db"));
    store *st = store_open(db, STORE_WRITE | STORE_CREATE);
    CHECK(st && store_begin_run(st, &(store_run){.n_windows = 1}) > 0, "a run: %s", gs_error());
    store_close(st);
    st = store_open(db, STORE_READ);
    CHECK(st != NULL, "open to read: %s", gs_error());
    if (!st) return;
    CHECK(sqlite3_db_readonly(store_db(st), "main") == 1, "a reader's connection is read-only in SQLite");
    CHECK(sqlite3_exec(store_db(st), "PRAGMA query_only = 0; DELETE FROM runs", NULL, NULL, NULL) != SQLITE_OK,
          "a query cannot make it write");
    store_close(st);
    sqlite3 *raw;
    sqlite3_open(db, &raw);
    sqlite3_stmt *s;
    sqlite3_prepare_v2(raw, "SELECT count(*) FROM runs", -1, &s, NULL);
    CHECK(sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1, "the run is still there");
    sqlite3_finalize(s);
    sqlite3_close(raw);
}

static void test_inputs(void) {
    gs_inputs_clear();
    char in[4200], other[4200], hard[4200];
    snprintf(in, sizeof in, "%s", in_dir("input.db"));
    snprintf(other, sizeof other, "%s", in_dir("other.txt"));
    snprintf(hard, sizeof hard, "%s", in_dir("hard.db"));
    touch(in, "x");
    touch(other, "y");
    CHECK(link(in, hard) == 0, "a hard link");
    CHECK(gs_input_add(in) == 0 && gs_input_add(in_dir("not-there")) == 0, "inputs registered");
    CHECK(gs_output_check(in) != 0 && strstr(gs_error(), "is an input"), "the input itself: %s", gs_error());
    CHECK(gs_output_check(hard) != 0 && strstr(gs_error(), "the same file"), "a hard link to it: %s", gs_error());
    CHECK(gs_output_check(other) == 0, "another file may be replaced");
    CHECK(gs_output_check(in_dir("new.txt")) == 0, "a new file may be written");
    gs_inputs_clear();
    CHECK(gs_output_check(in) == 0, "cleared");
}

static void test_stale_tmp(void) {
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/tmp", dir);
    mkdir(sub, 0777);
    fflush(NULL);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char names[6][300];
    snprintf(names[0], sizeof names[0], "%s/.a.png.tmp.%ld", sub, (long)dead);     /* plot image: dead */
    snprintf(names[1], sizeof names[1], "%s/.b.csv.tmp.%ld.7", sub, (long)dead);   /* outfile: dead */
    snprintf(names[2], sizeof names[2], "%s/.c.csv.tmp.%ld.0", sub, (long)getpid()); /* ours */
    snprintf(names[3], sizeof names[3], "%s/.d.tmp.1", sub);                        /* pid 1: alive */
    snprintf(names[4], sizeof names[4], "%s/e.tmp.%ld", sub, (long)dead);          /* not hidden: not ours */
    snprintf(names[5], sizeof names[5], "%s/.f.tmp.%ldx", sub, (long)dead);        /* not a pid */
    for (int i = 0; i < 6; i++) touch(names[i], "x");
    int n = gs_remove_stale_tmp(sub);
    CHECK(n == 2, "two stale files removed (%d)", n);
    CHECK(!exists(names[0]) && !exists(names[1]), "the dead writer's files are gone");
    for (int i = 2; i < 6; i++) CHECK(exists(names[i]), "%s is kept", names[i]);
    CHECK(gs_remove_stale_tmp(in_dir("no-such-dir")) == 0, "a missing folder: nothing to do");
}

static void test_shell_quote(void) {
    char b[64];
    CHECK(!strcmp(gs_shell_quote("study.db", b, sizeof b), "study.db"), "plain: %s", b);
    CHECK(!strcmp(gs_shell_quote("my study.db", b, sizeof b), "'my study.db'"), "space: %s", b);
    CHECK(!strcmp(gs_shell_quote("it's", b, sizeof b), "'it'\\''s'"), "quote: %s", b);
    CHECK(!strcmp(gs_shell_quote("$HOME`x`", b, sizeof b), "'$HOME`x`'"), "specials: %s", b);
    CHECK(!strcmp(gs_shell_quote("", b, sizeof b), "''"), "empty: %s", b);
    char small[6];
    gs_shell_quote("a b c d e f", small, sizeof small);
    CHECK(small[0] == '\'' && small[strlen(small) - 1] == '\'' && strlen(small) < sizeof small, "cut short, closed: %s",
          small);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s", scratch_dir("test_store_lock"));
    test_lock();
    test_reader_is_read_only();
    test_inputs();
    test_stale_tmp();
    test_shell_quote();
    return test_summary();
}
