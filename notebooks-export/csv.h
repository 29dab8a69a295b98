/* CSV as RFC 4180 has it: fields separated by commas, records ended by CRLF,
 * a field holding a comma, a double quote, CR or LF enclosed in double
 * quotes with its quotes doubled. SQL NULL is an empty field and an empty
 * string is "" (pandas reads both as missing; the csv module keeps them
 * apart). Numbers are the shortest text that reads back to the same value:
 * a double for SQL REALs, a float32 for vector elements. NaN is an empty
 * field, infinities are inf and -inf (numpy and pandas read both). */
#ifndef GS_NOTEBOOKS_CSV_H
#define GS_NOTEBOOKS_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "store/rows.h"

void gs_csv_text(FILE *f, const char *s); /* NULL: an empty field */
void gs_csv_double(FILE *f, double v);
void gs_csv_float(FILE *f, float v);
void gs_csv_int(FILE *f, int64_t v);
static inline void gs_csv_sep(FILE *f) { fputc(',', f); }
static inline void gs_csv_eol(FILE *f) { fputs("\r\n", f); }

/* The shortest decimal text that reads back as v (into buf, >= 32 bytes). */
void gs_fmt_double(char *buf, size_t size, double v);
void gs_fmt_float(char *buf, size_t size, float v);

/* Every row of a store table, after a header of its column names; BLOBs are
 * written as hex text. Returns the rows written (>= 0), or -1 with
 * gs_error() set (a read error; the cursor is left to the caller). */
int64_t gs_csv_query(FILE *f, store_rows *r);

#endif
