#include "analyses/state/retention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
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

static double extrapolation_of(double sum_log, double n);

static double extrapolation(const head_ctx *hc, const int *c) {
    double sl = 0, n = 0;
    for (int w = 0; w < hc->nw; w++) {
        double cw = c ? c[w] : 1.0;
        sl += cw * hc->lsum[w];
        n += cw * (double)hc->T[w];
    }
    return extrapolation_of(sl, n);
}

/* R at lag k, 1 when some pair reaches k, 0 when none does, -1 on error */
typedef int (*R_at_fn)(void *ctx, int k, double *R);

/* the 1/e time: integer scan for the first k with R <= 1/e, interpolated
 * linearly in log R between k - 1 and k (R(0) = 1); not reached: censored,
 * and the extrapolation */
static int e_fold_scan(R_at_fn R_at, void *ctx, int max_k, double extrap, double *k_out, int *censored) {
    double prev = 1.0;
    for (int k = 1; k <= max_k; k++) {
        double R;
        int rc = R_at(ctx, k, &R);
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
    *k_out = extrap;
    return 0;
}

typedef struct { head_ctx *hc; gs_ret_estimator e; const int *c; } weighted_ctx;
static int weighted_R_at(void *ctx, int k, double *R) {
    weighted_ctx *w = ctx;
    return weighted_R(w->hc, w->e, w->c, k, R);
}

static int e_fold(head_ctx *hc, gs_ret_estimator e, const int *c, double *k_out, int *censored) {
    weighted_ctx w = {hc, e, c};
    return e_fold_scan(weighted_R_at, &w, hc->max_k, extrapolation(hc, c), k_out, censored);
}

static double extrapolation_of(double sum_log, double n) {
    double mla = n > 0 ? sum_log / n : 0.0;
    return -mla > 1.0 / GS_E_FOLD_CAP ? 1.0 / -mla : GS_E_FOLD_CAP;
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

/* the LR of each resample's 1/e times (boot x H), and its split against the whole's */
static int bootstrap_pools(const double *bk, int B, int H, gs_pools *p) {
    double *s = malloc((size_t)B * sizeof *s), *lk = malloc((size_t)H * sizeof *lk);
    int *pool = malloc((size_t)H * sizeof *pool);
    if (!s || !lk || !pool) { free(s); free(lk); free(pool); return gs_fail("out of memory"); }
    int same = 0;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) lk[h] = log(bk[(int64_t)b * H + h]);
        s[b] = gs_pool_lr_split(lk, H, pool);
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
    for (int f = 0; f < GS_NULL_COUNT; f++) {
        int over = 0;
        for (int b = 0; b < B; b++) over += s[b] > p->null_crit95[f];
        p->boot_over_crit95[f] = p->null_draws > 0 ? (double)over / B : NAN;
    }
    free(s); free(lk); free(pool);
    return 0;
}

static int check_decays(const float *alpha, const float *beta, int64_t i0, int64_t i1, int H) {
    for (int64_t i = i0; i < i1; i++)
        for (int h = 0; h < H; h++) {
            float a = alpha[i * H + h];
            if (!(a >= 0.0f && a <= 1.0f))
                return gs_fail("decay alpha = %g at row %lld, head %d is outside [0, 1]: the recorded decays are "
                               "corrupt",
                               (double)a, (long long)i, h);
            if (beta && !isfinite(beta[i * H + h]))
                return gs_fail("write strength beta at row %lld, head %d is not finite", (long long)i, h);
        }
    return 0;
}

/* the resamples: nw windows drawn with replacement, the same for every head
 * (B x nw counts; NULL when B = 0) */
static int *resample_counts(uint64_t seed, int B, int nw) {
    if (!B) return NULL;
    int *counts = calloc((size_t)B * nw, sizeof *counts);
    if (!counts) return NULL;
    gs_rng rng = {gs_hash2(seed, 0xB007u)};
    for (int b = 0; b < B; b++)
        for (int i = 0; i < nw; i++) counts[(int64_t)b * nw + (int)(gs_rng_uniform(&rng) * nw)]++;
    return counts;
}

/* pools under each estimator, against the same null draws, and the bootstrap's
 * spread of the split (bk: B x H 1/e times per estimator) */
static int finish_pools(gs_retention *r, double *const bk[GS_RET_COUNT], int B, const gs_retention_opts *o) {
    const int H = r->H;
    double *null[GS_NULL_COUNT] = {NULL};
    int rc = -1;
    if (H >= 3 && o->null_draws > 0)
        for (int f = 0; f < GS_NULL_COUNT; f++)
            if (!(null[f] = gs_pool_null_scores((gs_null_family)f, H, o->null_draws, o->seed))) goto out;
    for (int e = 0; e < GS_RET_COUNT; e++) {
        gs_pools *p = &r->est[e].pools;
        if (gs_pools_compute(r->est[e].e_fold_time, H, null[0] ? null : NULL, o->null_draws, p) != 0) goto out;
        if (B && p->score_valid && bootstrap_pools(bk[e], B, H, p) != 0) goto out;
        gs_pools_fill_power(p, null[0] ? null : NULL, o->null_draws, o->seed);
    }
    rc = 0;
out:
    for (int f = 0; f < GS_NULL_COUNT; f++) free(null[f]);
    return rc;
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
    if (check_decays(alpha, beta, win_start[0], win_start[n_windows], H)) return -1;
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
    int *counts = resample_counts(o->seed, B, nw);
    double *bk[GS_RET_COUNT] = {NULL, NULL};
    for (int e = 0; e < GS_RET_COUNT && B; e++) ok = ok && (bk[e] = malloc((size_t)B * H * sizeof(double)));
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

    if (finish_pools(r, bk, B, o) != 0) goto fail;
    free(P); free(lsum); free(pstart); free(T); free(counts); free(bk[0]); free(bk[1]);
    return 0;
fail:
    free(hc.tab);
    free(P); free(lsum); free(pstart); free(T); free(counts); free(bk[0]); free(bk[1]);
    gs_retention_free(r);
    return -1;
}

/* ---------- the same as sums over windows (retention.h: gs_retention_sums) ---------- */

void gs_retention_sums_free(gs_retention_sums *s) {
    free(s->lags); free(s->counts); free(s->f64); free(s->i64);
    memset(s, 0, sizeof *s);
}

int gs_retention_sums_init(gs_retention_sums *s, int H, int n_windows, int max_lag, const gs_retention_opts *o) {
    memset(s, 0, sizeof *s);
    gs_retention_opts dflt;
    if (!o) { gs_retention_opts_default(&dflt); o = &dflt; }
    if (H <= 0)
        return gs_fail("retention needs a GPN+M model (memory heads and their decays); this run's model has no "
                       "memory: analyze geometry, default direction or horizons instead");
    if (n_windows < 1) return gs_fail("retention: no windows of decays");
    if (max_lag < 1) return gs_fail("retention needs windows of at least 2 steps (the longest has %d)", max_lag + 1);
    s->H = H;
    s->n_windows = n_windows;
    s->max_lag = max_lag;
    s->B = n_windows >= 2 && o->boot > 0 ? o->boot : 0;
    if (!(s->lags = gs_log_lags(max_lag, o->per_decade > 0 ? o->per_decade : 16, &s->n_lags))) return -1;
    const int64_t L = s->n_lags, K = max_lag, J = s->B + 1;
    /* one block of doubles and one of counts, so the whole is two reductions */
    s->n_f64 = 3 * H + GS_RET_COUNT * (L * H + J * K * H + J * K) + J * H + J;
    s->n_i64 = 2 * L + 2;
    s->f64 = calloc((size_t)s->n_f64, sizeof *s->f64);
    s->i64 = calloc((size_t)s->n_i64, sizeof *s->i64);
    s->counts = resample_counts(o->seed, s->B, n_windows);
    if (!s->f64 || !s->i64 || (s->B && !s->counts)) { gs_retention_sums_free(s); return gs_fail("out of memory"); }
    double *at = s->f64;
    s->sum_log = at, at += H;
    s->sum_alpha = at, at += H;
    s->sum_beta = at, at += H;
    for (int e = 0; e < GS_RET_COUNT; e++) {
        s->grid[e] = at, at += L * H;
        s->num[e] = at, at += J * K * H;
        s->den[e] = at, at += J * K;
    }
    s->ext_log = at, at += J * H;
    s->ext_n = at;
    s->n_pairs = s->i64;
    s->n_starts = s->i64 + L;
    s->n_rows = s->i64 + 2 * L;
    s->has_beta = s->i64 + 2 * L + 1;
    return 0;
}

/* Adds windows first .. first + n_windows - 1 of the whole pass (rows as in
 * gs_retention_run): for every lag k of every head, the all-starts window sum
 * and the from-start product, weighted once and by every resample's count of
 * the window; every lag, since the scan for the 1/e time runs on the
 * added-up curves. */
int gs_retention_accumulate(const float *alpha, const float *beta, const int64_t *win_start, int n_windows, int first,
                            gs_retention_sums *s) {
    const int H = s->H, K = s->max_lag, L = s->n_lags, J = s->B + 1;
    if (first < 0 || first + n_windows > s->n_windows) return gs_fail("retention: windows outside the pass");
    if (n_windows > 0 && check_decays(alpha, beta, win_start[0], win_start[n_windows], H)) return -1;
    double *P = malloc((size_t)(K + 2) * sizeof *P);
    double *c = malloc((size_t)J * sizeof *c);
    if (!P || !c) { free(P); free(c); return gs_fail("out of memory"); }
    for (int w = 0; w < n_windows; w++) {
        const int64_t T = win_start[w + 1] - win_start[w], gw = first + w;
        if (T < 0 || T > K + 1) { free(P); free(c); return gs_fail("retention: window %lld has %lld steps", (long long)gw, (long long)T); }
        c[0] = 1;
        for (int b = 0; b < s->B; b++) c[b + 1] = s->counts[(int64_t)b * s->n_windows + gw];
        *s->n_rows += T;
        if (beta) *s->has_beta = 1;
        for (int li = 0; li < L; li++) {
            s->n_pairs[li] += T > s->lags[li] ? T - s->lags[li] : 0;
            s->n_starts[li] += T > s->lags[li];
        }
        for (int j = 0; j < J; j++) s->ext_n[j] += c[j] * (double)T;
        for (int k = 1; k < T; k++)
            for (int j = 0; j < J; j++) {
                s->den[GS_RET_ALL_STARTS][(int64_t)j * K + k - 1] += c[j] * (double)(T - k);
                s->den[GS_RET_FROM_START][(int64_t)j * K + k - 1] += c[j];
            }
        for (int h = 0; h < H; h++) {
            P[0] = 0;
            for (int64_t t = 0; t < T; t++) {
                int64_t i = win_start[w] + t;
                double a = alpha[i * H + h];
                P[t + 1] = P[t] + log(a > ALPHA_FLOOR ? a : ALPHA_FLOOR);
                s->sum_alpha[h] += a;
                if (beta) s->sum_beta[h] += beta[i * H + h];
            }
            s->sum_log[h] += P[T];
            for (int j = 0; j < J; j++) s->ext_log[(int64_t)j * H + h] += c[j] * P[T];
            int64_t Tw = T;
            head_ctx hc = {.nw = 1, .T = &Tw, .pstart = (const int64_t[]){0}, .P = P};
            for (int li = 0; li < L; li++) {
                int k = s->lags[li];
                if (T <= k) continue;
                s->grid[GS_RET_ALL_STARTS][(int64_t)li * H + h] += window_sum(&hc, 0, k);
                s->grid[GS_RET_FROM_START][(int64_t)li * H + h] += exp(P[k + 1] - P[1]);
            }
            for (int k = 1; k < T; k++) {
                const double all = window_sum(&hc, 0, k), from = exp(P[k + 1] - P[1]);
                for (int j = 0; j < J; j++) {
                    if (c[j] == 0) continue;
                    s->num[GS_RET_ALL_STARTS][((int64_t)j * K + k - 1) * H + h] += c[j] * all;
                    s->num[GS_RET_FROM_START][((int64_t)j * K + k - 1) * H + h] += c[j] * from;
                }
            }
        }
    }
    free(P);
    free(c);
    return 0;
}

typedef struct { const gs_retention_sums *s; int e, j, h; } curve_ctx;
static int curve_R_at(void *ctx, int k, double *R) {
    const curve_ctx *c = ctx;
    const gs_retention_sums *s = c->s;
    double den = s->den[c->e][(int64_t)c->j * s->max_lag + k - 1];
    if (den == 0) return 0;
    *R = s->num[c->e][((int64_t)c->j * s->max_lag + k - 1) * s->H + c->h] / den;
    return 1;
}

int gs_retention_finish(const gs_retention_sums *s, const gs_retention_opts *o, gs_retention *r) {
    memset(r, 0, sizeof *r);
    gs_retention_opts dflt;
    if (!o) { gs_retention_opts_default(&dflt); o = &dflt; }
    const int H = s->H, L = s->n_lags, B = s->B;
    const int64_t n = *s->n_rows;
    r->H = H;
    r->n_windows = s->n_windows;
    r->n_rows = n;
    r->max_lag = s->max_lag;
    r->n_lags = L;
    r->has_beta = *s->has_beta != 0;
    r->lags = malloc((size_t)L * sizeof *r->lags);
    r->n_pairs = malloc((size_t)L * sizeof *r->n_pairs);
    r->n_starts = malloc((size_t)L * sizeof *r->n_starts);
    r->extrapolated = calloc((size_t)H, sizeof(double));
    r->mean_log_alpha = calloc((size_t)H, sizeof(double));
    r->mean_alpha = calloc((size_t)H, sizeof(double));
    r->mean_beta = calloc((size_t)H, sizeof(double));
    int ok = r->lags && r->n_pairs && r->n_starts && r->extrapolated && r->mean_log_alpha && r->mean_alpha && r->mean_beta;
    for (int e = 0; e < GS_RET_COUNT; e++) {
        r->est[e].R = calloc((size_t)L * H, sizeof(double));
        r->est[e].e_fold_time = calloc((size_t)H, sizeof(double));
        r->est[e].censored = calloc((size_t)H, sizeof(int));
        ok = ok && r->est[e].R && r->est[e].e_fold_time && r->est[e].censored;
    }
    double *bk[GS_RET_COUNT] = {NULL, NULL};
    for (int e = 0; e < GS_RET_COUNT && B; e++) ok = ok && (bk[e] = malloc((size_t)B * H * sizeof(double)));
    if (!ok) { gs_fail("out of memory"); goto fail; }
    memcpy(r->lags, s->lags, (size_t)L * sizeof *r->lags);
    memcpy(r->n_pairs, s->n_pairs, (size_t)L * sizeof *r->n_pairs);
    memcpy(r->n_starts, s->n_starts, (size_t)L * sizeof *r->n_starts);
    for (int h = 0; h < H; h++) {
        r->mean_log_alpha[h] = s->sum_log[h] / (double)n;
        r->mean_alpha[h] = s->sum_alpha[h] / (double)n;
        r->mean_beta[h] = s->sum_beta[h] / (double)n;
        r->extrapolated[h] = extrapolation_of(s->ext_log[h], s->ext_n[0]);
    }
    for (int e = 0; e < GS_RET_COUNT; e++) {
        gs_retention_est *es = &r->est[e];
        const int64_t *den = e == GS_RET_ALL_STARTS ? s->n_pairs : s->n_starts;
        for (int li = 0; li < L; li++)
            for (int h = 0; h < H; h++)
                es->R[(int64_t)li * H + h] = den[li] > 0 ? s->grid[e][(int64_t)li * H + h] / (double)den[li] : NAN;
        for (int h = 0; h < H; h++)
            for (int j = 0; j <= B; j++) {
                curve_ctx cc = {s, e, j, h};
                double ext = extrapolation_of(s->ext_log[(int64_t)j * H + h], s->ext_n[j]), *k_out;
                int cens, *cens_out = j ? &cens : &es->censored[h];
                k_out = j ? &bk[e][(int64_t)(j - 1) * H + h] : &es->e_fold_time[h];
                if (e_fold_scan(curve_R_at, &cc, s->max_lag, ext, k_out, cens_out) != 0) goto fail;
            }
    }
    if (finish_pools(r, bk, B, o) != 0) goto fail;
    free(bk[0]); free(bk[1]);
    return 0;
fail:
    free(bk[0]); free(bk[1]);
    gs_retention_free(r);
    return -1;
}
