#include "analyses/report.h"

#include <math.h>
#include <string.h>

#include "store/paper_figures.h"

int gs_nearest_lag(const int *lags, int n, double k) {
    int best = -1;
    double bd = 0;
    for (int i = 0; i < n; i++) {
        double dd = fabs(log((double)lags[i]) - log(k));
        if (best < 0 || dd < bd) { best = i; bd = dd; }
    }
    return best;
}

static void row(FILE *f, const char *what, const char *ours, const char *paper) {
    if (strlen(ours) > 34 && *paper) /* a long value: the paper's figure on its own line below */
        fprintf(f, "  %-38s %s\n  %-38s %-34s %s\n", what, ours, "", "", paper);
    else
        fprintf(f, "  %-38s %-34s %s\n", what, ours, paper);
}

/* a row whose label and paper column are the paper's (store/paper_figures.h) */
static void paper_row(FILE *f, gs_paper_quantity q, const char *ours) { row(f, gs_paper(q)->label, ours, gs_paper(q)->paper); }

static void section(FILE *f, const char *title) {
    fprintf(f, "\n%s\n", title);
    fprintf(f, "  %-38s %-34s %s\n", "quantity", "ours", "paper");
}

static void tokens_text(char *buf, size_t n, const int *ids, int k, const char *(*token_text)(void *, int),
                        void *token_ctx) {
    buf[0] = 0;
    for (int i = 0; i < k && ids[i] >= 0; i++) {
        size_t len = strlen(buf);
        if (token_text) {
            const char *t = token_text(token_ctx, ids[i]);
            snprintf(buf + len, n - len, "%s\"%s\"", i ? " " : "", t ? t : "?");
        } else {
            snprintf(buf + len, n - len, "%s%d", i ? " " : "", ids[i]);
        }
    }
}

void gs_report_geometry(FILE *f, const gs_geometry *g) {
    char a[512];
    {
        section(f, "1. Geometry of the state");
        snprintf(a, sizeof a, "%lld states in %lld windows, d = %d", (long long)g->n, (long long)g->n_windows, g->d);
        paper_row(f, GS_PAPER_STATES, a);
        snprintf(a, sizeof a, "%.4g / %.4g", g->norm_mean, g->norm_std);
        paper_row(f, GS_PAPER_NORM, a);
        snprintf(a, sizeof a, "min %.4g, max %.4g", g->dim_std_sorted[g->d - 1], g->dim_std_sorted[0]);
        paper_row(f, GS_PAPER_DIM_STD, a);
        snprintf(a, sizeof a, "%d (std < 1e-3 x median %.3g)", g->n_dead, g->median_std);
        paper_row(f, GS_PAPER_DEAD_DIMS, a);
        snprintf(a, sizeof a, "%.4g, %.4g", g->corr_mean_abs, g->corr_max_abs);
        paper_row(f, GS_PAPER_CORRELATION, a);
        if (g->has_spectrum) {
            snprintf(a, sizeof a, "%d and %d of %d", g->n90, g->n99, g->d);
            paper_row(f, GS_PAPER_PCA, a);
            snprintf(a, sizeof a, "%.4g", g->stable_rank);
            paper_row(f, GS_PAPER_STABLE_RANK, a);
        }
        snprintf(a, sizeof a, "%.4g", g->participation_ratio);
        paper_row(f, GS_PAPER_PARTICIPATION, a);
    }
}

void gs_report_default_dir(FILE *f, const gs_default_dir *dd, const char *(*token_text)(void *ctx, int id),
                           void *token_ctx) {
    char a[512], b[160];
    {
        section(f, "2. The mean direction");
        snprintf(a, sizeof a, "%.4g (ratio to mean ||s|| %.3f)", dd->mean_norm, dd->norm_ratio);
        paper_row(f, GS_PAPER_MEAN_NORM, a);
        if (dd->stability_valid)
            snprintf(a, sizeof a, "%.4f +- %.4f (%s)", dd->stab_mean, dd->stab_std,
                     dd->batches_by_window ? "by window" : "rows in order: too few windows");
        else
            snprintf(a, sizeof a, "n/a (fewer states than %d batches)", dd->n_batches);
        snprintf(b, sizeof b, "%s (%d)", gs_paper(GS_PAPER_BATCH_COSINE)->label, dd->n_batches);
        row(f, b, a, gs_paper(GS_PAPER_BATCH_COSINE)->paper);
        if (dd->stability_valid) { /* batches that share no document, or in one line why not (issue 39.2) */
            if (dd->doc_valid && !isnan(dd->doc_lo))
                snprintf(a, sizeof a, "%.4f [%.4f, %.4f]; %s", dd->doc_mean, dd->doc_lo, dd->doc_hi, dd->doc_note);
            else if (dd->doc_valid) snprintf(a, sizeof a, "%.4f; %s", dd->doc_mean, dd->doc_note);
            else snprintf(a, sizeof a, "%s", dd->doc_note);
            snprintf(b, sizeof b, "cross-batch cosine, by document (%d)", dd->n_batches);
            row(f, b, a, "");
        }
        if (dd->random_valid) {
            snprintf(a, sizeof a, "%.4f +- %.4f", dd->rand_mean, dd->rand_std);
            snprintf(b, sizeof b, "cross-batch cosine, random rows (%d)", dd->n_batches);
            row(f, b, a, "");
        }
        if (dd->has_decode) {
            tokens_text(a, sizeof a, dd->top, GS_TOPK, token_text, token_ctx);
            paper_row(f, GS_PAPER_DEFAULT_TOKENS, a);
            /* like for like: the paper's row holds the training corpus's number only */
            if (dd->has_train_unigram && dd->spearman_train_defined) snprintf(a, sizeof a, "%+.4f", dd->spearman_train);
            else if (dd->has_train_unigram) snprintf(a, sizeof a, "undefined (constant counts)");
            else snprintf(a, sizeof a, "not measured (analyze --train-corpus)");
            paper_row(f, GS_PAPER_SPEARMAN, a);
            if (dd->has_unigram) {
                if (dd->spearman_defined) snprintf(a, sizeof a, "%+.4f", dd->spearman);
                else snprintf(a, sizeof a, "undefined (constant counts)");
                row(f, "Spearman vs recorded-text unigrams", a, "");
            }
            snprintf(a, sizeof a, "%d/%d overlap; cosine %+.4f", dd->emb_overlap, GS_TOPK, dd->emb_cos);
            paper_row(f, GS_PAPER_EMBEDDING_CONTROL, a);
        }
        if (dd->has_t10) snprintf(b, sizeof b, "%.4f", dd->emerg_t10); else snprintf(b, sizeof b, "n/a");
        snprintf(a, sizeof a, "%s at t=10, ", b);
        if (dd->has_t100) snprintf(b, sizeof b, "%.4f", dd->emerg_t100); else snprintf(b, sizeof b, "n/a");
        strncat(a, b, sizeof a - strlen(a) - 1);
        strncat(a, " at t=100", sizeof a - strlen(a) - 1);
        paper_row(f, GS_PAPER_EMERGENCE, a);
        if (!isnan(dd->top_sv_lo)) snprintf(a, sizeof a, "%.6f [%.4f, %.4f]", dd->top_sv_cos, dd->top_sv_lo, dd->top_sv_hi);
        else snprintf(a, sizeof a, "%.6f", dd->top_sv_cos);
        paper_row(f, GS_PAPER_TOP_PC, a);
        if (dd->pc1_cos == dd->pc1_cos) {
            snprintf(a, sizeof a, "%.4f (||s_bar||^2 / lambda_1 = %.3g)", dd->pc1_cos, dd->mean_norm2_over_lambda1);
            row(f, "|cos(s_bar, centered PC1)|", a, "");
        }
    }
}

void gs_report_horizons(FILE *f, const gs_horizons *h) {
    char a[512];
    if (h->n_lags > 0) {
        section(f, "3. Horizons");
        /* read out to the last lag with enough pairs (GS_HORIZON_MIN_PAIRS) */
        int r1 = gs_horizons_nearest_enough(h, h->n_raw, h->c1_lag), r1500 = gs_horizons_nearest_enough(h, h->n_raw, 1500);
        if (r1 >= 0 && r1500 >= 0)
            snprintf(a, sizeof a, "%.4f at k=%d, %.4f at k=%d", h->raw[r1], h->lags[r1], h->raw[r1500], h->lags[r1500]);
        else
            snprintf(a, sizeof a, "n/a (no lag with %d pairs)", GS_HORIZON_MIN_PAIRS);
        paper_row(f, GS_PAPER_RAW_LAG, a);
        int i256 = gs_horizons_nearest_enough(h, h->n_centered, 256);
        if (i256 >= 0) snprintf(a, sizeof a, "%.4f at k=%d, %.4f at k=%d", h->c1, h->c1_lag, h->centered[i256], h->lags[i256]);
        else snprintf(a, sizeof a, "%.4f at k=%d", h->c1, h->c1_lag);
        paper_row(f, GS_PAPER_CENTERED_LAG, a);
        int lr = gs_horizons_nearest_enough(h, h->n_raw, 1e9), lc = gs_horizons_nearest_enough(h, h->n_centered, 1e9);
        snprintf(a, sizeof a, "raw to k=%d, centered to k=%d (>= %d pairs)", lr >= 0 ? h->lags[lr] : 0,
                 lc >= 0 ? h->lags[lc] : 0, GS_HORIZON_MIN_PAIRS);
        row(f, "lags read", a, "");
        if (h->h_e_valid) snprintf(a, sizeof a, "%s%.4g", h->h_e_censored ? ">= " : "", h->h_e);
        else snprintf(a, sizeof a, "undefined (c_1 <= 0)");
        paper_row(f, GS_PAPER_HORIZON_E, a);
        snprintf(a, sizeof a, "%s%.4g", h->h_002_censored ? ">= " : "", h->h_002);
        paper_row(f, GS_PAPER_HORIZON_002, a);
    }
}

void gs_report_retention(FILE *f, const gs_retention *rt) {
    char a[512], b[160];
    {
        section(f, "3. Memory horizon (GPN+M)");
        snprintf(a, sizeof a, "%d", rt->H);
        paper_row(f, GS_PAPER_HEADS, a);
        const gs_retention_est *ea = &rt->est[GS_RET_ALL_STARTS], *es = &rt->est[GS_RET_FROM_START];
        for (int h2 = 0; h2 < rt->H; h2++) {
            snprintf(b, sizeof b, "head %d 1/e time (pool %s)", h2,
                     ea->pools.valid ? (ea->pools.pool[h2] ? "slow" : "fast") : "-");
            snprintf(a, sizeof a, "%s%.4g; from the start %s%.4g; mean beta %.3f",
                     ea->censored[h2] ? "censored, extrapolated " : "", ea->e_fold_time[h2],
                     es->censored[h2] ? "censored " : "", es->e_fold_time[h2], rt->mean_beta[h2]);
            row(f, b, a, "");
        }
        /* the paper's rows hold the paper's estimator; gpnscope's has rows of its own */
        for (int e = GS_RET_FROM_START; e >= 0; e--) {
            const gs_pools *pp = &rt->est[e].pools;
            if (!pp->valid) continue;
            const char *tag = e == GS_RET_FROM_START ? "" : " (all starts)";
            snprintf(a, sizeof a, "%d head%s at %.3g-%.3g tokens", pp->pool_n[0], pp->pool_n[0] == 1 ? "" : "s",
                     pp->pool_min[0], pp->pool_max[0]);
            snprintf(b, sizeof b, "%s%s", gs_paper(GS_PAPER_FAST_POOL)->label, tag);
            row(f, b, a, e == GS_RET_FROM_START ? gs_paper(GS_PAPER_FAST_POOL)->paper : "");
            snprintf(a, sizeof a, "%d head%s at %.3g-%.3g tokens", pp->pool_n[1], pp->pool_n[1] == 1 ? "" : "s",
                     pp->pool_min[1], pp->pool_max[1]);
            snprintf(b, sizeof b, "%s%s", gs_paper(GS_PAPER_SLOW_POOL)->label, tag);
            row(f, b, a, e == GS_RET_FROM_START ? gs_paper(GS_PAPER_SLOW_POOL)->paper : "");
            snprintf(b, sizeof b, "%s%s", gs_paper(GS_PAPER_POOL_LR)->label, tag);
            if (!pp->score_valid) { row(f, b, "n/a (needs 3 heads)", ""); continue; }
            if (pp->boot_n > 0)
                snprintf(a, sizeof a, "%.3g (95%% bootstrap %.3g-%.3g; same split in %.0f%%)", pp->lr, pp->boot_lo,
                         pp->boot_hi, 100 * pp->boot_same_split);
            else
                snprintf(a, sizeof a, "%.3g", pp->lr);
            row(f, b, a, "");
            snprintf(b, sizeof b, "  %s%s", gs_paper(GS_PAPER_SEPARATION)->label, tag);
            snprintf(a, sizeof a, "%.3g", pp->separation);
            row(f, b, a, "");
            if (pp->null_draws > 0) {
                size_t len = 0;
                a[0] = 0;
                for (int fam = 0; fam < GS_NULL_COUNT && len < sizeof a; fam++)
                    len += (size_t)snprintf(a + len, sizeof a - len, "%s%s %.3f+-%.3f", fam ? ", " : "",
                                            gs_null_family_name((gs_null_family)fam), pp->null_p[fam], pp->null_se[fam]);
                snprintf(b, sizeof b, "  null p +- MC SE%s", tag);
                row(f, b, a, "");
                snprintf(b, sizeof b, "  pool verdict%s", tag);
                if (pp->power_sets > 0)
                    snprintf(a, sizeof a, "%s (power %.2f on the paper's pools, %.2f on these)",
                             gs_pool_verdict_name(pp->verdict), pp->power_paper, pp->power_fitted);
                else
                    snprintf(a, sizeof a, "%s", gs_pool_verdict_name(pp->verdict));
                row(f, b, a, "");
            }
        }
    }
}

void gs_report_probe(FILE *f, const gs_probe *p) {
    char a[512], b[160];
    {
        section(f, "4. Probe horizon (beyond the paper)");
        for (int i = 0; i < p->n_lags; i++) {
            if (!p->measured[i]) continue;
            snprintf(b, sizeof b, "lag %d top-1 accuracy", p->lags[i]);
            snprintf(a, sizeof a, "%.4f vs baseline %.4f (%s)", p->acc[i], p->baseline[i], p->pass[i] ? "pass" : "fail");
            row(f, b, a, "");
        }
        snprintf(a, sizeof a, "%s%d", p->censored ? ">= " : "", p->horizon);
        paper_row(f, GS_PAPER_PROBE_HORIZON, a);
        fprintf(f, "  rule: %s\n", p->rule);
    }
}

void gs_report_print(FILE *f, const gs_report *r) {
    if (r->geometry) gs_report_geometry(f, r->geometry);
    if (r->default_dir) gs_report_default_dir(f, r->default_dir, r->token_text, r->token_ctx);
    if (r->horizons) gs_report_horizons(f, r->horizons);
    if (r->retention) gs_report_retention(f, r->retention);
    if (r->probe) gs_report_probe(f, r->probe);
}
