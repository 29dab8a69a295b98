/* Shared by the store's own .c files; not part of its public contract. */
#ifndef GS_STORE_INTERNAL_H
#define GS_STORE_INTERNAL_H

#include <sqlite3.h>
#include <sys/types.h>

#include "store/store.h"

/* Statements the writers reuse across calls (prepared on first use). */
enum {
    STMT_TOKEN,
    STMT_HEAD,
    STMT_STATE,
    STMT_WINDOW,
    STMT_PIECE,
    STMT_SCALAR,
    STMT_SERIES,
    STMT_VECTOR,
    STMT_COUNT
};

struct store {
    sqlite3 *db;
    char *path;
    int writable;
    long long file_size; /* the main file's size when opened */
    dev_t dev;           /* the file, counted among those this process has open (store.c) */
    ino_t ino;
    int counted;
    int create; /* STORE_CREATE: an empty database becomes a store; other openers refuse it */
    int depth; /* batch nesting; a transaction is open while > 0 */
    sqlite3_stmt *stmt[STMT_COUNT];
    uint16_t *half; /* scratch for float16 conversion */
    size_t half_cap;
};

/* 0 when the -wal beside the store at path (if any) is the store's own (or
 * another live connection's); else -1 with gs_error() naming it and what to
 * do. Changes no byte of either file (store/wal_check.c). */
int store_check_wal(const char *path);
/* "file:PATH" and then query (e.g. "?immutable=1": the main file alone, no
 * -wal read, no lock), the real path percent-escaped (malloc'd; NULL with
 * errno set). */
char *st_file_uri(const char *path, const char *query);
/* Record "PATH: what: sqlite message (hint)" and return -1. */
int st_fail(store *st, const char *what);
/* Run SQL without results; -1 with gs_error() set on failure. */
int st_exec(store *st, const char *sql, const char *what);
/* Prepare (once) and reset a cached statement. */
sqlite3_stmt *st_cached(store *st, int which, const char *sql);
/* Prepare a one-off statement; NULL with gs_error() set. */
sqlite3_stmt *st_prepare(store *st, const char *sql);
/* a text column into a buffer ("" for NULL), truncated to fit */
void st_copy_text(sqlite3_stmt *s, int col, char *dst, size_t size);
/* Step a statement expecting SQLITE_DONE; -1 with gs_error() set. */
int st_step_done(store *st, sqlite3_stmt *s, const char *what);
/* Bind text, or NULL when s is NULL or empty. */
void st_bind_text(sqlite3_stmt *s, int i, const char *text);
/* Bind a float, or NULL when it is NaN. */
void st_bind_float(sqlite3_stmt *s, int i, double v);
/* Step s to its end, one row of `size` bytes per result row, filled by fill; finalizes s. *out malloc'd
 * (NULL when no rows); the count, or -1 with the error set (`what` names the list). (analysis_read.c) */
int st_read_rows(store *st, sqlite3_stmt *s, size_t size, void (*fill)(sqlite3_stmt *, void *), void **out,
                 const char *what);

/* schema.c */
typedef struct {
    int version;
    const char *sql;
} store_migration;
#define STORE_APPLICATION_ID 0x47504e53 /* "GPNS" */
/* Bring db from its user_version to `target` with the migrations list
 * (ascending versions), in one transaction. Refuses a newer file. */
int store_migrate(sqlite3 *db, const char *path, const store_migration *list, int n, int target);
extern const store_migration store_migrations[];
extern const int store_n_migrations;

#endif
