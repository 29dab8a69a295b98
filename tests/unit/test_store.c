/* The store: schema creation, identity and version checks, the migration
 * framework, writer/reader round trips (f32 and f16 states), resume, and
 * analysis results (replace vs add). */
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/half.h"
#include "store/store.h"
#include "store/store_internal.h"
#include "testlib.h"

static char dir[4096];

static const char *path_in(const char *name) {
    static char buf[4][4096];
    static int slot;
    char *o = buf[slot++ % 4];
    snprintf(o, 4096, "%s/%s", dir, name);
    return o;
}

static int exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* One integer from SQL on a raw connection or a store's. */
static int64_t sql_int(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    int64_t v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    else fprintf(stderr, "  sql_int(%s): %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    return v;
}

static void raw_exec(const char *path, const char *sql) {
    sqlite3 *db;
    sqlite3_open(path, &db);
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fprintf(stderr, "  raw_exec: %s\n", err);
    sqlite3_free(err);
    sqlite3_close(db);
}

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static void test_create_and_identity(void) {
    const char *p = path_in("new.db");
    store *st = store_open(p, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "create: %s", gs_error());
    if (!st) return;
    sqlite3 *db = store_db(st);
    CHECK(sql_int(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "user_version");
    CHECK(sql_int(db, "PRAGMA application_id") == STORE_APPLICATION_ID, "application_id");
    CHECK(sql_int(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1, "WAL mode");
    const char *tables[] = {"models", "tokenizers", "corpora", "runs", "windows", "tokens", "head_steps", "states",
                            "vocabulary", "unigram_counts", "analyses", "analysis_scalars", "analysis_series",
                            "analysis_vectors", "token_states", "tokens_text", "head_means", "run_summary",
                            "analysis_values"};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_schema WHERE name = '%s'", tables[i]);
        CHECK(sql_int(db, sql) == 1, "table or view %s exists", tables[i]);
    }
    CHECK(sql_int(db, "SELECT vec_length('[1,2]')") == 2, "vector functions registered");
    store_close(st);

    /* reopen for writing and for reading */
    st = store_open(p, STORE_WRITE);
    CHECK(st != NULL, "reopen: %s", gs_error());
    store_close(st);
    st = store_open(p, STORE_READ);
    CHECK(st != NULL, "open read-only: %s", gs_error());
    if (st) {
        CHECK(store_add_model(st, &(store_model){.sha256 = SHA_A}) < 0 && strstr(gs_error(), "read-only"),
              "writing through a read store fails: %s", gs_error());
        CHECK(sqlite3_exec(store_db(st), "DELETE FROM runs", NULL, NULL, NULL) != SQLITE_OK, "raw writes refused too");
        store_close(st);
    }

    /* a missing file is never created by a reader, nor by a writer without CREATE */
    const char *missing = path_in("missing.db");
    CHECK(store_open(missing, STORE_READ) == NULL && strstr(gs_error(), "does not exist"), "missing: %s", gs_error());
    CHECK(store_open(missing, STORE_WRITE) == NULL && strstr(gs_error(), "does not exist"), "missing (write): %s", gs_error());
    CHECK(!exists(missing), "no file created on read");

    /* files that are not stores */
    const char *text = path_in("text.txt");
    FILE *f = fopen(text, "w");
    fputs("hello, not a database, but long enough to have a header......................................\n", f);
    fclose(f);
    CHECK(store_open(text, STORE_READ) == NULL && strstr(gs_error(), "not an SQLite database"), "text: %s", gs_error());
    CHECK(store_open(text, STORE_WRITE) == NULL && strstr(gs_error(), "not a gpnscope store"), "text (write): %s", gs_error());
    const char *other = path_in("other.db");
    raw_exec(other, "CREATE TABLE people(name TEXT)");
    CHECK(store_open(other, STORE_WRITE) == NULL && strstr(gs_error(), "SQLite database but not a gpnscope store"),
          "foreign db: %s", gs_error());
    CHECK(store_open(dir, STORE_READ) == NULL && strstr(gs_error(), "is a directory"), "directory: %s", gs_error());
    const char *empty = path_in("empty.db");
    fclose(fopen(empty, "w"));
    CHECK(store_open(empty, STORE_READ) == NULL && strstr(gs_error(), "an empty file"), "empty (read): %s", gs_error());
    /* only the commands that make stores (record, import, merge: STORE_CREATE) adopt an empty file */
    CHECK(store_open(empty, STORE_WRITE) == NULL && strstr(gs_error(), "record or import into it first"),
          "empty (written without STORE_CREATE): %s", gs_error());
    st = store_open(empty, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "an empty file becomes a store when created: %s", gs_error());
    store_close(st);
}

static void test_versions(void) {
    const char *p = path_in("newer.db");
    store_close(store_open(p, STORE_WRITE | STORE_CREATE));
    raw_exec(p, "PRAGMA user_version = 99");
    CHECK(store_open(p, STORE_WRITE) == NULL && strstr(gs_error(), "schema version 99, newer than this gpnscope"),
          "newer (write): %s", gs_error());
    CHECK(store_open(p, STORE_READ) == NULL && strstr(gs_error(), "newer"), "newer (read): %s", gs_error());

    /* the framework, with a made-up second version */
    const store_migration two[] = {{1, "CREATE TABLE a(x)"}, {2, "ALTER TABLE a ADD COLUMN y; INSERT INTO a VALUES (1, 2)"}};
    const store_migration broken[] = {{1, "CREATE TABLE a(x)"}, {2, "INSERT INTO a VALUES (1, 2); CREATE TABLE nonsense(("}};
    const char *m = path_in("migrate.db");
    sqlite3 *db;
    sqlite3_open(m, &db);
    CHECK(store_migrate(db, m, two, 2, 1) == 0, "to v1: %s", gs_error());
    CHECK(sql_int(db, "PRAGMA user_version") == 1, "at v1");
    CHECK(store_migrate(db, m, broken, 2, 2) < 0 && strstr(gs_error(), "schema version 2"), "broken: %s", gs_error());
    CHECK(sql_int(db, "PRAGMA user_version") == 1 && sql_int(db, "SELECT count(*) FROM a") == 0,
          "a failed migration changes nothing");
    CHECK(store_migrate(db, m, two, 2, 2) == 0, "v1 -> v2: %s", gs_error());
    CHECK(sql_int(db, "PRAGMA user_version") == 2 && sql_int(db, "SELECT y FROM a") == 2, "at v2 with data");
    CHECK(store_migrate(db, m, two, 2, 2) == 0, "already current");
    CHECK(store_migrate(db, m, two, 2, 1) < 0 && strstr(gs_error(), "newer"), "no downgrade: %s", gs_error());
    CHECK(store_migrate(db, m, two, 1, 3) < 0, "a gap in the list is an error");
    sqlite3_close(db);
}

static store *fresh(const char *name) {
    store *st = store_open(path_in(name), STORE_WRITE | STORE_CREATE);
    if (!st) fprintf(stderr, "  fresh(%s): %s\n", name, gs_error());
    return st;
}

static void test_metadata(void) {
    store *st = fresh("meta.db");
    if (!st) return;
    int64_t m1 = store_add_model(st, &(store_model){.path = "a.safetensors", .sha256 = SHA_A});
    int64_t m2 = store_add_model(st, &(store_model){.path = "b.safetensors", .sha256 = SHA_A, .arch = "gpn+m", .d_state = 64,
                                                     .n_heads = 4, .vocab_size = 100, .n_params = 12345, .dtype = "bf16"});
    CHECK(m1 > 0 && m1 == m2, "same sha256, same model (%lld %lld)", (long long)m1, (long long)m2);
    CHECK(sql_int(store_db(st), "SELECT d_state * 1000 + n_heads FROM models") == 64004, "sizes filled in later");
    CHECK(store_add_model(st, &(store_model){.sha256 = "xyz"}) < 0 && strstr(gs_error(), "64 lowercase hex"), "bad sha");
    int64_t t = store_add_tokenizer(st, &(store_tokenizer){.path = "tok.model", .sha256 = SHA_B, .kind = "sentencepiece", .vocab_size = 100});
    int64_t c1 = store_add_corpus(st, &(store_corpus){.path = "c.txt", .sha256 = SHA_C, .kind = "text", .tokenizer_id = t});
    int64_t c2 = store_add_corpus(st, &(store_corpus){.path = "c.txt", .sha256 = SHA_C, .kind = "text", .n_tokens = 9, .tokenizer_id = t});
    int64_t c3 = store_add_corpus(st, &(store_corpus){.path = "c.bin", .sha256 = SHA_C, .kind = "uint16-tokens"});
    CHECK(t > 0 && c1 > 0 && c1 == c2 && c3 > 0 && c3 != c1, "corpus identity is (sha256, tokenizer): %lld %lld %lld",
          (long long)c1, (long long)c2, (long long)c3);
    int64_t run = store_begin_run(st, &(store_run){.model_id = m1, .tokenizer_id = t, .corpus_id = c1,
                                                   .settings_json = "{\"seq_len\": 8, \"b\": [1, {\"y\": 1, \"x\": 2}]}",
                                                   .seq_len = 8, .n_windows = 3, .batch = 2, .states = "pred,ground",
                                                   .positions = "all", .state_dtype = "f16", .device = "cpu",
                                                   .d_state = 64, .n_heads = 4, .code_version = "test"});
    CHECK(run > 0, "run: %s", gs_error());
    store_run_info info;
    CHECK(store_run_get(st, run, &info) == 0, "run_get: %s", gs_error());
    CHECK(!strcmp(info.status, "running") && !strcmp(info.kind, "record") && info.seq_len == 8 && info.n_windows == 3 &&
              !strcmp(info.model_sha256, SHA_A) && !strcmp(info.tokenizer_sha256, SHA_B) &&
              !strcmp(info.corpus_sha256, SHA_C) && !strcmp(info.state_dtype, "f16") && info.d_state == 64 &&
              !strcmp(info.code_version, "test") && info.started_at[0] && !info.finished_at[0],
          "run info round trip");
    CHECK(store_run_progress(st, run, 2, 16) == 0 && store_finish_run(st, run, "interrupted", "SIGINT") == 0, "progress, finish");
    CHECK(store_run_get(st, run, &info) == 0 && !strcmp(info.status, "interrupted") && info.windows_done == 2 &&
              info.tokens_done == 16 && info.finished_at[0], "status after finish");
    CHECK(store_finish_run(st, run, "done", NULL) < 0 && strstr(gs_error(), "complete, interrupted or failed"), "bad status");
    CHECK(store_finish_run(st, 999, "failed", NULL) < 0 && strstr(gs_error(), "no run 999"), "missing run: %s", gs_error());
    CHECK(store_begin_run(st, &(store_run){.settings_json = "{oops"}) < 0 && strstr(gs_error(), "invalid JSON"), "bad settings");
    CHECK(store_begin_run(st, &(store_run){.state_dtype = "f64"}) < 0 && strstr(gs_error(), "CHECK constraint"), "bad dtype: %s", gs_error());
    CHECK(store_run_get(st, 999, &info) < 0 && strstr(gs_error(), "no run 999"), "run_get missing");
    char *settings = store_run_settings(st, run);
    CHECK(settings && strstr(settings, "\"seq_len\": 8"), "settings kept as written");
    free(settings);
    int64_t *ids = NULL;
    CHECK(store_list_runs(st, &ids) == 1 && ids[0] == run, "list runs");
    free(ids);
    CHECK(store_last_run(st, 1) == run && store_last_run(st, 0) == run, "last run");
    /* vocabulary, with bytes that are not UTF-8 */
    CHECK(store_put_piece(st, t, 5, " the", 4) == 0 && store_put_piece(st, t, 6, "\xe2\x96\x81x", 4) == 0 &&
              store_put_piece(st, t, 7, "\xff\xfe", 2) == 0 && store_put_piece(st, t, 8, "", 0) == 0, "pieces");
    char piece[64];
    CHECK(store_token_piece(st, run, 5, piece, sizeof piece) == 0 && !strcmp(piece, " the"), "piece 5");
    CHECK(store_token_piece(st, run, 6, piece, sizeof piece) == 0 && !strcmp(piece, "\xe2\x96\x81x"), "utf-8 kept");
    CHECK(store_token_piece(st, run, 7, piece, sizeof piece) == 0 && !strcmp(piece, "\\xFF\\xFE"), "escaped: %s", piece);
    CHECK(sql_int(store_db(st), "SELECT length(bytes) FROM vocabulary WHERE token_id = 7") == 2, "raw bytes kept");
    CHECK(store_token_piece(st, run, 99, piece, sizeof piece) < 0, "no piece 99");
    int64_t counts[6] = {0, 3, 0, 7, 0, 1};
    CHECK(store_put_unigram_counts(st, c1, counts, 6) == 0, "counts");
    counts[5] = 2;
    CHECK(store_put_unigram_counts(st, c1, counts, 6) == 0, "counts replaced");
    int64_t *got = NULL, n = 0;
    CHECK(store_read_unigram_counts(st, run, &got, &n) == 0 && n == 100 && got[1] == 3 && got[3] == 7 && got[5] == 2 &&
              got[0] == 0 && got[99] == 0, "counts read back, dense over the vocabulary (n=%lld)", (long long)n);
    free(got);
    store_close(st);
}

/* A run with known values: W windows x T positions, d-dim states of two
 * kinds (pred f32, ground f16), H heads. */
enum { W = 3, T = 5, D = 7, H = 2 };

static float val(int w, int t, int i) { return (float)((w + 1) * 100 + t) * 0.01f + (float)i * 0.37f - 1.5f + (i == 3 ? 1e-6f * t : 0); }

static int write_window(store *st, int64_t run, int w, int mark_done) {
    if (store_begin(st)) return -1;
    store_token_row rows[T];
    for (int t = 0; t < T; t++) {
        rows[t] = (store_token_row){.window = w, .position = t, .token_id = 10 + t, .next_token_id = t + 1 < T ? 11 + t : -1,
                                    .top1 = t % 2 ? 11 + t : 3, .nll = t == 0 ? NAN : 0.5f * t, .entropy = 1.0f + t};
        float alpha[H] = {0.5f + 0.01f * t, 0.9f}, beta[H] = {0.1f * w, NAN}, norm[H] = {1, 2};
        float v[D];
        for (int i = 0; i < D; i++) v[i] = val(w, t, i);
        if (store_put_head_steps(st, run, w, t, H, alpha, beta, norm) || store_put_state(st, run, w, t, "pred", STORE_F32, v, D) ||
            (t % 2 == 0 && store_put_state(st, run, w, t, "ground", STORE_F16, v, D)))
            return -1;
    }
    if (store_put_tokens(st, run, rows, T)) return -1;
    if (mark_done && store_window_done(st, run, w, (int64_t)w * T, T)) return -1;
    return store_commit(st);
}

static void test_round_trip(void) {
    store *st = fresh("trace.db");
    if (!st) return;
    int64_t model = store_add_model(st, &(store_model){.sha256 = SHA_A});
    int64_t run = store_begin_run(st, &(store_run){.model_id = model, .seq_len = T, .n_windows = W, .d_state = D, .n_heads = H});
    for (int w = 0; w < W; w++) CHECK(write_window(st, run, w, 1) == 0, "window %d: %s", w, gs_error());
    CHECK(store_count_states(st, run, "pred") == W * T && store_count_states(st, run, "ground") == W * 3, "state counts");

    /* f32 states: exact */
    store_states *r = store_states_open(st, run, "pred", -1, -1);
    CHECK(r && store_states_dim(r) == D, "pred reader dim");
    float rows[W * T * D];
    int32_t ws[W * T], ps[W * T];
    int64_t n = 0, k;
    while (r && (k = store_states_read(r, rows + n * D, ws + n, ps + n, 4)) > 0) n += k; /* blocks of 4 */
    CHECK(n == W * T, "all pred rows (%lld)", (long long)n);
    int exact = 1;
    for (int64_t j = 0; j < n; j++)
        for (int i = 0; i < D; i++) exact &= rows[j * D + i] == val(ws[j], ps[j], i) && ws[j] == j / T && ps[j] == j % T;
    CHECK(exact, "f32 states read back bit for bit, in (window, position) order");
    store_states_close(r);

    /* f16 states: widened exactly to the nearest half, within half precision */
    r = store_states_open(st, run, "ground", 1, 1);
    n = r ? store_states_read(r, rows, ws, ps, 100) : -1;
    CHECK(n == 3 && ws[0] == 1 && ps[0] == 0 && ps[2] == 4, "ground rows of window 1 only (%lld)", (long long)n);
    int widened = 1, close = 1;
    for (int64_t j = 0; j < n; j++)
        for (int i = 0; i < D; i++) {
            float want = val(ws[j], ps[j], i), got = rows[j * D + i];
            widened &= got == f16_to_f32(f32_to_f16(want));
            close &= fabsf(got - want) <= fabsf(want) * (1.0f / 2048) + 1e-7f;
        }
    CHECK(widened, "f16 widening is exact (f16_to_f32 of the stored half)");
    CHECK(close, "f16 values within half precision of the originals");
    store_states_close(r);
    r = store_states_open(st, run, "nothing", -1, -1);
    CHECK(r && store_states_dim(r) == 0 && store_states_read(r, rows, NULL, NULL, 10) == 0, "no rows of an unknown kind");
    store_states_close(r);
    /* SQL sees the same: vec_f32(vector, dtype) widens either dtype */
    CHECK(sql_int(store_db(st), "SELECT count(*) FROM states WHERE vec_length(vec_f32(vector, dtype)) = 7") == W * T + W * 3,
          "vec_f32(vector, dtype) on both dtypes");

    store_head_array ha;
    CHECK(store_read_heads(st, run, "alpha", &ha) == 0 && ha.n_windows == W && ha.n_positions == T && ha.n_heads == H,
          "alpha array shape: %s", gs_error());
    if (ha.values) {
        CHECK(fabsf(ha.values[(2 * T + 3) * H + 0] - 0.53f) < 1e-6f && fabsf(ha.values[(1 * T + 4) * H + 1] - 0.9f) < 1e-6f,
              "alpha values by [window][position][head]");
        store_head_array_free(&ha);
    }
    CHECK(store_read_heads(st, run, "beta", &ha) == 0 && fabsf(ha.values[(2 * T + 0) * H + 0] - 0.2f) < 1e-6f &&
              isnan(ha.values[(2 * T + 0) * H + 1]), "beta, NaN for NULL");
    store_head_array_free(&ha);
    CHECK(store_read_heads(st, run, "alpha; DROP TABLE runs", &ha) < 0, "column names are whitelisted");

    store_token_array ta;
    CHECK(store_read_tokens(st, run, &ta) == 0 && ta.n_windows == W && ta.n_positions == T, "tokens: %s", gs_error());
    if (ta.token_id) {
        CHECK(ta.token_id[T + 2] == 12 && ta.next_token_id[T + 2] == 13 && ta.next_token_id[T + 4] == -1 &&
                  ta.top1[T + 1] == 12 && isnan(ta.nll[T]) && ta.nll[T + 2] == 1.0f && ta.entropy[2 * T + 4] == 5.0f,
              "token arrays");
        store_token_array_free(&ta);
    }
    /* the views */
    CHECK(sql_int(store_db(st), "SELECT count(*) FROM token_states WHERE kind = 'pred'") == W * T, "token_states view");
    CHECK(sql_int(store_db(st), "SELECT count(*) FROM head_means") == H, "head_means view");
    CHECK(sql_int(store_db(st), "SELECT round(mean_alpha * 100) FROM head_means WHERE head = 0") == 52, "head_means value");
    /* duplicates are refused, not silently doubled */
    CHECK(write_window(st, run, 0, 1) < 0 && strstr(gs_error(), "UNIQUE"), "rewriting a window fails: %s", gs_error());
    CHECK(store_rollback(st) == 0, "rollback after a failed write");
    CHECK(sql_int(store_db(st), "SELECT count(*) FROM tokens") == W * T, "nothing of the failed batch remains");
    CHECK(store_put_state(st, run, 9, 0, "pred", STORE_F32, rows, 0) < 0, "zero-length state refused");
    CHECK(store_commit(st) < 0, "commit without begin is an error");
    store_close(st);
}

static void test_resume(void) {
    store *st = fresh("resume.db");
    if (!st) return;
    int64_t model = store_add_model(st, &(store_model){.sha256 = SHA_A});
    const char *settings = "{\"seq_len\": 5, \"dtype\": \"f16\"}";
    int64_t run = store_begin_run(st, &(store_run){.model_id = model, .settings_json = settings, .n_windows = 6});
    /* windows 0, 1, 3 complete (2 is missing: a gap), 4 written without its done mark */
    CHECK(write_window(st, run, 0, 1) == 0 && write_window(st, run, 1, 1) == 0 && write_window(st, run, 3, 1) == 0 &&
              write_window(st, run, 4, 0) == 0, "writing: %s", gs_error());
    CHECK(store_resume_run(st, run, SHA_B, NULL) < 0 && strstr(gs_error(), "recorded with model sha256 aaaaaaaaaaaa"),
          "another model is refused: %s", gs_error());
    CHECK(store_resume_run(st, run, SHA_A, "{\"seq_len\": 8, \"dtype\": \"f16\"}") < 0 &&
              strstr(gs_error(), "setting 'seq_len' is 5 in the run but 8 now"), "other settings refused: %s", gs_error());
    CHECK(store_resume_run(st, run, SHA_A, "{\"dtype\": \"f16\"}") < 0 && strstr(gs_error(), "'seq_len' is 5 in the run but absent"),
          "a missing setting is named: %s", gs_error());
    CHECK(sql_int(store_db(st), "SELECT count(*) FROM tokens") == 4 * T, "refusals change nothing");
    int64_t next = store_resume_run(st, run, SHA_A, "{ \"dtype\":\"f16\",  \"seq_len\":5 }");
    CHECK(next == 2, "resume at the first missing window (%lld): %s", (long long)next, gs_error());
    sqlite3 *db = store_db(st);
    CHECK(sql_int(db, "SELECT count(*) FROM tokens WHERE window >= 2") == 0 && sql_int(db, "SELECT count(*) FROM states WHERE window >= 2") == 0 &&
              sql_int(db, "SELECT count(*) FROM head_steps WHERE window >= 2") == 0 && sql_int(db, "SELECT count(*) FROM windows") == 2,
          "rows after the first gap deleted");
    CHECK(sql_int(db, "SELECT count(*) FROM tokens") == 2 * T, "complete windows kept");
    store_run_info info;
    store_run_get(st, run, &info);
    CHECK(!strcmp(info.status, "running") && info.windows_done == 2 && info.tokens_done == 2 * T, "run state after resume");
    /* the resumed run completes to the same contents as an uninterrupted one */
    for (int w = 2; w < 6; w++) CHECK(write_window(st, run, w, 1) == 0, "window %d", w);
    CHECK(store_finish_run(st, run, "complete", NULL) == 0, "finish");
    CHECK(sql_int(db, "SELECT count(*) FROM tokens") == 6 * T && sql_int(db, "SELECT count(*) FROM windows") == 6, "complete");
    CHECK(store_resume_run(st, run, SHA_A, NULL) == 6, "resuming a complete run changes nothing");
    CHECK(store_run_get(st, run, &info) == 0 && !strcmp(info.status, "complete"), "still complete");
    store_close(st);
}

static void test_analyses(void) {
    store *st = fresh("analyses.db");
    if (!st) return;
    int64_t run = store_begin_run(st, &(store_run){.n_windows = 1});
    const char *s1 = "{\"lags\": [1, 2, 4], \"centered\": true}";
    int64_t a = store_analysis_begin(st, run, "horizons", s1, "v1");
    double x[3] = {1, 2, 4}, y[3] = {0.9, 0.5, NAN};
    const char *labels[3] = {"one", NULL, "four"};
    float v[3] = {1, 2, 3};
    CHECK(a > 0 && store_analysis_scalar(st, a, "half_life", 3.5, "interpolated") == 0 &&
              store_analysis_scalar(st, a, "stale", 1, NULL) == 0 &&
              store_analysis_series(st, a, "cos", x, y, labels, 3) == 0 && store_analysis_vector(st, a, "mean", v, 3) == 0 &&
              store_commit(st) == 0, "first results: %s", gs_error());
    /* the same settings, spelled differently: replaces */
    int64_t b = store_analysis_begin(st, run, "horizons", "{\"centered\":true,\"lags\":[1,2,4]}", "v2");
    CHECK(b > 0 && store_analysis_scalar(st, b, "half_life", 4.5, NULL) == 0 && store_commit(st) == 0, "replacement");
    sqlite3 *db = store_db(st);
    CHECK(sql_int(db, "SELECT count(*) FROM analyses") == 1, "replaced, not added");
    CHECK(sql_int(db, "SELECT count(*) FROM analysis_scalars") == 1 && sql_int(db, "SELECT count(*) FROM analysis_series") == 0 &&
              sql_int(db, "SELECT count(*) FROM analysis_vectors") == 0, "old results gone");
    /* other settings: added */
    int64_t c = store_analysis_begin(st, run, "horizons", "{\"lags\": [1, 2], \"centered\": true}", "v2");
    CHECK(c > 0 && store_analysis_scalar(st, c, "half_life", 2.5, NULL) == 0 &&
              store_analysis_series(st, c, "cos", x, y, labels, 3) == 0 && store_analysis_vector(st, c, "mean", v, 3) == 0 &&
              store_commit(st) == 0, "added");
    CHECK(sql_int(db, "SELECT count(*) FROM analyses") == 2, "two settings, two analyses");
    CHECK(store_analysis_find(st, run, "horizons", s1) == b && store_analysis_find(st, run, "horizons", NULL) == c &&
              store_analysis_find(st, run, "nothing", NULL) == 0, "find");
    double value = 0;
    CHECK(store_analysis_get_scalar(st, b, "half_life", &value) == 0 && value == 4.5, "scalar");
    CHECK(store_analysis_get_scalar(st, b, "stale", &value) < 0, "replaced scalar gone");
    double *gx, *gy;
    CHECK(store_analysis_get_series(st, c, "cos", &gx, &gy) == 3 && gx[2] == 4 && gy[0] == 0.9 && isnan(gy[2]), "series");
    free(gx);
    free(gy);
    float *gv;
    CHECK(store_analysis_get_vector(st, c, "mean", &gv) == 3 && gv[2] == 3, "vector");
    free(gv);
    CHECK(sql_int(db, "SELECT count(*) FROM analysis_series WHERE label = 'four'") == 1, "labels");
    CHECK(sql_int(db, "SELECT count(*) FROM analysis_values WHERE key = 'half_life'") == 2, "analysis_values view");
    /* a failed analysis leaves the earlier results */
    int64_t d = store_analysis_begin(st, run, "horizons", s1, "v3");
    CHECK(d > 0 && store_rollback(st) == 0, "begin, then roll back");
    CHECK(store_analysis_find(st, run, "horizons", s1) == b && store_analysis_get_scalar(st, b, "half_life", &value) == 0,
          "rollback keeps the earlier results");
    CHECK(store_analysis_begin(st, run, "x", "[1]", NULL) < 0 && strstr(gs_error(), "JSON object"), "settings must be an object");
    CHECK(store_analysis_begin(st, run, "x", "{\"a\":1,\"a\":2}", NULL) < 0 && strstr(gs_error(), "duplicate key"), "duplicate keys");
    char *canon = store_canonical_json(" { \"b\" : {\"z\":1, \"y\":[{\"q\":1,\"p\":2}]}, \"a\" : 1.50 } ");
    CHECK(canon && !strcmp(canon, "{\"a\":1.5,\"b\":{\"y\":[{\"p\":2,\"q\":1}],\"z\":1}}"), "canonical JSON: %s", canon);
    free(canon);
    /* deleting a run deletes everything recorded and computed for it */
    CHECK(sqlite3_exec(db, "DELETE FROM runs", NULL, NULL, NULL) == SQLITE_OK &&
              sql_int(db, "SELECT count(*) FROM analyses") + sql_int(db, "SELECT count(*) FROM analysis_scalars") == 0,
          "ON DELETE CASCADE");
    store_close(st);
}

/* A full disk: simulated with max_page_count, which fails exactly like
 * ENOSPC (SQLITE_FULL). The error is clear and the committed data intact. */
static void test_disk_full(void) {
    store *st = fresh("full.db");
    if (!st) return;
    int64_t run = store_begin_run(st, &(store_run){.n_windows = 100});
    CHECK(write_window(st, run, 0, 1) == 0, "first window");
    sqlite3 *db = store_db(st);
    int64_t pages = sql_int(db, "PRAGMA page_count");
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)pages + 2);
    sqlite3_exec(db, sql, NULL, NULL, NULL);
    float big[4096] = {0};
    int failed = 0;
    store_begin(st);
    for (int t = 0; t < 200 && !failed; t++) failed = store_put_state(st, run, 1, t, "pred", STORE_F32, big, 4096) < 0;
    CHECK(failed && strstr(gs_error(), "full") && strstr(gs_error(), "full.db"), "disk full is reported: %s", gs_error());
    store_rollback(st);
    CHECK(sql_int(db, "SELECT count(*) FROM states WHERE window = 0") == T + 3 && sql_int(db, "SELECT count(*) FROM states WHERE window = 1") == 0, "the committed window is intact, the failed batch gone");
    store_close(st);
    sqlite3 *raw;
    sqlite3_open(path_in("full.db"), &raw);
    sqlite3_stmt *s;
    sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &s, NULL);
    CHECK(sqlite3_step(s) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(s, 0), "ok"), "integrity_check ok");
    sqlite3_finalize(s);
    sqlite3_close(raw);
}

/* A file the user may not write: opening it for writing fails at once with a
 * clear message (SQLite would quietly open it read-only), reading works.
 * root ignores permissions, so as root the check runs in a child that has
 * dropped to nobody. */
static void test_read_only_file(void) {
    const char *p = path_in("ro.db");
    store *st = fresh("ro.db");
    if (!st) return;
    store_begin_run(st, &(store_run){.n_windows = 1});
    store_close(st);
    chmod(p, 0444);
    chmod(dir, 0755);
    int as_root = geteuid() == 0;
    pid_t pid = as_root ? fork() : 0;
    if (pid == 0) {
        if (as_root && (setgid(65534) || setuid(65534))) _exit(3);
        store *w = store_open(p, STORE_WRITE);
        int ok = !w && strstr(gs_error(), "read-only") && strstr(gs_error(), "ro.db");
        if (!ok) fprintf(stderr, "  read-only open: %s\n", w ? "opened for writing" : gs_error());
        store_close(w);
        store *r = store_open(p, STORE_READ);
        int readable = r && sql_int(store_db(r), "SELECT count(*) FROM runs") == 1;
        if (!readable) fprintf(stderr, "  reading a read-only file: %s\n", gs_error());
        store_close(r);
        if (as_root) _exit(ok && readable ? 0 : 1);
        CHECK(ok, "a read-only file refuses writing clearly");
        CHECK(readable, "a read-only file can be read");
        return;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only file checks as nobody (status %d)", status);
    chmod(p, 0644);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s", scratch_dir("test_store"));
    test_read_only_file();
    test_create_and_identity();
    test_versions();
    test_metadata();
    test_round_trip();
    test_resume();
    test_analyses();
    test_disk_full();
    return test_summary();
}
