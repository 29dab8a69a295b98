/* gpnscope sql FILE "QUERY" [--csv|--json] [--write]: run SQL on a store with
 * the vector functions loaded; print an aligned table, CSV or JSON. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/store.h"

static const char *help =
    "usage: gpnscope sql FILE \"QUERY\" [--csv | --json] [--write]\n"
    "       gpnscope sql FILE --file QUERY.sql [--csv | --json] [--write]\n\n"
    "Run SQL on a gpnscope store with the vector functions loaded (vec_length,\n"
    "vec_norm, vec_cosine, vec_avg, ...; docs/sql.md has worked questions and\n"
    "docs/schema.md the tables). QUERY may hold several statements separated by\n"
    "';'; the rows of each are printed in turn. BLOBs are summarised as <f32[N]>\n"
    "(or <blob N bytes>); show values with vec_to_json(v), and widen float16\n"
    "states with vec_f32(vector, dtype). NULL prints as NULL in the table.\n\n"
    "  --csv     comma-separated values with a header row (RFC 4180 quoting)\n"
    "  --json    one JSON array of row objects per statement\n"
    "  --file F  read the query from the file F (- for stdin) instead of QUERY; a QUERY\n"
    "            may also start with an SQL comment (-- ...), which is not an option\n"
    "  --write   allow statements that change the file (default: read only: a statement\n"
    "            that would write, VACUUM INTO or a temporary table included, is refused\n"
    "            before it runs, and ATTACH is refused)\n\n"
    "User SQL runs with SQLite's defensive settings (fts3_tokenizer is not available).\n"
    "Control characters in text are shown escaped in the table (\\x1b for ESC), and in\n"
    "CSV when the output is a terminal.\n";

enum { OUT_TABLE, OUT_CSV, OUT_JSON };

/* A number as the shortest text that reads back exactly (CSV/JSON), or with
 * six significant digits (table, for people). */
static void format_double(char *buf, size_t size, double v, int exact) {
    if (isinf(v)) { snprintf(buf, size, v > 0 ? "1e999" : "-1e999"); return; }
    if (!exact) { snprintf(buf, size, "%.6g", v); return; }
    snprintf(buf, size, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, size, "%.17g", v);
}

static void blob_summary(char *buf, size_t size, int bytes) {
    if (bytes > 0 && bytes % 4 == 0) snprintf(buf, size, "<f32[%d]>", bytes / 4);
    else snprintf(buf, size, "<blob %d bytes>", bytes);
}

/* The text of one cell; NULL cells give NULL. */
static char *cell_text(sqlite3_stmt *s, int col, int exact) {
    char buf[64];
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_NULL: return NULL;
    case SQLITE_INTEGER: snprintf(buf, sizeof buf, "%lld", (long long)sqlite3_column_int64(s, col)); break;
    case SQLITE_FLOAT: format_double(buf, sizeof buf, sqlite3_column_double(s, col), exact); break;
    case SQLITE_BLOB: blob_summary(buf, sizeof buf, sqlite3_column_bytes(s, col)); break;
    default: {
        const char *t = (const char *)sqlite3_column_text(s, col);
        return strdup(t ? t : "");
    }
    }
    return strdup(buf);
}

static void csv_field(const char *t) {
    if (!t) return;
    if (!strpbrk(t, ",\"\r\n")) { fputs(t, stdout); return; }
    putchar('"');
    for (const char *p = t; *p; p++) {
        if (*p == '"') putchar('"');
        putchar(*p);
    }
    putchar('"');
}

static void json_string(const char *t) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\t') fputs("\\t", stdout);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

/* Display width in characters (UTF-8 continuation bytes do not count). */
static size_t width(const char *t) {
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) w += (*p & 0xc0) != 0x80;
    return w;
}

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Table cells (and CSV on a terminal) are one line each, and a store's text
 * cannot drive the terminal: control characters are shown escaped (\n, \r,
 * \t, else \xNN: an ESC is \x1b). */
static char *escape_controls(char *t) {
    const unsigned char *p;
    for (p = (const unsigned char *)t; t && *p && !is_control(*p); p++) {}
    if (!t || !*p) return t;
    char *o = malloc(4 * strlen(t) + 1), *q = o;
    if (!o) return t;
    for (p = (const unsigned char *)t; *p; p++) {
        if (*p == '\n') q += sprintf(q, "\\n");
        else if (*p == '\r') q += sprintf(q, "\\r");
        else if (*p == '\t') q += sprintf(q, "\\t");
        else if (is_control(*p)) q += sprintf(q, "\\x%02x", *p);
        else *q++ = (char)*p;
    }
    *q = 0;
    free(t);
    return o;
}

/* User SQL runs with SQLite's defensive settings: no fts3_tokenizer (its
 * one-argument form returns a library address, its two-argument form lets
 * a query crash the process), and without --write no ATTACH or DETACH (an
 * ATTACH creates files). Statements that would change a file are refused
 * before they run (sqlite3_stmt_readonly), VACUUM INTO included. */
static int authorize(void *write, int action, const char *a, const char *b, const char *db, const char *trigger) {
    (void)a, (void)db, (void)trigger;
    if (action == SQLITE_FUNCTION && b && !sqlite3_stricmp(b, "fts3_tokenizer")) return SQLITE_DENY;
    if (!*(const int *)write && (action == SQLITE_ATTACH || action == SQLITE_DETACH)) return SQLITE_DENY;
    return SQLITE_OK;
}

static void sandbox(sqlite3 *db, int *write) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
    if (!*write) sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_set_authorizer(db, authorize, write);
}

/* sqlite3_column_name is NULL only when out of memory */
static const char *col_name(sqlite3_stmt *s, int c) {
    const char *n = sqlite3_column_name(s, c);
    return n ? n : "?";
}

typedef struct {
    char **cells; /* rows x cols, row-major; NULL = SQL NULL */
    int *numeric; /* per cell: right-align */
    size_t n, cap;
} table;

static int print_statement(sqlite3_stmt *s, int mode, int *printed_before) {
    int cols = sqlite3_column_count(s);
    table t = {0};
    int rc;
    long long rows = 0;
    if (cols > 0) {
        if (mode == OUT_TABLE && *printed_before) putchar('\n');
        if (mode == OUT_CSV) {
            if (*printed_before) putchar('\n');
            for (int c = 0; c < cols; c++) {
                if (c) putchar(',');
                csv_field(col_name(s, c));
            }
            putchar('\n');
        }
        if (mode == OUT_JSON) fputs("[", stdout);
        *printed_before = 1;
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (mode == OUT_CSV) {
            for (int c = 0; c < cols; c++) {
                char *v = cell_text(s, c, 1);
                if (isatty(STDOUT_FILENO)) v = escape_controls(v); /* a file gets the bytes as stored */
                if (c) putchar(',');
                csv_field(v);
                free(v);
            }
            putchar('\n');
        } else if (mode == OUT_JSON) {
            fputs(rows ? ",\n {" : "\n {", stdout);
            for (int c = 0; c < cols; c++) {
                if (c) fputs(", ", stdout);
                json_string(col_name(s, c));
                fputs(": ", stdout);
                int type = sqlite3_column_type(s, c);
                char *v = cell_text(s, c, 1);
                if (!v) fputs("null", stdout);
                else if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) fputs(v, stdout);
                else json_string(v);
                free(v);
            }
            putchar('}');
        } else {
            if (t.n + (size_t)cols > t.cap) {
                size_t cap = t.cap ? 2 * t.cap : (size_t)cols * 64;
                while (cap < t.n + (size_t)cols) cap *= 2;
                char **nc = realloc(t.cells, cap * sizeof *nc);
                if (nc) t.cells = nc;
                int *nn = realloc(t.numeric, cap * sizeof *nn);
                if (nn) t.numeric = nn;
                if (!nc || !nn) { rc = SQLITE_NOMEM; break; }
                t.cap = cap;
            }
            for (int c = 0; c < cols; c++) {
                int type = sqlite3_column_type(s, c);
                t.numeric[t.n] = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
                t.cells[t.n++] = escape_controls(cell_text(s, c, 0));
            }
        }
        rows++;
    }
    if (mode == OUT_JSON && cols > 0) fputs(rows ? "\n]\n" : "]\n", stdout);
    if (mode == OUT_TABLE && cols > 0 && rc == SQLITE_DONE) {
        size_t *w = calloc((size_t)cols, sizeof *w);
        int *right = calloc((size_t)cols, sizeof *right); /* 1: numbers (and NULLs) only, header right-aligned */
        if (!w || !right) { free(w); w = NULL; rc = SQLITE_NOMEM; }
        for (int c = 0; w && c < cols; c++) { w[c] = width(col_name(s, c)); }
        for (size_t i = 0; w && i < t.n; i++) {
            size_t x = width(t.cells[i] ? t.cells[i] : "NULL");
            if (x > w[i % (size_t)cols]) w[i % (size_t)cols] = x;
            if (t.cells[i]) right[i % (size_t)cols] |= t.numeric[i] ? 1 : 2;
        }
        for (int c = 0; w && c < cols; c++) {
            const char *name = col_name(s, c);
            int pad = (int)(w[c] - width(name));
            if (right[c] == 1) printf("%s%*s%s", c ? "  " : "", pad, "", name);
            else printf("%s%s%*s", c ? "  " : "", name, c + 1 < cols ? pad : 0, "");
        }
        if (w) putchar('\n');
        for (int c = 0; w && c < cols; c++) {
            printf("%s", c ? "  " : "");
            for (size_t k = 0; k < w[c]; k++) putchar('-');
        }
        if (w) putchar('\n');
        for (size_t i = 0; w && i < t.n; i++) {
            int c = (int)(i % (size_t)cols);
            const char *v = t.cells[i] ? t.cells[i] : "NULL";
            int pad = (int)(w[c] - width(v));
            if (c) fputs("  ", stdout);
            if (t.numeric[i]) printf("%*s%s", pad, "", v);
            else printf("%s%*s", v, c + 1 < cols ? pad : 0, "");
            if (c + 1 == cols) putchar('\n');
        }
        free(w);
        free(right);
    }
    for (size_t i = 0; i < t.n; i++) free(t.cells[i]);
    free(t.cells);
    free(t.numeric);
    return rc == SQLITE_DONE ? 0 : rc;
}

/* A query that starts with an SQL comment ("-- count the runs\nSELECT ...")
 * is not an option: such words are moved after a "--", where getopt leaves
 * them as operands in their order. argv is rebuilt into out (argc + 2). */
static int comment_queries_last(int argc, char **argv, char **out) {
    int n = 0, k = 0;
    char *moved[argc > 0 ? argc : 1];
    int i = 0, end = 0; /* end: the user's own "--", after which getopt reads no options anyway */
    for (; i < argc && !end; i++) {
        const char *a = argv[i];
        end = i > 0 && !strcmp(a, "--");
        if (!end && i > 0 && a[0] == '-' && a[1] == '-' && (a[2] == ' ' || a[2] == '\n' || a[2] == '\t' || a[2] == '\r'))
            moved[k++] = argv[i];
        else if (!end) out[n++] = argv[i];
    }
    if (k || end) out[n++] = "--";
    for (int j = 0; j < k; j++) out[n++] = moved[j];
    for (; i < argc; i++) out[n++] = argv[i];
    out[n] = NULL;
    return n;
}

/* The text of --file (a path, or - for stdin); NULL with a message printed. */
static char *read_query_file(const char *file) {
    size_t len = 0;
    if (strcmp(file, "-") != 0) return gs_read_file(file, "the query file ", 4096, (size_t)64 << 20, &len);
    size_t cap = 4096;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - 1 - len, stdin)) > 0;) {
        len += got;
        if (len + 1 == cap) {
            char *bigger = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
            if (!bigger) { free(buf); gs_fail("the query on stdin is over 64 MiB"); return NULL; }
            buf = bigger;
            cap *= 2;
        }
    }
    if (!buf) { gs_fail("out of memory"); return NULL; }
    buf[len] = 0;
    return buf;
}

int cmd_sql(int argc, char **argv) {
    int write = 0;
    int csv = 0, json = 0;
    const char *file = NULL;
    const cli_opt opts[] = {{CLI_FLAG("csv", &csv)}, {CLI_FLAG("json", &json)}, {CLI_FLAG("write", &write)},
                            {CLI_STRING("file", &file)}, {0}};
    char **args = malloc((size_t)(argc + 2) * sizeof *args);
    if (!args) { fprintf(stderr, "gpnscope sql: out of memory\n"); return 1; }
    argc = comment_queries_last(argc, argv, args);
    argv = args;
    int parsed = cli_parse_options(&(cli_command_opts){"sql", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) { free(args); return parsed; }
    if (csv && json) {
        fprintf(stderr, "gpnscope sql: choose one of --csv and --json\n");
        free(args);
        return 2;
    }
    int mode = csv ? OUT_CSV : json ? OUT_JSON : OUT_TABLE;
    if (optind != argc - (file ? 1 : 2)) {
        if (file && optind == argc - 2) fprintf(stderr, "gpnscope sql: give the query in --file or as QUERY, not both\n");
        else fputs(help, stderr);
        free(args);
        return 2;
    }
    const char *path = argv[optind];
    char *from_file = file ? read_query_file(file) : NULL;
    if (file && !from_file) { fprintf(stderr, "gpnscope sql: %s\n", gs_error()); free(args); return 1; }
    const char *query = file ? from_file : argv[optind + 1];
    store *st = store_open(path, write ? STORE_WRITE : STORE_READ);
    if (!st) { fprintf(stderr, "gpnscope sql: %s\n", gs_error()); free(from_file); free(args); return 1; }
    sqlite3 *db = store_db(st);
    sandbox(db, &write);
    const char *tail = query;
    int printed = 0, status = 0;
    while (tail && *tail) {
        sqlite3_stmt *s = NULL;
        const char *text = tail;
        if (sqlite3_prepare_v2(db, tail, -1, &s, &tail) != SQLITE_OK) {
            int denied = (sqlite3_errcode(db) & 0xff) == SQLITE_AUTH;
            fprintf(stderr, "gpnscope sql: %s: %s%s\n", path, sqlite3_errmsg(db),
                    denied ? (write ? " (fts3_tokenizer is not available)"
                                    : " (fts3_tokenizer is not available; ATTACH and DETACH need --write)")
                           : "");
            status = 1;
            break;
        }
        if (!s) continue; /* whitespace or a comment */
        if (!write && !sqlite3_stmt_readonly(s)) {
            while (*text == ' ' || *text == '\n' || *text == '\t' || *text == ';') text++;
            int n = (int)(tail - text);
            while (n > 0 && (text[n - 1] == ';' || text[n - 1] == ' ' || text[n - 1] == '\n')) n--;
            char *shown = escape_controls(strndup(text, (size_t)(n > 60 ? 60 : n)));
            fprintf(stderr, "gpnscope sql: %s: a statement that would change a file, and the store is open read-only "
                            "(add --write to run it): %s%s\n",
                    path, shown ? shown : "", n > 60 ? "..." : "");
            free(shown);
            sqlite3_finalize(s);
            status = 1;
            break;
        }
        int rc = print_statement(s, mode, &printed);
        if (rc) {
            const char *msg = rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db);
            int ro = (sqlite3_extended_errcode(db) & 0xff) == SQLITE_READONLY && !write;
            fflush(stdout);
            fprintf(stderr, "gpnscope sql: %s: %s%s\n", path, msg, ro ? " (the file was opened read-only: add --write to change it)" : "");
            status = 1;
        }
        sqlite3_finalize(s);
        if (status) break;
    }
    store_close(st);
    free(from_file);
    free(args);
    if (fflush(stdout) != 0) { fprintf(stderr, "gpnscope sql: writing the output failed\n"); return 1; }
    return status;
}
