/* Findings: each verdict follows its stated rule on planted analysis results,
 * and a run without analyses is an error that says what to do; a deciding
 * statistic whose interval straddles its threshold is inconclusive, one
 * clear of it present or absent (issue 39.1). */
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

#define NUM(v, lo, hi) ((gs_finding_num){v, lo, hi})

/* the rules on numbers at and around their thresholds */
static void test_rules(void) {
    const gs_finding_num ratio = NUM(0.35, 0.32, 0.38), top = NUM(0.99, NAN, NAN);
    char why[200];
    finding_verdict v = gs_finding_default_rule(ratio, NUM(0.898, 0.871, 0.921), top, why, sizeof why);
    CHECK(v == FINDING_INCONCLUSIVE && !strcmp(why, "8-batch cosine 0.898 [0.871, 0.921] straddles 0.9"),
          "a straddling 8-batch cosine: %s: %s", gs_finding_word(v), why);
    v = gs_finding_default_rule(ratio, NUM(0.902, 0.871, 0.921), top, why, sizeof why);
    CHECK(v == FINDING_INCONCLUSIVE, "a value above the threshold with its interval across it: %s", why);
    v = gs_finding_default_rule(ratio, NUM(0.95, 0.93, 0.97), top, why, sizeof why);
    CHECK(v == FINDING_PRESENT && strstr(why, "8-batch cosine 0.950 [0.930, 0.970] >= 0.9") &&
              strstr(why, "|cos| top SV 0.990 >= 0.9"), "clear above: %s: %s", gs_finding_word(v), why);
    v = gs_finding_default_rule(ratio, NUM(0.85, 0.80, 0.88), top, why, sizeof why);
    CHECK(v == FINDING_ABSENT && !strcmp(why, "8-batch cosine 0.850 [0.800, 0.880] < 0.9"), "clear below: %s", why);
    v = gs_finding_default_rule(NUM(0.2, 0.18, 0.22), NUM(0.898, 0.871, 0.921), top, why, sizeof why);
    CHECK(v == FINDING_ABSENT && strstr(why, "0.200 [0.180, 0.220] < 0.25") && !strstr(why, "straddles"),
          "one clear failure outweighs a straddle: %s", why);
    v = gs_finding_default_rule(ratio, NUM(0.898, NAN, NAN), top, why, sizeof why);
    CHECK(v == FINDING_ABSENT, "no interval: two-way on the value: %s", why);

    const gs_finding_num c1 = NUM(0.2, 0.18, 0.22);
    v = gs_finding_horizon_rule(c1, 1, NUM(8.68, 6.93, 21.3), why, sizeof why);
    CHECK(v == FINDING_INCONCLUSIVE && !strcmp(why, "h_0.02 8.7 [6.9, 21.3] tokens straddles 10"), "straddling h_0.02: %s", why);
    v = gs_finding_horizon_rule(c1, 1, NUM(3.5, 3.1, 3.9), why, sizeof why);
    CHECK(v == FINDING_ABSENT && !strcmp(why, "h_0.02 3.5 [3.1, 3.9] tokens, shorter than the rule's 10 tokens"),
          "too fast for the rule: %s", why);
    v = gs_finding_horizon_rule(c1, 1, NUM(15.3, 12.0, 23.2), why, sizeof why);
    CHECK(v == FINDING_PRESENT && strstr(why, "h_0.02 15.3 [12.0, 23.2] tokens >= 10"), "clear inside the rule: %s", why);
    v = gs_finding_horizon_rule(c1, 0, NUM(511, 400, 511), why, sizeof why);
    CHECK(v == FINDING_ABSENT && strstr(why, "no decay below 0.02 inside the window"), "censored: %s", why);
    v = gs_finding_horizon_rule(NUM(0.03, 0.02, 0.04), 1, NUM(15.3, 12.0, 23.2), why, sizeof why);
    CHECK(v == FINDING_ABSENT && strstr(why, "no content at lag 1"), "no content: %s", why);
    CHECK(gs_finding_scalar(FINDING_INCONCLUSIVE) == 0.25 && gs_finding_scalar(FINDING_ABSENT) == 0 &&
              gs_finding_scalar(FINDING_PRESENT) == 1,
          "the stored encoding");
    /* the pools: present under both; inconclusive when present under one only or inconclusive under both */
    const gs_pool_verdict P = GS_POOLS_PRESENT, I = GS_POOLS_INCONCLUSIVE, N = GS_POOLS_NOT_DEMONSTRATED;
    CHECK(gs_finding_pools_rule(P, P) == FINDING_PRESENT && gs_finding_pools_rule(P, N) == FINDING_INCONCLUSIVE &&
              gs_finding_pools_rule(N, P) == FINDING_INCONCLUSIVE && gs_finding_pools_rule(P, I) == FINDING_INCONCLUSIVE &&
              gs_finding_pools_rule(I, I) == FINDING_INCONCLUSIVE && gs_finding_pools_rule(I, N) == FINDING_ABSENT &&
              gs_finding_pools_rule(N, N) == FINDING_ABSENT && !strcmp(gs_finding_pools_word(FINDING_ABSENT), "not demonstrated"),
          "the pools' rule over the two estimators");
}

/* controls (issue 39.3): an untrained control that passes raises each lower bound to its value; one that
 * fails, and the shuffled control, leave the thresholds as they are */
static void test_controls(void) {
    const gs_finding_num ratio = NUM(0.35, 0.32, 0.38), cos8 = NUM(0.95, 0.93, 0.97), top = NUM(0.99, 0.98, 0.995);
    char why[300];
    gs_finding_controls ctl = {.measured = {1, 1}, .run = {2, 3}, .x = {{0.30, 0.94, 0.97}, {0.6, 0.99, 0.999}}};
    finding_verdict v = gs_finding_default_rule_ctl(ratio, cos8, 0, top, &ctl, why, sizeof why);
    CHECK(ctl.verdict[0] == FINDING_PRESENT && ctl.verdict[1] == FINDING_PRESENT, "each control judged by the rule");
    CHECK(v == FINDING_INCONCLUSIVE && strstr(why, "8-batch cosine 0.950 [0.930, 0.970] straddles 0.940 (untrained)"),
          "a passing untrained control raises the bound: %s: %s", gs_finding_word(v), why);
    ctl.x[0][1] = 0.92;
    v = gs_finding_default_rule_ctl(ratio, cos8, 0, top, &ctl, why, sizeof why);
    CHECK(v == FINDING_PRESENT && strstr(why, "0.350 [0.320, 0.380] >= 0.300 (untrained)") &&
              strstr(why, ">= 0.920 (untrained)") && strstr(why, ">= 0.970 (untrained)"),
          "cleared: the shuffled control's higher values do not decide: %s", why);
    ctl.x[0][0] = 0.36;
    v = gs_finding_default_rule_ctl(ratio, cos8, 0, top, &ctl, why, sizeof why);
    CHECK(v == FINDING_INCONCLUSIVE && strstr(why, "straddles 0.360 (untrained)"), "inside the interval: %s", why);
    ctl.x[0][0] = 0.10; /* the untrained control fails the rule: the thresholds stand */
    v = gs_finding_default_rule_ctl(ratio, cos8, 0, top, &ctl, why, sizeof why);
    CHECK(ctl.verdict[0] == FINDING_ABSENT && v == FINDING_PRESENT && !strstr(why, "untrained"),
          "a failing control leaves the rule: %s", why);
    gs_finding_controls h = {.measured = {1, 0}, .x = {{0.1, 20, 20}}, .inside = {1, 0}};
    v = gs_finding_horizon_rule_ctl(NUM(0.2, 0.18, 0.22), 1, NUM(22.8, 21.0, 25.1), &h, why, sizeof why);
    CHECK(h.verdict[0] == FINDING_PRESENT && v == FINDING_PRESENT && strstr(why, ">= 20.0 (untrained)"),
          "a horizon clear of the untrained one: %s", why);
    h.inside[0] = 0; /* no decay inside the untrained window: it fails the rule and raises nothing */
    v = gs_finding_horizon_rule_ctl(NUM(0.2, 0.18, 0.22), 1, NUM(15.3, 12.0, 23.2), &h, why, sizeof why);
    CHECK(h.verdict[0] == FINDING_ABSENT && v == FINDING_PRESENT && !strstr(why, "untrained"), "censored control: %s", why);
}

/* a stored untrained control (its run's settings say so) read by the findings: passing the default
 * direction's rule, its norm ratio becomes the bound; its pools leave the run's present pools
 * inconclusive, for that reason and no other */
static void test_stored_controls(store *st, int64_t mid, const char *const *dk, const char *const *hk,
                                 const char *const *rk) {
    const int64_t main_run = run;
    char settings[128];
    snprintf(settings, sizeof settings, "{\"control\": {\"kind\": \"untrained\", \"of\": %lld, \"seed\": 1}}",
             (long long)main_run);
    store_run r = {.model_id = mid, .seq_len = 8, .d_state = 4, .n_heads = 2, .settings_json = settings};
    run = store_begin_run(st, &r);
    CHECK(run > 0 && store_finish_run(st, run, "complete", NULL) == 0, "a control run: %s", gs_error());
    put(st, "default_direction", dk, (double[]){0.62, 0.99, 0.995, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 2047, 900, 1}, 4);
    put(st, "retention", rk, (double[]){1, 1, 30.0, 28.0, 7.0, 6.5, 6, 9, 6, 9, 0.004, 0.21}, 12);
    const int64_t ctl = run;
    run = main_run;
    put(st, "default_direction", dk, (double[]){0.58, 0.988, -0.99, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 120, 20, 0}, 4);
    put(st, "retention", rk, (double[]){1, 1, 30.0, 28.0, 7.0, 6.5, 6, 9, 6, 9, 0.004, 0.21}, 12);
    gs_findings f;
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.controls.measured[0] && f.default_direction.controls.run[0] == ctl &&
              f.default_direction.controls.verdict[0] == FINDING_PRESENT && f.default_direction.verdict == FINDING_ABSENT &&
              strstr(f.default_direction.brief, "0.580 < 0.620 (untrained)"),
          "a passing untrained control raises the bound: %s", f.default_direction.brief);
    CHECK(f.content_horizon.controls.verdict[0] == FINDING_ABSENT && f.content_horizon.verdict == FINDING_PRESENT,
          "a censored untrained horizon leaves the rule: %s", f.content_horizon.brief);
    CHECK(f.memory_pools.verdict == FINDING_INCONCLUSIVE && strstr(f.memory_pools.brief, "the untrained control has pools") &&
              !strstr(f.memory_pools.brief, "within 4 SE") && strstr(f.memory_pools.text, "Its controls"),
          "pools in the untrained control: %s", f.memory_pools.brief);
    CHECK(store_last_run(st, STORE_RUN_COMPLETE) != ctl, "a control is never the default run");
}

int main(void) {
    test_rules();
    test_controls();
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
    const char *rk[] = {"pool_verdict", "pool_verdict_from_start", "pool_lr", "pool_lr_from_start", "separation",
                        "separation_from_start", "fast_n", "slow_n", "fast_n_from_start", "slow_n_from_start",
                        "pool_lr_null_p_t3", "pools_power_paper_from_start"};
    put(st, "default_direction", dk, (double[]){0.58, 0.988, -0.99, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 120, 20, 0}, 4);
    put(st, "retention", rk, (double[]){1, 1, 30.0, 28.0, 7.0, 6.5, 6, 9, 6, 9, 0.004, 0.21}, 12);
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.verdict == FINDING_PRESENT, "paper-like default direction: %s", f.default_direction.text);
    CHECK(strstr(f.default_direction.text, "recorded text") && strstr(f.default_direction.text, "no like-for-like"),
          "without the training corpus, no number beside the paper's: %s", f.default_direction.text);
    CHECK(f.content_horizon.verdict == FINDING_PRESENT, "paper-like horizon: %s", f.content_horizon.text);
    CHECK(f.memory_pools.verdict == FINDING_PRESENT && strstr(f.memory_pools.text, "0.004 t3") &&
              !strncmp(f.memory_pools.brief, "present (from the start: LR 28.00", 33),
          "paper-like pools: %s / %s", f.memory_pools.brief, f.memory_pools.text);
    /* present under one estimator only, or inconclusive under one and present under the other: inconclusive, why */
    put(st, "retention", rk, (double[]){1, 0.5, 30.0, 14.0, 7.0, 4.0, 6, 9, 6, 9, 0.004, 0.21}, 12);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.memory_pools.verdict == FINDING_INCONCLUSIVE &&
              !strncmp(f.memory_pools.text, "inconclusive: ", 14) &&
              !strncmp(f.memory_pools.brief, "inconclusive (present only over all starts; from the start: LR 14.00", 68),
          "inconclusive under one estimator: %s", f.memory_pools.brief);
    CHECK(gs_findings_write(st, run, &f, "test") == 0, "%s", gs_error());
    double mv = -1;
    CHECK(store_analysis_get_scalar(st, store_analysis_find(st, run, "findings", NULL), "memory_pools", &mv) == 0 &&
              mv == 0.25, "inconclusive stored as 0.25: %g", mv);
    put(st, "retention", rk, (double[]){0, 1, 9.0, 30.0, 7.0, 4.0, 6, 9, 6, 9, 0.3, 0.21}, 12);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.memory_pools.verdict == FINDING_INCONCLUSIVE &&
              strstr(f.memory_pools.brief, "(present only from the start; "), "present from the start only: %s",
          f.memory_pools.brief);
    /* a store judged by the 2-means rule (no LR) is not judged again by these words */
    const char *old[] = {"pool_verdict", "pool_verdict_from_start", "separation", "separation_from_start"};
    put(st, "retention", old, (double[]){0, 0.5, 3.0, 4.2}, 4);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.memory_pools.verdict == FINDING_NOT_MEASURED &&
              strstr(f.memory_pools.text, "2-means rule") && strstr(f.memory_pools.text, "analyze again"),
          "the 2-means rule's store: %s", f.memory_pools.text);

    /* one number past each rule flips the verdict (the newest analysis wins) */
    put(st, "default_direction", dk, (double[]){0.2, 0.988, 0.99, 0.46}, 4);
    put(st, "horizons", hk, (double[]){0.31, 3, 1.5, 0}, 4);
    put(st, "retention", rk, (double[]){0.5, 0, 9.0, 8.0, 3.0, 2.0, 6, 9, 6, 9, 0.3, 0.21}, 12);
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.verdict == FINDING_ABSENT, "small mean: %s", f.default_direction.text);
    CHECK(f.content_horizon.verdict == FINDING_ABSENT, "short horizon: %s", f.content_horizon.text);
    /* not demonstrated reads beside the rule's power, and the line stays under 200 characters with its label */
    CHECK(f.memory_pools.verdict == FINDING_ABSENT &&
              !strncmp(f.memory_pools.brief, "not demonstrated (power 0.21; from the start: LR 8.00", 53) &&
              !strncmp(f.memory_pools.text, "not demonstrated: ", 18) &&
              strlen(f.memory_pools.brief) + strlen("  3. fast and slow pools: ") < 200,
          "not demonstrated under the paper's estimator: %s", f.memory_pools.brief);
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

    /* analyze's stored intervals decide: at the threshold inconclusive, clear of it present */
    const char *dk3[] = {"norm_ratio", "norm_ratio_lo", "norm_ratio_hi", "batch_cos_mean", "batch_cos_lo", "batch_cos_hi",
                         "top_sv_cos"};
    const char *hk3[] = {"c1", "c1_lo", "c1_hi", "content_horizon_002", "content_horizon_002_lo", "content_horizon_002_hi",
                         "content_horizon_002_censored"};
    put(st, "default_direction", dk3, (double[]){0.35, 0.32, 0.38, 0.898, 0.871, 0.921, 0.99}, 7);
    put(st, "horizons", hk3, (double[]){0.2, 0.18, 0.22, 8.68, 6.93, 21.3, 0}, 7);
    CHECK(gs_findings_compute(st, run, &f) == 0, "%s", gs_error());
    CHECK(f.default_direction.verdict == FINDING_INCONCLUSIVE &&
              !strcmp(f.default_direction.brief, "inconclusive (8-batch cosine 0.898 [0.871, 0.921] straddles 0.9)"),
          "stored straddling cosine: %s", f.default_direction.brief);
    CHECK(f.content_horizon.verdict == FINDING_INCONCLUSIVE && strstr(f.content_horizon.brief, "straddles 10") &&
              strstr(f.content_horizon.text, "8.7 [6.9, 21.3]"),
          "stored straddling horizon: %s", f.content_horizon.brief);
    CHECK(gs_findings_write(st, run, &f, "test") == 0, "%s", gs_error());
    an = store_analysis_find(st, run, "findings", NULL);
    CHECK(store_analysis_get_scalar(st, an, "default_direction", &v) == 0 && v == 0.25, "inconclusive stored as 0.25: %g", v);
    put(st, "default_direction", dk3, (double[]){0.35, 0.32, 0.38, 0.95, 0.93, 0.97, 0.99}, 7);
    put(st, "horizons", hk3, (double[]){0.2, 0.18, 0.22, 3.5, 3.1, 3.9, 0}, 7);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.default_direction.verdict == FINDING_PRESENT &&
              f.content_horizon.verdict == FINDING_ABSENT &&
              strstr(f.content_horizon.brief, "shorter than the rule's 10 tokens"),
          "clear intervals: %s / %s", f.default_direction.brief, f.content_horizon.brief);
    /* the top-SV cosine's stored interval decides too (issue 39.1: GDN L0's 0.914 against 0.9): above the
     * threshold with its interval across it is inconclusive, clear of it present */
    const char *dk5[] = {"norm_ratio", "norm_ratio_lo", "norm_ratio_hi", "batch_cos_mean", "batch_cos_lo", "batch_cos_hi",
                         "top_sv_cos", "top_sv_cos_lo", "top_sv_cos_hi"};
    put(st, "default_direction", dk5, (double[]){0.35, 0.32, 0.38, 0.95, 0.93, 0.97, 0.914, 0.871, 0.957}, 9);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.default_direction.verdict == FINDING_INCONCLUSIVE &&
              !strcmp(f.default_direction.brief, "inconclusive (|cos| top SV 0.914 [0.871, 0.957] straddles 0.9)") &&
              strstr(f.default_direction.text, "0.914 [0.871, 0.957] (>= 0.9"),
          "stored straddling top-SV cosine: %s", f.default_direction.brief);
    put(st, "default_direction", dk5, (double[]){0.35, 0.32, 0.38, 0.95, 0.93, 0.97, 0.914, 0.905, 0.957}, 9);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.default_direction.verdict == FINDING_PRESENT &&
              strstr(f.default_direction.brief, "|cos| top SV 0.914 [0.905, 0.957] >= 0.9"),
          "a top-SV interval clear of 0.9: %s", f.default_direction.brief);
    /* without a stored interval: two-way, and the brief says so */
    const char *dk4[] = {"norm_ratio", "batch_cos_mean", "top_sv_cos", "windows"};
    put(st, "default_direction", dk4, (double[]){0.35, 0.95, 0.99, 4}, 4);
    CHECK(gs_findings_compute(st, run, &f) == 0 && f.default_direction.verdict == FINDING_PRESENT &&
              strstr(f.default_direction.brief, "no interval: 4 windows (16 needed))"),
          "no interval: %s", f.default_direction.brief);
    test_stored_controls(st, mid, dk, hk, rk); /* last: the control is then read by every finding of run */
    store_close(st);
    return test_summary();
}
