/* The vec_sql fuzz target's input format, shared with the seed generator.
 *
 *   byte 0        the function (index into fuzz_vec_fns, modulo its size)
 *   then          its arguments, each a tag byte and a payload:
 *     FV_BLOB     length byte L, then L bytes
 *     FV_INT      8 bytes, a little-endian int64
 *     FV_REAL     8 bytes, a double (NaN binds as NULL, as SQLite does)
 *     FV_NULL     nothing
 *     FV_TEXT     length byte L, then L bytes (JSON or not, UTF-8 or not)
 *     FV_SMALL    1 byte, a signed int8 (indexes)
 *   (the tag byte is taken modulo 6; a missing byte reads as 0).
 * vec_avg takes rows, one argument each, until the input ends (at most 16),
 * and runs as an aggregate and as a sliding window. */
#ifndef GS_TESTS_FUZZ_VEC_H
#define GS_TESTS_FUZZ_VEC_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

enum { FV_BLOB, FV_INT, FV_REAL, FV_NULL, FV_TEXT, FV_SMALL };

typedef struct {
    const char *name;
    int nargs;
} fuzz_vec_fn;

static const fuzz_vec_fn fuzz_vec_fns[] = {
    {"vec_length", 1}, {"vec_to_json", 1}, {"vec_f32", 1}, {"vec_f32", 2}, {"vec_at", 2}, {"vec_slice", 3},
    {"vec_dot", 2}, {"vec_norm", 1}, {"vec_cosine", 2}, {"vec_distance_cosine", 2}, {"vec_distance_l2", 2},
    {"vec_add", 2}, {"vec_sub", 2}, {"vec_scale", 2}, {"vec_normalize", 1}, {"vec_project", 2}, {"vec_avg", 1},
};
#define FUZZ_VEC_N_FNS ((int)(sizeof fuzz_vec_fns / sizeof *fuzz_vec_fns))

typedef struct {
    const uint8_t *p;
    size_t n, i;
} fv_cursor;

static inline uint8_t fv_byte(fv_cursor *c) { return c->i < c->n ? c->p[c->i++] : 0; }

/* Bind the next argument to parameter k of s; a BLOB is also returned in (blob, blob_len). */
static inline void fv_bind(fv_cursor *c, sqlite3_stmt *s, int k, const uint8_t **blob, int *blob_len) {
    uint8_t tag = fv_byte(c) % 6;
    uint8_t raw[8] = {0};
    *blob = NULL;
    *blob_len = 0;
    switch (tag) {
    case FV_BLOB:
    case FV_TEXT: {
        size_t len = fv_byte(c);
        if (len > c->n - c->i) len = c->n - c->i;
        const uint8_t *p = c->p + c->i;
        c->i += len;
        if (tag == FV_TEXT) {
            sqlite3_bind_text(s, k, (const char *)p, (int)len, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_blob(s, k, p, (int)len, SQLITE_TRANSIENT);
            *blob = p;
            *blob_len = (int)len;
        }
        break;
    }
    case FV_INT:
    case FV_REAL: {
        for (int b = 0; b < 8; b++) raw[b] = fv_byte(c);
        if (tag == FV_INT) {
            int64_t v;
            memcpy(&v, raw, 8);
            sqlite3_bind_int64(s, k, v);
        } else {
            double d;
            memcpy(&d, raw, 8);
            sqlite3_bind_double(s, k, d);
        }
        break;
    }
    case FV_SMALL: sqlite3_bind_int(s, k, (int8_t)fv_byte(c)); break;
    default: sqlite3_bind_null(s, k); break;
    }
}

/* Step s to the end; returns the number of rows, or -1 on an SQL error
 * (the functions' way of refusing bad arguments). Vector results must be
 * whole float32 vectors. */
static inline int fv_run(sqlite3_stmt *s, int vector_result) {
    int rows = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        rows++;
        if (vector_result && sqlite3_column_type(s, 0) == SQLITE_BLOB) {
            int bytes = sqlite3_column_bytes(s, 0);
            FUZZ_ASSERT(bytes > 0 && bytes % 4 == 0, "a vector result of %d bytes", bytes);
        }
    }
    return rc == SQLITE_DONE ? rows : -1;
}

static inline int fv_returns_vector(const char *name) {
    static const char *const v[] = {"vec_f32", "vec_slice", "vec_add", "vec_sub", "vec_scale", "vec_normalize", "vec_avg"};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!strcmp(name, v[i])) return 1;
    return 0;
}

/* A float32 BLOB with only finite elements survives vec_to_json and back
 * bit for bit, and vec_length counts its elements. */
static inline void fv_check_blob(sqlite3 *db, const uint8_t *p, int len) {
    if (len <= 0 || len % 4) return;
    for (int i = 0; i < len; i += 4) {
        float x;
        memcpy(&x, p + i, 4);
        if (x != x || x - x != 0) return; /* NaN or Inf: JSON has no spelling for them */
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT vec_f32(vec_to_json(?1)) = ?1, vec_length(?1)", -1, &s, NULL) != SQLITE_OK) abort();
    sqlite3_bind_blob(s, 1, p, len, SQLITE_STATIC);
    FUZZ_ASSERT(sqlite3_step(s) == SQLITE_ROW, "JSON round trip failed: %s", sqlite3_errmsg(db));
    FUZZ_ASSERT(sqlite3_column_int(s, 0) == 1, "vec_to_json then vec_f32 changed a vector of %d floats", len / 4);
    FUZZ_ASSERT(sqlite3_column_int(s, 1) == len / 4, "vec_length %d for %d floats", sqlite3_column_int(s, 1), len / 4);
    sqlite3_finalize(s);
}

/* Run one input on db (with the functions registered). Returns the number
 * of statements that ended in an SQL error. */
static inline int fuzz_vec_run(sqlite3 *db, const uint8_t *data, size_t size) {
    fv_cursor c = {data, size, 0};
    const fuzz_vec_fn *fn = &fuzz_vec_fns[fv_byte(&c) % FUZZ_VEC_N_FNS];
    int errors = 0;
    const uint8_t *blob;
    int blob_len;
    sqlite3_stmt *s;
    if (strcmp(fn->name, "vec_avg") != 0) {
        char sql[128] = "";
        int k = snprintf(sql, sizeof sql, "SELECT %s(", fn->name);
        for (int a = 0; a < fn->nargs; a++) k += snprintf(sql + k, sizeof sql - (size_t)k, "%s?%d", a ? ", " : "", a + 1);
        snprintf(sql + k, sizeof sql - (size_t)k, ")");
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) abort();
        for (int a = 0; a < fn->nargs; a++) {
            fv_bind(&c, s, a + 1, &blob, &blob_len);
            fv_check_blob(db, blob, blob_len);
        }
        errors += fv_run(s, fv_returns_vector(fn->name)) < 0;
        sqlite3_finalize(s);
        return errors;
    }
    if (sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS fuzz_rows(v); DELETE FROM fuzz_rows", NULL, NULL, NULL) != SQLITE_OK) abort();
    if (sqlite3_prepare_v2(db, "INSERT INTO fuzz_rows(v) VALUES (?1)", -1, &s, NULL) != SQLITE_OK) abort();
    for (int row = 0; row < 16 && c.i < c.n; row++) {
        fv_bind(&c, s, 1, &blob, &blob_len);
        if (sqlite3_step(s) != SQLITE_DONE) abort();
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    static const char *const queries[] = {
        "SELECT vec_avg(v) FROM fuzz_rows",
        "SELECT vec_avg(v) OVER (ORDER BY rowid ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM fuzz_rows",
        "SELECT vec_avg(v) OVER (ORDER BY rowid ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM fuzz_rows",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        if (sqlite3_prepare_v2(db, queries[q], -1, &s, NULL) != SQLITE_OK) abort();
        errors += fv_run(s, 1) < 0;
        sqlite3_finalize(s);
    }
    return errors;
}

#endif
