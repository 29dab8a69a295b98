#include "notebooks-export/notebook.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "notebooks-export/notebook_cells.h"
#include "notebooks-export/outfile.h"

/* ---------- a growing string ---------- */

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *t, size_t len) {
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, t, len);
    b->n += len;
    b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *t) { sb_add(b, t, strlen(t)); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) { sb_add(b, small, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    if (!big) { b->oom = 1; return; }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* ---------- paths ---------- */

int gs_relative_path(const char *from_dir, const char *target, char **out) {
    *out = NULL;
    char *from = realpath(from_dir, NULL);
    if (!from) return gs_fail("%s: %s", from_dir, strerror(errno));
    char *to = realpath(target, NULL);
    if (!to) {
        int rc = gs_fail("%s: %s", target, strerror(errno));
        free(from);
        return rc;
    }
    /* the longest common prefix that ends at a folder boundary */
    size_t i = 0, common = 0;
    while (from[i] && from[i] == to[i]) {
        if (from[i] == '/') common = i;
        i++;
    }
    if ((from[i] == 0 || from[i] == '/') && (to[i] == 0 || to[i] == '/')) common = i;
    int rc = 0;
    if (common > 0 || !strcmp(from, "/")) { /* sharing only the root, an absolute path says more than ../../.. */
        size_t ups = 0;
        for (const char *p = from + common; *p; p++)
            if (*p != '/' && (p == from + common || p[-1] == '/')) ups++;
        const char *rest = to + common;
        while (*rest == '/') rest++;
        *out = malloc(3 * ups + strlen(rest) + 2);
        if (*out) {
            (*out)[0] = 0;
            for (size_t k = 0; k < ups; k++) strcat(*out, "../");
            strcat(*out, *rest ? rest : ".");
        } else {
            rc = gs_fail("out of memory");
        }
    }
    free(from);
    free(to);
    return rc;
}

static int valid_utf8(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0 || (n == 1 && *p < 0xc2)) return 0;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xc0) != 0x80) return 0;
    }
    return 1;
}

/* Invalid UTF-8 (a hostile store's text) replaced by '?', so the notebook
 * stays valid JSON text. */
static void utf8_sanitize(char *s) {
    unsigned char *p = (unsigned char *)s;
    while (p && *p) {
        int n = *p < 0x80                        ? 0
                : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 1
                : (*p & 0xf0) == 0xe0               ? 2
                : (*p & 0xf8) == 0xf0               ? 3
                                                    : -1;
        int ok = n >= 0;
        for (int i = 1; ok && i <= n; i++) ok = (p[i] & 0xc0) == 0x80;
        if (!ok) { *p++ = '?'; continue; }
        p += n + 1;
    }
}

/* A string as a Python literal: JSON's escapes (\" \\ \n \uXXXX) are
 * Python's too. */
static void py_string(sbuf *b, const char *s) {
    cJSON *j = cJSON_CreateString(s);
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    if (t) sb_str(b, t);
    else b->oom = 1;
    free(t);
    cJSON_Delete(j);
}

/* ---------- what the store held when the notebook was written ---------- */

/* Store-derived text in the markdown: as <code> whose every character that
 * markdown, HTML or the notebook's MathJax could read as markup (a backtick
 * that ends a code span, <script>, a newline and '#' that make a heading,
 * '$' that starts math) is a numeric character reference, which both
 * markdown and HTML show as the character itself. Controls are shown as
 * \n, \xNN. */
static const char md_special[] = "\\`*_{}[]()#!|<>&$~\"'";

static void lit(sbuf *b, const char *t) {
    t = t ? t : "";
    int plain = 1;
    for (const unsigned char *p = (const unsigned char *)t; *p && plain; p++)
        plain = *p >= 0x20 && *p != 0x7f && !strchr("`$<>&\\", *p);
    if (plain && *t) { /* a code span shows the rest literally (no backtick can end it, no '$' start math) */
        sb_printf(b, "`%s`", t);
        return;
    }
    sb_str(b, "<code>");
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        if (*p == '\n') sb_str(b, "&#92;n");
        else if (*p == '\r') sb_str(b, "&#92;r");
        else if (*p == '\t') sb_str(b, "&#92;t");
        else if (*p < 0x20 || *p == 0x7f) sb_printf(b, "&#92;x%02x", *p);
        else if (strchr(md_special, *p)) sb_printf(b, "&#%d;", *p);
        else sb_add(b, (const char *)p, 1);
    }
    sb_str(b, "</code>");
}

static void intro(sbuf *b, store *st, const store_run_info *ri, const char *store_shown, const char *version) {
    const char *base = strrchr(store_path(st), '/');
    base = base ? base + 1 : store_path(st);
    sb_printf(b, "# gpnscope study: run %lld of ", (long long)ri->id);
    lit(b, base);
    sb_str(b, "\n\n");
    sb_str(b, "This notebook was written by `gpnscope export-notebook` (gpnscope ");
    lit(b, version);
    sb_str(b, ") from the store ");
    lit(b, store_shown);
    sb_str(b, ". It opens "
              "the SQLite file with Python's `sqlite3` and pandas, asks it questions in SQL, and redraws the figures "
              "of `gpnscope plot` with matplotlib from the stored results (the numbers, not images). It only reads "
              "the store: after `gpnscope analyze` adds or replaces results, execute it again (Run All, or "
              "`jupyter nbconvert --to notebook --execute --inplace` on this file).\n\n");
    const char *arch = ri->model_arch, *model = ri->model_path;
    sb_printf(b, "**When this notebook was written**, run %lld was a ", (long long)ri->id);
    lit(b, ri->kind);
    sb_str(b, " run (");
    lit(b, ri->status);
    sb_str(b, ") of ");
    if (arch[0]) { sb_str(b, "a "); lit(b, arch); sb_str(b, " model"); }
    else sb_str(b, "a model");
    if (model[0] && valid_utf8(model)) { sb_str(b, " ("); lit(b, model); sb_str(b, ")"); }
    sb_printf(b, " with d_state = %d and %d memory heads, over %lld windows of %d tokens (%lld tokens). It kept ",
              ri->d_state, ri->n_heads, (long long)ri->windows_done, ri->seq_len, (long long)ri->tokens_done);
    lit(b, ri->states);
    sb_str(b, " states as ");
    lit(b, ri->state_dtype);
    sb_str(b, " at positions ");
    lit(b, ri->positions);
    /* counts */
    int n = 0;
    store_kind_count *kinds = NULL;
    int n_kinds = store_state_counts(st, ri->id, &kinds);
    for (int i = 0; i < n_kinds; i++) {
        if (!valid_utf8(kinds[i].kind)) continue;
        sb_printf(b, "%s %lld ", n++ ? "," : ":", (long long)kinds[i].n);
        lit(b, kinds[i].kind);
        sb_str(b, " states");
    }
    free(kinds);
    int64_t heads = store_count_head_steps(st, ri->id);
    if (heads > 0) sb_printf(b, "%s %lld head steps", n++ ? "," : ":", (long long)heads);
    sb_str(b, ". ");
    n = 0;
    char names[256][64];
    int n_names = store_analysis_names(st, ri->id, names, 256, 1);
    for (int i = 0; i < n_names; i++) {
        if (!valid_utf8(names[i])) continue;
        sb_str(b, n++ ? ", " : "Its analyses: ");
        lit(b, names[i]);
    }
    gs_clear_error(); /* a count that failed is left out of the introduction */
    if (n) sb_str(b, ".");
    else sb_str(b, "It had no analyses yet: run `gpnscope analyze` on the store, then execute this notebook.");
    sb_str(b, "\n\nDefinitions: `docs/analyses.md` in the gpnscope sources (how each quantity is computed) and "
              "`docs/paper-analyses.md` (the paper's definitions and figures); the tables: `docs/schema.md`; "
              "more questions in SQL: `docs/sql.md`; this notebook: `docs/notebooks.md`.\n\n");
    sb_str(b, "Sections: 1. the store and the run · 2. questions in SQL · 3. geometry of the state · 4. the mean "
              "direction · 5. horizons · 6. probe horizon · 7. the paper's three structures · 8. other results · "
              "9. every stored number · 10. the states in numpy.");
}

/* ---------- the notebook ---------- */

/* text split into nbformat's source list: lines, each but the last ending in \n */
static cJSON *source_of(const char *text) {
    cJSON *a = cJSON_CreateArray();
    const char *p = text;
    while (a && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p + 1) : strlen(p);
        if (e && !e[1]) len--; /* no trailing newline on the last line */
        char *line = malloc(len + 1);
        if (!line) { cJSON_Delete(a); return NULL; }
        memcpy(line, p, len);
        line[len] = 0;
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
        free(line);
        p = e ? e + 1 : p + len;
    }
    return a;
}

typedef struct {
    const char *name;
    const char *value;
} subst;

static void expand(sbuf *b, const char *line, size_t n, const subst *subs, int n_subs) {
    const char *p = line, *end = line + n;
    while (p < end) {
        const char *at = memchr(p, '@', (size_t)(end - p));
        if (!at) { sb_add(b, p, (size_t)(end - p)); return; }
        sb_add(b, p, (size_t)(at - p));
        int done = 0;
        for (int i = 0; i < n_subs && !done; i++) {
            size_t len = strlen(subs[i].name);
            if ((size_t)(end - at) >= len && !strncmp(at, subs[i].name, len)) {
                sb_str(b, subs[i].value);
                p = at + len;
                done = 1;
            }
        }
        if (!done) { sb_add(b, "@", 1); p = at + 1; }
    }
}

char *gs_notebook_render(store *st, const char *out_path, const gs_notebook_opts *o) {
    if (!o || o->run_id <= 0) { gs_fail("export-notebook: no run given"); return NULL; }
    if (!out_path || !*out_path) { gs_fail("export-notebook: no output file given"); return NULL; }
    store_run_info ri;
    if (store_run_get(st, o->run_id, &ri) != 0) return NULL;
    const char *version = o->code_version ? o->code_version : "unknown";

    /* where the notebook will look for the store */
    char dir[PATH_MAX];
    const char *slash = strrchr(out_path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == out_path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - out_path), out_path);
    char *rel = NULL;
    if (gs_relative_path(dir, store_path(st), &rel) != 0) {
        gs_fail_context("placing the notebook: ");
        return NULL;
    }
    char *abs = realpath(store_path(st), NULL);
    if (!abs) {
        free(rel);
        gs_fail("%s: %s", store_path(st), strerror(errno));
        return NULL;
    }
    if (!valid_utf8(abs) || (rel && !valid_utf8(rel)) ||
        (o->vec_extension && !valid_utf8(o->vec_extension))) {
        free(rel);
        free(abs);
        gs_fail("the path of the store or of the vector extension is not UTF-8 text, which a notebook cannot hold: "
                "rename it");
        return NULL;
    }
    sbuf paths = {0}, vec = {0}, runs = {0}, ver = {0}, intro_text = {0};
    sb_str(&paths, "[");
    if (rel) {
        py_string(&paths, rel);
        if (strcmp(rel, abs)) sb_str(&paths, ", ");
    }
    if (!rel || strcmp(rel, abs)) py_string(&paths, abs);
    sb_str(&paths, "]");
    if (o->vec_extension) py_string(&vec, o->vec_extension);
    else sb_str(&vec, "None");
    sb_printf(&runs, "%lld", (long long)o->run_id);
    for (const char *p = version; *p; p++) sb_add(&ver, (*p == '\n' || *p == '\r') ? " " : p, 1);
    intro(&intro_text, st, &ri, rel ? rel : abs, ver.s ? ver.s : "");
    utf8_sanitize(intro_text.s);
    utf8_sanitize(ver.s);
    const subst subs[] = {
        {"@STORE_PATHS@", paths.s}, {"@RUN@", runs.s}, {"@VEC@", vec.s}, {"@VERSION@", ver.s ? ver.s : ""},
    };

    cJSON *nb = cJSON_CreateObject(), *cells = cJSON_AddArrayToObject(nb, "cells");
    int oom = paths.oom || vec.oom || runs.oom || ver.oom || intro_text.oom || !nb || !cells;
    gs_nb_cell cell_list[GS_NB_MAX_CELLS];
    int n_cells = gs_nb_cells(cell_list, GS_NB_MAX_CELLS);
    if (n_cells < 0) oom = 1;
    for (int i = 0; i < n_cells && !oom; i++) {
        const gs_nb_cell *c = &cell_list[i];
        sbuf text = {0};
        if (!strcmp(c->id, "intro")) {
            sb_str(&text, intro_text.s);
        } else {
            /* every section after the helpers runs inside reading(): a crafted store (a text series,
             * settings that are not an object) gives a line saying what is wrong, not an exception
             * that stops Run All */
            int guarded = c->code && strcmp(c->id, "setup") && strcmp(c->id, "load-vec") && strcmp(c->id, "helpers");
            if (guarded) sb_printf(&text, "with reading('%s'):\n", c->id);
            size_t pos = 0, len;
            const char *line;
            for (int k = 0; gs_nb_cell_line(c, &pos, &line, &len); k++) {
                if (k) sb_str(&text, "\n");
                if (guarded && len) sb_str(&text, "    ");
                expand(&text, line, len, subs, (int)(sizeof subs / sizeof *subs));
            }
        }
        cJSON *cell = cJSON_CreateObject(), *src = text.oom ? NULL : source_of(text.s ? text.s : "");
        free(text.s);
        if (!cell || !src) { cJSON_Delete(cell); cJSON_Delete(src); oom = 1; break; }
        cJSON_AddStringToObject(cell, "cell_type", c->code ? "code" : "markdown");
        if (c->code) cJSON_AddNullToObject(cell, "execution_count");
        cJSON_AddStringToObject(cell, "id", c->id);
        cJSON_AddObjectToObject(cell, "metadata");
        if (c->code) cJSON_AddArrayToObject(cell, "outputs");
        cJSON_AddItemToObject(cell, "source", src);
        cJSON_AddItemToArray(cells, cell);
    }
    cJSON *meta = cJSON_AddObjectToObject(nb, "metadata");
    cJSON *ks = cJSON_AddObjectToObject(meta, "kernelspec");
    cJSON_AddStringToObject(ks, "display_name", "Python 3 (ipykernel)");
    cJSON_AddStringToObject(ks, "language", "python");
    cJSON_AddStringToObject(ks, "name", "python3");
    cJSON *li = cJSON_AddObjectToObject(meta, "language_info");
    cJSON_AddStringToObject(li, "name", "python");
    cJSON_AddStringToObject(li, "pygments_lexer", "ipython3");
    cJSON *gm = cJSON_AddObjectToObject(meta, "gpnscope");
    cJSON_AddStringToObject(gm, "version", ver.s ? ver.s : "");
    cJSON_AddStringToObject(gm, "store", rel ? rel : abs);
    cJSON_AddStringToObject(gm, "store_absolute", abs);
    cJSON_AddNumberToObject(gm, "run", (double)o->run_id);
    if (o->vec_extension) cJSON_AddStringToObject(gm, "vec_extension", o->vec_extension);
    else cJSON_AddNullToObject(gm, "vec_extension");
    cJSON_AddNumberToObject(nb, "nbformat", 4);
    cJSON_AddNumberToObject(nb, "nbformat_minor", 5);
    char *json = oom ? NULL : cJSON_Print(nb);
    cJSON_Delete(nb);
    free(paths.s);
    free(vec.s);
    free(runs.s);
    free(ver.s);
    free(intro_text.s);
    free(rel);
    free(abs);
    if (!json && n_cells >= 0) gs_fail("out of memory while writing the notebook");
    return json;
}

int gs_notebook_write(store *st, const char *out_path, const gs_notebook_opts *o) {
    if (!out_path || !*out_path) return gs_fail("export-notebook: no output file given");
    struct stat sb;
    size_t len = strlen(out_path);
    if (out_path[len - 1] == '/' || (stat(out_path, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return gs_fail("%s is a folder: give the notebook's file name (e.g. %s%sstudy.ipynb)", out_path, out_path,
                       out_path[len - 1] == '/' ? "" : "/");
    const char *slash = strrchr(out_path, '/');
    if (slash && slash != out_path) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - out_path), out_path);
        if (gs_make_dirs(dir) != 0) return -1;
    }
    char *json = gs_notebook_render(st, out_path, o);
    if (!json) return -1;
    gs_outfile out;
    int rc = gs_outfile_open(&out, out_path);
    if (!rc) {
        fputs(json, out.f);
        fputc('\n', out.f);
        if (ferror(out.f)) {
            rc = gs_outfile_write_failed(&out);
            gs_outfile_abort(&out);
        } else {
            rc = gs_outfile_commit(&out);
        }
    }
    free(json);
    return rc;
}
