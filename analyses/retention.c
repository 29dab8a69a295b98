#include "analyses/retention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/stats.h"
#include "base/error.h"

#define ALPHA_FLOOR 1e-30

const char *gs_ret_estimator_name(gs_ret_estimator e) {
    return e == GS_RET_FROM_START ? "from the start (the paper's)" : "all starts (gpnscope's)";
}
const char *gs_ret_estimator_suffix(gs_ret_estimator e) { return e == GS_RET_FROM_START ? "_from_start" : ""; }

void gs_retention_opts_default(gs_retention_opts *o) {
    o->per_decade = 16;
    o->null_draws = GS_POOL_NULL_DRAWS;
    o->boot = 200;
    o->seed = 1;
}

void gs_retention_free(gs_retention *r) {
    free(r->lags); free(r->n_pairs); free(r->n_starts); free(r->extrapolated);
    free(r->mean_log_alpha); free(r->mean_alpha); free(r->mean_beta);
    for (int e = 0; e < GS_RET_COUNT; e++) {
        free(r->est[e].R); free(r->est[e].e_fold_time); free(r->est[e].censored);
        gs_pools_free(&r->est[e].pools);
    }
    memset(r, 0, sizeof *r);
}

/* One head's decays: per-window prefix sums P of log alpha (T+1 entries from
 * 0), and, filled as far as needed, the all-starts window sums
 * tab[(k-1) nw + w] = sum_t exp(P[t+k+1] - P[t+1]), so a resample of the
 * windows costs O(windows) per lag instead of O(rows). */
typedef struct {
    int nw, max_k;
    const int64_t *T, *pstart;
    const double *P, *lsum; /* lsum[w]: sum of window w's logs */
    double *tab;
    int tab_k;
} head_ctx;

static double window_sum(const head_ctx *hc, int w, int k) {
    const double *Pw = hc->P + hc->pstart[w];
    double s = 0;
    for (int64_t t = 0; t + k < hc->T[w]; t++) s += exp(Pw[t + k + 1] - Pw[t + 1]);
    return s;
}

static int ensure(head_ctx *hc, int k) {
    if (k <= hc->tab_k) return 0;
    int nk = hc->tab_k * 2 > k ? hc->tab_k * 2 : k;
    if (nk < 16) nk = 16;
    if (nk > hc->max_k) nk = hc->max_k;
    double *t = realloc(hc->tab, (size_t)nk * hc->nw * sizeof *t);
    if (!t) return gs_fail("out of memory for retention sums");
    hc->tab = t;
    for (int kk = hc->tab_k + 1; kk <= nk; kk++)
        for (int w = 0; w < hc->nw; w++) t[(int64_t)(kk - 1) * hc->nw + w] = window_sum(hc, w, kk);
    hc->tab_k = nk;
    return 0;
}

/* R(k) with window weights c (NULL: every window once). 1 when some pair
 * reaches k, 0 when none does, -1 on error. */
static int weighted_R(head_ctx *hc, gs_ret_estimator e, const int *c, int k, double *R) {
    double num = 0, den = 0;
    if (e == GS_RET_ALL_STARTS && ensure(hc, k) != 0) return -1;
    for (int w = 0; w < hc->nw; w++) {
        double cw = c ? c[w] : 1.0;
        if (cw == 0 || hc->T[w] <= k) continue;
        if (e == GS_RET_ALL_STARTS) {
            num += cw * hc->tab[(int64_t)(k - 1) * hc->nw + w];
            den += cw * (double)(hc->T[w] - k);
        } else {
            const double *Pw = hc->P + hc->pstart[w];
            num += cw * exp(Pw[k + 1] - Pw[1]);
            den += cw;
        }
    }
    if (den == 0) return 0;
    *R = num / den;
    return 1;
}

static double extrapolation(const head_ctx *hc, const int *c) {
    double sl = 0, n = 0;
    for (int w = 0; w < hc->nw; w++) {
        double cw = c ? c[w] : 1.0;
        sl += cw * hc->lsum[w];
        n += cw * (double)hc->T[w];
    }
    double mla = n > 0 ? sl / n : 0.0;
    return -mla > 1.0 / GS_E_FOLD_CAP ? 1.0 / -mla : GS_E_FOLD_CAP;
}

/* the 1/e time: integer scan for the first k with R <= 1/e, interpolated
 * linearly in log R between k - 1 and k (R(0) = 1) */
static int e_fold(head_ctx *hc, gs_ret_estimator e, const int *c, double *k_out, int *censored) {
    double prev = 1.0;
    for (int k = 1; k <= hc->max_k; k++) {
        double R;
        int rc = weighted_R(hc, e, c, k, &R);
        if (rc < 0) return -1;
        if (rc == 0) break;
        if (R <= 1.0 / M_E) {
            double f;
            if (R > 0) f = (log(prev) - (-1.0)) / (log(prev) - log(R)); /* linear in log R */
            else f = (prev - 1.0 / M_E) / prev;                        /* underflow: linear in R */
            *k_out = (k - 1) + f;
            *censored = 0;
            return 0;
        }
        prev = R;
    }
    *censored = 1;
    *k_out = extrapolation(hc, c);
    return 0;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double quantile(const double *sorted, int n, double q) {
    double pos = q * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1) return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

/* the separation of each resample's 1/e times (boot x H) against the split of the whole */
static int bootstrap_pools(const double *bk, int B, int H, gs_pools *p) {
    double *s = malloc((size_t)B * sizeof *s), *lk = malloc((size_t)H * sizeof *lk);
    int *pool = malloc((size_t)H * sizeof *pool);
    if (!s || !lk || !pool) { free(s); free(lk); free(pool); return gs_fail("out of memory"); }
    int same = 0;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) lk[h] = log(bk[(int64_t)b * H + h]);
        s[b] = gs_two_means(lk, H, pool, NULL, NULL, NULL);
        int eq = 1;
        for (int h = 0; h < H; h++) eq &= pool[h] == p->pool[h];
        same += eq;
    }
    qsort(s, (size_t)B, sizeof *s, cmp_dbl);
    p->boot_n = B;
    p->boot_lo = quantile(s, B, 0.025);
    p->boot_median = quantile(s, B, 0.5);
    p->boot_hi = quantile(s, B, 0.975);
    p->boot_same_split = (double)same / B;
    free(s); free(lk); free(pool);
    return 0;
}

int gs_retention_run(const float *alpha, const float *beta, const int64_t *win_start, int n_windows, int H,
                     const gs_retention_opts *o, gs_retention *r) {
    memset(r, 0, sizeof *r);
    gs_retention_opts dflt;
    if (!o) { gs_retention_opts_default(&dflt); o = &dflt; }
    if (H <= 0 || !alpha)
        return gs_fail("retention needs a GPN+M model (memory heads and their decays); this run's model has no "
                       "memory: analyze geometry, default direction or horizons instead");
    if (n_windows < 1 || !win_start) return gs_fail("retention: no windows of decays");
    int64_t n = win_start[n_windows] - win_start[0];
    int maxT = 0;
    for (int w = 0; w < n_windows; w++) {
        int64_t T = win_start[w + 1] - win_start[w];
        if (T < 0) return gs_fail("retention: window %d has a negative length", w);
        if (T > maxT) maxT = (int)T;
    }
    if (maxT < 2)
        return gs_fail("retention needs windows of at least 2 steps (the longest has %d)", maxT);
    for (int64_t i = win_start[0]; i < win_start[n_windows]; i++)
        for (int h = 0; h < H; h++) {
            float a = alpha[i * H + h];
            if (!(a >= 0.0f && a <= 1.0f))
                return gs_fail("decay alpha = %g at row %lld, head %d is outside [0, 1]: the recorded decays are "
                               "corrupt",
                               (double)a, (long long)i, h);
            if (beta && !isfinite(beta[i * H + h]))
                return gs_fail("write strength beta at row %lld, head %d is not finite", (long long)i, h);
        }
    r->H = H;
    r->n_windows = n_windows;
    r->n_rows = n;
    r->max_lag = maxT - 1;
    r->lags = gs_log_lags(r->max_lag, o->per_decade > 0 ? o->per_decade : 16, &r->n_lags);
    if (!r->lags) return -1;
    const int L = r->n_lags, nw = n_windows;
    const int B = nw >= 2 && o->boot > 0 ? o->boot : 0;
    r->n_pairs = calloc((size_t)L, sizeof *r->n_pairs);
    r->n_starts = calloc((size_t)L, sizeof *r->n_starts);
    r->extrapolated = calloc((size_t)H, sizeof(double));
    r->mean_log_alpha = calloc((size_t)H, sizeof(double));
    r->mean_alpha = calloc((size_t)H, sizeof(double));
    r->mean_beta = calloc((size_t)H, sizeof(double));
    int ok = r->n_pairs && r->n_starts && r->extrapolated && r->mean_log_alpha && r->mean_alpha && r->mean_beta;
    for (int e = 0; e < GS_RET_COUNT; e++) {
        r->est[e].R = calloc((size_t)L * H, sizeof(double));
        r->est[e].e_fold_time = calloc((size_t)H, sizeof(double));
        r->est[e].censored = calloc((size_t)H, sizeof(int));
        ok = ok && r->est[e].R && r->est[e].e_fold_time && r->est[e].censored;
    }
    double *P = malloc((size_t)(n + nw) * sizeof *P), *lsum = malloc((size_t)nw * sizeof *lsum);
    int64_t *pstart = malloc((size_t)nw * sizeof *pstart), *T = malloc((size_t)nw * sizeof *T);
    int *counts = B ? calloc((size_t)B * nw, sizeof *counts) : NULL;
    double *bk[GS_RET_COUNT] = {NULL, NULL};
    for (int e = 0; e < GS_RET_COUNT && B; e++) ok = ok && (bk[e] = malloc((size_t)B * H * sizeof(double)));
    double *null[GS_NULL_COUNT] = {NULL};
    head_ctx hc = {0};
    if (!ok || !P || !lsum || !pstart || !T || (B && !counts)) { gs_fail("out of memory"); goto fail; }
    for (int w = 0, off = 0; w < nw; w++) {
        pstart[w] = off;
        T[w] = win_start[w + 1] - win_start[w];
        off += (int)T[w] + 1;
    }
    for (int li = 0; li < L; li++)
        for (int w = 0; w < nw; w++) {
            r->n_pairs[li] += T[w] > r->lags[li] ? T[w] - r->lags[li] : 0;
            r->n_starts[li] += T[w] > r->lags[li];
        }
    /* the resamples: nw windows drawn with replacement, the same for every head */
    {
        gs_rng rng = {gs_hash2(o->seed, 0xB007u)};
        for (int b = 0; b < B; b++)
            for (int i = 0; i < nw; i++) counts[(int64_t)b * nw + (int)(gs_rng_uniform(&rng) * nw)]++;
    }
    hc.nw = nw;
    hc.max_k = r->max_lag;
    hc.T = T;
    hc.pstart = pstart;
    hc.P = P;
    hc.lsum = lsum;
    for (int h = 0; h < H; h++) {
        double sl = 0, sa = 0, sb = 0;
        for (int w = 0; w < nw; w++) {
            double *Pw = P + pstart[w];
            Pw[0] = 0;
            for (int64_t t = 0; t < T[w]; t++) {
                int64_t i = win_start[w] + t;
                double a = alpha[i * H + h];
                double la = log(a > ALPHA_FLOOR ? a : ALPHA_FLOOR);
                Pw[t + 1] = Pw[t] + la;
                sa += a;
                if (beta) sb += beta[i * H + h];
            }
            lsum[w] = Pw[T[w]];
            sl += lsum[w];
        }
        r->mean_log_alpha[h] = sl / (double)n;
        r->mean_alpha[h] = sa / (double)n;
        r->mean_beta[h] = sb / (double)n;
        r->extrapolated[h] = extrapolation(&hc, NULL);
        hc.tab_k = 0;
        for (int e = 0; e < GS_RET_COUNT; e++) {
            gs_retention_est *es = &r->est[e];
            for (int li = 0; li < L; li++) {
                int k = r->lags[li];
                double R = NAN;
                if (e == GS_RET_ALL_STARTS && k > hc.tab_k) { /* beyond the sums kept: one pass, not a table */
                    double s = 0;
                    for (int w = 0; w < nw; w++) s += window_sum(&hc, w, k);
                    if (r->n_pairs[li] > 0) R = s / (double)r->n_pairs[li];
                } else if (weighted_R(&hc, (gs_ret_estimator)e, NULL, k, &R) < 0) {
                    goto fail;
                }
                es->R[(int64_t)li * H + h] = R;
            }
            if (e_fold(&hc, (gs_ret_estimator)e, NULL, &es->e_fold_time[h], &es->censored[h]) != 0) goto fail;
            for (int b = 0; b < B; b++) {
                int cens;
                if (e_fold(&hc, (gs_ret_estimator)e, counts + (int64_t)b * nw, &bk[e][(int64_t)b * H + h], &cens) != 0)
                    goto fail;
            }
        }
    }
    free(hc.tab);
    hc.tab = NULL;
    r->has_beta = beta != NULL;

    /* ---- pools under each estimator, against the same null draws ---- */
    if (H >= 3 && o->null_draws > 0)
        for (int f = 0; f < GS_NULL_COUNT; f++)
            if (!(null[f] = gs_pool_null_scores((gs_null_family)f, H, o->null_draws, o->seed))) goto fail;
    for (int e = 0; e < GS_RET_COUNT; e++) {
        gs_pools *p = &r->est[e].pools;
        if (gs_pools_compute(r->est[e].e_fold_time, H, null[0] ? null : NULL, o->null_draws, p) != 0) goto fail;
        if (B && p->score_valid && bootstrap_pools(bk[e], B, H, p) != 0) goto fail;
    }
    for (int f = 0; f < GS_NULL_COUNT; f++) free(null[f]);
    free(P); free(lsum); free(pstart); free(T); free(counts); free(bk[0]); free(bk[1]);
    return 0;
fail:
    for (int f = 0; f < GS_NULL_COUNT; f++) free(null[f]);
    free(hc.tab);
    free(P); free(lsum); free(pstart); free(T); free(counts); free(bk[0]); free(bk[1]);
    gs_retention_free(r);
    return -1;
}
