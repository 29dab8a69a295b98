#include "notebooks-export/csv.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

void gs_csv_text(FILE *f, const char *s) {
    if (!s) return;
    if (*s && !strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

void gs_fmt_double(char *buf, size_t size, double v) {
    if (isnan(v)) { buf[0] = 0; return; }
    if (isinf(v)) { snprintf(buf, size, v > 0 ? "inf" : "-inf"); return; }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

void gs_fmt_float(char *buf, size_t size, float v) {
    if (isnan(v)) { buf[0] = 0; return; }
    if (isinf(v)) { snprintf(buf, size, v > 0 ? "inf" : "-inf"); return; }
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, size, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v) return;
    }
}

void gs_csv_double(FILE *f, double v) {
    char buf[40];
    gs_fmt_double(buf, sizeof buf, v);
    fputs(buf, f);
}

void gs_csv_float(FILE *f, float v) {
    char buf[40];
    gs_fmt_float(buf, sizeof buf, v);
    fputs(buf, f);
}

void gs_csv_int(FILE *f, int64_t v) { fprintf(f, "%lld", (long long)v); }

int64_t gs_csv_query(FILE *f, sqlite3_stmt *s) {
    int cols = sqlite3_column_count(s);
    for (int c = 0; c < cols; c++) {
        if (c) gs_csv_sep(f);
        const char *name = sqlite3_column_name(s, c);
        gs_csv_text(f, name ? name : "?");
    }
    gs_csv_eol(f);
    int64_t rows = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int c = 0; c < cols; c++) {
            if (c) gs_csv_sep(f);
            switch (sqlite3_column_type(s, c)) {
            case SQLITE_NULL: break;
            case SQLITE_INTEGER: gs_csv_int(f, sqlite3_column_int64(s, c)); break;
            case SQLITE_FLOAT: gs_csv_double(f, sqlite3_column_double(s, c)); break;
            case SQLITE_BLOB: {
                const unsigned char *b = sqlite3_column_blob(s, c);
                int n = sqlite3_column_bytes(s, c);
                for (int i = 0; i < n; i++) fprintf(f, "%02x", b[i]);
                break;
            }
            default: gs_csv_text(f, (const char *)sqlite3_column_text(s, c)); break;
            }
        }
        gs_csv_eol(f);
        rows++;
    }
    if (rc != SQLITE_DONE) {
        sqlite3 *db = sqlite3_db_handle(s);
        return gs_fail("reading rows: %s", db ? sqlite3_errmsg(db) : "SQL error");
    }
    return rows;
}
