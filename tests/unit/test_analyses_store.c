/* The analyses of a run in a store, end to end: float16 states streamed from
 * SQLite give the same results as the same (rounded) states from arrays;
 * --skip-positions and --max-states; decays and tokens read back for
 * retention and the probe; results written keyed by settings (same settings
 * replace, others add); the analyze command's table, JSON and errors. */
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>

#include "analyses/analyze.h"
#include "base/error.h"
#include "base/half.h"
#include "engine/model.h"
#include "store/store.h"
#include "test_analyses_util.h"
#include "testlib.h"

enum { D = 16, NW = 10, T = 64, H = 3, V = 40 };
static const double alphas[H] = {0.5, 0.9, 0.99};

static gs_model *save_model(const char *path, gs_rng *rng) {
    gs_config c = {0};
    c.arch = GS_ARCH_GPN_M;
    c.n_layers = 1; c.d = D; c.e = 8; c.f = 4; c.H = H; c.dk = 4; c.dv = 4; c.V = V;
    gs_model *m = gs_model_new(&c);
    if (!m) return NULL;
    for (size_t i = 0; i < m->n_params; i++) m->block[i] = (float)(0.3 * gs_rng_normal(rng));
    for (int j = 0; j < D; j++) m->p.decode_norm_w[j] = 1.0f;
    if (gs_model_save(m, path, 0) != 0) { gs_model_free(m); return NULL; }
    gs_model_free(m);
    return gs_model_load(path);
}

/* --analyses LIST as analyze reads it */
static void test_parse_parts(void) {
    unsigned parts = 0;
    CHECK(gs_analyze_parse_parts("geometry,probe", &parts) == 0 && parts == (GS_AN_GEOMETRY | GS_AN_PROBE), "list");
    CHECK(gs_analyze_parse_parts("horizons", &parts) == 0 && parts == GS_AN_HORIZON, "alias horizons");
    CHECK(gs_analyze_parse_parts("all", &parts) == 0 && parts == GS_AN_ALL, "all");
    CHECK(gs_analyze_parse_parts("geometry,bogus", &parts) != 0 && strstr(gs_error(), "unknown analysis 'bogus'"),
          "%s", gs_error());
    CHECK(gs_analyze_parse_parts("geometry,,probe", &parts) != 0 && strstr(gs_error(), "unknown analysis ''"),
          "an empty item is unknown: %s", gs_error());
    CHECK(gs_analyze_parse_parts("", &parts) != 0 && strstr(gs_error(), "no analysis named"), "%s", gs_error());
}

int main(void) {
    test_parse_parts();
    const char *dir = scratch_dir("test_analyses_store");
    char db[4200], mpath[4200];
    snprintf(db, sizeof db, "%s/study.db", dir);
    snprintf(mpath, sizeof mpath, "%s/model.safetensors", dir);
    gs_rng rng = {55};
    gs_model *m = save_model(mpath, &rng);
    CHECK(m != NULL, "%s", gs_error());
    if (!m) return test_summary();

    /* ---- a recorded run: f16 states, tokens, decays, vocabulary, counts ---- */
    store *st = store_open(db, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "%s", gs_error());
    if (!st) return test_summary();
    int64_t model_id = store_add_model(st, &(store_model){.path = mpath, .sha256 = m->hash, .arch = "gpn+m",
                                                          .d_state = D, .n_heads = H, .vocab_size = V});
    char tok_sha[65], corp_sha[65];
    memset(tok_sha, 'a', 64); tok_sha[64] = 0;
    memset(corp_sha, 'b', 64); corp_sha[64] = 0;
    int64_t tok_id = store_add_tokenizer(st, &(store_tokenizer){.sha256 = tok_sha, .kind = "test", .vocab_size = V});
    int64_t corpus_id = store_add_corpus(st, &(store_corpus){.sha256 = corp_sha, .kind = "text", .tokenizer_id = tok_id});
    for (int v = 0; v < V; v++) {
        char piece[16];
        snprintf(piece, sizeof piece, "w%d", v);
        store_put_piece(st, tok_id, v, piece, strlen(piece));
    }
    int64_t counts[V];
    for (int v = 0; v < V; v++) counts[v] = (v * 13) % 7;
    store_put_unigram_counts(st, corpus_id, counts, V);
    int64_t run = store_begin_run(st, &(store_run){.model_id = model_id, .tokenizer_id = tok_id, .corpus_id = corpus_id,
                                                   .seq_len = T, .n_windows = NW, .states = "pred", .positions = "all",
                                                   .state_dtype = "f16", .d_state = D, .n_heads = H});
    CHECK(run > 0, "%s", gs_error());
    /* the same states, rounded to f16, in arrays for comparison */
    owned_states o;
    owned_alloc(&o, NW, T, D);
    double mvec[D], z[D];
    for (int j = 0; j < D; j++) mvec[j] = 4 + gs_rng_normal(&rng);
    int rc = 0;
    for (int w = 0; w < NW; w++) {
        rc |= store_begin(st);
        for (int j = 0; j < D; j++) z[j] = gs_rng_normal(&rng);
        for (int p = 0; p < T; p++) {
            float s[D];
            for (int j = 0; j < D; j++) {
                z[j] = 0.8 * z[j] + 0.6 * gs_rng_normal(&rng);
                s[j] = f16_to_f32(f32_to_f16((float)(mvec[j] + z[j] * (1 + 0.2 * j))));
            }
            memcpy(o.x + ((int64_t)w * T + p) * D, s, sizeof s);
            o.window[(int64_t)w * T + p] = w;
            rc |= store_put_state(st, run, w, p, "pred", STORE_F16, s, D);
            store_token_row tr = {w, p, (int32_t)(gs_rng_uniform(&rng) * V), -1, -1, NAN, NAN};
            rc |= store_put_tokens(st, run, &tr, 1);
            float al[H], be[H];
            for (int h = 0; h < H; h++) { al[h] = (float)alphas[h]; be[h] = 0.25f; }
            rc |= store_put_head_steps(st, run, w, p, H, al, be, NULL);
        }
        rc |= store_window_done(st, run, w, (int64_t)w * T, T);
        rc |= store_commit(st);
    }
    rc |= store_finish_run(st, run, "complete", NULL);
    CHECK(rc == 0, "writing the run: %s", gs_error());

    /* ---- every part ---- */
    gs_analyze_opts ao;
    gs_analyze_opts_default(&ao);
    ao.probe_max_lag = 8;
    gs_analysis a;
    rc = gs_analyze_store(st, run, &ao, &a);
    CHECK(rc == 0, "%s", gs_error());
    if (rc == 0) {
        CHECK(a.done == GS_AN_ALL, "all parts ran (%u); notes: %s", a.done, a.notes);
        gs_geometry g;
        gs_horizons h;
        CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == 0, "%s", gs_error());
        CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == 0, "%s", gs_error());
        double e = 0;
        for (int i = 0; i < D; i++) e = fmax(e, fabs(a.geometry.eigvals[i] - g.eigvals[i]) / g.eigvals[i]);
        CHECK(a.geometry.n == NW * T && e < 1e-9, "f16 states from the store = the same states from arrays (%g)", e);
        CHECK(a.horizons.n_lags == h.n_lags && fabs(a.horizons.centered[3] - h.centered[3]) < 1e-12,
              "horizons from the store");
        for (int k = 0; k < H; k++) {
            double want = -1 / log((float)alphas[k]);
            CHECK(fabs(a.retention.est[0].e_fold_time[k] - want) / want < 1e-6, "head %d 1/e time %g vs %g", k,
                  a.retention.est[0].e_fold_time[k], want);
            CHECK(fabs(a.retention.mean_beta[k] - 0.25) < 1e-7, "mean beta");
        }
        CHECK(a.default_dir.has_decode && a.default_dir.has_unigram && a.default_dir.spearman_defined, "decode + counts");
        CHECK(a.probe.n_lags > 0 && a.probe.measured[0], "probe ran");
        gs_geometry_free(&g);
        gs_horizons_free(&h);

        /* the table names tokens by their pieces */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gs_analysis_print(f, st, &a);
        fclose(f);
        CHECK(strstr(buf, "\"w") && strstr(buf, "paper") && !strstr(buf, "nan"), "table:\n%s", buf);
        free(buf);

        /* written, and replaced / added by settings */
        CHECK(gs_analysis_write(st, &a, &ao, "test") == 0, "%s", gs_error());
        int64_t id = store_analysis_find(st, run, "geometry", NULL);
        double v = 0;
        CHECK(id > 0 && store_analysis_get_scalar(st, id, "components_90", &v) == 0 && v == a.geometry.n90,
              "geometry stored: %s", gs_error());
        double *x = NULL, *y = NULL;
        int64_t n = store_analysis_get_series(st, store_analysis_find(st, run, "retention", NULL), "e_fold_time", &x, &y);
        CHECK(n == H && fabs(y[1] - a.retention.est[0].e_fold_time[1]) < 1e-9, "retention stored");
        free(x); free(y);
        CHECK(store_analysis_find(st, run, "default_direction", NULL) > 0 && store_analysis_find(st, run, "horizons", NULL) > 0 &&
                  store_analysis_find(st, run, "probe", NULL) > 0,
              "every part stored");
        CHECK(gs_analysis_write(st, &a, &ao, "test") == 0, "%s", gs_error());
        int64_t id2 = store_analysis_find(st, run, "geometry", NULL);
        ao.seed = 2;
        CHECK(gs_analysis_write(st, &a, &ao, "test") == 0, "%s", gs_error());
        int64_t id3 = store_analysis_find(st, run, "geometry", NULL);
        ao.seed = 1;
        char set1[] = "{\"kind\":\"pred\",\"max_states\":16384,\"skip_positions\":0,\"seed\":1}";
        CHECK(id2 != id && store_analysis_find(st, run, "geometry", set1) == id2 && id3 != id2,
              "same settings replace (%lld -> %lld), others add (%lld)", (long long)id, (long long)id2, (long long)id3);
        gs_analysis_free(&a);
    }

    /* ---- skip and budget ---- */
    ao.parts = GS_AN_GEOMETRY;
    ao.skip_positions = 5;
    CHECK(gs_analyze_store(st, run, &ao, &a) == 0 && a.geometry.n == NW * (T - 5), "skip 5: %lld", (long long)a.geometry.n);
    gs_analysis_free(&a);
    ao.skip_positions = 0;
    ao.max_states = 100;
    CHECK(gs_analyze_store(st, run, &ao, &a) == 0 && a.geometry.n == 100 && a.geometry.n_windows == 2, "budget 100");
    gs_analysis_free(&a);
    gs_analyze_opts_default(&ao);

    /* ---- a GPN run without decays: retention skipped with a note, or an error when asked ---- */
    int64_t run2 = store_begin_run(st, &(store_run){.model_id = model_id, .seq_len = T, .n_windows = 2, .states = "pred",
                                                    .positions = "all", .state_dtype = "f32", .d_state = D});
    store_begin(st);
    for (int w = 0; w < 2; w++)
        for (int p = 0; p < T; p++) store_put_state(st, run2, w, p, "pred", STORE_F32, o.x + ((int64_t)w * T + p) * D, D);
    store_commit(st);
    store_finish_run(st, run2, "complete", NULL);
    ao.parts = GS_AN_GEOMETRY | GS_AN_RETENTION;
    CHECK(gs_analyze_store(st, run2, &ao, &a) == 0 && a.done == GS_AN_GEOMETRY && strstr(a.notes, "GPN+M"), "note: %s",
          a.notes);
    gs_analysis_free(&a);
    ao.explicit_parts = 1;
    ao.parts = GS_AN_RETENTION;
    CHECK(gs_analyze_store(st, run2, &ao, &a) == -1 && strstr(gs_error(), "GPN+M"), "%s", gs_error());
    ao.parts = GS_AN_GEOMETRY;
    ao.kind = "ground";
    CHECK(gs_analyze_store(st, run2, &ao, &a) == -1 && strstr(gs_error(), "no 'ground' states"), "%s", gs_error());
    store_close(st);

    /* ---- the command ---- */
    const char *bin = getenv("GPNSCOPE_BIN");
    if (bin) {
        char cmd[9000], out[4200];
        snprintf(out, sizeof out, "%s/out.txt", dir);
        snprintf(cmd, sizeof cmd, "'%s' analyze '%s' --run %lld --probe-max-lag 4 --json > '%s' 2>&1", bin, db,
                 (long long)run, out);
        int st1 = system(cmd);
        FILE *f = fopen(out, "r");
        char text[65536] = "";
        if (f) { size_t k = fread(text, 1, sizeof text - 1, f); text[k] = 0; fclose(f); }
        CHECK(WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && strstr(text, "\"geometry\"") && strstr(text, "\"retention\""),
              "analyze --json: %s", text);
        /* the 1/e time under its name, the old key "half_life" as an alias with the same numbers (one version) */
        const char *ef = strstr(text, "\"e_fold_time\":["), *hl = strstr(text, "\"half_life\":[");
        const char *efe = ef ? strchr(ef, ']') : NULL, *hle = hl ? strchr(hl, ']') : NULL;
        CHECK(ef && hl && efe && hle && efe - ef - 14 == hle - hl - 12 && !strncmp(ef + 14, hl + 12, (size_t)(efe - ef - 14)),
              "e_fold_time and its alias half_life agree");
        CHECK(strstr(text, "\"from_start\":{") && strstr(text, "\"null_p\":{\"normal\"") && strstr(text, "\"t3\""),
              "both estimators and every null family in the JSON");
        snprintf(cmd, sizeof cmd, "'%s' analyze '%s' --only retention > '%s' 2>&1", bin, db, out);
        int st2 = system(cmd);
        f = fopen(out, "r");
        text[0] = 0;
        if (f) { size_t k = fread(text, 1, sizeof text - 1, f); text[k] = 0; fclose(f); }
        CHECK(WIFEXITED(st2) && WEXITSTATUS(st2) == 1 && strstr(text, "GPN+M") && strchr(text, '\n') &&
                  !strchr(strchr(text, '\n') + 1, '\n'),
              "analyze --only retention on a GPN run: one-line error: %s", text);
        snprintf(cmd, sizeof cmd, "'%s' analyze '%s' --only nonsense > '%s' 2>&1", bin, db, out);
        int st3 = system(cmd);
        CHECK(WIFEXITED(st3) && WEXITSTATUS(st3) == 2, "usage error exit 2");
        snprintf(cmd, sizeof cmd, "'%s' analyze '%s' --run %lld --only geometry,horizon > '%s' 2>&1", bin, db,
                 (long long)run, out);
        int st4 = system(cmd);
        f = fopen(out, "r");
        text[0] = 0;
        if (f) { size_t k = fread(text, 1, sizeof text - 1, f); text[k] = 0; fclose(f); }
        CHECK(WIFEXITED(st4) && WEXITSTATUS(st4) == 0 && strstr(text, "1131 and 2099") && strstr(text, "3. Horizons") &&
                  !strstr(text, "2. The mean"),
              "table: %s", text);
    }
    owned_free(&o);
    gs_model_free(m);
    return test_summary();
}
