#include "analyses/state/retention_store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyses/result_writer.h"
#include "base/error.h"

typedef gs_result_writer wr;

/* key + suffix; non-finite values are not stored: the store keeps no NaN */
static void sc(wr *w, const char *key, const char *sfx, double v, const char *note) {
    char k[96];
    snprintf(k, sizeof k, "%s%s", key, sfx);
    gs_result_scalar(w, k, v, note);
}
static void ser(wr *w, const char *name, const char *sfx, const double *x, const double *y, int64_t n) {
    char k[96];
    snprintf(k, sizeof k, "%s%s", name, sfx);
    gs_result_series(w, k, x, y, NULL, n);
}

static void write_pools(wr *w, const gs_pools *p, const char *sfx, const char *est) {
    char note[256];
    if (!p->valid) return;
    sc(w, "fast_n", sfx, p->pool_n[0], NULL);
    sc(w, "fast_min", sfx, p->pool_min[0], "shortest 1/e time of the fast pool (tokens)");
    sc(w, "fast_max", sfx, p->pool_max[0], "longest 1/e time of the fast pool (tokens)");
    sc(w, "slow_n", sfx, p->pool_n[1], NULL);
    sc(w, "slow_min", sfx, p->pool_min[1], "shortest 1/e time of the slow pool (tokens)");
    sc(w, "slow_max", sfx, p->pool_max[1], "longest 1/e time of the slow pool (tokens)");
    sc(w, "gap_log", sfx, p->gap, "mean log 1/e time, slow - fast");
    if (!p->score_valid) return;
    sc(w, "within_std_log", sfx, p->within_std, "pooled within-pool std, floored at 0.01");
    snprintf(note, sizeof note, "gap / pooled within-pool std of the split (descriptive); retention %s", est);
    sc(w, "separation", sfx, p->separation, note);
    snprintf(note, sizeof note, "log likelihood ratio, two normal pools of >= %d heads against one; retention %s",
             gs_pool_min_heads(p->H), est);
    sc(w, "pool_lr", sfx, p->lr, note);
    if (p->null_draws > 0) {
        for (int f = 0; f < GS_NULL_COUNT; f++) {
            char k[64];
            const char *fam = gs_null_family_name((gs_null_family)f);
            snprintf(k, sizeof k, "pool_lr_null_p_%s", fam);
            snprintf(note, sizeof note, "share of %d one-pool %s samples with an LR as high (+1 smoothed)", p->null_draws,
                     fam);
            sc(w, k, sfx, p->null_p[f], note);
            snprintf(k, sizeof k, "pool_lr_null_se_%s", fam);
            sc(w, k, sfx, p->null_se[f], "Monte Carlo standard error, sqrt(p (1 - p) / draws)");
            snprintf(k, sizeof k, "pool_lr_null_crit95_%s", fam);
            sc(w, k, sfx, p->null_crit95[f], "95th percentile of the one-pool LR");
        }
        snprintf(note, sizeof note, "%s: 1 present (every null family p + 4 SE < 0.05), 0 not demonstrated (some "
                 "p - 4 SE >= 0.05), 0.5 inconclusive",
                 gs_pool_verdict_name(p->verdict));
        sc(w, "pool_verdict", sfx, p->verdict == GS_POOLS_PRESENT ? 1.0 : p->verdict == GS_POOLS_INCONCLUSIVE ? 0.5 : 0.0,
           note);
        if (p->power_sets > 0) {
            snprintf(note, sizeof note, "share of %d simulated two-pool sets (the paper's: %d%% of the heads "
                     "log-uniform at 1-3 tokens, the rest at 5-322) the rule calls present", p->power_sets, 40);
            sc(w, "pools_power_paper", sfx, p->power_paper, note);
            snprintf(note, sizeof note, "the same for two pools of this split's counts and 1/e-time ranges");
            sc(w, "pools_power_fitted", sfx, p->power_fitted, note);
        }
    }
    if (p->boot_n > 0) {
        snprintf(note, sizeof note, "2.5%% of %d window resamples", p->boot_n);
        sc(w, "pool_lr_boot_lo", sfx, p->boot_lo, note);
        sc(w, "pool_lr_boot_median", sfx, p->boot_median, NULL);
        snprintf(note, sizeof note, "97.5%% of %d window resamples", p->boot_n);
        sc(w, "pool_lr_boot_hi", sfx, p->boot_hi, note);
        sc(w, "split_stability", sfx, p->boot_same_split, "share of resamples that put every head in the same pool");
        for (int f = 0; f < GS_NULL_COUNT && p->null_draws > 0; f++) {
            char k[64];
            snprintf(k, sizeof k, "pool_lr_boot_over_crit95_%s", gs_null_family_name((gs_null_family)f));
            sc(w, k, sfx, p->boot_over_crit95[f], "share of window resamples with an LR above this null's 95th percentile");
        }
    }
}

void gs_retention_write(gs_result_writer *w, const gs_retention *r, const gs_retention_opts *o) {
    const int H = r->H, L = r->n_lags;
    double *x = malloc(sizeof(double) * (H + 1)), *y = malloc(sizeof(double) * (H + L + 1));
    double *lx = malloc(sizeof(double) * (L + 1));
    if (!x || !y || !lx) { free(x); free(y); free(lx); w->rc = gs_fail("out of memory"); return; }
    for (int h = 0; h < H; h++) x[h] = h;
    for (int i = 0; i < L; i++) lx[i] = r->lags[i];
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_retention_est *es = &r->est[e];
        const char *sfx = gs_ret_estimator_suffix((gs_ret_estimator)e);
        ser(w, "e_fold_time", sfx, x, es->e_fold_time, H);
        for (int h = 0; h < H; h++) y[h] = es->censored[h];
        ser(w, "censored", sfx, x, y, H);
        if (es->pools.valid) {
            for (int h = 0; h < H; h++) y[h] = es->pools.pool[h];
            ser(w, "pool", sfx, x, y, H);
        }
        for (int h = 0; h < H && w->rc == 0; h++) {
            char name[48];
            snprintf(name, sizeof name, e == GS_RET_FROM_START ? "R_from_start_head%d" : "R_head%d", h);
            for (int i = 0; i < L; i++) y[i] = es->R[(int64_t)i * H + h]; /* NaN (no pair) is stored as NULL */
            ser(w, name, "", lx, y, L);
        }
        write_pools(w, &es->pools, sfx, gs_ret_estimator_name((gs_ret_estimator)e));
    }
    for (int i = 0; i < L; i++) y[i] = (double)r->n_pairs[i];
    ser(w, "retention_pairs", "", lx, y, L);
    for (int i = 0; i < L; i++) y[i] = (double)r->n_starts[i];
    ser(w, "retention_starts", "", lx, y, L);
    ser(w, "extrapolated", "", x, r->extrapolated, H);
    ser(w, "mean_alpha", "", x, r->mean_alpha, H);
    if (r->has_beta) ser(w, "mean_beta", "", x, r->mean_beta, H);
    free(x); free(y); free(lx);
    sc(w, "heads", "", H, NULL);
    if (o) {
        sc(w, "null_draws", "", o->null_draws, "Monte Carlo draws per null family");
        sc(w, "boot", "", o->boot, "bootstrap resamples of the windows");
    }
}
