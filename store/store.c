/* Opening a store (identity, schema version, WAL), batches and the small
 * helpers every store file shares. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/inputs.h"
#include "base/text.h"
#include "store/store_internal.h"
#include "store/vec_sql.h"

/* What to do about an SQLite failure, by primary result code. */
static const char *hint(int code) {
    switch (code & 0xff) {
    case SQLITE_FULL: return " (the disk is full: free space, then run the command again)";
    case SQLITE_READONLY: return " (the file or its folder is read-only: use a writable copy)";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return " (another process holds a lock on it: wait for it to finish)";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return " (the file is damaged or not a database)";
    case SQLITE_CANTOPEN: return " (cannot open it or its -wal/-shm files: check the folder's permissions)";
    case SQLITE_IOERR: return " (an I/O error: is the disk full or failing?)";
    case SQLITE_NOMEM: return " (out of memory)";
    default: return "";
    }
}

int st_fail(store *st, const char *what) {
    int code = sqlite3_extended_errcode(st->db);
    return gs_fail("%s: %s: %s%s", st->path, what, sqlite3_errmsg(st->db), hint(code));
}

int st_exec(store *st, const char *sql, const char *what) {
    char *err = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &err) == SQLITE_OK) return 0;
    int code = sqlite3_extended_errcode(st->db);
    gs_fail("%s: %s: %s%s", st->path, what, err ? err : sqlite3_errmsg(st->db), hint(code));
    sqlite3_free(err);
    return -1;
}

sqlite3_stmt *st_prepare(store *st, const char *sql) {
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        st_fail(st, "preparing a query");
        return NULL;
    }
    return s;
}

sqlite3_stmt *st_cached(store *st, int which, const char *sql) {
    if (!st->stmt[which]) {
        if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[which], NULL) != SQLITE_OK) {
            st_fail(st, "preparing a statement");
            return NULL;
        }
    }
    sqlite3_reset(st->stmt[which]);
    sqlite3_clear_bindings(st->stmt[which]);
    return st->stmt[which];
}

int st_step_done(store *st, sqlite3_stmt *s, const char *what) {
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
        sqlite3_reset(s);
        return 0;
    }
    sqlite3_reset(s);
    return st_fail(st, what);
}

void st_bind_text(sqlite3_stmt *s, int i, const char *text) {
    if (text && *text) sqlite3_bind_text(s, i, text, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(s, i);
}

void st_bind_float(sqlite3_stmt *s, int i, double v) {
    if (isnan(v)) sqlite3_bind_null(s, i);
    else sqlite3_bind_double(s, i, v);
}

static int table_count(sqlite3 *db, int *n) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &s, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* Is this file ours? Empty databases are adopted when writing. */
static int check_identity(store *st) {
    sqlite3_stmt *s;
    int app = 0, version = 0, n_tables = 0;
    if (sqlite3_prepare_v2(st->db, "PRAGMA application_id", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        int code = sqlite3_extended_errcode(st->db);
        sqlite3_finalize(s);
        if ((code & 0xff) == SQLITE_NOTADB)
            return gs_fail("%s is not a gpnscope store (not an SQLite database at all)", st->path);
        return st_fail(st, "reading the file");
    }
    app = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (table_count(st->db, &n_tables)) return st_fail(st, "reading the schema");
    if (app == STORE_APPLICATION_ID) {
        if (version > STORE_SCHEMA_VERSION)
            return gs_fail("%s has store schema version %d, newer than this gpnscope understands (%d): use a newer gpnscope",
                           st->path, version, STORE_SCHEMA_VERSION);
        if (version < STORE_SCHEMA_VERSION && !st->writable) {
            /* readers never migrate: name the command that does */
            char q[4200];
            return gs_fail("%s has store schema version %d, older than this gpnscope's (%d): migrate it once with "
                           "`gpnscope migrate %s`",
                           st->path, version, STORE_SCHEMA_VERSION, gs_shell_quote(st->path, q, sizeof q));
        }
        return 0;
    }
    if (app == 0 && version == 0 && n_tables == 0) {
        if (st->create) return 0; /* empty: record, import and merge make it a store */
        return gs_fail("%s is not a gpnscope store (an empty %s): record or import into it first", st->path,
                       st->file_size == 0 ? "file" : "database");
    }
    return gs_fail("%s is an SQLite database but not a gpnscope store (application_id %d, %d schema objects): "
                   "choose another file", st->path, app, n_tables);
}

/* Size of the file path + suffix: -1 when there is none. */
static long long side_size(const char *path, const char *suffix) {
    char side[4200];
    struct stat sb;
    snprintf(side, sizeof side, "%s%s", path, suffix);
    return stat(side, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* A read-only connection to a WAL-mode store needs the -shm file (SQLite's
 * index of the -wal), which it creates when missing. In a folder the reader
 * may not write (a shared dataset, a read-only mount) it cannot. No -shm
 * means no connection has the store open (every one keeps it), so when the
 * -wal holds nothing either (none, or an empty one a reader left) the main
 * file alone is the whole store, and it is opened as immutable. A -wal with
 * frames in it needs recovery by a writer first, which cannot happen in that
 * folder: say so. An -shm that exists but cannot be opened is left to the
 * ordinary error (its owner may be recording). Returns 1 (reopen
 * immutable), 0 (read as it is) or -1 (error set). */
static int needs_immutable(store *st) {
    if (sqlite3_exec(st->db, "SELECT 1 FROM sqlite_schema LIMIT 1", NULL, NULL, NULL) == SQLITE_OK) return 0;
    int code = sqlite3_extended_errcode(st->db) & 0xff;
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN) return 0;
    if (side_size(st->path, "-shm") >= 0) return 0;
    long long wal = side_size(st->path, "-wal");
    if (wal <= 0) return 1;
    return gs_fail("%s has a -wal file of %lld bytes (changes not yet in the main file) and its folder cannot be "
                   "written, so it cannot be read: copy the file and its -wal to a writable folder and recover the "
                   "copy with `gpnscope sql --write COPY 'SELECT 1'`", st->path, wal);
}

static int reopen_immutable(store *st) {
    char *uri = st_file_uri(st->path, "?immutable=1");
    if (!uri) return gs_fail("%s: %s", st->path, strerror(errno ? errno : ENOMEM));
    sqlite3_close(st->db);
    st->db = NULL;
    int rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) return st->db ? st_fail(st, "opening read-only") : gs_fail("%s: out of memory", st->path);
    sqlite3_extended_result_codes(st->db, 1);
    return 0;
}

/* The store files this process has open, by device and inode: the -wal check
 * opens and closes the -shm, which would drop the classic fcntl locks an open
 * connection of this process holds on it, so a store already open here is
 * not checked again (its -wal is then a live connection's anyway). */
#define MAX_OPEN_HERE 64
static struct { dev_t dev; ino_t ino; int n; } open_here[MAX_OPEN_HERE];

static int *open_count(dev_t dev, ino_t ino, int add) {
    int free_slot = -1;
    for (int i = 0; i < MAX_OPEN_HERE; i++) {
        if (open_here[i].n > 0 && open_here[i].dev == dev && open_here[i].ino == ino) return &open_here[i].n;
        if (open_here[i].n == 0 && free_slot < 0) free_slot = i;
    }
    if (!add || free_slot < 0) return NULL;
    open_here[free_slot].dev = dev;
    open_here[free_slot].ino = ino;
    return &open_here[free_slot].n;
}

store *store_open(const char *path, int flags) {
    int writable = (flags & STORE_WRITE) != 0, create = writable && (flags & STORE_CREATE);
    if (!path || !*path) { gs_fail("store: no file name given"); return NULL; }
    struct stat sb = {0};
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT) { gs_fail("%s: %s", path, strerror(errno)); return NULL; }
        if (!create) {
            gs_fail("%s does not exist%s", path, writable ? "" : " (record or import into it first)");
            return NULL;
        }
    } else if (S_ISDIR(sb.st_mode)) {
        gs_fail("%s is a directory, not a gpnscope store", path);
        return NULL;
    } else if (writable && sb.st_nlink > 1) {
        /* SQLite finds the -wal by name: a writer through one name would not see another's -wal */
        gs_fail("%s has %ld hard links: SQLite keeps a store's -wal by its name, so writing through one name can "
                "corrupt what another is writing; copy the file (cp) instead of linking it",
                path, (long)sb.st_nlink);
        return NULL;
    }
    /* the store (and its -wal and -shm) is an input no output may replace */
    char side[4200];
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", path, i == 0 ? "" : i == 1 ? "-wal" : "-shm");
        if (gs_input_add(side)) return NULL; /* out of memory */
    }
    store *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) { free(st); gs_fail("%s: out of memory", path); return NULL; }
    st->writable = writable;
    st->create = create;
    st->file_size = sb.st_size; /* 0 when it does not exist yet */
    if (!open_count(sb.st_dev, sb.st_ino, 0) && store_check_wal(path)) { store_close(st); return NULL; }
    /* A reader opens the file read-only, so that nothing it does changes a
     * byte of it: a read-write connection folds whatever -wal lies beside the
     * file into it when it closes (even a -wal left from another copy of the
     * store, which corrupts it), and PRAGMA query_only, the old guard, is
     * undone by the next query's own PRAGMA. The cost: SQLite leaves the -wal
     * and -shm files a reader needed (empty ones when there were none), as
     * `sqlite3 -readonly` does; the next writer removes them. */
    int oflags = writable ? SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &st->db, oflags, NULL) != SQLITE_OK) {
        if (st->db) st_fail(st, "opening");
        else gs_fail("%s: cannot open (out of memory)", path);
        store_close(st);
        return NULL;
    }
    sqlite3_extended_result_codes(st->db, 1);
    /* readers and the writer share the file: wait for locks, do not fail */
    sqlite3_busy_timeout(st->db, 10000);
    /* SQLite quietly opens a file it may not write read-only; say so now */
    if (writable && sqlite3_db_readonly(st->db, "main") == 1) {
        gs_fail("%s is read-only (file permissions or a read-only folder): use a writable copy", path);
        store_close(st);
        return NULL;
    }
    if (!writable) {
        int im = needs_immutable(st);
        if (im < 0 || (im > 0 && reopen_immutable(st))) { store_close(st); return NULL; }
    }
    if (check_identity(st)) { store_close(st); return NULL; }
    if (writable) {
        sqlite3_stmt *s = NULL;
        const char *mode = NULL;
        if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
            mode = (const char *)sqlite3_column_text(s, 0);
        int wal = mode && !strcmp(mode, "wal");
        sqlite3_finalize(s);
        if (!wal) {
            st_fail(st, "switching to WAL mode");
            store_close(st);
            return NULL;
        }
        /* NORMAL is safe in WAL mode: a crash may lose the last batches, never consistency */
        if (st_exec(st, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "configuring") ||
            store_migrate(st->db, path, store_migrations, store_n_migrations, STORE_SCHEMA_VERSION)) {
            store_close(st);
            return NULL;
        }
    }
    if (store_register_vec_functions(st->db) != SQLITE_OK) {
        st_fail(st, "registering the vector functions");
        store_close(st);
        return NULL;
    }
    struct stat now;
    if (stat(path, &now) == 0) {
        int *n = open_count(now.st_dev, now.st_ino, 1);
        if (n) {
            (*n)++;
            st->dev = now.st_dev;
            st->ino = now.st_ino;
            st->counted = 1;
        }
    }
    return st;
}

void store_close(store *st) {
    if (st && st->counted) {
        int *n = open_count(st->dev, st->ino, 0);
        if (n) (*n)--;
    }
    if (!st) return;
    if (st->db && st->depth > 0) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    for (int i = 0; i < STMT_COUNT; i++) sqlite3_finalize(st->stmt[i]);
    sqlite3_close(st->db);
    free(st->half);
    free(st->path);
    free(st);
}

const char *store_path(const store *st) { return st->path; }
sqlite3 *store_db(store *st) { return st->db; }

int store_begin(store *st) {
    if (st->depth == 0 && st_exec(st, "BEGIN IMMEDIATE", "starting a batch")) return -1;
    st->depth++;
    return 0;
}

int store_commit(store *st) {
    if (st->depth <= 0) return gs_fail("%s: commit without a batch (store_begin)", st->path);
    if (--st->depth > 0) return 0;
    if (sqlite3_get_autocommit(st->db)) /* SQLite rolled back by itself after an error */
        return gs_fail("%s: the batch was rolled back after an earlier error; nothing was committed", st->path);
    if (st_exec(st, "COMMIT", "committing a batch")) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int store_rollback(store *st) {
    st->depth = 0;
    if (sqlite3_get_autocommit(st->db)) return 0;
    return st_exec(st, "ROLLBACK", "rolling back a batch");
}
