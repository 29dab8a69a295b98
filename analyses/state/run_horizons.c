/* The registry row "horizon" (docs/analyses.md, 3): the raw and centered
 * lag-cosine curves and the content horizons read from them
 * (analyses/state/horizons.c). */
#include <math.h>
#include <stdlib.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
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
    ho.per_window = c->o->boot > 0; /* the intervals the findings decide on (the shards gather theirs: shards.c) */
    if (gs_horizons_run(c->src, &ho, &c->a->horizons) != 0) { gs_fail_context("horizons: "); return -1; }
    if (gs_horizons_intervals(&c->a->horizons, c->o->boot, c->o->seed) != 0) { gs_fail_context("horizons: "); return -1; }
    return 0;
}

int gs_horizons_row_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_horizons *h = &a->horizons;
    char extra[64];
    snprintf(extra, sizeof extra, "\"max_lag\":%d", o->horizon_max_lag);
    gs_result_writer w;
    if (gs_result_begin(&w, st, a->run_id, gs_analysis_stored_name(GS_AN_HORIZON), o, extra, cv) != 0) return -1;
    double *x = gs_result_ints(h->lags, h->n_lags), *nr = malloc(sizeof(double) * h->n_lags),
           *nc = malloc(sizeof(double) * h->n_lags);
    if (!x || !nr || !nc) { free(x); free(nr); free(nc); store_rollback(st); return gs_fail("out of memory"); }
    for (int i = 0; i < h->n_lags; i++) { nr[i] = (double)h->n_raw[i]; nc[i] = (double)h->n_centered[i]; }
    gs_result_series(&w, GS_KEY_RAW, x, h->raw, NULL, h->n_lags);
    gs_result_series(&w, GS_KEY_CENTERED, x, h->centered, NULL, h->n_lags);
    gs_result_series(&w, GS_KEY_RAW_PAIRS, x, nr, NULL, h->n_lags);
    gs_result_series(&w, GS_KEY_CENTERED_PAIRS, x, nc, NULL, h->n_lags);
    free(x); free(nr); free(nc);
    gs_result_scalar(&w, GS_KEY_MIN_PAIRS, GS_HORIZON_MIN_PAIRS,
                     "summaries, figures and the notebook read a curve only at lags with this many pairs");
    gs_result_scalar(&w, GS_KEY_C1, h->c1, "centered lag cosine at k = 1");
    if (h->h_e_valid) {
        gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_E, h->h_e,
                         h->h_e_censored ? "right-censored: a lower bound" : "c_k <= c_1/e, log-k interpolation");
        gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_E_CENSORED, h->h_e_censored, NULL);
    }
    gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_002, h->h_002,
                     h->h_002_censored ? "right-censored: a lower bound" : "c_k < 0.02, log-k interpolation");
    gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_002_CENSORED, h->h_002_censored, NULL);
    if (!isnan(h->h_002_lo)) {
        char note[160];
        snprintf(note, sizeof note, "95%% bootstrap interval over %lld windows, %d resamples (%d censored: their last lag)",
                 (long long)h->n_windows, h->boot, h->h_002_boot_censored);
        gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_002_LO, h->h_002_lo, note);
        gs_result_scalar(&w, GS_KEY_CONTENT_HORIZON_002_HI, h->h_002_hi, NULL);
        gs_result_scalar(&w, GS_KEY_C1_LO, h->c1_lo, "95% bootstrap interval over windows");
        gs_result_scalar(&w, GS_KEY_C1_HI, h->c1_hi, NULL);
    }
    if (h->n_windows) gs_result_scalar(&w, GS_KEY_WINDOWS, (double)h->n_windows, NULL);
    gs_result_scalar(&w, GS_KEY_ZERO_STATES, (double)h->n_zero_states, "left out of the raw curve");
    return gs_result_end(&w);
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
