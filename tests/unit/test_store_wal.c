/* A reader process reads while a writer process records (WAL mode): the
 * reader never gets an error, and never sees half a batch. No timing is
 * assumed: the reader just keeps reading until the writer has exited.
 * Also: a -wal whose store is locked by a live writer (as while it closes:
 * it has let go of the -shm but not yet removed its -wal) is not judged
 * foreign. */
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "store/store.h"
#include "store/store_internal.h"
#include "testlib.h"

enum { BATCHES = 40, ROWS = 50, D = 32 };

static int writer(const char *path, int64_t run) {
    store *st = store_open(path, STORE_WRITE);
    if (!st) { fprintf(stderr, "writer: %s\n", gs_error()); return 1; }
    float v[D];
    for (int b = 0; b < BATCHES; b++) {
        store_token_row rows[ROWS];
        if (store_begin(st)) goto fail;
        for (int t = 0; t < ROWS; t++) {
            rows[t] = (store_token_row){.window = b, .position = t, .token_id = t, .next_token_id = -1, .top1 = -1,
                                        .nll = 1, .entropy = 2};
            for (int i = 0; i < D; i++) v[i] = (float)(b + t + i);
            if (store_put_state(st, run, b, t, "pred", STORE_F16, v, D)) goto fail;
        }
        if (store_put_tokens(st, run, rows, ROWS) || store_window_done(st, run, b, b * ROWS, ROWS) ||
            store_run_progress(st, run, b + 1, (int64_t)(b + 1) * ROWS) || store_commit(st))
            goto fail;
    }
    if (store_finish_run(st, run, "complete", NULL)) goto fail;
    store_close(st);
    return 0;
fail:
    fprintf(stderr, "writer: %s\n", gs_error());
    store_close(st);
    return 1;
}

/* A connection that holds the whole store (exclusive locking in WAL mode
 * keeps no -shm lock for the probe to see) with rows in its -wal: the -wal
 * check must see a busy store, not a stranger's -wal. */
static void busy_store_is_not_judged(const char *dir) {
    char path[4200], wal[4300];
    snprintf(path, sizeof path, "%s/busy.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    store *st = store_open(path, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "create: %s", gs_error());
    if (!st) return;
    store_close(st);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK, "raw open");
    CHECK(sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; CREATE TABLE extra(x); INSERT INTO extra VALUES (1)", NULL,
                       NULL, NULL) == SQLITE_OK,
          "write under an exclusive lock: %s", sqlite3_errmsg(db));
    struct stat sb;
    CHECK(stat(wal, &sb) == 0 && sb.st_size > 0, "the writer's rows are in the -wal");
    CHECK(store_check_wal(path) == 0, "a live writer's -wal is not judged: %s", gs_error());
    sqlite3_close(db);
}

int main(void) {
    busy_store_is_not_judged(scratch_dir("test_store_wal_busy"));
    char path[4200];
    snprintf(path, sizeof path, "%s/wal.db", scratch_dir("test_store_wal"));
    store *st = store_open(path, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "create: %s", gs_error());
    if (!st) return test_summary();
    int64_t run = store_begin_run(st, &(store_run){.n_windows = BATCHES});
    store_close(st);

    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(writer(path, run));

    /* the reader: a fresh connection per pass, as a person at the sqlite3 shell would */
    int errors = 0, torn = 0, backwards = 0, passes = 0, exited = 0, status = 0;
    int64_t last = 0;
    while (!exited || passes < 2) {
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) exited = 1;
        store *r = store_open(path, STORE_READ);
        if (!r) { errors++; fprintf(stderr, "reader open: %s\n", gs_error()); break; }
        sqlite3_stmt *s;
        /* one statement, one snapshot: tokens, states and windows must agree */
        if (sqlite3_prepare_v2(store_db(r),
                               "SELECT (SELECT count(*) FROM tokens), (SELECT count(*) FROM states),"
                               " (SELECT count(*) FROM windows), (SELECT sum(vec_length(vec_f32(vector, dtype))) FROM states)",
                               -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
            errors++;
            fprintf(stderr, "reader: %s\n", sqlite3_errmsg(store_db(r)));
        } else {
            int64_t tok = sqlite3_column_int64(s, 0), sta = sqlite3_column_int64(s, 1), win = sqlite3_column_int64(s, 2);
            int64_t dims = sqlite3_column_int64(s, 3);
            if (tok != sta || tok != win * ROWS || dims != sta * D) torn++;
            if (tok < last) backwards++;
            last = tok;
        }
        sqlite3_finalize(s);
        store_close(r);
        if (exited) passes++;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer finished (status %d)", status);
    CHECK(errors == 0, "the reader never failed (%d errors)", errors);
    CHECK(torn == 0, "the reader never saw half a batch (%d times)", torn);
    CHECK(backwards == 0, "counts never went backwards");
    CHECK(last == BATCHES * ROWS, "the reader sees everything at the end (%lld)", (long long)last);
    return test_summary();
}
