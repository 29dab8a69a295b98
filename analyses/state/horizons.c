#include "analyses/state/horizons.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
#include "base/error.h"

void gs_horizon_opts_default(gs_horizon_opts *o) {
    o->max_lag = 0;
    o->per_decade = 16;
    o->per_window = 0;
}

int gs_horizons_nearest_enough(const gs_horizons *h, const int64_t *n_pairs, double k) {
    int best = -1;
    double bd = 0;
    for (int i = 0; i < h->n_lags; i++) {
        if (n_pairs[i] < GS_HORIZON_MIN_PAIRS) continue;
        double dd = fabs(log((double)h->lags[i]) - log(k));
        if (best < 0 || dd < bd) { best = i; bd = dd; }
    }
    return best;
}

void gs_horizons_free(gs_horizons *h) {
    free(h->lags); free(h->raw); free(h->centered); free(h->n_raw); free(h->n_centered);
    free(h->win_raw); free(h->win_centered); free(h->win_n_raw); free(h->win_n_centered); free(h->win_id);
    memset(h, 0, sizeof *h);
}

int gs_log_crossing(const int *lags, const double *y, const int64_t *n_pairs, int n, double thr, int strict,
                    double *k_out) {
    int prev = -1, last = -1;
    for (int j = 0; j < n; j++) {
        if (n_pairs && n_pairs[j] == 0) continue;
        last = j;
        int below = strict ? y[j] < thr : y[j] <= thr;
        if (below) {
            if (prev < 0) { *k_out = lags[j]; return 1; }
            double f = (y[prev] - thr) / (y[prev] - y[j]);
            double lk = log((double)lags[prev]) + f * (log((double)lags[j]) - log((double)lags[prev]));
            *k_out = exp(lk);
            return 1;
        }
        prev = j;
    }
    *k_out = last >= 0 ? lags[last] : 0;
    return 0;
}

/* Unit rows (double) of a window, zero for a zero row; returns valid flags. */
static void unit_rows(double *u, unsigned char *valid, int64_t k, int d) {
    for (int64_t t = 0; t < k; t++) {
        double *r = u + t * d;
        double nrm = cblas_dnrm2(d, r, 1);
        valid[t] = nrm > 0;
        if (nrm > 0) cblas_dscal(d, 1.0 / nrm, r, 1);
    }
}

static double long_dot(const double *a, const double *b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i += 1 << 30) s += cblas_ddot((int)(n - i < (1 << 30) ? n - i : 1 << 30), a + i, 1, b + i, 1);
    return s;
}

/* Add sum over pairs (t, t+lag) of u_t . u_{t+lag} and the pair counts. */
static void lag_sums(const double *u, const unsigned char *valid, const int32_t *pos, const int32_t *row_of, int64_t k,
                     int d, const int *lags, int n_lags, double *sum, int64_t *cnt) {
    int32_t p0 = pos[0], span = pos[k - 1] - pos[0];
    int contiguous = span == k - 1;
    for (int li = 0; li < n_lags; li++) {
        int lag = lags[li];
        if (lag > span) break;
        if (contiguous) {
            /* every row pairs with the row `lag` further: one long dot product */
            sum[li] += long_dot(u, u + (int64_t)lag * d, (k - lag) * d);
            for (int64_t t = 0; t + lag < k; t++) cnt[li] += valid[t] && valid[t + lag];
        } else {
            for (int64_t t = 0; t < k; t++) {
                int32_t q = pos[t] + lag - p0;
                if (q > span) break;
                int32_t r = row_of[q];
                if (r < 0 || !valid[t] || !valid[r]) continue;
                sum[li] += cblas_ddot(d, u + t * d, 1, u + (int64_t)r * d, 1);
                cnt[li]++;
            }
        }
    }
}

/* one more zeroed row of per-window sums (grown by doubling) */
static int keep_window(gs_horizons *h, int L, int64_t window) {
    const int64_t w = h->n_windows;
    if ((w & (w - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to 2w (at least 1) */
        const size_t rows = (size_t)(w ? 2 * w : 1) * (size_t)L;
        double *a = realloc(h->win_raw, rows * sizeof *a);
        if (a) h->win_raw = a;
        double *b = realloc(h->win_centered, rows * sizeof *b);
        if (b) h->win_centered = b;
        int64_t *c = realloc(h->win_n_raw, rows * sizeof *c);
        if (c) h->win_n_raw = c;
        int64_t *e = realloc(h->win_n_centered, rows * sizeof *e);
        if (e) h->win_n_centered = e;
        int64_t *id = realloc(h->win_id, (size_t)(w ? 2 * w : 1) * sizeof *id);
        if (id) h->win_id = id;
        if (!a || !b || !c || !e || !id) return gs_fail("out of memory for the per-window lag sums");
    }
    h->win_id[w] = window;
    const size_t at = (size_t)w * (size_t)L;
    memset(h->win_raw + at, 0, (size_t)L * sizeof *h->win_raw);
    memset(h->win_centered + at, 0, (size_t)L * sizeof *h->win_centered);
    memset(h->win_n_raw + at, 0, (size_t)L * sizeof *h->win_n_raw);
    memset(h->win_n_centered + at, 0, (size_t)L * sizeof *h->win_n_centered);
    h->n_windows = w + 1;
    return 0;
}

static int max_span_pass(gs_state_source *src, int32_t *span) {
    gs_window_reader *wr = gs_window_reader_new(src);
    if (!wr) return -1;
    *span = 0;
    for (;;) {
        gs_window cur;
        int64_t k = gs_window_reader_read(wr, &cur);
        if (k < 0) { gs_window_reader_free(wr); return -1; }
        if (k == 0) break;
        if (cur.pos[k - 1] - cur.pos[0] > *span) *span = cur.pos[k - 1] - cur.pos[0];
    }
    gs_window_reader_free(wr);
    return 0;
}

int gs_horizons_accumulate(gs_state_source *src, int max_lag, const gs_horizon_opts *o, gs_horizons *h) {
    memset(h, 0, sizeof *h);
    gs_horizon_opts dflt;
    if (!o) { gs_horizon_opts_default(&dflt); o = &dflt; }
    if (!src || src->d < 1) return gs_fail("horizons: state source without rows");
    const int d = src->d;
    if (max_lag < 1)
        return gs_fail("horizons need pairs of states of one window at lag 1 or more: every window has a single "
                       "state (record longer windows)");
    h->lags = gs_log_lags(max_lag, o->per_decade > 0 ? o->per_decade : 16, &h->n_lags);
    if (!h->lags) return -1;
    const int L = h->n_lags;
    h->raw = calloc((size_t)L, sizeof(double));
    h->centered = calloc((size_t)L, sizeof(double));
    h->n_raw = calloc((size_t)L, sizeof(int64_t));
    h->n_centered = calloc((size_t)L, sizeof(int64_t));
    double *u = NULL, *mean = malloc((size_t)d * sizeof *mean);
    unsigned char *valid = NULL;
    int32_t *row_of = NULL;
    int64_t cap = 0, span_cap = 0;
    gs_window_reader *wr = NULL;
    if (!h->raw || !h->centered || !h->n_raw || !h->n_centered || !mean) { gs_fail("out of memory"); goto fail; }
    wr = gs_window_reader_new(src);
    if (!wr) goto fail;
    for (;;) {
        gs_window cur;
        int64_t k = gs_window_reader_read(wr, &cur);
        if (k < 0) goto fail;
        if (k == 0) break;
        if (k > cap) {
            free(u); free(valid);
            u = malloc((size_t)(k * d) * sizeof *u);
            valid = malloc((size_t)k);
            if (!u || !valid) { gs_fail("out of memory for a window of %lld states", (long long)k); goto fail; }
            cap = k;
        }
        int64_t span = cur.pos[k - 1] - cur.pos[0];
        if (span + 1 > span_cap) {
            free(row_of);
            row_of = malloc((size_t)(span + 1) * sizeof *row_of);
            if (!row_of) { gs_fail("out of memory"); goto fail; }
            span_cap = span + 1;
        }
        for (int64_t q = 0; q <= span; q++) row_of[q] = -1;
        for (int64_t t = 0; t < k; t++) row_of[cur.pos[t] - cur.pos[0]] = (int32_t)t;

        /* each window's sums go to its own row when kept, else straight to the pooled ones */
        double *s_raw = h->raw, *s_cen = h->centered;
        int64_t *c_raw = h->n_raw, *c_cen = h->n_centered;
        if (o->per_window) {
            if (keep_window(h, L, cur.window) != 0) goto fail;
            const int64_t at = (h->n_windows - 1) * L;
            s_raw = h->win_raw + at; s_cen = h->win_centered + at;
            c_raw = h->win_n_raw + at; c_cen = h->win_n_centered + at;
        }
        /* raw */
        for (int64_t i = 0; i < k * d; i++) u[i] = cur.rows[i];
        unit_rows(u, valid, k, d);
        for (int64_t t = 0; t < k; t++) h->n_zero_states += !valid[t];
        lag_sums(u, valid, cur.pos, row_of, k, d, h->lags, L, s_raw, c_raw);

        /* centered on the window's own mean */
        memset(mean, 0, (size_t)d * sizeof *mean);
        for (int64_t t = 0; t < k; t++)
            for (int j = 0; j < d; j++) mean[j] += cur.rows[t * d + j];
        for (int j = 0; j < d; j++) mean[j] /= (double)k;
        for (int64_t t = 0; t < k; t++)
            for (int j = 0; j < d; j++) u[t * d + j] = (double)cur.rows[t * d + j] - mean[j];
        unit_rows(u, valid, k, d);
        lag_sums(u, valid, cur.pos, row_of, k, d, h->lags, L, s_cen, c_cen);
        if (o->per_window)
            for (int i = 0; i < L; i++) {
                h->raw[i] += s_raw[i]; h->centered[i] += s_cen[i];
                h->n_raw[i] += c_raw[i]; h->n_centered[i] += c_cen[i];
            }
    }
    gs_window_reader_free(wr);
    wr = NULL;
    free(u); free(valid); free(row_of); free(mean);
    return 0;
fail:
    gs_window_reader_free(wr);
    free(u); free(valid); free(row_of); free(mean);
    gs_horizons_free(h);
    return -1;
}

int gs_horizons_max_lag(gs_state_source *src, const gs_horizon_opts *o, int *max_lag) {
    gs_horizon_opts dflt;
    if (!o) { gs_horizon_opts_default(&dflt); o = &dflt; }
    if (!src || src->d < 1) return gs_fail("horizons: state source without rows");
    *max_lag = o->max_lag;
    if (*max_lag <= 0) {
        int32_t span = src->max_span_hint;
        if (span <= 0 && max_span_pass(src, &span) != 0) return -1;
        *max_lag = span;
    }
    return 0;
}

int gs_horizons_run(gs_state_source *src, const gs_horizon_opts *o, gs_horizons *h) {
    int max_lag;
    memset(h, 0, sizeof *h);
    if (gs_horizons_max_lag(src, o, &max_lag) || gs_horizons_accumulate(src, max_lag, o, h)) return -1;
    return gs_horizons_finish(h);
}

int gs_horizons_finish(gs_horizons *h) {
    const int L = h->n_lags;

    /* undefined is not zero: a lag without pairs has no value */
    for (int i = 0; i < L; i++) {
        h->raw[i] = h->n_raw[i] ? h->raw[i] / (double)h->n_raw[i] : NAN;
        h->centered[i] = h->n_centered[i] ? h->centered[i] / (double)h->n_centered[i] : NAN;
    }
    /* c_1: the first lag with pairs (lag 1 unless states were kept at a stride) */
    int first = -1;
    for (int i = 0; i < L && first < 0; i++)
        if (h->n_centered[i] > 0) first = i;
    int64_t any_raw = 0;
    for (int i = 0; i < L; i++) any_raw += h->n_raw[i];
    if (any_raw == 0) {
        gs_fail("horizons: no pair of non-zero states at any lag in any window");
        gs_horizons_free(h);
        return -1;
    }
    if (first < 0) {
        gs_fail("horizons: after subtracting each window's mean no state is left with a direction (every window is "
                "constant), so the centered curve is undefined");
        gs_horizons_free(h);
        return -1;
    }
    h->c1_lag = h->lags[first];
    h->c1 = h->centered[first];
    h->h_e_valid = h->c1 > 0;
    if (h->h_e_valid) {
        h->h_e_censored = !gs_log_crossing(h->lags, h->centered, h->n_centered, L, h->c1 / M_E, 0, &h->h_e);
    }
    h->h_002_censored = !gs_log_crossing(h->lags, h->centered, h->n_centered, L, 0.02, 1, &h->h_002);
    h->c1_lo = h->c1_hi = h->h_002_lo = h->h_002_hi = NAN;
    return 0;
}

void gs_horizons_weighted_centered(const gs_horizons *h, const double *wt, double *cen, int64_t *ncen) {
    const int L = h->n_lags;
    for (int i = 0; i < L; i++) {
        double s = 0, n = 0;
        for (int64_t w = 0; w < h->n_windows; w++) {
            if (!wt[w]) continue;
            s += wt[w] * h->win_centered[w * L + i];
            n += wt[w] * (double)h->win_n_centered[w * L + i];
        }
        ncen[i] = (int64_t)n;
        cen[i] = n > 0 ? s / n : NAN;
    }
}

int gs_horizons_intervals(gs_horizons *h, int B, uint64_t seed) {
    const int64_t W = h->n_windows;
    const int L = h->n_lags;
    if (!h->win_centered || B < 2 || W < 2) return 0;
    int first = 0;
    while (first < L && h->n_centered[first] == 0) first++;
    double *wt = malloc((size_t)W * sizeof *wt), *cen = malloc((size_t)L * sizeof *cen);
    double *c1 = malloc((size_t)B * sizeof *c1), *k002 = malloc((size_t)B * sizeof *k002);
    int64_t *ncen = malloc((size_t)L * sizeof *ncen);
    if (!wt || !cen || !c1 || !k002 || !ncen) {
        free(wt); free(cen); free(c1); free(k002); free(ncen);
        return gs_fail("out of memory for the horizons' bootstrap");
    }
    gs_rng rng = {gs_hash2(seed, 0xC0A1)};
    h->h_002_boot_censored = 0;
    for (int b = 0; b < B; b++) {
        gs_resample_counts(&rng, wt, W);
        gs_horizons_weighted_centered(h, wt, cen, ncen);
        c1[b] = first < L ? cen[first] : NAN;
        h->h_002_boot_censored += !gs_log_crossing(h->lags, cen, ncen, L, 0.02, 1, &k002[b]);
    }
    gs_percentile_interval(c1, B, &h->c1_lo, &h->c1_hi);
    gs_percentile_interval(k002, B, &h->h_002_lo, &h->h_002_hi);
    h->boot = B;
    free(wt); free(cen); free(c1); free(k002); free(ncen);
    return 0;
}
