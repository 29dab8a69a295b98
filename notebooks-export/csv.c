#include "notebooks-export/csv.h"

#include <math.h>
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

int64_t gs_csv_query(FILE *f, store_rows *r) {
    int cols = store_rows_columns(r);
    for (int c = 0; c < cols; c++) {
        if (c) gs_csv_sep(f);
        const char *name = store_rows_name(r, c);
        gs_csv_text(f, name ? name : "?");
    }
    gs_csv_eol(f);
    int64_t rows = 0;
    int rc;
    while ((rc = store_rows_next(r)) == 1) {
        for (int c = 0; c < cols; c++) {
            if (c) gs_csv_sep(f);
            switch (store_rows_type(r, c)) {
            case STORE_VALUE_NULL: break;
            case STORE_VALUE_INT: gs_csv_int(f, store_rows_int(r, c)); break;
            case STORE_VALUE_FLOAT: gs_csv_double(f, store_rows_double(r, c)); break;
            case STORE_VALUE_BLOB: {
                int n;
                const unsigned char *b = store_rows_blob(r, c, &n);
                for (int i = 0; i < n; i++) fprintf(f, "%02x", b[i]);
                break;
            }
            default: gs_csv_text(f, store_rows_text(r, c)); break;
            }
        }
        gs_csv_eol(f);
        rows++;
    }
    return rc < 0 ? -1 : rows;
}
