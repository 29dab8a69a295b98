#include "analyses/retention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/stats.h"
#include "base/error.h"

#define ALPHA_FLOOR 1e-30

void gs_retention_opts_default(gs_retention_opts *o) {
    o->per_decade = 16;
    o->null_draws = 2000;
    o->seed = 1;
}

void gs_retention_free(gs_retention *r) {
    free(r->lags); free(r->R); free(r->half_life); free(r->censored); free(r->extrapolated);
    free(r->mean_log_alpha); free(r->mean_alpha); free(r->mean_beta); free(r->pool);
    memset(r, 0, sizeof *r);
}

typedef struct { double v; int i; } xi_pair;
static int cmp_xi(const void *a, const void *b) {
    const xi_pair *x = a, *y = b;
    if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
    return (x->i > y->i) - (x->i < y->i);
}

double gs_two_means(const double *x, int n, int *pool, double mean[2], double sse[2], double *within_std) {
    xi_pair *p = malloc((size_t)n * sizeof *p);
    if (!p || n < 2) { free(p); return 0.0; }
    for (int i = 0; i < n; i++) { p[i].v = x[i]; p[i].i = i; }
    qsort(p, (size_t)n, sizeof *p, cmp_xi);
    int best = 1;
    double best_sse = INFINITY;
    for (int c = 1; c < n; c++) {
        double s = 0;
        for (int part = 0; part < 2; part++) {
            int a = part ? c : 0, b = part ? n : c;
            double m = 0;
            for (int i = a; i < b; i++) m += p[i].v;
            m /= (b - a);
            for (int i = a; i < b; i++) s += (p[i].v - m) * (p[i].v - m);
        }
        if (s < best_sse) { best_sse = s; best = c; }
    }
    double mm[2] = {0, 0}, ss[2] = {0, 0};
    for (int i = 0; i < n; i++) mm[i >= best] += p[i].v;
    mm[0] /= best;
    mm[1] /= (n - best);
    for (int i = 0; i < n; i++) ss[i >= best] += (p[i].v - mm[i >= best]) * (p[i].v - mm[i >= best]);
    if (pool)
        for (int i = 0; i < n; i++) pool[p[i].i] = i >= best;
    free(p);
    if (mean) { mean[0] = mm[0]; mean[1] = mm[1]; }
    if (sse) { sse[0] = ss[0]; sse[1] = ss[1]; }
    double sw = n > 2 ? sqrt((ss[0] + ss[1]) / (n - 2)) : 0.0;
    if (sw < GS_POOL_STD_FLOOR) sw = GS_POOL_STD_FLOOR;
    if (within_std) *within_std = sw;
    return n > 2 ? (mm[1] - mm[0]) / sw : 0.0;
}

/* R_h(k) from prefix sums P (per window: T+1 entries starting at 0). */
static double retention_at(const double *P, const int64_t *pstart, const int64_t *win_start, int nw, int k,
                           int64_t *pairs) {
    double s = 0;
    int64_t c = 0;
    for (int w = 0; w < nw; w++) {
        int64_t T = win_start[w + 1] - win_start[w];
        const double *Pw = P + pstart[w];
        /* pairs (t, t+k), t = 0..T-1-k: product over tau = t+1..t+k, i.e.
         * P[t+k+1] - P[t+1] with P[i] = sum of the first i logs */
        for (int64_t t = 0; t + k < T; t++) s += exp(Pw[t + k + 1] - Pw[t + 1]);
        c += T - k > 0 ? T - k : 0;
    }
    if (pairs) *pairs = c;
    return c ? s / (double)c : 0.0;
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
    r->R = calloc((size_t)r->n_lags * H, sizeof(double));
    r->half_life = calloc((size_t)H, sizeof(double));
    r->censored = calloc((size_t)H, sizeof(int));
    r->extrapolated = calloc((size_t)H, sizeof(double));
    r->mean_log_alpha = calloc((size_t)H, sizeof(double));
    r->mean_alpha = calloc((size_t)H, sizeof(double));
    r->mean_beta = calloc((size_t)H, sizeof(double));
    r->pool = calloc((size_t)H, sizeof(int));
    double *P = malloc((size_t)(n + n_windows) * sizeof *P);
    int64_t *pstart = malloc((size_t)n_windows * sizeof *pstart);
    double *logk = malloc((size_t)H * sizeof *logk);
    if (!r->R || !r->half_life || !r->censored || !r->extrapolated || !r->mean_log_alpha || !r->mean_alpha ||
        !r->mean_beta || !r->pool || !P || !pstart || !logk) {
        free(P); free(pstart); free(logk);
        gs_retention_free(r);
        return gs_fail("out of memory");
    }
    for (int w = 0, off = 0; w < n_windows; w++) {
        pstart[w] = off;
        off += (int)(win_start[w + 1] - win_start[w]) + 1;
    }
    for (int h = 0; h < H; h++) {
        double sl = 0, sa = 0, sb = 0;
        for (int w = 0; w < n_windows; w++) {
            double *Pw = P + pstart[w];
            Pw[0] = 0;
            int64_t T = win_start[w + 1] - win_start[w];
            for (int64_t t = 0; t < T; t++) {
                int64_t i = win_start[w] + t;
                double a = alpha[i * H + h];
                double la = log(a > ALPHA_FLOOR ? a : ALPHA_FLOOR);
                Pw[t + 1] = Pw[t] + la;
                sl += la;
                sa += a;
                if (beta) sb += beta[i * H + h];
            }
        }
        r->mean_log_alpha[h] = sl / (double)n;
        r->mean_alpha[h] = sa / (double)n;
        r->mean_beta[h] = sb / (double)n;
        r->extrapolated[h] = -r->mean_log_alpha[h] > 1.0 / GS_HALF_LIFE_CAP ? 1.0 / -r->mean_log_alpha[h] : GS_HALF_LIFE_CAP;
        for (int li = 0; li < r->n_lags; li++)
            r->R[(int64_t)li * H + h] = retention_at(P, pstart, win_start, n_windows, r->lags[li], NULL);
        /* integer scan for the first k with R <= 1/e */
        double prev = 1.0;
        int found = 0;
        for (int k = 1; k <= r->max_lag && !found; k++) {
            double R = retention_at(P, pstart, win_start, n_windows, k, NULL);
            if (R <= 1.0 / M_E) {
                double f;
                if (R > 0) f = (log(prev) - (-1.0)) / (log(prev) - log(R)); /* linear in log R */
                else f = (prev - 1.0 / M_E) / prev;                        /* underflow: linear in R */
                r->half_life[h] = (k - 1) + f;
                found = 1;
            }
            prev = R;
        }
        if (!found) {
            r->censored[h] = 1;
            r->half_life[h] = r->extrapolated[h];
        }
        logk[h] = log(r->half_life[h]);
    }
    r->has_beta = beta != NULL;
    free(P);
    free(pstart);

    /* ---- pools ---- */
    if (H >= 2) {
        double mean[2], sse[2];
        r->separation = gs_two_means(logk, H, r->pool, mean, sse, &r->within_std);
        r->pools_valid = 1;
        r->score_valid = H >= 3;
        r->pool_mean_log[0] = mean[0];
        r->pool_mean_log[1] = mean[1];
        r->gap = mean[1] - mean[0];
        for (int p = 0; p < 2; p++) { r->pool_min[p] = INFINITY; r->pool_max[p] = 0; }
        for (int h = 0; h < H; h++) {
            int p = r->pool[h];
            r->pool_n[p]++;
            if (r->half_life[h] < r->pool_min[p]) r->pool_min[p] = r->half_life[h];
            if (r->half_life[h] > r->pool_max[p]) r->pool_max[p] = r->half_life[h];
        }
        r->null_p = 1.0;
        if (r->score_valid && o->null_draws > 0) {
            gs_rng rng = {o->seed};
            double *z = malloc((size_t)H * sizeof *z);
            if (!z) { free(logk); gs_retention_free(r); return gs_fail("out of memory"); }
            int ge = 0;
            for (int b = 0; b < o->null_draws; b++) {
                for (int h = 0; h < H; h++) z[h] = gs_rng_normal(&rng);
                if (gs_two_means(z, H, NULL, NULL, NULL, NULL) >= r->separation) ge++;
            }
            free(z);
            r->null_p = (1.0 + ge) / (1.0 + o->null_draws);
        }
    }
    free(logk);
    return 0;
}
