/* The registry row "horizon" (docs/analyses.md, 3): the raw and centered
 * lag-cosine curves and the content horizons read from them
 * (analyses/state/horizons.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
#include "analyses/shards.h"
#include "base/error.h"
#include "analyses/shared_keys.h"
#include "analyses/state/horizons_keys.h"

void gs_horizons_row_opts(const gs_analyze_opts *o, gs_horizon_opts *ho) {
    gs_horizon_opts_default(ho);
    ho->max_lag = o->horizon_max_lag;
}

int gs_horizons_row_run(gs_analysis_ctx *c) {
    gs_horizon_opts ho;
    gs_horizons_row_opts(c->o, &ho);
    ho.per_window = c->o->boot > 0; /* the intervals the findings decide on (the shards gather theirs: below) */
    if (gs_horizons_run(c->src, &ho, &c->a->horizons) != 0) { gs_fail_context("horizons: "); return -1; }
    if (gs_horizons_intervals(&c->a->horizons, c->o->boot, c->o->seed) != 0) { gs_fail_context("horizons: "); return -1; }
    return 0;
}

int gs_horizons_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o) {
    const gs_horizons *h = &a->horizons;
    char extra[64];
    snprintf(extra, sizeof extra, "\"max_lag\":%d", o->horizon_max_lag);
    if (gs_result_begin(w, gs_analysis_stored_name(GS_AN_HORIZON), o, extra) != 0) return -1;
    double *x = gs_result_ints(h->lags, h->n_lags), *nr = malloc(sizeof(double) * h->n_lags),
           *nc = malloc(sizeof(double) * h->n_lags);
    if (!x || !nr || !nc) { free(x); free(nr); free(nc); w->rc = gs_fail("out of memory"); return gs_result_end(w); }
    for (int i = 0; i < h->n_lags; i++) { nr[i] = (double)h->n_raw[i]; nc[i] = (double)h->n_centered[i]; }
    gs_result_series(w, GS_KEY_RAW, x, h->raw, NULL, h->n_lags);
    gs_result_series(w, GS_KEY_CENTERED, x, h->centered, NULL, h->n_lags);
    gs_result_series(w, GS_KEY_RAW_PAIRS, x, nr, NULL, h->n_lags);
    gs_result_series(w, GS_KEY_CENTERED_PAIRS, x, nc, NULL, h->n_lags);
    free(x); free(nr); free(nc);
    gs_result_scalar(w, GS_KEY_MIN_PAIRS, GS_HORIZON_MIN_PAIRS,
                     "summaries, figures and the notebook read a curve only at lags with this many pairs");
    gs_result_scalar(w, GS_KEY_C1, h->c1, "centered lag cosine at k = 1");
    if (h->h_e_valid) {
        gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_E, h->h_e,
                         h->h_e_censored ? "right-censored: a lower bound" : "c_k <= c_1/e, log-k interpolation");
        gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_E_CENSORED, h->h_e_censored, NULL);
    }
    gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_002, h->h_002,
                     h->h_002_censored ? "right-censored: a lower bound" : "c_k < 0.02, log-k interpolation");
    gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_002_CENSORED, h->h_002_censored, NULL);
    if (!isnan(h->h_002_lo)) {
        char note[160];
        snprintf(note, sizeof note, "95%% bootstrap interval over %lld windows, %d resamples (%d censored: their last lag)",
                 (long long)h->n_windows, h->boot, h->h_002_boot_censored);
        gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_002_LO, h->h_002_lo, note);
        gs_result_scalar(w, GS_KEY_CONTENT_HORIZON_002_HI, h->h_002_hi, NULL);
        gs_result_scalar(w, GS_KEY_C1_LO, h->c1_lo, "95% bootstrap interval over windows");
        gs_result_scalar(w, GS_KEY_C1_HI, h->c1_hi, NULL);
    }
    if (h->n_windows) gs_result_scalar(w, GS_KEY_WINDOWS, (double)h->n_windows, NULL);
    gs_result_scalar(w, GS_KEY_ZERO_STATES, (double)h->n_zero_states, "left out of the raw curve");
    return gs_result_end(w);
}

void gs_horizons_row_json(cJSON *j, const gs_analysis *a) {
    const gs_horizons *h = &a->horizons;
    cJSON_AddItemToObject(j, "lags", cJSON_CreateIntArray(h->lags, h->n_lags));
    cJSON_AddItemToObject(j, "raw", cJSON_CreateDoubleArray(h->raw, h->n_lags));
    cJSON_AddItemToObject(j, "centered", cJSON_CreateDoubleArray(h->centered, h->n_lags));
    cJSON *nr = cJSON_AddArrayToObject(j, "raw_pairs"), *nc = cJSON_AddArrayToObject(j, "centered_pairs");
    for (int i = 0; i < h->n_lags; i++) {
        cJSON_AddItemToArray(nr, cJSON_CreateNumber((double)h->n_raw[i]));
        cJSON_AddItemToArray(nc, cJSON_CreateNumber((double)h->n_centered[i]));
    }
    cJSON_AddNumberToObject(j, "c1", h->c1);
    /* censored: 1 or 0, the number the store holds */
    if (h->h_e_valid) {
        cJSON_AddNumberToObject(j, "content_horizon_e", h->h_e);
        cJSON_AddNumberToObject(j, "content_horizon_e_censored", h->h_e_censored);
    }
    cJSON_AddNumberToObject(j, "content_horizon_002", h->h_002);
    cJSON_AddNumberToObject(j, "content_horizon_002_censored", h->h_002_censored);
    cJSON_AddNumberToObject(j, "zero_states", (double)h->n_zero_states);
}

void gs_horizons_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens) {
    (void)tokens;
    gs_report_horizons(f, &a->horizons);
}

/* ---------- over the shards (gs_analysis_ctx.shards): the sums of each rank, added up ---------- */

/* h's per-window rows replaced by these (taken over) */
static void replace_windows(gs_horizons *h, double *raw, double *cen, int64_t *nraw, int64_t *ncen, int64_t *id) {
    free(h->win_raw); free(h->win_centered); free(h->win_n_raw); free(h->win_n_centered); free(h->win_id);
    h->win_raw = raw, h->win_centered = cen, h->win_n_raw = nraw, h->win_n_centered = ncen, h->win_id = id;
}

/* The per-window rows of h in increasing window number. */
typedef struct { int64_t id, row; } window_row;
static int by_window(const void *a, const void *b) {
    const window_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int sort_windows(gs_horizons *h) {
    const int64_t W = h->n_windows;
    const size_t L = (size_t)h->n_lags;
    window_row *order = malloc((size_t)(W + 1) * sizeof *order);
    double *raw = malloc((W * L + 1) * sizeof *raw), *cen = malloc((W * L + 1) * sizeof *cen);
    int64_t *nraw = malloc((W * L + 1) * sizeof *nraw), *ncen = malloc((W * L + 1) * sizeof *ncen),
            *id = malloc((size_t)(W + 1) * sizeof *id);
    int rc = order && raw && cen && nraw && ncen && id ? 0 : gs_fail("out of memory for the windows' lag sums");
    for (int64_t i = 0; rc == 0 && i < W; i++) order[i] = (window_row){h->win_id[i], i};
    if (rc == 0) qsort(order, (size_t)W, sizeof *order, by_window);
    for (int64_t i = 0; rc == 0 && i < W; i++) {
        const int64_t from = order[i].row;
        memcpy(raw + i * L, h->win_raw + from * L, L * sizeof *raw);
        memcpy(cen + i * L, h->win_centered + from * L, L * sizeof *cen);
        memcpy(nraw + i * L, h->win_n_raw + from * L, L * sizeof *nraw);
        memcpy(ncen + i * L, h->win_n_centered + from * L, L * sizeof *ncen);
        id[i] = h->win_id[from];
    }
    if (rc == 0) {
        replace_windows(h, raw, cen, nraw, ncen, id);
    } else {
        free(raw); free(cen); free(nraw); free(ncen); free(id);
    }
    free(order);
    return rc;
}

/* Every rank's per-window lag sums in one set of rows on every rank (a zeroed job-wide array each rank
 * fills at its offset, then summed), put in the order of the store's window numbers, which is the order a
 * store's own reader meets them; the one-store bootstrap over windows then draws the same resamples. */
static int gather_windows(gs_job *job, gs_horizons *h) {
    const int L = h->n_lags;
    int64_t *counts = calloc((size_t)job->size, sizeof *counts);
    if (!counts) return gs_fail("out of memory");
    counts[job->rank] = h->n_windows;
    if (gs_job_sum_i64(job, counts, job->size)) { free(counts); return -1; }
    int64_t W = 0, at = 0;
    for (int r = 0; r < job->size; r++) at += r < job->rank ? counts[r] : 0, W += counts[r];
    free(counts);
    const size_t n = (size_t)W * (size_t)L, off = (size_t)at * (size_t)L, mine = (size_t)h->n_windows * (size_t)L;
    double *raw = calloc(n + 1, sizeof *raw), *cen = calloc(n + 1, sizeof *cen);
    int64_t *nraw = calloc(n + 1, sizeof *nraw), *ncen = calloc(n + 1, sizeof *ncen), *id = calloc((size_t)W + 1, sizeof *id);
    int rc = raw && cen && nraw && ncen && id ? 0 : gs_fail("out of memory for the windows' lag sums");
    rc = gs_shards_agree(job, rc == 0); /* every rank enters the reductions, or none */
    if (rc == 0 && mine) {
        memcpy(raw + off, h->win_raw, mine * sizeof *raw);
        memcpy(cen + off, h->win_centered, mine * sizeof *cen);
        memcpy(nraw + off, h->win_n_raw, mine * sizeof *nraw);
        memcpy(ncen + off, h->win_n_centered, mine * sizeof *ncen);
        memcpy(id + at, h->win_id, (size_t)h->n_windows * sizeof *id);
    }
    if (rc == 0 && (gs_job_sum_f64(job, raw, (int64_t)n) || gs_job_sum_f64(job, cen, (int64_t)n) ||
                    gs_job_sum_i64(job, nraw, (int64_t)n) || gs_job_sum_i64(job, ncen, (int64_t)n) ||
                    gs_job_sum_i64(job, id, W)))
        rc = -1;
    replace_windows(h, raw, cen, nraw, ncen, id);
    h->n_windows = W;
    if (rc) return rc;
    /* only rank 0 draws the bootstrap; the others agree so that its failure fails them too */
    return gs_shards_agree(job, job->rank || sort_windows(h) == 0);
}

static int horizons_part(gs_job *job, gs_state_source *src, const gs_analyze_opts *o, gs_analysis *a) {
    gs_horizon_opts ho;
    gs_horizons_row_opts(o, &ho);
    ho.per_window = o->boot > 0; /* the intervals the findings decide on, as on one store */
    int max_lag = 0;
    int rc = gs_horizons_max_lag(src, &ho, &max_lag);
    if (gs_shards_agree(job, rc == 0)) return -1;
    int64_t lag = max_lag;
    if (gs_job_max_i64(job, &lag, 1)) return -1;
    gs_horizons *h = &a->horizons;
    rc = gs_horizons_accumulate(src, (int)lag, &ho, h);
    if (gs_shards_agree(job, rc == 0)) { gs_horizons_free(h); return -1; }
    if (gs_job_sum_f64(job, h->raw, h->n_lags) || gs_job_sum_f64(job, h->centered, h->n_lags) ||
        gs_job_sum_i64(job, h->n_raw, h->n_lags) || gs_job_sum_i64(job, h->n_centered, h->n_lags) ||
        gs_job_sum_i64(job, &h->n_zero_states, 1) || (ho.per_window && gather_windows(job, h))) {
        gs_horizons_free(h);
        return -1;
    }
    if (job->rank) { gs_horizons_free(h); return 0; }
    if (gs_horizons_finish(h)) return -1;
    return gs_horizons_intervals(h, o->boot, o->seed);
}

int gs_horizons_row_run_shards(gs_analysis_ctx *c) {
    if (horizons_part(c->shards->job, c->src, c->o, c->a) == 0) return 0;
    gs_fail_context("horizons: ");
    return -1;
}
