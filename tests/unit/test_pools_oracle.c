/* The pools rule's power against an independent numpy re-simulation
 * (scripts/pools_power.py --check-power, written from docs/analyses.md, run
 * with $GPNSCOPE_PYTHON): at 15 heads the share of simulated sets with the
 * paper's pools (6 heads log-uniform at 1-3 tokens, 9 at 5-322) that the rule
 * calls present, and its false-present rate on one log-uniform pool (the
 * uniform null itself), agree within 4 combined standard errors; and the
 * uniform null has the highest 95th percentile of the five families at every
 * head count from 6 to 64, so it alone decides (issue 39.5). Skipped (77)
 * without numpy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyses/state/pools.h"
#include "base/error.h"
#include "testlib.h"

enum { H = 15, SETS = 4000 };

/* the five families' null LRs for h heads, or 0 with every entry freed */
static int nulls(int h, int draws, uint64_t seed, double *null[GS_NULL_COUNT]) {
    int ok = 1;
    for (int f = 0; f < GS_NULL_COUNT; f++) ok &= (null[f] = gs_pool_null_scores((gs_null_family)f, h, draws, seed)) != NULL;
    if (!ok)
        for (int f = 0; f < GS_NULL_COUNT; f++) { free(null[f]); null[f] = NULL; }
    return ok;
}

/* the uniform's 95th percentile above the other four's, at head counts 6 to 64 */
static void test_uniform_decides(void) {
    static const int heads[] = {6, 8, 15, 32, 64};
    enum { DRAWS = 20000 };
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
        double *null[GS_NULL_COUNT];
        if (!nulls(heads[i], DRAWS, 7, null)) { CHECK(0, "%s", gs_error()); return; }
        const int q = DRAWS * 95 / 100;
        int top = 1;
        for (int f = 0; f < GS_NULL_COUNT; f++) top &= f == GS_NULL_UNIFORM || null[f][q] < null[GS_NULL_UNIFORM][q];
        CHECK(top, "%d heads: uniform 95th percentile %.2f, normal %.2f, Laplace %.2f, t3 %.2f, init %.2f", heads[i],
              null[GS_NULL_UNIFORM][q], null[GS_NULL_NORMAL][q], null[GS_NULL_LAPLACE][q], null[GS_NULL_T3][q],
              null[GS_NULL_INIT][q]);
        for (int f = 0; f < GS_NULL_COUNT; f++) free(null[f]);
    }
}

int main(void) {
    const char *py = test_numpy_python(), *srcdir = getenv("GPNSCOPE_SOURCE");
    if (!py) return test_skip(TEST_NO_NUMPY);
    char cmd[8600];
    test_uniform_decides();

    /* the analysis's own calibration: 65536 draws a family */
    double *null[GS_NULL_COUNT];
    if (!nulls(H, GS_POOL_NULL_DRAWS, 1, null)) { CHECK(0, "%s", gs_error()); return test_summary(); }
    const int n[2] = {6, 9};
    const double power = gs_pools_power(n, (double[]){1, 5}, (double[]){3, 322}, null, GS_POOL_NULL_DRAWS, SETS, 3);
    const double fp = gs_pools_power(n, (double[]){1, 1}, (double[]){322, 322}, null, GS_POOL_NULL_DRAWS, SETS, 4);
    for (int f = 0; f < GS_NULL_COUNT; f++) free(null[f]);

    snprintf(cmd, sizeof cmd, "'%s' '%s/scripts/pools_power.py' --check-power %d --draws %d --sets %d", py,
             srcdir ? srcdir : ".", H, GS_POOL_NULL_DRAWS, SETS);
    FILE *p = popen(cmd, "r");
    double np_power = NAN, np_se = NAN, np_fp = NAN, np_fp_se = NAN;
    int got = p ? fscanf(p, "%lf %lf %lf %lf", &np_power, &np_se, &np_fp, &np_fp_se) : 0;
    int prc = p ? pclose(p) : -1;
    CHECK(got == 4 && prc == 0, "numpy re-simulation failed: %s", cmd);
    if (got != 4) return test_summary();

    const double se = sqrt(power * (1 - power) / SETS), fse = sqrt(fp * (1 - fp) / SETS);
    printf("power on the paper's pools at %d heads: %.3f +- %.3f (C), %.3f +- %.3f (numpy); false present under the "
           "uniform null %.3f +- %.3f (C), %.3f +- %.3f (numpy)\n",
           H, power, se, np_power, np_se, fp, fse, np_fp, np_fp_se);
    CHECK(fabs(power - np_power) < 4 * sqrt(se * se + np_se * np_se), "power %.3f (C) vs %.3f (numpy)", power, np_power);
    CHECK(fabs(fp - np_fp) < 4 * sqrt(fse * fse + np_fp_se * np_fp_se), "false present %.3f (C) vs %.3f (numpy)", fp,
          np_fp);
    /* the rule's level: p + 4 SE < 0.05 is p below about 0.0466 */
    CHECK(fp < 0.05 + 4 * fse, "false present under the uniform null %.3f", fp);
    CHECK(power > 0.15 && power < 0.3, "the power stated in docs/analyses.md (0.21): %.3f", power);
    return test_summary();
}
