/* Findings: each verdict follows its stated rule on planted analysis results,
 * and a run without analyses is an error that says what to do. */
#include "analyses/findings.h"
#include "base/error.h"
#include "testlib.h"

static int64_t run;

static void put(store *st, const char *name, const char *const *keys, const double *vals, int n) {
    int64_t id = store_analysis_begin(st, run, name, "{}", "test");
    for (int i = 0; i < n; i++) store_analysis_scalar(st, id, keys[i], vals[i], NULL);
    if (!strcmp(name, "horizons")) {
        double x[3] = {1, 10, 100}, y[3] = {0.9, 0.8, 0.7};
        store_analysis_series(st, id, "raw", x, y, NULL, 3);
    }
    store_commit(st);
}

int main(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/f.db", scratch_dir("findings"));
    store *st = store_open(path, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "%s", gs_error());
    if (!st) return test_summary();
    store_model m = {.path = "m", .sha256 = "0000000000000000000000000000000000000000000000000000000000000000"};
    int64_t mid = store_add_model(st, &m);
    store_run r = {.model_id = mid, .seq_len = 8, .d_state = 4, .n_heads = 2};
    run = store_begin_run(st, &r);
    gs_findings f;
    CHECK(gs_findings_compute(st, run, &f) != 0 && strstr(gs_error(), "analyze"), "no analyses: %s", gs_error());

    const char *dk[] = {"norm_ratio", "batch_cos_mean", "top_sv_cos", "spearman_unigram"};
    const char *hk[] = {"c1", "content_horizon_002", "content_horizon_e", "content_horizon_002_censored"};
    const char *rk[] = {"pool_verdict", "pool_verdict_from_start", "separation", "separation_from_start",
                        "fast_n", "slow_n", "fast_n_from_start", "slow_n_from_start", "separation_null_p_t3"};
    put(st, "default_direction", dk, (double[]){0.58, 0.988, -0.99, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 120, 20, 0}, 4);
    put(st, "retention", rk, (double[]){1, 1, 7.0, 6.5, 6, 9, 6, 9, 0.004}, 9);
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.verdict == FINDING_PRESENT, "paper-like default direction: %s", f.default_direction.text);
    CHECK(strstr(f.default_direction.text, "recorded text") && strstr(f.default_direction.text, "no like-for-like"),
          "without the training corpus, no number beside the paper's: %s", f.default_direction.text);
    CHECK(f.content_horizon.verdict == FINDING_PRESENT, "paper-like horizon: %s", f.content_horizon.text);
    CHECK(f.memory_pools.verdict == FINDING_PRESENT && strstr(f.memory_pools.text, "0.004 t3"), "paper-like pools: %s",
          f.memory_pools.text);
    /* the weaker of the two estimators' verdicts */
    put(st, "retention", rk, (double[]){1, 0.5, 7.0, 4.0, 6, 9, 6, 9, 0.004}, 9);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.memory_pools.verdict == FINDING_MARGINAL &&
              !strncmp(f.memory_pools.text, "marginal", 8), "marginal under one estimator: %s", f.memory_pools.text);
    CHECK(gs_findings_write(st, run, &f, "test") == 0, "%s", gs_error());
    double mv = -1;
    CHECK(store_analysis_get_scalar(st, store_analysis_find(st, run, "findings", NULL), "memory_pools", &mv) == 0 &&
              mv == 0.5, "marginal stored as 0.5: %g", mv);

    /* one number past each rule flips the verdict (the newest analysis wins) */
    put(st, "default_direction", dk, (double[]){0.2, 0.988, 0.99, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 3, 1.5, 0}, 4);
    put(st, "retention", rk, (double[]){0.5, 0, 3.0, 2.0, 6, 9, 6, 9, 0.3}, 9);
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.verdict == FINDING_ABSENT, "small mean: %s", f.default_direction.text);
    CHECK(f.content_horizon.verdict == FINDING_ABSENT, "short horizon: %s", f.content_horizon.text);
    CHECK(f.memory_pools.verdict == FINDING_ABSENT, "not shown under the paper's estimator: %s", f.memory_pools.text);
    /* with the training corpus, its Spearman is the one beside the paper's */
    const char *dk2[] = {"norm_ratio", "batch_cos_mean", "top_sv_cos", "spearman_unigram", "spearman_unigram_train"};
    put(st, "default_direction", dk2, (double[]){0.58, 0.988, 0.99, 0.78, 0.12}, 5);
    CHECK(gs_findings_compute(st, run, &f) == 0 && strstr(f.default_direction.text, "does not track the training") &&
              strstr(f.default_direction.text, "+0.12") && !strstr(f.default_direction.text, "+0.78"),
          "training corpus: %s", f.default_direction.text);
    put(st, "horizons", hk, (double[]){0.31, 2047, 900, 1}, 4);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.content_horizon.verdict == FINDING_ABSENT &&
              strstr(f.content_horizon.text, "not within the window"), "censored: %s", f.content_horizon.text);

    CHECK(gs_findings_write(st, run, &f, "test") == 0, "%s", gs_error());
    int64_t an = store_analysis_find(st, run, "findings", NULL);
    double v = -1;
    CHECK(an > 0 && store_analysis_get_scalar(st, an, "memory_pools", &v) == 0 && v == 0, "stored verdict %g", v);
    store_close(st);
    return test_summary();
}
