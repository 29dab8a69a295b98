/* gpnscope export-notebook, in C: the path of the store relative to the
 * notebook (and absolute when they share no top-level folder), and the
 * notebook's structure as nbformat 4.5 wants it: cells with unique ids,
 * source lists, empty outputs, a python3 kernelspec, every placeholder
 * filled, the run, the store paths and the extension written as Python
 * literals, and a summary of what the store held. Validating with nbformat
 * and executing with nbconvert is tests/cli/notebook.sh. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "notebooks-export/notebook.h"
#include "notebooks-export/outfile.h"
#include "store/store.h"
#include "test_export_store.h"
#include "testlib.h"

static void test_relative(const char *dir) {
    char a[4200], b[4200], f[4300];
    snprintf(a, sizeof a, "%s/rel/x/y", dir);
    snprintf(b, sizeof b, "%s/rel/z", dir);
    CHECK(gs_make_dirs(a) == 0 && gs_make_dirs(b) == 0, "%s", gs_error());
    snprintf(f, sizeof f, "%s/s.db", b);
    FILE *fp = fopen(f, "w");
    if (fp) fclose(fp);
    char *r = NULL;
    CHECK(gs_relative_path(a, f, &r) == 0 && r && !strcmp(r, "../../z/s.db"), "up two: %s", r ? r : "(null)");
    free(r);
    CHECK(gs_relative_path(b, f, &r) == 0 && r && !strcmp(r, "s.db"), "same folder: %s", r ? r : "(null)");
    free(r);
    /* a folder whose name extends the other's is not a parent of it */
    char bz[4200], fz[4300];
    snprintf(bz, sizeof bz, "%s/rel/zz", dir);
    gs_make_dirs(bz);
    snprintf(fz, sizeof fz, "%s/s2.db", bz);
    fp = fopen(fz, "w");
    if (fp) fclose(fp);
    CHECK(gs_relative_path(b, fz, &r) == 0 && r && !strcmp(r, "../zz/s2.db"), "prefix, not parent: %s",
          r ? r : "(null)");
    free(r);
    /* through a symlink and a trailing slash */
    char via[4300];
    snprintf(via, sizeof via, "%s/rel/x/../x/y/", dir);
    CHECK(gs_relative_path(via, f, &r) == 0 && r && !strcmp(r, "../../z/s.db"), "resolved: %s", r ? r : "(null)");
    free(r);
    char *real = realpath(f, NULL);
    CHECK(gs_relative_path("/", f, &r) == 0 && r && real && !strcmp(r, real + 1), "from the root: %s",
          r ? r : "(null)");
    free(r);
    /* only the root shared: no relative path (the notebook uses the absolute one) */
    if (real && strncmp(real, "/proc/", 6) != 0) {
        CHECK(gs_relative_path("/proc", f, &r) == 0 && r == NULL, "no shared top folder: %s", r ? r : "(null)");
        free(r);
    }
    free(real);
    CHECK(gs_relative_path(a, "/no/such/file.db", &r) != 0 && r == NULL, "a missing store is an error");
}

static const char *cell_text(cJSON *cell, char *buf, size_t size) {
    size_t k = 0;
    buf[0] = 0;
    cJSON *line;
    cJSON_ArrayForEach(line, cJSON_GetObjectItem(cell, "source")) {
        const char *t = cJSON_GetStringValue(line);
        if (t) k += (size_t)snprintf(buf + k, k < size ? size - k : 0, "%s", t);
    }
    return buf;
}

static cJSON *find_cell(cJSON *nb, const char *id) {
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(nb, "cells")) {
        const char *i = cJSON_GetStringValue(cJSON_GetObjectItem(c, "id"));
        if (i && !strcmp(i, id)) return c;
    }
    return NULL;
}

static void test_render(store *st, const char *dir) {
    char out[4200];
    snprintf(out, sizeof out, "%s/nb/study.ipynb", dir);
    char nbdir[4200];
    snprintf(nbdir, sizeof nbdir, "%s/nb", dir);
    CHECK(gs_make_dirs(nbdir) == 0, "%s", gs_error());
    gs_notebook_opts o = {1, "/opt/gpn \"scope\"/gpnscope_vec.so", "9.9.9"};
    char *json = gs_notebook_render(st, out, &o);
    CHECK(json != NULL, "%s", gs_error());
    if (!json) return;
    CHECK(!strstr(json, "@STORE_PATHS@") && !strstr(json, "@VEC@") && !strstr(json, "@VERSION@") &&
              !strstr(json, "@INTRO@"),
          "no placeholder left");
    cJSON *nb = cJSON_Parse(json);
    CHECK(nb != NULL, "the notebook is JSON");
    free(json);
    if (!nb) return;
    CHECK(cJSON_GetObjectItem(nb, "nbformat")->valueint == 4 && cJSON_GetObjectItem(nb, "nbformat_minor")->valueint == 5,
          "nbformat 4.5");
    cJSON *ks = cJSON_GetObjectItem(cJSON_GetObjectItem(nb, "metadata"), "kernelspec");
    CHECK(ks && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ks, "name")), "python3"), "python3 kernel");
    cJSON *gm = cJSON_GetObjectItem(cJSON_GetObjectItem(nb, "metadata"), "gpnscope");
    CHECK(gm && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(gm, "store")), "../x.db"),
          "store relative to the notebook");
    CHECK(gm && cJSON_GetObjectItem(gm, "run")->valueint == 1, "run in the metadata");
    int n = 0, code = 0, bad = 0;
    char ids[64][64];
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(nb, "cells")) {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(c, "cell_type"));
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(c, "id"));
        cJSON *src = cJSON_GetObjectItem(c, "source");
        if (!type || !id || !cJSON_IsArray(src) || !cJSON_IsObject(cJSON_GetObjectItem(c, "metadata"))) bad++;
        if (type && !strcmp(type, "code")) {
            code++;
            if (!cJSON_IsArray(cJSON_GetObjectItem(c, "outputs")) ||
                cJSON_GetArraySize(cJSON_GetObjectItem(c, "outputs")) != 0 ||
                !cJSON_IsNull(cJSON_GetObjectItem(c, "execution_count")))
                bad++;
        } else if (!type || strcmp(type, "markdown") != 0 || cJSON_GetObjectItem(c, "outputs")) {
            bad++;
        }
        /* source lines end in \n, all but the last */
        int k = 0, lines = cJSON_GetArraySize(src);
        cJSON *line;
        cJSON_ArrayForEach(line, src) {
            const char *t = cJSON_GetStringValue(line);
            size_t len = t ? strlen(t) : 0;
            int nl = len && t[len - 1] == '\n';
            if (!t || (k < lines - 1 && !nl) || (k == lines - 1 && nl) || (len && strchr(t, '\n') != t + len - 1 && strchr(t, '\n')))
                bad++;
            k++;
        }
        for (int i = 0; i < n && i < 64 && id; i++)
            if (!strcmp(ids[i], id)) bad++;
        if (n < 64 && id) snprintf(ids[n], sizeof ids[n], "%s", id);
        n++;
    }
    CHECK(bad == 0, "%d malformed cells", bad);
    CHECK(n > 20 && code > 10, "%d cells, %d code cells", n, code);
    static char text[65536];
    cJSON *setup = find_cell(nb, "setup");
    CHECK(setup != NULL, "a setup cell");
    if (setup) {
        cell_text(setup, text, sizeof text);
        char *abs = realpath(store_path(st), NULL);
        char want[4400];
        snprintf(want, sizeof want, "STORE_PATHS = [\"../x.db\", \"%s\"]\n", abs ? abs : "?");
        CHECK(strstr(text, want) != NULL, "store paths: want %s", want);
        free(abs);
        CHECK(strstr(text, "\nRUN = 1\n") != NULL, "run");
        CHECK(strstr(text, "VEC_EXTENSION = \"/opt/gpn \\\"scope\\\"/gpnscope_vec.so\"\n") != NULL,
              "the extension as an escaped Python string");
        CHECK(strstr(text, "(gpnscope 9.9.9)") != NULL, "version");
    }
    cJSON *intro = find_cell(nb, "intro");
    if (intro) {
        cell_text(intro, text, sizeof text);
        CHECK(strstr(text, "# gpnscope study: run 1 of `x.db`") != NULL, "title: %.80s", text);
        CHECK(strstr(text, "10 `ground` states, 10 `pred` states, 18 head steps") != NULL, "counts: %s", text);
        CHECK(strstr(text, "Its analyses: `geometry`.") != NULL, "analyses listed");
    }
    CHECK(find_cell(nb, "geometry") && find_cell(nb, "horizons") && find_cell(nb, "probe") &&
              find_cell(nb, "default-tokens") && find_cell(nb, "emergence") && find_cell(nb, "sql-state-norms"),
          "every figure has its cell");
    cJSON_Delete(nb);

    /* without the extension: None; run 2 has no analyses */
    gs_notebook_opts o2 = {2, NULL, NULL};
    json = gs_notebook_render(st, out, &o2);
    CHECK(json && strstr(json, "VEC_EXTENSION = None") && strstr(json, "RUN = 2\\n") &&
              strstr(json, "It had no analyses yet"),
          "no extension, no analyses");
    free(json);
    gs_notebook_opts o3 = {9, NULL, NULL};
    CHECK(gs_notebook_render(st, out, &o3) == NULL, "a missing run is an error");

    /* written whole into a folder made for it, then replaced */
    char deep[4300];
    snprintf(deep, sizeof deep, "%s/made/for/it/s.ipynb", dir);
    CHECK(gs_notebook_write(st, deep, &o) == 0, "%s", gs_error());
    CHECK(gs_notebook_write(st, deep, &o2) == 0, "%s", gs_error());
    FILE *f = fopen(deep, "r");
    CHECK(f != NULL, "written");
    if (f) {
        size_t k = fread(text, 1, sizeof text - 1, f);
        text[k] = 0;
        fclose(f);
        CHECK(strstr(text, "../../../x.db") != NULL, "relative from a deeper folder");
        CHECK(strstr(text, "RUN = 2") != NULL, "replaced");
    }
    char folder[4300];
    snprintf(folder, sizeof folder, "%s/made", dir);
    CHECK(gs_notebook_write(st, folder, &o) != 0 && strstr(gs_error(), "is a folder: give the notebook's file name"),
          "--out a folder: %s", gs_error());
    char made[4300];
    snprintf(made, sizeof made, "%s/made/for/it", dir);
    DIR *d = opendir(made);
    int tmp = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) tmp++;
    if (d) closedir(d);
    CHECK(tmp == 0, "no temporary files left");
}

/* The notebook of the fixture store (xs_build) at DIR/NAME.db after `sql`,
 * rendered to DIR/NAME.ipynb with version text `version`: its JSON, NULL
 * after a failed CHECK; *st stays open for the caller to close (NULL when
 * the store did not open). */
static char *tampered_notebook(const char *dir, const char *name, const char *sql, const char *version, store **st) {
    char db[4300], out[4300];
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    snprintf(out, sizeof out, "%s/%s.ipynb", dir, name);
    CHECK(xs_build(db) == 0, "%s", gs_error());
    sqlite3 *h = NULL;
    sqlite3_open(db, &h);
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    CHECK(rc == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
    *st = store_open(db, STORE_READ);
    if (!*st) { CHECK(0, "%s", gs_error()); return NULL; }
    gs_notebook_opts o = {1, NULL, version};
    char *json = gs_notebook_render(*st, out, &o);
    CHECK(json != NULL, "%s", gs_error());
    return json;
}

/* Text from a store that is not UTF-8 must not make the notebook invalid. */
static void test_hostile_text(const char *dir) {
    store *st;
    char *json = tampered_notebook(dir, "bad",
                                   "PRAGMA ignore_check_constraints = ON;"
                                   "UPDATE runs SET status = CAST(x'6f6bff' AS TEXT), states = CAST(x'c3' AS TEXT);"
                                   "UPDATE models SET arch = CAST(x'e282' AS TEXT)",
                                   "1.0\n\xff", &st);
    if (!st) return;
    int valid = json != NULL;
    for (const unsigned char *p = (const unsigned char *)json; valid && *p;) {
        int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
        valid = n >= 0;
        for (int i = 1; valid && i <= n; i++) valid = (p[i] & 0xc0) == 0x80;
        p += valid ? n + 1 : 0;
    }
    CHECK(valid, "the notebook is UTF-8 text");
    cJSON *nb = json ? cJSON_Parse(json) : NULL;
    CHECK(nb != NULL, "and JSON");
    cJSON_Delete(nb);
    free(json);
    store_close(st);
}

/* Store text with markdown and HTML in it stays text in the intro (issue 17, item 8). */
static void test_markup(const char *dir) {
    store *st;
    char *json = tampered_notebook(dir, "markup",
                                   "UPDATE models SET path = 'm`x <img src=x onerror=alert(1)>' || char(10) || "
                                   "'# Owned <script>alert(2)</script> $$ & [a](b).safetensors', arch = 'a`b';"
                                   "UPDATE analyses SET name = 'evil`<script>alert(3)</script>' || char(10) || '# H';"
                                   "UPDATE states SET kind = 'k$`<b>' WHERE kind = 'ground'",
                                   "1.0", &st);
    if (!st) return;
    cJSON *nb = json ? cJSON_Parse(json) : NULL;
    cJSON *intro = nb ? find_cell(nb, "intro") : NULL;
    static char text[65536];
    cell_text(intro, text, sizeof text);
    CHECK(intro && strstr(text, "onerror=alert&#40;1&#41;"), "the model path is in the intro: %s", text);
    CHECK(!strstr(text, "<img") && !strstr(text, "<script") && !strstr(text, "<b>"), "no HTML from the store: %s", text);
    CHECK(!strstr(text, "$"), "no '$' to start MathJax: %s", text);
    CHECK(!strstr(text, "[a](b)"), "no markdown link from the store");
    CHECK(strstr(text, "<code>m&#96;x &#60;img src=x onerror=alert&#40;1&#41;&#62;&#92;n&#35; Owned") != NULL,
          "shown as code, its characters as references: %s", text);
    int lines = 0, backticks = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n' && p[1] == '#') lines++;
        if (*p == '`') backticks++;
    }
    CHECK(lines == 0, "no heading made by a newline in the store's text");
    CHECK(backticks % 2 == 0, "code spans stay paired: %d backticks", backticks);
    /* the code cells keep running when a section meets a crafted store */
    cJSON *geo = nb ? find_cell(nb, "geometry") : NULL;
    cell_text(geo, text, sizeof text);
    CHECK(geo && !strncmp(text, "with reading('geometry'):\n    g = analysis('geometry')", 52), "guarded: %.80s", text);
    cJSON *setup = nb ? find_cell(nb, "setup") : NULL;
    cell_text(setup, text, sizeof text);
    CHECK(strstr(text, "plt.rcParams['text.parse_math'] = False"), "labels are not mathtext");
    cJSON_Delete(nb);
    free(json);
    store_close(st);
}

int main(void) {
    const char *dir = scratch_dir("test_notebook");
    char d[4200];
    snprintf(d, sizeof d, "%s", dir);
    test_relative(d);
    char db[4300];
    snprintf(db, sizeof db, "%s/x.db", d);
    CHECK(xs_build(db) == 0, "building the store: %s", gs_error());
    store *st = store_open(db, STORE_READ);
    CHECK(st != NULL, "%s", gs_error());
    if (!st) return test_summary();
    test_render(st, d);
    store_close(st);
    test_hostile_text(d);
    test_markup(d);
    return test_summary();
}
