#include "notebooks-export/export.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "notebooks-export/csv.h"
#include "notebooks-export/npy_write.h"
#include "notebooks-export/outfile.h"

int gs_export_parse_what(const char *list, unsigned *what) {
    static const gs_flag_name names[] = {
        {"tokens", GS_EXPORT_TOKENS},     {"heads", GS_EXPORT_HEADS}, {"states", GS_EXPORT_STATES},
        {"analyses", GS_EXPORT_ANALYSES}, {"all", GS_EXPORT_ALL},
    };
    const char *bad;
    int len;
    if (gs_parse_flag_list(list, names, sizeof names / sizeof *names, 1, what, &bad, &len))
        return gs_fail("unknown part '%.*s' (choose from tokens, heads, states, analyses)", len, bad);
    if (!*what) return gs_fail("no part named in '%s' (choose from tokens, heads, states, analyses)", list ? list : "");
    return 0;
}

int gs_export_parse_format(const char *name, gs_export_format *out) {
    if (name && !strcmp(name, "csv")) { *out = GS_EXPORT_CSV; return 0; }
    if (name && !strcmp(name, "npy")) { *out = GS_EXPORT_NPY; return 0; }
    return gs_fail("unknown format '%s' (choose csv or npy)", name ? name : "");
}

void gs_export_result_free(gs_export_result *res) {
    free(res->files);
    memset(res, 0, sizeof *res);
}

/* ---------- the context of one export ---------- */

typedef struct {
    store *st;
    int64_t run;
    const char *dir;
    const gs_export_opts *o;
    gs_export_result *res;
    cJSON *files; /* the manifest's list */
    int64_t block;
} ctx;

static void note(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(c->res->notes, sizeof c->res->notes, fmt, ap);
    va_end(ap);
}

/* A part the run does not have: an error when it was asked for by name. */
static int lacking(ctx *c, const char *what, const char *why) {
    if (c->o->strict) return gs_fail("%s: run %lld has no %s%s", store_path(c->st), (long long)c->run, what, why);
    note(c, "run %lld has no %s%s: not exported", (long long)c->run, what, why);
    return 0;
}

static void path_of(const ctx *c, const char *name, char *out, size_t size) {
    snprintf(out, size, "%s/%s", c->dir, name);
}

/* Record a finished file in the result and the manifest. shape: NULL for a
 * CSV table (rows counts then), else ndim entries. */
static int add_file(ctx *c, const char *name, const char *what, int64_t rows, int ndim, const int64_t *shape,
                    const char *dtype) {
    gs_export_file *f = realloc(c->res->files, (size_t)(c->res->n_files + 1) * sizeof *f);
    if (!f) return gs_fail("out of memory");
    c->res->files = f;
    f += c->res->n_files++;
    snprintf(f->name, sizeof f->name, "%s", name);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", name);
    cJSON_AddStringToObject(j, "what", what);
    if (shape) {
        size_t k = (size_t)snprintf(f->size, sizeof f->size, "(");
        cJSON *sh = cJSON_AddArrayToObject(j, "shape");
        for (int i = 0; i < ndim; i++) {
            if (k < sizeof f->size)
                k += (size_t)snprintf(f->size + k, sizeof f->size - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[i]));
        }
        if (k < sizeof f->size) snprintf(f->size + k, sizeof f->size - k, "%s) %s", ndim == 1 ? "," : "", dtype);
        cJSON_AddStringToObject(j, "dtype", dtype);
    } else {
        snprintf(f->size, sizeof f->size, "%lld row%s", (long long)rows, rows == 1 ? "" : "s");
        cJSON_AddNumberToObject(j, "rows", (double)rows);
    }
    cJSON_AddItemToArray(c->files, j);
    return 0;
}

/* A store table's rows as NAME.csv. Returns the rows, or -1. With skip_empty,
 * a table without rows writes nothing and returns 0. */
static int64_t query_csv(ctx *c, const char *name, const char *what, store_rows_table table, int skip_empty) {
    char path[4096];
    path_of(c, name, path, sizeof path);
    store_rows *s = store_rows_open(c->st, c->run, table);
    if (!s) return -1;
    gs_outfile out;
    if (gs_outfile_open(&out, path) != 0) { store_rows_close(s); return -1; }
    int64_t rows = gs_csv_query(out.f, s);
    store_rows_close(s);
    if (rows < 0) { gs_fail_context("%s: ", path); gs_outfile_abort(&out); return -1; }
    if (rows == 0 && skip_empty) { gs_outfile_abort(&out); return 0; }
    if (ferror(out.f)) { gs_outfile_write_failed(&out); gs_outfile_abort(&out); return -1; }
    if (gs_outfile_commit(&out) != 0 || add_file(c, name, what, rows, 0, NULL, NULL) != 0) return -1;
    return rows;
}

/* A file name made of safe characters only (a kind or a key may hold anything). */
static void safe_name(char *out, size_t size, const char *in) {
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && k + 1 < size && k < 64; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                 *p == '-' || (*p == '.' && k > 0);
        out[k++] = ok ? (char)*p : '_';
    }
    if (!k && size > 1) out[k++] = '_';
    out[k] = 0;
}

/* 1 when an earlier file of this export has that name. */
static int name_taken(const ctx *c, const char *name) {
    for (int i = 0; i < c->res->n_files; i++)
        if (!strcmp(c->res->files[i].name, name)) return 1;
    return 0;
}

/* A stem whose files (stem + each suffix) no earlier file of this export
 * has: two kinds or keys that sanitize alike ("a/b" and "a_b") would
 * otherwise write the same file, the second over the first. */
static void unique_stem(const ctx *c, char *stem, size_t size, const char *const *suffixes, int n_suffixes) {
    char base[160], name[200];
    snprintf(base, sizeof base, "%s", stem);
    for (int k = 1;; k++) {
        if (k > 1) snprintf(stem, size, "%s_%d", base, k);
        int taken = 0;
        for (int i = 0; i < n_suffixes && !taken; i++) {
            snprintf(name, sizeof name, "%s%s", stem, suffixes[i]);
            taken = name_taken(c, name);
        }
        if (!taken) return;
    }
}

/* ---------- run ---------- */

/* query_csv of a part a run may lack: none of its rows is lacking(what, why). */
static int part_csv(ctx *c, const char *name, const char *about, store_rows_table table, const char *what,
                    const char *why) {
    int64_t rows = query_csv(c, name, about, table, 1);
    if (rows < 0) return -1;
    return rows == 0 ? lacking(c, what, why) : 0;
}

static int export_run_row(ctx *c) {
    return query_csv(c, "runs.csv", "the run's row of the runs table (docs/schema.md)",
                     STORE_ROWS_RUN, 0) < 0 ? -1 : 0;
}

/* ---------- tokens ---------- */

static int tokens_csv(ctx *c) {
    return part_csv(c, "tokens.csv",
                    "one row per token: x_t, its text, the next token, the model's top-1 prediction, "
                    "-ln p(x_t) and the entropy (nats) of the prediction made before reading it",
                    STORE_ROWS_TOKENS_TEXT, "token rows", "");
}

static int write_npy(ctx *c, const char *name, const char *what, const char *descr, int ndim, const int64_t *shape,
                     const void *data) {
    char path[4096];
    path_of(c, name, path, sizeof path);
    gs_npy_writer w;
    if (gs_npy_begin(&w, path, descr, ndim, shape) != 0) return -1;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (gs_npy_write(&w, data, n) != 0) { gs_npy_abort(&w); return -1; }
    if (gs_npy_end(&w) != 0) return -1;
    return add_file(c, name, what, 0, ndim, shape, descr);
}

static int tokens_npy(ctx *c) {
    int64_t n = store_count_tokens(c->st, c->run);
    if (n < 0) return -1;
    if (n == 0) return lacking(c, "token rows", "");
    /* the arrays are <i4: an id past int32 would wrap negative (or into another id) */
    static const char *const id_cols[3] = {"token_id", "next_token_id", "top1"};
    for (int k = 0; k < 3; k++) {
        int64_t w, p, v;
        int found = store_first_token_past_int32(c->st, c->run, k, &w, &p, &v);
        if (found < 0) return -1;
        if (found)
            return gs_fail("%s: run %lld, window %lld, position %lld: tokens.%s is %lld, outside the 32-bit range "
                           "of token ids in tokens_%s.npy: export --format csv", store_path(c->st), (long long)c->run,
                           (long long)w, (long long)p, id_cols[k], (long long)v, id_cols[k]);
    }
    store_token_array t;
    if (store_read_tokens(c->st, c->run, &t) != 0) return -1;
    int64_t shape[2] = {t.n_windows, t.n_positions};
    int rc = write_npy(c, "tokens_window.npy", "the window id of each row of the tokens_*.npy arrays", "<i4", 1, shape,
                       t.window_ids);
    if (!rc) rc = write_npy(c, "tokens_token_id.npy", "x_t at [window row, position]; -1 where no token", "<i4", 2,
                            shape, t.token_id);
    if (!rc) rc = write_npy(c, "tokens_next_token_id.npy", "x_{t+1} where known, else -1", "<i4", 2, shape,
                            t.next_token_id);
    if (!rc) rc = write_npy(c, "tokens_top1.npy", "the model's most likely token for position t; -1 where unknown",
                            "<i4", 2, shape, t.top1);
    if (!rc) rc = write_npy(c, "tokens_nll.npy", "-ln p(x_t) in nats; NaN where unknown", "<f4", 2, shape, t.nll);
    if (!rc) rc = write_npy(c, "tokens_entropy.npy", "entropy of the prediction of x_t in nats; NaN where unknown",
                            "<f4", 2, shape, t.entropy);
    store_token_array_free(&t);
    if (rc) return -1;
    /* the text of the tokens, when the run has a vocabulary */
    return query_csv(c, "vocabulary.csv", "token id -> piece text of the run's tokenizer",
                     STORE_ROWS_VOCABULARY, 1) < 0
               ? -1
               : 0;
}

/* ---------- heads ---------- */

static int heads_csv(ctx *c) {
    return part_csv(c, "heads.csv",
                    "one row per token per memory head: decay alpha, write strength beta, Frobenius norm "
                    "of the head's memory after the step",
                    STORE_ROWS_HEAD_STEPS, "head steps", " (a GPN has no memory heads)");
}

/* alpha, beta and mem_norm as dense (n_windows, T, H) arrays, streamed
 * from one ordered query: one window's block in memory at a time. */
static int heads_npy(ctx *c) {
    store_head_extent e;
    if (store_head_steps_extent(c->st, c->run, &e) != 0) return -1;
    int64_t rows = e.rows, nw = e.n_windows, T = e.n_positions, H = e.n_heads, minp = e.min_position,
            minh = e.min_head, minw = e.min_window, maxw = e.max_window;
    if (rows == 0) return lacking(c, "head steps", " (a GPN has no memory heads)");
    if (minw < INT32_MIN || maxw > INT32_MAX)
        return gs_fail("%s: run %lld has head steps of window %lld, outside the int32 of heads_window.npy: export "
                       "them as csv instead", store_path(c->st), (long long)c->run,
                       (long long)(maxw > INT32_MAX ? maxw : minw));
    if (minp < 0 || minh < 0)
        return gs_fail("%s: run %lld has head steps at negative positions or heads: export them as csv instead",
                       store_path(c->st), (long long)c->run);
    /* a dense array much larger than the rows means a stray huge index */
    if (T > (1 << 24) || H > (1 << 16) || (double)nw * (double)T * (double)H > 16.0 * (double)rows + (1 << 20))
        return gs_fail("%s: run %lld's head steps span %lld windows x %lld positions x %lld heads for only %lld "
                       "rows: too sparse for a dense array, export them as csv instead",
                       store_path(c->st), (long long)c->run, (long long)nw, (long long)T, (long long)H,
                       (long long)rows);
    static const char *const names[3] = {"alpha.npy", "beta.npy", "mem_norm.npy"};
    static const char *const what[3] = {
        "decay alpha applied to each head at each step, [window row, position, head]; NaN where not recorded",
        "write strength beta, [window row, position, head]; NaN where not recorded",
        "Frobenius norm of each head's memory after the step, [window row, position, head]; NaN where not recorded"};
    int64_t shape[3] = {nw, T, H};
    gs_npy_writer w[3];
    memset(w, 0, sizeof w);
    int32_t *wins = malloc((size_t)nw * sizeof *wins);
    float *block = malloc((size_t)(3 * T * H) * sizeof *block);
    int rc = (wins && block) ? 0 : gs_fail("out of memory");
    char path[4096];
    for (int k = 0; k < 3 && !rc; k++) {
        path_of(c, names[k], path, sizeof path);
        rc = gs_npy_begin(&w[k], path, "<f4", 3, shape);
    }
    store_rows *s = rc ? NULL : store_rows_open(c->st, c->run, STORE_ROWS_HEAD_STEPS);
    if (!rc && !s) rc = -1;
    int64_t wi = -1, cur = 0, not_numbers = 0, first_w = 0, first_p = 0;
    int first_col = 0;
    while (!rc) {
        int more = store_rows_next(s);
        if (more < 0) { rc = -1; break; }
        int64_t win = more ? store_rows_int(s, 0) : 0;
        if (!more || wi < 0 || win != cur) { /* a window ends */
            if (wi >= 0)
                for (int k = 0; k < 3 && !rc; k++) rc = gs_npy_write(&w[k], block + k * T * H, T * H);
            if (!more || rc) break;
            if (++wi >= nw) { rc = gs_fail("%s: the head steps changed while being read", store_path(c->st)); break; }
            cur = win;
            wins[wi] = (int32_t)win;
            for (int64_t i = 0; i < 3 * T * H; i++) block[i] = NAN;
        }
        int64_t p = store_rows_int(s, 1), h = store_rows_int(s, 2);
        for (int k = 0; k < 3; k++) {
            store_value_type type = store_rows_type(s, 3 + k);
            if (type == STORE_VALUE_FLOAT || type == STORE_VALUE_INT)
                block[k * T * H + p * H + h] = (float)store_rows_double(s, 3 + k);
            else if (type != STORE_VALUE_NULL && !not_numbers++) { /* text reads as 0.0: NaN, and said */
                first_w = win;
                first_p = p;
                first_col = k;
            }
        }
    }
    store_rows_close(s);
    if (!rc && not_numbers)
        note(c, "warning: run %lld has %lld head-step value%s that %s not a number (the first: %s at window %lld, "
                "position %lld): written as NaN", (long long)c->run, (long long)not_numbers,
             not_numbers == 1 ? "" : "s", not_numbers == 1 ? "is" : "are", names[first_col], (long long)first_w,
             (long long)first_p);
    if (!rc && wi + 1 != nw) rc = gs_fail("%s: the head steps changed while being read", store_path(c->st));
    for (int k = 0; k < 3; k++) {
        if (!rc) rc = gs_npy_end(&w[k]);
        else gs_npy_abort(&w[k]);
        if (!rc) rc = add_file(c, names[k], what[k], 0, 3, shape, "<f4");
    }
    if (!rc) rc = write_npy(c, "heads_window.npy", "the window id of each row of alpha.npy, beta.npy, mem_norm.npy",
                            "<i4", 1, shape, wins);
    free(wins);
    free(block);
    return rc;
}

/* ---------- states ---------- */

static int states_kind(ctx *c, const char *kind) {
    char sk[80], stem[120], name[3][200], path[4096];
    safe_name(sk, sizeof sk, kind);
    snprintf(stem, sizeof stem, "states_%s", sk);
    static const char *const npy_suffixes[3] = {".npy", "_window.npy", "_position.npy"}, *const csv_suffix[1] = {".csv"};
    if (c->o->format == GS_EXPORT_NPY) unique_stem(c, stem, sizeof stem, npy_suffixes, 3);
    else unique_stem(c, stem, sizeof stem, csv_suffix, 1);
    /* the reader hands windows and positions over as int32: a larger one would wrap */
    int64_t bad_w, bad_p;
    int bad = store_first_state_past_int32(c->st, c->run, kind, &bad_w, &bad_p);
    if (bad < 0) return -1;
    if (bad)
        return gs_fail("%s: run %lld has a '%s' state at window %lld, position %lld, outside the 32-bit range of "
                       "window and position ids (a damaged or hand-edited store)", store_path(c->st),
                       (long long)c->run, kind, (long long)bad_w, (long long)bad_p);
    int64_t n = store_count_states(c->st, c->run, kind);
    if (n < 0) return -1;
    store_states *rd = store_states_open(c->st, c->run, kind, -1, -1);
    if (!rd) return -1;
    const int d = store_states_dim(rd);
    const int64_t B = c->block;
    float *rows = malloc((size_t)(B * (d > 0 ? d : 1)) * sizeof *rows);
    int32_t *win = malloc((size_t)B * sizeof *win), *pos = malloc((size_t)B * sizeof *pos);
    int rc = (rows && win && pos) ? 0 : gs_fail("out of memory");
    int64_t done = 0;
    if (c->o->format == GS_EXPORT_NPY) {
        gs_npy_writer w[3];
        memset(w, 0, sizeof w);
        int64_t shape[2] = {n, d};
        snprintf(name[0], sizeof name[0], "%s.npy", stem);
        snprintf(name[1], sizeof name[1], "%s_window.npy", stem);
        snprintf(name[2], sizeof name[2], "%s_position.npy", stem);
        for (int k = 0; k < 3 && !rc; k++) {
            path_of(c, name[k], path, sizeof path);
            rc = gs_npy_begin(&w[k], path, k ? "<i4" : "<f4", k ? 1 : 2, shape);
        }
        while (!rc) {
            int64_t got = store_states_read(rd, rows, win, pos, B);
            if (got < 0) rc = -1;
            if (got <= 0) break;
            if (got > n - done) { rc = gs_fail("%s: the states changed while being read", store_path(c->st)); break; }
            rc = gs_npy_write(&w[0], rows, got * d);
            if (!rc) rc = gs_npy_write(&w[1], win, got);
            if (!rc) rc = gs_npy_write(&w[2], pos, got);
            done += got;
        }
        char what[3][200];
        snprintf(what[0], sizeof what[0], "the '%s' state vectors, one row per state in (window, position) order "
                                          "(float16 states widened)", kind);
        snprintf(what[1], sizeof what[1], "the window of each row of %s.npy", stem);
        snprintf(what[2], sizeof what[2], "the position of each row of %s.npy", stem);
        for (int k = 0; k < 3; k++) {
            if (!rc) rc = gs_npy_end(&w[k]);
            else gs_npy_abort(&w[k]);
            if (!rc) rc = add_file(c, name[k], what[k], 0, k ? 1 : 2, shape, k ? "<i4" : "<f4");
        }
    } else {
        gs_outfile out;
        snprintf(name[0], sizeof name[0], "%s.csv", stem);
        path_of(c, name[0], path, sizeof path);
        if (!rc) rc = gs_outfile_open(&out, path);
        if (!rc) {
            fputs("window,position", out.f);
            for (int i = 0; i < d; i++) fprintf(out.f, ",s%d", i);
            gs_csv_eol(out.f);
            while (!ferror(out.f)) {
                int64_t got = store_states_read(rd, rows, win, pos, B);
                if (got < 0) rc = -1;
                if (got <= 0) break;
                for (int64_t r = 0; r < got; r++) {
                    fprintf(out.f, "%d,%d", win[r], pos[r]);
                    for (int i = 0; i < d; i++) {
                        gs_csv_sep(out.f);
                        gs_csv_float(out.f, rows[r * d + i]);
                    }
                    gs_csv_eol(out.f);
                }
                done += got;
            }
            if (!rc && ferror(out.f)) rc = gs_outfile_write_failed(&out);
            if (rc) gs_outfile_abort(&out);
            else rc = gs_outfile_commit(&out);
            char what[200];
            snprintf(what, sizeof what, "the '%s' state vectors: window, position, then its %d elements s0..s%d "
                                        "(float16 states widened)", kind, d, d - 1);
            if (!rc) rc = add_file(c, name[0], what, done, 0, NULL, NULL);
        }
    }
    if (!rc && done != n) rc = gs_fail("%s: %lld '%s' states counted but %lld read", store_path(c->st), (long long)n,
                                       kind, (long long)done);
    store_states_close(rd);
    free(rows);
    free(win);
    free(pos);
    return rc;
}

static int export_states(ctx *c) {
    store_kind_count *kinds = NULL; /* ascending by kind */
    int n = store_state_counts(c->st, c->run, &kinds);
    if (n < 0) return -1;
    if (n == 0) { free(kinds); return lacking(c, "states", " (recorded with --states none)"); }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) rc = states_kind(c, kinds[i].kind);
    free(kinds);
    return rc;
}

/* ---------- analyses ---------- */

static int vectors_csv(ctx *c) {
    char path[4096];
    path_of(c, "analysis_vectors.csv", path, sizeof path);
    store_rows *s = store_rows_open(c->st, c->run, STORE_ROWS_ANALYSIS_VECTORS);
    if (!s) return -1;
    gs_outfile out;
    if (gs_outfile_open(&out, path) != 0) { store_rows_close(s); return -1; }
    fputs("analysis_id,analysis,key,idx,value\r\n", out.f);
    int64_t rows = 0;
    int step, rc = 0;
    char head[512];
    while ((step = store_rows_next(s)) == 1) {
        int bytes;
        const unsigned char *b = store_rows_blob(s, 3, &bytes);
        const char *key = store_rows_text(s, 2);
        if (bytes % 4) {
            rc = gs_fail("%s: analysis %lld's vector '%s' has %d bytes, not a float32 vector", store_path(c->st),
                         (long long)store_rows_int(s, 0), key ? key : "", bytes);
            break;
        }
        /* the row's first three fields, quoted as needed, once */
        FILE *m = fmemopen(head, sizeof head, "w");
        if (!m) { rc = gs_fail("out of memory"); break; }
        gs_csv_int(m, store_rows_int(s, 0));
        gs_csv_sep(m);
        gs_csv_text(m, store_rows_text(s, 1));
        gs_csv_sep(m);
        gs_csv_text(m, key);
        fclose(m);
        for (int i = 0; i < bytes / 4; i++) {
            float v;
            memcpy(&v, b + 4 * i, 4); /* little-endian, as the store writes it */
            fprintf(out.f, "%s,%d,", head, i);
            gs_csv_float(out.f, v);
            gs_csv_eol(out.f);
            rows++;
        }
    }
    if (!rc && step < 0) rc = -1;
    store_rows_close(s);
    if (!rc && ferror(out.f)) rc = gs_outfile_write_failed(&out);
    if (rc) { gs_outfile_abort(&out); return -1; }
    if (gs_outfile_commit(&out) != 0) return -1;
    return add_file(c, "analysis_vectors.csv", "every analysis vector, one row per element (idx from 0)", rows, 0,
                    NULL, NULL);
}

static int vectors_npy(ctx *c) {
    store_rows *s = store_rows_open(c->st, c->run, STORE_ROWS_ANALYSIS_VECTORS);
    if (!s) return -1;
    int step = 0, rc = 0;
    while (!rc && (step = store_rows_next(s)) == 1) {
        int64_t id = store_rows_int(s, 0);
        const char *an = store_rows_text(s, 1), *key = store_rows_text(s, 2);
        char san[80], skey[80], stem[200], name[220], what[256];
        safe_name(san, sizeof san, an ? an : "");
        safe_name(skey, sizeof skey, key ? key : "");
        snprintf(stem, sizeof stem, "analysis_%lld_%s_%s", (long long)id, san, skey);
        static const char *const suffix[1] = {".npy"};
        unique_stem(c, stem, sizeof stem, suffix, 1);
        snprintf(name, sizeof name, "%s.npy", stem);
        snprintf(what, sizeof what, "vector '%s' of analysis %lld (%s)", key ? key : "", (long long)id, an ? an : "");
        int bytes;
        const void *b = store_rows_blob(s, 3, &bytes);
        if (bytes % 4) {
            rc = gs_fail("%s: analysis %lld's vector '%s' has %d bytes, not a float32 vector", store_path(c->st),
                         (long long)id, key ? key : "", bytes);
            break;
        }
        int64_t n = bytes / 4;
        float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        if (!v) { rc = gs_fail("out of memory"); break; }
        if (n) memcpy(v, b, (size_t)bytes);
        rc = write_npy(c, name, what, "<f4", 1, &n, v);
        free(v);
    }
    if (!rc && step < 0) rc = -1;
    store_rows_close(s);
    return rc;
}

static int export_analyses(ctx *c) {
    int64_t n = store_count_analyses(c->st, c->run);
    if (n < 0) return -1;
    if (n == 0) return lacking(c, "analyses", " (run gpnscope analyze first)");
    if (query_csv(c, "analyses.csv", "one row per analysis of the run: name, settings (JSON), when, code version",
                  STORE_ROWS_ANALYSES, 0) < 0)
        return -1;
    if (query_csv(c, "analysis_scalars.csv", "every analysis scalar: key, value and how it was computed",
                  STORE_ROWS_ANALYSIS_SCALARS, 0) < 0)
        return -1;
    if (query_csv(c, "analysis_series.csv", "every analysis series (curves, lists): points in idx order",
                  STORE_ROWS_ANALYSIS_SERIES, 0) < 0)
        return -1;
    return c->o->format == GS_EXPORT_NPY ? vectors_npy(c) : vectors_csv(c);
}

/* ---------- the whole export ---------- */

static int write_manifest(ctx *c, const char *format) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "exported_by", "gpnscope export");
    cJSON_AddStringToObject(m, "store", store_path(c->st));
    cJSON_AddNumberToObject(m, "run", (double)c->run);
    cJSON_AddStringToObject(m, "format", format);
    cJSON_AddItemToObject(m, "files", c->files);
    c->files = NULL;
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    if (!text) return gs_fail("out of memory");
    char path[4096];
    path_of(c, "manifest.json", path, sizeof path);
    gs_outfile out;
    int rc = gs_outfile_open(&out, path);
    if (!rc) {
        fputs(text, out.f);
        fputc('\n', out.f);
        rc = gs_outfile_commit(&out);
    }
    free(text);
    return rc;
}

int gs_export_run(store *st, int64_t run_id, const char *dir, const gs_export_opts *o, gs_export_result *res) {
    memset(res, 0, sizeof *res);
    gs_export_opts dflt = {0};
    if (!o) o = &dflt;
    if (!dir || !*dir) return gs_fail("export: no output folder given");
    store_run_info info;
    if (store_run_get(st, run_id, &info) != 0) return -1;
    if (gs_make_dirs(dir) != 0) return -1;
    ctx c = {st, run_id, dir, o, res, cJSON_CreateArray(), o->block_rows > 0 ? o->block_rows : 256};
    if (!c.files) return gs_fail("out of memory");
    /* one snapshot for every file, even while a recording writes */
    if (store_snapshot_begin(st) != 0) {
        cJSON_Delete(c.files);
        return -1;
    }
    unsigned what = o->what ? o->what : GS_EXPORT_ALL;
    int rc = export_run_row(&c);
    if (!rc && (what & GS_EXPORT_TOKENS)) rc = o->format == GS_EXPORT_NPY ? tokens_npy(&c) : tokens_csv(&c);
    if (!rc && (what & GS_EXPORT_HEADS)) rc = o->format == GS_EXPORT_NPY ? heads_npy(&c) : heads_csv(&c);
    if (!rc && (what & GS_EXPORT_STATES)) rc = export_states(&c);
    if (!rc && (what & GS_EXPORT_ANALYSES)) rc = export_analyses(&c);
    store_snapshot_end(st);
    if (!rc) rc = write_manifest(&c, o->format == GS_EXPORT_NPY ? "npy" : "csv");
    cJSON_Delete(c.files);
    return rc;
}
