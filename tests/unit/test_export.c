/* gpnscope export, in C: the .npy writer (header layout, alignment, counts,
 * read back by the store's own .npy reader), RFC 4180 quoting, shortest
 * round-trip numbers, atomic files (a failed write leaves the old file and
 * no temporary), and whole exports of a small store in both formats:
 * states (float32 exact, float16 widened), dense head arrays with NaN where
 * a step is missing, token text with commas, quotes and newlines, analysis
 * results, the manifest, and the errors for parts a run lacks. The Python
 * side (numpy.load, pandas) is tests/cli/export.sh. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "analyses/causal/ablation.h"
#include "base/half.h"
#include "notebooks-export/csv.h"
#include "notebooks-export/export.h"
#include "notebooks-export/npy_write.h"
#include "notebooks-export/outfile.h"
#include "store/npy.h"
#include "store/store.h"
#include "test_export_store.h"
#include "testlib.h"

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) { fputs(text, f); fclose(f); }
}

/* files in dir whose name contains ".tmp." (left-over temporaries) */
static int temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static char *csv_of(void (*fn)(FILE *, const char *), const char *s) {
    static char buf[256];
    memset(buf, 0, sizeof buf);
    FILE *m = fmemopen(buf, sizeof buf, "w");
    fn(m, s);
    fclose(m);
    return buf;
}

static void test_csv(void) {
    CHECK(!strcmp(csv_of(gs_csv_text, "plain"), "plain"), "plain");
    CHECK(!strcmp(csv_of(gs_csv_text, " lead"), " lead"), "leading space kept unquoted");
    CHECK(!strcmp(csv_of(gs_csv_text, "a,b"), "\"a,b\""), "comma");
    CHECK(!strcmp(csv_of(gs_csv_text, "say \"hi\""), "\"say \"\"hi\"\"\""), "quotes doubled: %s",
          csv_of(gs_csv_text, "say \"hi\""));
    CHECK(!strcmp(csv_of(gs_csv_text, "a\nb"), "\"a\nb\""), "newline");
    CHECK(!strcmp(csv_of(gs_csv_text, "a\rb"), "\"a\rb\""), "carriage return");
    CHECK(!strcmp(csv_of(gs_csv_text, ""), "\"\""), "empty string is \"\"");
    CHECK(!strcmp(csv_of(gs_csv_text, NULL), ""), "NULL is an empty field");

    char buf[64];
    unsigned long long x = 88172645463325252ull;
    int bad_d = 0, bad_f = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double d;
        uint64_t bits = x;
        memcpy(&d, &bits, 8);
        if (isfinite(d)) {
            gs_fmt_double(buf, sizeof buf, d);
            if (strtod(buf, NULL) != d) bad_d++;
        }
        float f;
        uint32_t b32 = (uint32_t)(x >> 11);
        memcpy(&f, &b32, 4);
        if (isfinite(f)) {
            gs_fmt_float(buf, sizeof buf, f);
            if (strtof(buf, NULL) != f) bad_f++;
        }
    }
    CHECK(bad_d == 0, "%d doubles did not read back", bad_d);
    CHECK(bad_f == 0, "%d floats did not read back", bad_f);
    gs_fmt_float(buf, sizeof buf, 0.1f);
    CHECK(!strcmp(buf, "0.1"), "shortest float32 text: %s", buf);
    gs_fmt_double(buf, sizeof buf, 0.1);
    CHECK(!strcmp(buf, "0.1"), "shortest double text: %s", buf);
    gs_fmt_double(buf, sizeof buf, NAN);
    CHECK(!strcmp(buf, ""), "NaN is empty");
    gs_fmt_float(buf, sizeof buf, -INFINITY);
    CHECK(!strcmp(buf, "-inf"), "-inf: %s", buf);
}

static void test_npy(const char *dir) {
    char buf[1024];
    int64_t shape2[2] = {3, 4}, shape1[1] = {7}, shape0[1] = {0};
    int n = gs_npy_header(buf, sizeof buf, "<f4", 2, shape2);
    CHECK(n == 128, "header length %d (data aligned to 64 bytes, as numpy writes)", n);
    CHECK(!memcmp(buf, "\x93NUMPY\x01\x00", 8), "magic and version 1.0");
    CHECK((unsigned char)buf[8] + 256 * (unsigned char)buf[9] == n - 10, "header length field");
    CHECK(!memcmp(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 59), "dict: %.60s",
          buf + 10);
    CHECK(buf[n - 1] == '\n', "ends in a newline");
    n = gs_npy_header(buf, sizeof buf, "<i4", 1, shape1);
    CHECK(n > 0 && strstr(buf + 10, "'shape': (7,)"), "1-d shape has a trailing comma");

    char path[4200];
    snprintf(path, sizeof path, "%s/m.npy", dir);
    gs_npy_writer w;
    float data[12];
    for (int i = 0; i < 12; i++) data[i] = (float)i * 0.5f - 2.0f;
    CHECK(gs_npy_begin(&w, path, "<f4", 2, shape2) == 0, "%s", gs_error());
    CHECK(gs_npy_write(&w, data, 5) == 0 && gs_npy_write(&w, data + 5, 7) == 0, "%s", gs_error());
    CHECK(gs_npy_write(&w, data, 1) != 0, "one element too many is refused");
    CHECK(gs_npy_end(&w) == 0, "%s", gs_error());
    npy_file *f = npy_open(path);
    CHECK(f != NULL, "the store's reader opens it: %s", gs_error());
    if (f) {
        float back[12];
        CHECK(f->ndim == 2 && f->shape[0] == 3 && f->shape[1] == 4 && f->dtype == NPY_F4, "shape and dtype");
        CHECK(npy_read_f32(f, back, 12) == 0 && !memcmp(back, data, sizeof data), "values");
        npy_close(f);
    }
    /* an empty array */
    snprintf(path, sizeof path, "%s/empty.npy", dir);
    CHECK(gs_npy_begin(&w, path, "<i4", 1, shape0) == 0 && gs_npy_end(&w) == 0, "empty array: %s", gs_error());
    /* too few elements: an error, and the earlier file stays */
    snprintf(path, sizeof path, "%s/m.npy", dir);
    size_t before_len = 0, after_len = 0;
    char *before = read_whole_file(path, &before_len);
    CHECK(gs_npy_begin(&w, path, "<f4", 2, shape2) == 0, "%s", gs_error());
    gs_npy_write(&w, data, 11);
    CHECK(gs_npy_end(&w) != 0 && strstr(gs_error(), "11 elements written, the shape holds 12"), "short: %s",
          gs_error());
    char *after = read_whole_file(path, &after_len);
    CHECK(before && after && before_len == after_len && !memcmp(before, after, before_len),
          "a failed write leaves the old file");
    free(before);
    free(after);
    CHECK(gs_npy_begin(&w, path, "<u8", 2, shape2) != 0 && strstr(gs_error(), "unsupported"), "dtype: %s",
          gs_error());
    /* outfile: abort leaves nothing; commit replaces */
    gs_outfile o;
    snprintf(path, sizeof path, "%s/x.txt", dir);
    spit(path, "old");
    CHECK(gs_outfile_open(&o, path) == 0, "%s", gs_error());
    fputs("new", o.f);
    gs_outfile_abort(&o);
    char *t = read_whole_file(path, NULL);
    CHECK(t && !strcmp(t, "old"), "abort keeps the old file");
    free(t);
    CHECK(gs_outfile_open(&o, path) == 0, "%s", gs_error());
    fputs("new", o.f);
    CHECK(gs_outfile_commit(&o) == 0, "%s", gs_error());
    t = read_whole_file(path, NULL);
    CHECK(t && !strcmp(t, "new"), "commit replaces");
    free(t);
    snprintf(path, sizeof path, "%s/no/such/folder/x.txt", dir);
    CHECK(gs_outfile_open(&o, path) != 0 && strstr(gs_error(), "cannot write in"), "missing folder: %s", gs_error());
    CHECK(temporaries(dir) == 0, "no temporary files left");
}

static int has_file(const gs_export_result *r, const char *name) {
    for (int i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].name, name)) return 1;
    return 0;
}

static void test_parse(void) {
    unsigned what;
    CHECK(gs_export_parse_what("tokens,states", &what) == 0 && what == (GS_EXPORT_TOKENS | GS_EXPORT_STATES), "list");
    CHECK(gs_export_parse_what("all", &what) == 0 && what == GS_EXPORT_ALL, "all");
    CHECK(gs_export_parse_what("tokens,bogus", &what) != 0 && strstr(gs_error(), "unknown part 'bogus'"), "%s",
          gs_error());
    CHECK(gs_export_parse_what("", &what) != 0, "empty list");
    gs_export_format fmt;
    CHECK(gs_export_parse_format("npy", &fmt) == 0 && fmt == GS_EXPORT_NPY, "npy");
    CHECK(gs_export_parse_format("xlsx", &fmt) != 0 && strstr(gs_error(), "choose csv or npy"), "%s", gs_error());
}

/* OUT/NAME read whole (NULL when it is not there) */
static char *output_file(const char *out, const char *name) {
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", out, name);
    return read_whole_file(path, NULL);
}

static void test_export_csv(store *st, const char *dir) {
    char out[4200];
    snprintf(out, sizeof out, "%s/csv/nested", dir);
    gs_export_result res;
    gs_export_opts o = {GS_EXPORT_CSV, 0, 0, 3}; /* blocks of 3 states: several reads */
    CHECK(gs_export_run(st, 1, out, &o, &res) == 0, "%s", gs_error());
    const char *want[] = {"runs.csv", "tokens.csv", "heads.csv", "states_ground.csv", "states_pred.csv",
                          "analyses.csv", "analysis_scalars.csv", "analysis_series.csv", "analysis_vectors.csv"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) CHECK(has_file(&res, want[i]), "%s written", want[i]);
    CHECK(res.n_files == (int)(sizeof want / sizeof *want), "%d files", res.n_files);
    CHECK(res.notes[0] == 0, "no notes: %s", res.notes);
    gs_export_result_free(&res);

    char *t = output_file(out, "tokens.csv");
    CHECK(t != NULL, "tokens.csv");
    if (t) {
        const char *head = "window,position,token_id,piece,next_token_id,next_piece,top1,top1_piece,nll,entropy\r\n";
        CHECK(!strncmp(t, head, strlen(head)), "header: %.90s", t);
        /* window 0 position 1: token 1 ',', next 2 '"q"', top1 3 'line\nbreak', nll 0.25 + 1/3 as a double */
        char row[256];
        float nll = 0.25f + 1.0f / 3.0f;
        char num[40];
        gs_fmt_double(num, sizeof num, (double)nll);
        snprintf(row, sizeof row, "\r\n0,1,1,\",\",2,\"\"\"q\"\"\",3,\"line\nbreak\",%s,0\r\n", num);
        CHECK(strstr(t, row) != NULL, "quoted pieces: want %s", row);
        CHECK(strstr(t, "\r\n0,2,2,\"\"\"q\"\"\",3,\"line\nbreak\",6,\"x,\"\"y\"\"\",") != NULL, "a NULL entropy");
        CHECK(strstr(t, ",7,\"\",") != NULL, "the empty piece is \"\"");
        CHECK(strstr(t, ",9,\\xFF,") != NULL, "invalid UTF-8 shown escaped, as the store's piece has it");
        CHECK(strstr(t, ",4,\"cr\r\",") != NULL, "a carriage return quoted");
        /* the last position of a window has no next token: empty fields */
        CHECK(strstr(t, "\r\n0,4,4,\"cr\r\",,,2,") != NULL, "a NULL next token is empty");
        free(t);
    }
    t = output_file(out, "heads.csv");
    if (t) {
        char line[128], a[40], b[40], m[40];
        gs_fmt_double(a, sizeof a, (double)xs_alpha(0, 0, 1));
        gs_fmt_double(b, sizeof b, (double)(0.5f * xs_alpha(0, 0, 1)));
        gs_fmt_double(m, sizeof m, (double)(10.0f * xs_alpha(0, 0, 1)));
        snprintf(line, sizeof line, "\r\n0,0,1,%s,%s,%s\r\n", a, b, m);
        CHECK(strstr(t, line) != NULL, "head row %s", line);
        CHECK(strstr(t, "\r\n1,3,") == NULL, "the missing step has no row");
        free(t);
    }
    t = output_file(out, "states_ground.csv");
    if (t) {
        char line[256], v[3][40];
        for (int j = 0; j < 3; j++) gs_fmt_float(v[j], sizeof v[j], f16_to_f32(f32_to_f16(xs_state(1, 4, j))));
        snprintf(line, sizeof line, "\r\n1,4,%s,%s,%s\r\n", v[0], v[1], v[2]);
        CHECK(!strncmp(t, "window,position,s0,s1,s2\r\n", 26), "states header");
        CHECK(strstr(t, line) != NULL, "f16 state widened: %s", line);
        free(t);
    }
    t = output_file(out, "analysis_series.csv");
    if (t) {
        CHECK(strstr(t, "1,geometry,curve,0,1,0.1,\"one, two\"\r\n") != NULL, "labelled series row");
        CHECK(strstr(t, "1,geometry,curve,1,2,,\r\n") != NULL, "NULL y and label");
        CHECK(strstr(t, "1,geometry,curve,2,3,1e-300,\"say \"\"hi\"\"\"\r\n") != NULL, "tiny value, quoted label");
        free(t);
    }
    t = output_file(out, "analysis_vectors.csv");
    if (t) {
        CHECK(strstr(t, "1,geometry,mean,0,1.5\r\n1,geometry,mean,1,-2\r\n1,geometry,mean,2,0.1\r\n") != NULL,
              "vector rows: %s", t);
        CHECK(strstr(t, "1,geometry,mean,3,3e-39\r\n") != NULL, "a subnormal float");
        free(t);
    }
    t = output_file(out, "manifest.json");
    cJSON *m = t ? cJSON_Parse(t) : NULL;
    CHECK(m != NULL, "manifest.json parses");
    if (m) {
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(m, "files")) == (int)(sizeof want / sizeof *want),
              "the manifest lists every file");
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "format")), "csv"), "format");
        cJSON_Delete(m);
    }
    free(t);
    CHECK(temporaries(out) == 0, "no temporary files left");
}

static void check_npy_f32(const char *dir, const char *name, int ndim, const int64_t *shape, const float *want,
                          const char *what) {
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    npy_file *f = npy_open(path);
    CHECK(f != NULL, "%s: %s", name, gs_error());
    if (!f) return;
    int ok = f->ndim == ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim && ok; i++) {
        ok = f->shape[i] == shape[i];
        n *= shape[i];
    }
    CHECK(ok, "%s: shape", name);
    if (ok) {
        float *got = malloc((size_t)n * sizeof *got);
        int same = got != NULL;
        if (same && f->is_float) {
            same = npy_read_f32(f, got, n) == 0;
        } else if (same) { /* integer arrays: compared as the same small integers */
            int64_t *iv = malloc((size_t)n * sizeof *iv);
            same = iv && npy_read_i64(f, iv, n) == 0;
            for (int64_t i = 0; i < n && same; i++) got[i] = (float)iv[i];
            free(iv);
        }
        for (int64_t i = 0; i < n && same; i++)
            same = (isnan(got[i]) && isnan(want[i])) || got[i] == want[i];
        CHECK(same, "%s: %s", name, what);
        free(got);
    }
    npy_close(f);
}

static void test_export_npy(store *st, const char *dir) {
    char out[4200];
    snprintf(out, sizeof out, "%s/npy", dir);
    gs_export_result res;
    gs_export_opts o = {GS_EXPORT_NPY, 0, 0, 4};
    CHECK(gs_export_run(st, 1, out, &o, &res) == 0, "%s", gs_error());
    const char *want[] = {"states_pred.npy", "states_pred_window.npy", "states_pred_position.npy",
                          "states_ground.npy", "alpha.npy", "beta.npy", "mem_norm.npy", "heads_window.npy",
                          "tokens_token_id.npy", "tokens_nll.npy", "tokens_window.npy", "vocabulary.csv",
                          "analysis_1_geometry_mean.npy", "analysis_scalars.csv", "runs.csv"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) CHECK(has_file(&res, want[i]), "%s written", want[i]);
    gs_export_result_free(&res);

    float pred[XS_W * XS_T * XS_D], ground[XS_W * XS_T * XS_D], win[XS_W * XS_T], pos[XS_W * XS_T];
    float alpha[XS_W * XS_T * XS_H], nll[XS_W * XS_T], tok[XS_W * XS_T];
    for (int w = 0; w < XS_W; w++)
        for (int p = 0; p < XS_T; p++) {
            int r = w * XS_T + p;
            win[r] = (float)w;
            pos[r] = (float)p;
            nll[r] = 0.25f * (float)p + 1.0f / 3.0f;
            tok[r] = (float)xs_token(w, p);
            for (int j = 0; j < XS_D; j++) {
                pred[r * XS_D + j] = xs_state(w, p, j);
                ground[r * XS_D + j] = f16_to_f32(f32_to_f16(xs_state(w, p, j)));
            }
            for (int h = 0; h < XS_H; h++) alpha[r * XS_H + h] = (w == 1 && p == 3) ? NAN : xs_alpha(w, p, h);
        }
    int64_t s2[2] = {XS_W * XS_T, XS_D}, s1[1] = {XS_W * XS_T}, s3[3] = {XS_W, XS_T, XS_H}, st2[2] = {XS_W, XS_T};
    check_npy_f32(out, "states_pred.npy", 2, s2, pred, "float32 states exactly");
    check_npy_f32(out, "states_ground.npy", 2, s2, ground, "float16 states widened exactly");
    check_npy_f32(out, "states_pred_window.npy", 1, s1, win, "windows");
    check_npy_f32(out, "states_pred_position.npy", 1, s1, pos, "positions");
    check_npy_f32(out, "alpha.npy", 3, s3, alpha, "alpha, NaN where the step is missing");
    check_npy_f32(out, "tokens_nll.npy", 2, st2, nll, "nll");
    check_npy_f32(out, "tokens_token_id.npy", 2, st2, tok, "token ids");
    float mean[4] = {1.5f, -2.0f, 0.1f, 3e-39f};
    int64_t s4[1] = {4};
    check_npy_f32(out, "analysis_1_geometry_mean.npy", 1, s4, mean, "analysis vector");
    CHECK(temporaries(out) == 0, "no temporary files left");
}

static void test_lacking(store *st, const char *dir) {
    char out[4200];
    snprintf(out, sizeof out, "%s/run2", dir);
    gs_export_result res;
    gs_export_opts o = {GS_EXPORT_NPY, 0, 0, 0};
    CHECK(gs_export_run(st, 2, out, &o, &res) == 0, "%s", gs_error());
    CHECK(strstr(res.notes, "run 2 has no head steps") && strstr(res.notes, "run 2 has no states") &&
              strstr(res.notes, "run 2 has no analyses"),
          "notes: %s", res.notes);
    CHECK(has_file(&res, "tokens_token_id.npy") && !has_file(&res, "alpha.npy"), "tokens only");
    gs_export_result_free(&res);
    gs_export_opts strict = {GS_EXPORT_CSV, GS_EXPORT_HEADS, 1, 0};
    CHECK(gs_export_run(st, 2, out, &strict, &res) != 0 && strstr(gs_error(), "run 2 has no head steps (a GPN"),
          "asked for heads: %s", gs_error());
    gs_export_result_free(&res);
    CHECK(gs_export_run(st, 7, out, &o, &res) != 0, "a missing run is an error");
    gs_export_result_free(&res);
    char file[4300];
    snprintf(file, sizeof file, "%s/afile", dir);
    spit(file, "x");
    CHECK(gs_export_run(st, 1, file, &o, &res) != 0 && strstr(gs_error(), "exists and is not a folder"), "%s", gs_error());
    gs_export_result_free(&res);
}

/* The small store, then sql run on it behind the writer's back; opened to read. */
static store *hostile_store(const char *dir, const char *sql) {
    char db[4200];
    snprintf(db, sizeof db, "%s/hostile.db", dir);
    remove(db);
    CHECK(xs_build(db) == 0, "%s", gs_error());
    sqlite3 *h = NULL;
    sqlite3_open(db, &h);
    char *err = NULL;
    int rc = sqlite3_exec(h, sql, NULL, NULL, &err);
    CHECK(rc == SQLITE_OK, "%s: %s", sql, err ? err : "");
    sqlite3_free(err);
    sqlite3_close(h);
    store *st = store_open(db, STORE_READ);
    CHECK(st != NULL, "%s", gs_error());
    return st;
}

/* A store changed behind the writer's back: each problem is one error naming
 * it, never a crash or a wrong file. */
static void hostile(const char *dir, const char *sql, gs_export_format fmt, unsigned what, const char *want) {
    char out[4200];
    snprintf(out, sizeof out, "%s/hostile-out", dir);
    store *st = hostile_store(dir, sql);
    if (!st) return;
    gs_export_result res;
    gs_export_opts o = {fmt, what, 1, 0};
    CHECK(gs_export_run(st, 1, out, &o, &res) != 0 && strstr(gs_error(), want) && !strchr(gs_error(), '\n'),
          "%s: got '%s', want '%s'", sql, gs_error(), want);
    gs_export_result_free(&res);
    store_close(st);
    CHECK(temporaries(out) == 0, "no temporary files after a failed export");
}

/* the float32 values after the header of a .npy file */
static int npy_floats(const char *path, float *v, int max) {
    size_t n = 0;
    char *b = read_whole_file(path, &n);
    if (!b || n < 10) { free(b); return -1; }
    size_t off = 10 + (size_t)((unsigned char)b[8] | (unsigned char)b[9] << 8);
    int k = 0;
    for (; off + 4 <= n && k < max; off += 4) memcpy(&v[k++], b + off, 4);
    free(b);
    return k;
}

/* Values a .npy file cannot hold, and names that sanitize alike (issue 17, item 9). */
static void test_types_and_names(const char *dir) {
    /* integers past int32: refused by name, never wrapped negative */
    hostile(dir, "UPDATE tokens SET window = 3000000000 WHERE window = 1", GS_EXPORT_NPY, GS_EXPORT_TOKENS,
            "tokens has window 3000000000, outside the 32-bit range of window ids");
    hostile(dir, "UPDATE tokens SET next_token_id = 2147483648 WHERE window = 0 AND position = 1", GS_EXPORT_NPY,
            GS_EXPORT_TOKENS, "window 0, position 1: tokens.next_token_id is 2147483648, outside the 32-bit range");
    hostile(dir, "UPDATE head_steps SET window = 2147483648 WHERE window = 1", GS_EXPORT_NPY, GS_EXPORT_HEADS,
            "head steps of window 2147483648, outside the int32 of heads_window.npy");
    hostile(dir, "UPDATE states SET window = 4294967296 WHERE window = 1 AND kind = 'pred'", GS_EXPORT_NPY,
            GS_EXPORT_STATES, "'pred' state at window 4294967296, position 0, outside the 32-bit range");
    hostile(dir, "UPDATE states SET window = 4294967296 WHERE window = 1 AND kind = 'pred'", GS_EXPORT_CSV,
            GS_EXPORT_STATES, "'pred' state at window 4294967296, position 0, outside the 32-bit range");
    /* a text NLL (the column is REAL, but SQLite keeps text that is not a number) is not 0.0 */
    hostile(dir, "UPDATE tokens SET nll = 'abc' WHERE window = 0 AND position = 2", GS_EXPORT_NPY, GS_EXPORT_TOKENS,
            "window 0, position 2: tokens.nll is text, not a number");
    hostile(dir, "UPDATE tokens SET entropy = x'00' WHERE window = 1 AND position = 4", GS_EXPORT_NPY,
            GS_EXPORT_TOKENS, "window 1, position 4: tokens.entropy is a blob, not a number");
    store *st = hostile_store(dir, "UPDATE tokens SET nll = 'abc' WHERE window = 0 AND position = 2");
    if (st) { /* and ablate's base perplexity does not take it as 0.0: refused before the model is read */
        gs_ablate_opts ao;
        gs_ablate_opts_default(&ao);
        ao.what = "none";
        gs_ablation ab;
        CHECK(gs_ablate(st, 1, &ao, &ab) != 0 && strstr(gs_error(), "tokens.nll is text, not a number"),
              "ablate with a text nll: %s", gs_error());
        store_close(st);
    }

    /* a text head value: NaN in alpha.npy, and a warning */
    char out[4200], path[4400];
    snprintf(out, sizeof out, "%s/textalpha", dir);
    st = hostile_store(dir, "UPDATE head_steps SET alpha = 'x' WHERE window = 0 AND position = 1 AND head = 1");
    if (st) {
        gs_export_result res;
        gs_export_opts o = {GS_EXPORT_NPY, GS_EXPORT_HEADS, 1, 0};
        CHECK(gs_export_run(st, 1, out, &o, &res) == 0, "%s", gs_error());
        CHECK(strstr(res.notes, "warning: run 1 has 1 head-step value that is not a number (the first: alpha.npy at "
                                "window 0, position 1): written as NaN"),
              "notes: %s", res.notes);
        float v[64];
        snprintf(path, sizeof path, "%s/alpha.npy", out);
        int n = npy_floats(path, v, 64);
        CHECK(n == XS_W * XS_T * XS_H && isnan(v[1 * XS_H + 1]) && v[1 * XS_H] == xs_alpha(0, 1, 0),
              "alpha.npy: %d values, [0,1,1] = %g", n, n > 3 ? v[3] : 0);
        gs_export_result_free(&res);
        store_close(st);
    }

    /* kinds and keys that sanitize to the same name each get their own files */
    st = hostile_store(dir, "INSERT INTO states (run_id, window, position, kind, dtype, vector) VALUES"
                            " (1, 0, 0, 'a/b', 'f32', x'0000803f'), (1, 0, 0, 'a_b', 'f32', x'00000040');"
                            "INSERT INTO analysis_vectors (analysis_id, key, vector)"
                            " SELECT id, 'k/1', x'0000803f' FROM analyses WHERE run_id = 1;"
                            "INSERT INTO analysis_vectors (analysis_id, key, vector)"
                            " SELECT id, 'k_1', x'00000040' FROM analyses WHERE run_id = 1");
    if (st) {
        for (int fmt = 0; fmt < 2; fmt++) {
            snprintf(out, sizeof out, "%s/samename-%d", dir, fmt);
            gs_export_result res;
            gs_export_opts o = {fmt ? GS_EXPORT_CSV : GS_EXPORT_NPY, GS_EXPORT_STATES | GS_EXPORT_ANALYSES, 1, 0};
            CHECK(gs_export_run(st, 1, out, &o, &res) == 0, "%s", gs_error());
            int distinct = 1;
            for (int i = 0; i < res.n_files; i++)
                for (int j = 0; j < i; j++) distinct &= strcmp(res.files[i].name, res.files[j].name) != 0;
            CHECK(distinct, "every file name of the export is its own (%s)", fmt ? "csv" : "npy");
            if (fmt == 0) {
                float v[4];
                snprintf(path, sizeof path, "%s/states_a_b.npy", out);
                CHECK(npy_floats(path, v, 4) == 1 && v[0] == 1.0f, "states_a_b.npy holds kind 'a/b'");
                snprintf(path, sizeof path, "%s/states_a_b_2.npy", out);
                CHECK(npy_floats(path, v, 4) == 1 && v[0] == 2.0f, "states_a_b_2.npy holds kind 'a_b'");
                CHECK(has_file(&res, "states_a_b_2_window.npy") && has_file(&res, "states_a_b_2_position.npy"),
                      "its window and position files");
                int vec = 0;
                for (int i = 0; i < res.n_files; i++) vec += strstr(res.files[i].name, "_k_1") != NULL;
                CHECK(vec == 2, "two analysis vectors named alike: %d files", vec);
            } else {
                CHECK(has_file(&res, "states_a_b.csv") && has_file(&res, "states_a_b_2.csv"), "two csv files");
            }
            gs_export_result_free(&res);
        }
        store_close(st);
    }
}

int main(void) {
    const char *dir = scratch_dir("test_export");
    test_types_and_names(dir);
    test_csv();
    test_npy(dir);
    test_parse();
    char db[4200];
    snprintf(db, sizeof db, "%s/x.db", dir);
    CHECK(xs_build(db) == 0, "building the store: %s", gs_error());
    store *st = store_open(db, STORE_READ);
    CHECK(st != NULL, "%s", gs_error());
    if (!st) return test_summary();
    test_export_csv(st, dir);
    test_export_npy(st, dir);
    test_lacking(st, dir);
    store_close(st);
    hostile(dir, "PRAGMA ignore_check_constraints = ON; UPDATE analysis_vectors SET vector = x'010203'", GS_EXPORT_NPY, GS_EXPORT_ANALYSES,
            "has 3 bytes, not a float32 vector");
    hostile(dir, "PRAGMA ignore_check_constraints = ON; UPDATE analysis_vectors SET vector = x'010203'", GS_EXPORT_CSV, GS_EXPORT_ANALYSES,
            "has 3 bytes, not a float32 vector");
    hostile(dir, "UPDATE states SET vector = x'0000803f' WHERE kind = 'pred' AND window = 1 AND position = 2",
            GS_EXPORT_NPY, GS_EXPORT_STATES, "mixed state sizes");
    hostile(dir, "UPDATE states SET vector = x'0000803f' WHERE kind = 'pred' AND window = 1 AND position = 2",
            GS_EXPORT_CSV, GS_EXPORT_STATES, "mixed state sizes");
    hostile(dir, "INSERT INTO head_steps (run_id, window, position, head, alpha) VALUES (1, 0, 2000000000, 0, 0.5)",
            GS_EXPORT_NPY, GS_EXPORT_HEADS, "too sparse for a dense array, export them as csv instead");
    hostile(dir, "INSERT INTO head_steps (run_id, window, position, head, alpha) VALUES (1, 0, -3, 0, 0.5)",
            GS_EXPORT_NPY, GS_EXPORT_HEADS, "negative positions or heads");
    return test_summary();
}
