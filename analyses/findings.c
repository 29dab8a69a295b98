#include "analyses/findings.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static double scalar(store *st, int64_t an, const char *key) {
    double v = NAN;
    if (an > 0 && store_analysis_get_scalar(st, an, key, &v) != 0) v = NAN;
    return v;
}

static void judge_default(store *st, int64_t run, finding *f) {
    int64_t dd = store_analysis_find(st, run, "default_direction", NULL);
    if (dd <= 0) {
        f->verdict = FINDING_NOT_MEASURED;
        snprintf(f->text, sizeof f->text, "not measured (no default-direction analysis)");
        return;
    }
    double ratio = scalar(st, dd, "norm_ratio"), cos8 = scalar(st, dd, "batch_cos_mean");
    double top = fabs(scalar(st, dd, "top_sv_cos")), rho = scalar(st, dd, "spearman_unigram");
    int large = ratio >= 0.25, persistent = cos8 >= 0.9, principal = top >= 0.9;
    f->verdict = large && persistent && principal ? FINDING_PRESENT : FINDING_ABSENT;
    char unigram[160];
    if (isnan(rho)) snprintf(unigram, sizeof unigram, "its agreement with unigram counts was not measured");
    else snprintf(unigram, sizeof unigram, "its decoded distribution %s unigram frequency (Spearman %+.2f; paper +0.46)",
                  rho >= 0.2 ? "tracks" : "does not track", rho);
    snprintf(f->text, sizeof f->text,
             "%s: ||s_bar|| is %.2f of the mean state norm (rule >= 0.25), the 8-batch cosine is %.3f (>= 0.9) and "
             "|cos| with the top singular vector %.3f (>= 0.9); %s.",
             f->verdict == FINDING_PRESENT ? "present" : "not shown", ratio, cos8, top, unigram);
}

static void judge_horizon(store *st, int64_t run, finding *f) {
    int64_t h = store_analysis_find(st, run, "horizons", NULL);
    if (h <= 0) {
        f->verdict = FINDING_NOT_MEASURED;
        snprintf(f->text, sizeof f->text, "not measured (no horizons analysis)");
        return;
    }
    double c1 = scalar(st, h, "c1"), h002 = scalar(st, h, "content_horizon_002"), he = scalar(st, h, "content_horizon_e");
    double censored = scalar(st, h, "content_horizon_002_censored");
    /* the raw curve's far end, at the largest lag still averaged over >= 100
     * pairs (the last lags of a window have only a handful) */
    double *x = NULL, *y = NULL, *px = NULL, *pn = NULL;
    int64_t n = store_analysis_get_series(st, h, "raw", &x, &y);
    int64_t np = store_analysis_get_series(st, h, "raw_pairs", &px, &pn);
    double plateau = NAN, last_lag = NAN;
    for (int64_t i = 0; i < n; i++)
        if (np != n || pn[i] >= 100) { plateau = y[i]; last_lag = x[i]; }
    free(x);
    free(y);
    free(px);
    free(pn);
    int decays = c1 >= 0.05 && censored == 0 && h002 >= 10 && h002 < 1000;
    f->verdict = decays ? FINDING_PRESENT : FINDING_ABSENT;
    char e_text[64];
    if (isnan(he)) snprintf(e_text, sizeof e_text, "n/a");
    else snprintf(e_text, sizeof e_text, "%.1f", he);
    snprintf(f->text, sizeof f->text,
             "%s: centered lag cosine %.3f at k = 1 (rule >= 0.05; paper 0.31), falling to c_1/e by k = %s and below "
             "0.02 %s%.1f (rule: inside the window, between 10 and 1000 tokens); the raw cosine stays at %.2f at k = %.0f "
             "(paper: plateau near 0.65).",
             decays ? "present" : "not shown", c1, e_text, censored == 0 ? "by k = " : "not within the window; k > ",
             h002, plateau, last_lag);
}

static void judge_pools(store *st, int64_t run, finding *f) {
    int64_t r = store_analysis_find(st, run, "retention", NULL);
    if (r <= 0) {
        f->verdict = FINDING_NOT_MEASURED;
        snprintf(f->text, sizeof f->text, "not measured (no retention analysis: a GPN without memory, or not analyzed)");
        return;
    }
    double p = scalar(st, r, "separation_null_p"), sep = scalar(st, r, "separation");
    double fn = scalar(st, r, "fast_n"), fmin = scalar(st, r, "fast_min"), fmax = scalar(st, r, "fast_max");
    double sn = scalar(st, r, "slow_n"), smin = scalar(st, r, "slow_min"), smax = scalar(st, r, "slow_max");
    if (isnan(p)) {
        f->verdict = FINDING_NOT_MEASURED;
        snprintf(f->text, sizeof f->text, "not measured: too few heads for a pool split (%.0f)", scalar(st, r, "heads"));
        return;
    }
    f->verdict = p < 0.05 ? FINDING_PRESENT : FINDING_ABSENT;
    snprintf(f->text, sizeof f->text,
             "%s: 2-means on log half-lives gives a fast pool of %.0f heads (%.1f-%.1f tokens) and a slow pool of %.0f "
             "heads (%.1f-%.1f tokens), separation %.2f with null p = %.3f (rule: p < 0.05; paper: 6 heads at 1-3, "
             "9 heads at 5-322).",
             f->verdict == FINDING_PRESENT ? "present" : "not shown", fn, fmin, fmax, sn, smin, smax, sep, p);
}

int gs_findings_compute(store *st, int64_t run_id, gs_findings *out) {
    memset(out, 0, sizeof *out);
    judge_default(st, run_id, &out->default_direction);
    judge_horizon(st, run_id, &out->content_horizon);
    judge_pools(st, run_id, &out->memory_pools);
    if (out->default_direction.verdict == FINDING_NOT_MEASURED && out->content_horizon.verdict == FINDING_NOT_MEASURED &&
        out->memory_pools.verdict == FINDING_NOT_MEASURED)
        return gs_fail("run %lld has no analyses: run gpnscope analyze first", (long long)run_id);
    return 0;
}

int gs_findings_write(store *st, int64_t run_id, const gs_findings *f, const char *code_version) {
    int64_t id = store_analysis_begin(st, run_id, "findings", "{}", code_version);
    if (id < 0) return -1;
    const struct { const char *key; const finding *f; } all[] = {
        {"default_direction", &f->default_direction}, {"content_horizon", &f->content_horizon},
        {"memory_pools", &f->memory_pools}};
    for (int i = 0; i < 3; i++) {
        if (all[i].f->verdict == FINDING_NOT_MEASURED) continue;
        if (store_analysis_scalar(st, id, all[i].key, all[i].f->verdict, all[i].f->text)) {
            store_rollback(st);
            return -1;
        }
    }
    return store_commit(st);
}

void gs_findings_print(FILE *out, const gs_findings *f) {
    fprintf(out, "The paper's three structures in this run:\n");
    fprintf(out, "  1. default-token direction: %s\n", f->default_direction.text);
    fprintf(out, "  2. content horizon:         %s\n", f->content_horizon.text);
    fprintf(out, "  3. fast and slow pools:     %s\n", f->memory_pools.text);
}
