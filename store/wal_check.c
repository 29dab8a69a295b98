/* Is the -wal beside a store this store's? SQLite folds any -wal it finds
 * into the file it sits beside, and a -wal from another database (a copied
 * store with a stranger's -wal next to it) corrupts it when a writer
 * checkpoints, or makes a reader show the stranger's rows. Nothing in a
 * -wal names its database, so the store is read twice: the main file alone
 * (immutable=1 ignores the -wal) and through the -wal (read-only: nothing is
 * checkpointed), and the second must be the first plus later writes: still
 * a gpnscope store, SQLite's quick_check clean, and every model and run of
 * the main file still there with the same identity. A store's own -wal left
 * by a killed writer passes (it only adds rows); a -wal some live connection
 * holds is that connection's and is not judged. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "store/store_internal.h"

/* The byte of the -shm every connection holds a shared lock on while it is
 * open (SQLite's unix VFS: UNIX_SHM_DMS, after 120 bytes of header and the
 * 8 lock bytes). */
#define SHM_DMS_BYTE 128

/* 1 when another process has the store open (a lock on the -shm's DMS byte). */
static int held_by_another(const char *shm) {
    int fd = open(shm, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_DMS_BYTE, .l_len = 1};
    int held = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return held;
}

char *st_file_uri(const char *path, const char *query) {
    char *real = realpath(path, NULL);
    if (!real) return NULL;
    char *uri = malloc(3 * strlen(real) + strlen(query) + 8), *q = uri;
    if (uri) {
        q += sprintf(q, "file:");
        for (const unsigned char *p = (const unsigned char *)real; *p; p++) {
            if (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 || *p > 0x7e) q += sprintf(q, "%%%02X", *p);
            else *q++ = (char)*p;
        }
        strcpy(q, query);
    }
    free(real);
    return uri;
}

/* The first column of the first row of sql as an integer; -1 on an error. */
static long long one_int(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return -1;
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* The first column of sql's first row as text into out ("" if none). */
static void one_text(sqlite3 *db, const char *sql, char *out, size_t size) {
    sqlite3_stmt *s;
    out[0] = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(out, size, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* 1 when the last error says another connection is at work on the store
 * (it opened or is closing between our lock probe and our read): its -wal
 * is then that connection's, not judged. */
static int busy(sqlite3 *db) {
    int code = sqlite3_extended_errcode(db) & 0xff;
    return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

/* How the store read through its -wal differs from its main file: NULL when
 * it does not (the -wal only adds), else a phrase for the message. */
static const char *judge(sqlite3 *wal, char *detail, size_t size) {
    detail[0] = 0;
    long long app = one_int(wal, "PRAGMA application_id");
    if (app < 0 && busy(wal)) return NULL;
    if (app < 0) return "the store cannot be read through it";
    if (app != STORE_APPLICATION_ID) return "through it the file is no longer a gpnscope store";
    long long version = one_int(wal, "PRAGMA user_version");
    if (version < 0 && busy(wal)) return NULL;
    if (version < one_int(wal, "PRAGMA m.user_version")) return "through it the store's schema is older than the file's";
    one_text(wal, "PRAGMA quick_check", detail, size);
    if (strcmp(detail, "ok") != 0 && busy(wal)) return NULL;
    if (strcmp(detail, "ok") != 0) return "SQLite's quick_check of the store read through it fails";
    detail[0] = 0;
    /* the main file's models and runs are never deleted or renumbered by gpnscope: all must still be there */
    if (one_int(wal, "SELECT count(*) FROM m.sqlite_schema WHERE name IN ('models', 'runs')") < 2) return NULL;
    long long lost = one_int(wal, "SELECT (SELECT count(*) FROM m.models a WHERE NOT EXISTS (SELECT 1 FROM main.models b "
                                  "WHERE b.id = a.id AND b.sha256 = a.sha256))"
                                  " + (SELECT count(*) FROM m.runs a WHERE NOT EXISTS (SELECT 1 FROM main.runs b "
                                  "WHERE b.id = a.id AND b.model_id IS a.model_id AND b.kind = a.kind))");
    if (lost < 0 && busy(wal)) return NULL;
    if (lost != 0) return "through it the store's models and runs are not the file's";
    return NULL;
}

int store_check_wal(const char *path) {
    char wal_path[4200], shm_path[4200];
    snprintf(wal_path, sizeof wal_path, "%s-wal", path);
    snprintf(shm_path, sizeof shm_path, "%s-shm", path);
    struct stat sb;
    if (stat(wal_path, &sb) != 0 || sb.st_size == 0 || held_by_another(shm_path)) return 0;
    char *uri = st_file_uri(path, "?immutable=1");
    if (!uri) return 0; /* the ordinary open reports what is wrong with the path */
    sqlite3 *main_only = NULL, *db = NULL;
    int rc = 0;
    /* judged only when the main file alone is a store */
    long long main_app = -1;
    if (sqlite3_open_v2(uri, &main_only, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK)
        main_app = one_int(main_only, "PRAGMA application_id");
    sqlite3_close(main_only);
    /* then read-only through the -wal, the main file alone attached as m */
    /* the same file by a plain file: URI (store_open opens path without URI parsing; a name such as
     * "file:x.db" must not be read as one) */
    char *plain = st_file_uri(path, "");
    if (main_app == STORE_APPLICATION_ID && plain &&
        sqlite3_open_v2(plain, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK) {
        char detail[300];
        const char *why = NULL;
        sqlite3_stmt *s = NULL;
        sqlite3_busy_timeout(db, 2000);
        if (sqlite3_exec(db, "SELECT 1 FROM sqlite_schema LIMIT 1", NULL, NULL, NULL) != SQLITE_OK) {
            int code = sqlite3_extended_errcode(db) & 0xff;
            /* a folder readers cannot write is left to store_open's own message; a busy store is live */
            if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN && !busy(db)) {
                why = "the store cannot be read through it";
                snprintf(detail, sizeof detail, "%s", sqlite3_errmsg(db));
            }
        } else if (sqlite3_prepare_v2(db, "ATTACH ?1 AS m", -1, &s, NULL) != SQLITE_OK ||
                   sqlite3_bind_text(s, 1, uri, -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) {
            if (!busy(db)) why = "the store cannot be read through it";
            snprintf(detail, sizeof detail, "%s", sqlite3_errmsg(db));
        } else if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK) {
            /* one read transaction: every query of the judgement sees the same snapshot */
            why = judge(db, detail, sizeof detail);
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        }
        sqlite3_finalize(s);
        if (why)
            rc = gs_fail("%s does not belong to %s (%s%s%s): move %s away if it is not this store's; nothing was "
                         "changed",
                         wal_path, path, why, detail[0] ? ": " : "", detail, wal_path);
    }
    sqlite3_close(db);
    free(plain);
    free(uri);
    return rc;
}
