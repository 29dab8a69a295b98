/* compare's pieces that the CLI test does not reach one by one: the operand
 * grammar STORE[:RUN[:SITE]], the horizons' per-window sums, whose sum
 * over windows must be the pooled curve (the bootstrap reweights them), on
 * windows with gaps and a zero state, and a row's verdicts decided on its
 * intervals (a straddling one inconclusive, issue 39.1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/compare/compare.h"
#include "analyses/math/stats.h"
#include "base/error.h"
#include "testlib.h"

static void test_operands(void) {
    gs_compare_operand o;
    CHECK(gs_compare_parse_operand("a.db", &o) == 0 && !strcmp(o.store_path, "a.db") && o.run == 0 && !o.site[0], "STORE");
    CHECK(gs_compare_parse_operand("dir/a.db:12", &o) == 0 && !strcmp(o.store_path, "dir/a.db") && o.run == 12 && !o.site[0],
          "STORE:RUN");
    CHECK(gs_compare_parse_operand("a.db:3:blocks.*.hook_resid_post", &o) == 0 && !strcmp(o.store_path, "a.db") &&
              o.run == 3 && !strcmp(o.site, "blocks.*.hook_resid_post"),
          "STORE:RUN:SITE: %s %lld %s", o.store_path, (long long)o.run, o.site);
    CHECK(gs_compare_parse_operand("a.db::state.pred", &o) == 0 && !strcmp(o.store_path, "a.db") && o.run == 0 &&
              !strcmp(o.site, "state.pred"),
          "STORE::SITE");
    CHECK(gs_compare_parse_operand("a.db:mem.alpha", &o) == 0 && !strcmp(o.store_path, "a.db") && o.run == 0 &&
              !strcmp(o.site, "mem.alpha"),
          "STORE:SITE");
    CHECK(gs_compare_parse_operand("x:y/a.db:2:s", &o) == 0 && !strcmp(o.store_path, "x:y/a.db") && o.run == 2, "a colon in the path");
    CHECK(gs_compare_parse_operand("a.db:0", &o) != 0 && strstr(gs_error(), "start at 1"), "run 0: %s", gs_error());
    CHECK(gs_compare_parse_operand(":3", &o) != 0 && strstr(gs_error(), "no store"), "no store: %s", gs_error());
    CHECK(gs_compare_parse_operand("a.db:3:", &o) != 0 && strstr(gs_error(), "empty site"), "empty site: %s", gs_error());
    CHECK(gs_compare_parse_operand("", &o) != 0, "empty operand");
}

static void test_per_window_sums(void) {
    enum { d = 6, NW = 3 };
    /* window 0: positions 0..19, window 1: 0..30 with gaps, window 2: 5..14 */
    int32_t pos[80];
    int64_t win[80];
    float x[80 * d];
    int n = 0;
    gs_rng rng = {9};
    for (int w = 0; w < NW; w++) {
        int lo = w == 2 ? 5 : 0, hi = w == 0 ? 19 : w == 1 ? 30 : 14;
        for (int p = lo; p <= hi; p++) {
            if (w == 1 && p % 7 == 3) continue; /* gaps */
            pos[n] = p;
            win[n] = w;
            for (int j = 0; j < d; j++) x[n * d + j] = (float)(0.5 + gs_rng_normal(&rng));
            n++;
        }
    }
    for (int j = 0; j < d; j++) x[4 * d + j] = 0; /* a zero state */
    gs_states s = {n, d, x, win, pos};
    gs_states_cursor cur;
    gs_state_source src;
    gs_states_source(&src, &cur, &s);
    gs_horizon_opts ho;
    gs_horizon_opts_default(&ho);
    gs_horizons pooled, kept;
    CHECK(gs_horizons_run(&src, &ho, &pooled) == 0, "%s", gs_error());
    ho.per_window = 1;
    CHECK(gs_horizons_run(&src, &ho, &kept) == 0, "%s", gs_error());
    CHECK(pooled.win_raw == NULL && kept.n_windows == NW && kept.n_lags == pooled.n_lags, "per-window rows: %lld",
          (long long)kept.n_windows);
    double worst = 0;
    int counts_ok = 1;
    for (int i = 0; i < kept.n_lags; i++) {
        double sr = 0, sc = 0;
        int64_t nr = 0, nc = 0;
        for (int w = 0; w < NW; w++) {
            sr += kept.win_raw[w * kept.n_lags + i];
            sc += kept.win_centered[w * kept.n_lags + i];
            nr += kept.win_n_raw[w * kept.n_lags + i];
            nc += kept.win_n_centered[w * kept.n_lags + i];
        }
        counts_ok &= nr == pooled.n_raw[i] && nc == pooled.n_centered[i] && nr == kept.n_raw[i];
        if (nr) worst = fmax(worst, fabs(sr / (double)nr - pooled.raw[i]));
        if (nc) worst = fmax(worst, fabs(sc / (double)nc - pooled.centered[i]));
        if (nr) worst = fmax(worst, fabs(kept.raw[i] - pooled.raw[i]));
    }
    CHECK(counts_ok, "the windows' pair counts add up to the pooled counts");
    CHECK(worst < 1e-12, "the windows' sums over their counts are the pooled curves (worst %g)", worst);
    CHECK(fabs(kept.h_002 - pooled.h_002) < 1e-9 && fabs(kept.c1 - pooled.c1) < 1e-12, "the same horizons with and without per-window sums");
    gs_horizons_free(&pooled);
    gs_horizons_free(&kept);
}

/* a row at a threshold reads inconclusive with its reason; clear rows present or absent */
static void test_row_verdicts(void) {
    gs_compare_row *r = calloc(1, sizeof *r);
    if (!r) return;
    r->norm_ratio = (gs_cmp_num){0.35, 0.32, 0.38};
    r->batch_cos = (gs_cmp_num){0.898, 0.871, 0.921};
    r->top_sv_cos = (gs_cmp_num){0.99, NAN, NAN};
    r->centered_c1 = (gs_cmp_num){0.2, 0.18, 0.22};
    r->h_002 = (gs_cmp_num){8.68, 6.93, 21.3};
    gs_compare_row_judge(r);
    CHECK(r->default_verdict == FINDING_INCONCLUSIVE && strstr(r->default_why, "[0.871, 0.921] straddles 0.9"),
          "straddling cosine: %s: %s", gs_finding_word(r->default_verdict), r->default_why);
    CHECK(r->horizon_verdict == FINDING_INCONCLUSIVE && strstr(r->horizon_why, "straddles 10"), "straddling h_0.02: %s",
          r->horizon_why);
    char *j = gs_compare_json(&(gs_compare){.n_rows = 1, .rows = r}, 0);
    CHECK(j && strstr(j, "\"verdict\":\"inconclusive\",\"reason\":\"8-batch cosine 0.898 [0.871, 0.921] straddles 0.9\"") &&
              strstr(j, "\"batch_cos\":{\"value\":0.898,\"lo\":0.871,\"hi\":0.921}"),
          "the JSON's verdict, reason and interval: %.300s", j ? j : "(none)");
    free(j);
    r->batch_cos = (gs_cmp_num){0.95, 0.93, 0.97};
    r->h_002 = (gs_cmp_num){3.5, 3.1, 3.9};
    gs_compare_row_judge(r);
    CHECK(r->default_verdict == FINDING_PRESENT && r->horizon_verdict == FINDING_ABSENT &&
              strstr(r->horizon_why, "shorter than the rule's 10 tokens"),
          "clear rows: %s / %s", r->default_why, r->horizon_why);
    r->batch_cos = (gs_cmp_num){0.85, 0.80, 0.88};
    r->h_002_censored = 1;
    gs_compare_row_judge(r);
    CHECK(r->default_verdict == FINDING_ABSENT && r->horizon_verdict == FINDING_ABSENT &&
              strstr(r->horizon_why, "no decay below 0.02 inside the window"),
          "clear below, and no decay: %s / %s", r->default_why, r->horizon_why);
    free(r);
}

int main(void) {
    test_operands();
    test_row_verdicts();
    test_per_window_sums();
    return test_summary();
}
