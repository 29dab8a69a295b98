/* The registry row "probe" (docs/analyses.md, 4, beyond the paper): ridge
 * probes that read the token k positions back out of the state, split by
 * document, and the probe horizon (analyses/state/probe.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/documents.h"
#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
#include "analyses/shards.h"
#include "analyses/state/probe_shards.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "analyses/state/probe_keys.h"

int gs_probe_read_tokens(store *st, int64_t run, gs_probe_tokens *o) {
    memset(o, 0, sizeof *o);
    store_token_array T = {0};
    if (store_read_tokens(st, run, &T) != 0) return -1;
    o->win = malloc((size_t)T.n_windows * sizeof *o->win);
    o->start = malloc((size_t)(T.n_windows + 1) * sizeof *o->start);
    o->tok = malloc((size_t)(T.n_windows * T.n_positions + 1) * sizeof *o->tok);
    if (!o->win || !o->start || !o->tok) {
        store_token_array_free(&T);
        free(o->win); free(o->start); free(o->tok);
        return gs_fail("out of memory for the tokens");
    }
    int64_t n = 0;
    for (int64_t w = 0; w < T.n_windows; w++) {
        o->win[w] = T.window_ids[w];
        o->start[w] = n;
        for (int64_t p = 0; p < T.n_positions && T.token_id[w * T.n_positions + p] >= 0; p++)
            o->tok[n++] = T.token_id[w * T.n_positions + p];
    }
    o->start[T.n_windows] = n;
    o->t.n_windows = T.n_windows;
    o->t.window = o->win;
    o->t.start = o->start;
    o->t.tokens = o->tok;
    store_token_array_free(&T);
    return 0;
}

void gs_probe_tokens_free(gs_probe_tokens *o) {
    free(o->win); free(o->start); free(o->tok);
    memset(o, 0, sizeof *o);
}

void gs_probe_row_opts(const gs_analyze_opts *o, gs_probe_opts *po) {
    gs_probe_opts_default(po);
    po->seed = o->seed;
    if (o->probe_max_lag > 0) po->max_lag = o->probe_max_lag;
    if (o->probe_splits > 0) po->splits = o->probe_splits;
}

int gs_probe_row_run(gs_analysis_ctx *c) {
    gs_analysis *a = c->a;
    const gs_analyze_opts *o = c->o;
    gs_probe_tokens tk;
    gs_states s;
    int rc = gs_probe_read_tokens(c->st, c->run, &tk);
    if (rc == 0) {
        rc = gs_states_load(c->src, o->max_states, &s);
        if (rc == 0) {
            gs_probe_opts po;
            gs_probe_row_opts(o, &po);
            const gs_config *cfg = &a->model->cfg;
            const gs_family *fam = gs_family_of(cfg);
            int width = 0;
            const float *E = fam && fam->embedding ? fam->embedding(a->model, &width) : NULL;
            gs_run_boundary_tokens(c->st, c->run, cfg->V, &po.bos, &po.eos); /* split by document */
            rc = E ? gs_probe_run(&s, &tk.t, E, cfg->V, width, &po, &a->probe)
                   : gs_fail("the %s family has no token embedding to probe for", fam ? fam->name : "model's");
            gs_states_free(&s);
        }
        gs_probe_tokens_free(&tk);
    }
    if (rc != 0) {
        if (c->strict) { gs_fail_context("probe: "); return -1; }
        gs_analysis_note(a, "probe skipped: %s", gs_error());
        return 1;
    }
    return 0;
}

int gs_probe_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o) {
    const gs_probe *p = &a->probe;
    char extra[96];
    snprintf(extra, sizeof extra, "\"probe_max_lag\":%d,\"ridge\":0.01,\"test_frac\":0.2,\"z\":2,\"splits\":%d",
             o->probe_max_lag, p->n_splits);
    if (gs_result_begin(w, gs_analysis_stored_name(GS_AN_PROBE), o, extra) != 0) return -1;
    /* the series, at the measured lags only */
    enum { X, ACC, BASE, PASS, NT, SE, SEB, SEBIN, SDS, NSER };
    static const char *const names[NSER] = {NULL,      GS_KEY_ACCURACY, GS_KEY_BASELINE,    GS_KEY_PASS,          GS_KEY_N_TEST,
                                            GS_KEY_SE /* what the rule used */,
                                            GS_KEY_SE_BLOCK, GS_KEY_SE_BINOMIAL, GS_KEY_SD_OVER_SPLITS};
    double *col[NSER];
    int ok = 1;
    for (int k = 0; k < NSER; k++) ok &= (col[k] = malloc(sizeof(double) * (p->n_lags + 1))) != NULL;
    if (!ok) {
        for (int k = 0; k < NSER; k++) free(col[k]);
        w->rc = gs_fail("out of memory");
        return gs_result_end(w);
    }
    int n = 0;
    for (int i = 0; i < p->n_lags; i++) {
        if (!p->measured[i]) continue;
        col[X][n] = p->lags[i];
        col[ACC][n] = p->acc[i];
        col[BASE][n] = p->baseline[i];
        col[PASS][n] = p->pass[i];
        col[NT][n] = (double)p->n_test[i];
        col[SE][n] = p->se[i];
        col[SEB][n] = p->se_block ? p->se_block[i] : NAN;
        col[SEBIN][n] = p->se_binomial[i];
        col[SDS][n] = p->sd_splits ? p->sd_splits[i] : NAN;
        n++;
    }
    for (int k = ACC; k < NSER; k++) gs_result_series(w, names[k], col[X], col[k], NULL, n);
    for (int k = 0; k < NSER; k++) free(col[k]);
    {
        double sx[64], sy[64];
        for (int k = 0; k < p->n_splits && k < 64; k++) { sx[k] = (double)(o->seed + (uint64_t)k); sy[k] = p->split_horizon[k]; }
        gs_result_series(w, GS_KEY_HORIZON_BY_SPLIT, sx, sy, NULL, p->n_splits); /* x: the split's seed */
    }
    gs_result_scalar(w, GS_KEY_PROBE_HORIZON_MIN, p->horizon_min, "smallest horizon over the splits");
    gs_result_scalar(w, GS_KEY_PROBE_HORIZON_MEDIAN, p->horizon_median, "lower median over the splits");
    gs_result_scalar(w, GS_KEY_PROBE_HORIZON_MAX, p->horizon_max, "largest horizon over the splits");
    gs_result_scalar(w, GS_KEY_SPLITS, p->n_splits, NULL);
    gs_result_scalar(w, GS_KEY_SPLIT_BY_DOCUMENT, p->by_document,
                     "1: whole documents held out; 0: windows (no BOS/EOS, or one document)");
    gs_result_scalar(w, GS_KEY_TRAIN_DOCUMENTS, (double)p->n_train_docs, NULL);
    gs_result_scalar(w, GS_KEY_TEST_DOCUMENTS, (double)p->n_test_docs, NULL);
    gs_result_scalar(w, GS_KEY_PROBE_HORIZON, p->horizon, p->rule);
    gs_result_scalar(w, GS_KEY_PROBE_HORIZON_CENSORED, p->censored, NULL);
    gs_result_scalar(w, GS_KEY_TRAIN_WINDOWS, (double)p->n_train_windows, NULL);
    gs_result_scalar(w, GS_KEY_TEST_WINDOWS, (double)p->n_test_windows, NULL);
    return gs_result_end(w);
}

void gs_probe_row_json(cJSON *j, const gs_analysis *a) {
    const gs_probe *p = &a->probe;
    /* the series the store holds, at the measured lags (NaN prints as null) */
    static const char *const names[] = {"lags", GS_KEY_ACCURACY, GS_KEY_BASELINE, GS_KEY_PASS, GS_KEY_N_TEST, GS_KEY_SE, GS_KEY_SE_BLOCK,
                                        GS_KEY_SE_BINOMIAL, GS_KEY_SD_OVER_SPLITS};
    enum { NSER = sizeof names / sizeof *names };
    cJSON *ser[NSER];
    for (int k = 0; k < NSER; k++) ser[k] = cJSON_AddArrayToObject(j, names[k]);
    for (int i = 0; i < p->n_lags; i++) {
        if (!p->measured[i]) continue;
        const double y[NSER] = {p->lags[i], p->acc[i], p->baseline[i], p->pass[i], (double)p->n_test[i], p->se[i],
                                p->se_block ? p->se_block[i] : NAN, p->se_binomial[i],
                                p->sd_splits ? p->sd_splits[i] : NAN};
        for (int k = 0; k < NSER; k++) cJSON_AddItemToArray(ser[k], cJSON_CreateNumber(y[k]));
    }
    cJSON_AddNumberToObject(j, "probe_horizon", p->horizon);
    cJSON_AddNumberToObject(j, "censored", p->censored); /* 1 or 0, the number the store holds */
    cJSON_AddNumberToObject(j, "splits", p->n_splits);
    cJSON_AddItemToObject(j, "horizon_by_split", cJSON_CreateIntArray(p->split_horizon, p->n_splits));
    cJSON_AddNumberToObject(j, "horizon_min", p->horizon_min);
    cJSON_AddNumberToObject(j, "horizon_median", p->horizon_median);
    cJSON_AddNumberToObject(j, "horizon_max", p->horizon_max);
    cJSON_AddStringToObject(j, "split", p->by_document ? "documents" : "windows");
    cJSON_AddNumberToObject(j, "test_documents", (double)p->n_test_docs);
    cJSON_AddNumberToObject(j, "train_documents", (double)p->n_train_docs);
    cJSON_AddNumberToObject(j, "test_windows", (double)p->n_test_windows);
    cJSON_AddNumberToObject(j, "train_windows", (double)p->n_train_windows);
    cJSON_AddStringToObject(j, "rule", p->rule);
}

void gs_probe_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens) {
    (void)tokens;
    gs_report_probe(f, &a->probe);
}

/* ---------- over the shards (gs_analysis_ctx.shards): the sums of each rank, added up ---------- */

/* The probe: every rank holds the run's model (a->model) for its embedding
 * (the targets), and the ridge sums are reduced per lag
 * (analyses/state/probe_shards.h); st0 is the first shard, for the boundary tokens. */
static int probe_part(gs_job *job, const gs_shard_input *c, const int64_t *all_take, store *st0, const gs_analyze_opts *o,
                      gs_analysis *a) {
    gs_probe_opts po;
    gs_probe_row_opts(o, &po);
    const gs_family *fam = gs_family_of(&a->model->cfg);
    int width = 0;
    const float *E = fam && fam->embedding ? fam->embedding(a->model, &width) : NULL;
    if (!E) gs_fail("the %s family has no token embedding to probe for", fam ? fam->name : "model's");
    else gs_run_boundary_tokens(st0, c->shards[0].run, a->model->cfg.V, &po.bos, &po.eos); /* split by document */
    int rc = -1;
    if (!gs_shards_agree(job, E != NULL)) {
        gs_probe_shards_in in = {.shards = c->shards, .n = c->n, .take = c->take, .all_take = all_take,
                                 .kind = c->kind, .skip = c->skip, .limit = c->limit, .d = c->d};
        rc = gs_probe_shards(job, &in, E, a->model->cfg.V, width, &po, &a->probe);
    }
    return rc;
}

int gs_probe_row_run_shards(gs_analysis_ctx *c) {
    if (probe_part(c->shards->job, c->shards, c->shards->all_take, c->st, c->o, c->a) == 0) return 0;
    if (c->strict) { gs_fail_context("probe: "); return -1; }
    gs_analysis_note(c->a, "probe skipped: %s", gs_error());
    return 1;
}
