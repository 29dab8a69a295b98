/* Every ```sql block of docs/sql.md runs without error, so the documentation
 * cannot rot. Against a synthetic store written through the writer API each
 * block must also return rows (its pieces spelled as the LLaMA-2 tokenizer
 * spells them, "\u2581the"); set GPNSCOPE_SQL_DOCS_DB=FILE to run the blocks
 * against a real recorded store as well: errors fail, and empty results too
 * when GPNSCOPE_SQL_DOCS_NEED_ROWS=1 (tests/cli/demo.sh, on the demo's store
 * after attention and attribute). */
#include <sqlite3.h>
#include <string.h>

#include "base/error.h"
#include "store/causal.h"
#include "store/store.h"
#include "testlib.h"

static const char *const pieces[] = {"<unk>", "<s>", "</s>", "\u2581the", "\u2581and", ",", ".", "\u2581of",
                                     "\u2581a", "\u2581in", "\u2581to", "\u2581is", "\u2581cat", "\u2581dog",
                                     "\u2581sat", "\u2581on", "\u2581mat", "\u2581it", "\u2581was", "\u2581that",
                                     "\u2581he", "\u2581she", "\u2581said", "\n", "\u2581time", "\u2581day",
                                     "\u2581one", "\u2581two", "\u2581red", "\u2581blue", "\u2581big", "\u2581small"};
enum { V = 32, WINDOWS = 4, T = 64, D = 16, H = 4 };

static unsigned rng = 2024;
static double uniform(void) {
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) / 16777216.0;
}
static double normal(void) { /* sum of uniforms: close enough, and portable */
    double s = 0;
    for (int i = 0; i < 12; i++) s += uniform();
    return s - 6;
}

/* A run with planted structure: states = a shared mean direction + a token
 * embedding + noise; head h decays with time constant tau[h]. */
static int64_t synth_run(store *st, int64_t model, int64_t tok, int64_t corpus, int windows, int positions,
                         store_dtype dtype, int64_t *counts) {
    static const double tau[H] = {1, 3, 30, 300};
    float mean[D], emb[V][D];
    for (int i = 0; i < D; i++) mean[i] = (float)(3 + normal());
    for (int v = 0; v < V; v++)
        for (int i = 0; i < D; i++) emb[v][i] = (float)normal();
    int64_t run = store_begin_run(st, &(store_run){.model_id = model, .tokenizer_id = tok, .corpus_id = corpus,
                                                   .settings_json = "{\"seq_len\": 64, \"states\": \"pred,ground\", \"positions\": \"all\"}",
                                                   .seq_len = positions, .n_windows = windows, .batch = 2,
                                                   .states = "pred,ground", .positions = "all",
                                                   .state_dtype = dtype == STORE_F16 ? "f16" : "f32", .device = "cpu",
                                                   .d_state = D, .n_heads = H, .code_version = "synthetic"});
    if (run < 0) return -1;
    for (int w = 0; w < windows; w++) {
        int ids[T + 1];
        for (int t = 0; t <= positions; t++) ids[t] = 3 + (int)(pow(uniform(), 3) * (V - 3)); /* skewed to low ids */
        if (store_begin(st)) return -1;
        store_token_row rows[T];
        for (int t = 0; t < positions; t++) {
            counts[ids[t]]++;
            /* the prediction is of this position's own token (docs/gpn-model.md) */
            double nll = 0.5 + 0.1 * (ids[t] - 3) + 0.3 * uniform();
            rows[t] = (store_token_row){.window = w, .position = t, .token_id = ids[t], .next_token_id = ids[t + 1],
                                        .top1 = uniform() < 0.4 ? ids[t] : 3, .nll = (float)nll,
                                        .entropy = (float)(1 + 2 * uniform())};
            float alpha[H], beta[H], norm[H], s[D], g[D];
            for (int h = 0; h < H; h++) {
                alpha[h] = (float)(exp(-1 / tau[h]) * (1 - 0.02 * uniform()));
                beta[h] = (float)(0.1 * (h + 1) + 0.05 * uniform());
                norm[h] = (float)(1 + h + uniform());
            }
            for (int i = 0; i < D; i++) {
                s[i] = mean[i] + emb[ids[t]][i] + (float)(0.3 * normal());
                g[i] = s[i] + (float)(0.1 * normal());
            }
            if (store_put_head_steps(st, run, w, t, H, alpha, beta, norm) ||
                store_put_state(st, run, w, t, "pred", dtype, s, D) ||
                (t % 4 == 0 && store_put_state(st, run, w, t, "ground", dtype, g, D)))
                return -1;
        }
        if (store_put_tokens(st, run, rows, positions) || store_window_done(st, run, w, (int64_t)w * positions, positions) ||
            store_run_progress(st, run, w + 1, (int64_t)(w + 1) * positions) || store_commit(st))
            return -1;
    }
    return store_finish_run(st, run, "complete", NULL) ? -1 : run;
}

static int synth_store(const char *path) {
    store *st = store_open(path, STORE_WRITE | STORE_CREATE);
    if (!st) return -1;
    int64_t model = store_add_model(st, &(store_model){.path = "synthetic.safetensors",
                                                       .sha256 = "1111111111111111111111111111111111111111111111111111111111111111",
                                                       .arch = "gpn+m", .n_layers = 1, .d_state = D, .d_emb = D, .d_ffn = 4 * D,
                                                       .n_heads = H, .d_key = 4, .d_val = 4, .vocab_size = V,
                                                       .n_params = 12345, .dtype = "f32"});
    int64_t tok = store_add_tokenizer(st, &(store_tokenizer){.path = "synthetic.model", .kind = "sentencepiece", .vocab_size = V,
                                                             .sha256 = "2222222222222222222222222222222222222222222222222222222222222222"});
    int64_t corpus = store_add_corpus(st, &(store_corpus){.path = "synthetic.txt", .kind = "text", .tokenizer_id = tok,
                                                          .n_tokens = WINDOWS * T,
                                                          .sha256 = "3333333333333333333333333333333333333333333333333333333333333333"});
    if (model < 0 || tok < 0 || corpus < 0 || store_begin(st)) goto fail;
    for (int v = 0; v < V; v++)
        if (store_put_piece(st, tok, v, pieces[v], strlen(pieces[v]))) goto fail;
    if (store_commit(st)) goto fail;
    int64_t counts[V] = {0};
    int64_t run = synth_run(st, model, tok, corpus, WINDOWS, T, STORE_F32, counts);
    if (run < 0 || store_put_unigram_counts(st, corpus, counts, V)) goto fail;
    /* a second, float16 run, so queries meet both dtypes */
    int64_t unused[V] = {0};
    if (synth_run(st, model, tok, corpus, 2, 16, STORE_F16, unused) < 0) goto fail;
    /* results of an analysis, as the analyses will write them */
    int64_t a = store_analysis_begin(st, run, "geometry", "{\"sample\": 1000}", "synthetic");
    double x[D], y[D];
    for (int i = 0; i < D; i++) { x[i] = i + 1; y[i] = 1 - exp(-0.3 * (i + 1)); }
    if (a < 0 || store_analysis_scalar(st, a, "norm_mean", 13.2, "mean of ||s||") ||
        store_analysis_scalar(st, a, "stable_rank", 4.0, NULL) ||
        store_analysis_series(st, a, "cumulative_explained", x, y, NULL, D) || store_commit(st))
        goto fail;
    /* effective attention and logit attribution (store/causal.h), as gpnscope attention and attribute write them */
    int64_t at = store_analysis_begin(st, run, "attention", "{\"windows\": 1}", "synthetic");
    if (at < 0) goto fail;
    for (int h = 0; h < H; h++) {
        store_attention_query q[T];
        int keys[T][2];
        double w[T][2], hw[T][2];
        for (int t = 0; t < T; t++) {
            int n = t ? 2 : 1;
            for (int r = 0; r < n; r++) keys[t][r] = t - r, w[t][r] = 0.5 / (r + 1), hw[t][r] = 0.6 / (r + 1);
            q[t] = (store_attention_query){t, t + 1, n, keys[t], w[t], hw[t], 0.9, 1.0, 0.3 + 0.1 * h, 1e-7, 0.2};
        }
        if (store_put_attention_queries(st, at, 0, 0, h, q, T)) goto fail;
    }
    if (store_commit(st)) goto fail;
    int64_t la = store_analysis_begin(st, run, "logit_attribution", "{\"windows\": 1}", "synthetic");
    if (la < 0) goto fail;
    for (int t = 0; t < T; t++) {
        store_logit_part parts[3 + H] = {{"carry", -1, -1, 0.5}, {"ground", -1, -1, 0.2}, {"ffn", 0, -1, 1.5}};
        for (int h = 0; h < H; h++) parts[3 + h] = (store_logit_part){"mem", 0, h, 0.1 * ((t + h) % 5)};
        if (store_put_logit_parts(st, la, 0, t, 3, parts, 3 + H)) goto fail;
    }
    if (store_commit(st)) goto fail;
    store_close(st);
    return 0;
fail:
    store_close(st);
    return -1;
}

/* Run each ```sql block of the file on db; returns the number of failures. */
/* Each piece a query names as a literal ("piece IN ('a', 'b')", "piece = 'a'")
 * is in the store's vocabulary: a query spelling " the" where the store holds
 * "\u2581the" still returns the other pieces' rows, so rows alone miss it. */
static int check_piece_literals(sqlite3 *db, const char *sql, const char *label, int line) {
    int failures = 0;
    sqlite3_stmt *look = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM vocabulary WHERE piece = ?", -1, &look, NULL) != SQLITE_OK) return 1;
    for (const char *p = sql; (p = strstr(p, "piece ")); p++) {
        const char *q = p + 6;
        int list = !strncmp(q, "IN (", 4);
        if (!list && strncmp(q, "= '", 3)) continue;
        q += list ? 4 : 2;
        while (*q == ' ' || *q == '\'') {
            if (*q == ' ') { q++; continue; }
            const char *end = strchr(q + 1, '\'');
            if (!end) break;
            sqlite3_reset(look);
            sqlite3_bind_text(look, 1, q + 1, (int)(end - q - 1), SQLITE_TRANSIENT);
            if (sqlite3_step(look) != SQLITE_ROW) {
                fprintf(stderr, "%s: docs/sql.md:%d: the piece '%.*s' is not in the vocabulary\n", label, line,
                        (int)(end - q - 1), q + 1);
                failures++;
            }
            q = end + 1;
            if (!list || *q != ',') break;
            q++;
        }
    }
    sqlite3_finalize(look);
    return failures;
}

static int run_blocks(sqlite3 *db, const char *md, const char *label, int need_rows, int *n_blocks) {
    int failures = 0;
    *n_blocks = 0;
    const char *p = md;
    while ((p = strstr(p, "```sql\n"))) {
        p += 7;
        const char *end = strstr(p, "\n```");
        if (!end) { fprintf(stderr, "%s: an unterminated ```sql block\n", label); return failures + 1; }
        char *sql = strndup(p, (size_t)(end - p));
        int line = 1;
        for (const char *q = md; q < p; q++) line += *q == '\n';
        (*n_blocks)++;
        const char *tail = sql;
        long rows = 0;
        int ok = 1;
        while (ok && tail && *tail) {
            sqlite3_stmt *s = NULL;
            if (sqlite3_prepare_v2(db, tail, -1, &s, &tail) != SQLITE_OK) { ok = 0; break; }
            if (!s) break;
            int rc;
            rows = 0;
            while ((rc = sqlite3_step(s)) == SQLITE_ROW) rows++;
            if (rc != SQLITE_DONE) ok = 0;
            sqlite3_finalize(s);
        }
        if (!ok) {
            fprintf(stderr, "%s: docs/sql.md:%d: %s\n%s\n", label, line, sqlite3_errmsg(db), sql);
            failures++;
        } else if (need_rows && rows == 0) {
            fprintf(stderr, "%s: docs/sql.md:%d: no rows\n%s\n", label, line, sql);
            failures++;
        }
        if (ok && need_rows) failures += check_piece_literals(db, sql, label, line);
        free(sql);
        p = end + 4;
    }
    return failures;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

int main(void) {
    const char *src = getenv("GPNSCOPE_SOURCE");
    char doc[4096], db_path[4200];
    snprintf(doc, sizeof doc, "%s/docs/sql.md", src ? src : ".");
    char *md = read_file(doc);
    CHECK(md != NULL, "read %s", doc);
    if (!md) return test_summary();
    snprintf(db_path, sizeof db_path, "%s/synthetic.db", scratch_dir("test_store_sql_docs"));
    CHECK(synth_store(db_path) == 0, "synthetic store: %s", gs_error());
    store *st = store_open(db_path, STORE_READ);
    CHECK(st != NULL, "open: %s", gs_error());
    int n = 0;
    if (st) {
        int failures = run_blocks(store_db(st), md, "synthetic", 1, &n);
        CHECK(n >= 10, "docs/sql.md has at least ten queries (%d)", n);
        CHECK(failures == 0, "%d of %d queries failed on the synthetic store", failures, n);
        store_close(st);
    }
    const char *real = getenv("GPNSCOPE_SQL_DOCS_DB");
    if (real && *real) {
        st = store_open(real, STORE_READ);
        CHECK(st != NULL, "open %s: %s", real, gs_error());
        if (st) {
            const char *need = getenv("GPNSCOPE_SQL_DOCS_NEED_ROWS");
            int failures = run_blocks(store_db(st), md, real, need && !strcmp(need, "1"), &n);
            CHECK(failures == 0, "%d of %d queries failed on %s", failures, n, real);
            store_close(st);
        }
    }
    free(md);
    return test_summary();
}
