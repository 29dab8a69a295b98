/* The registry row "retention" (docs/analyses.md, 3, memory): each head's
 * 1/e time from a per-head decay site, the fast and slow pools and their
 * null models (analyses/state/retention.c), and whether training moved the decays
 * from their initialisation (analyses/state/decay_init.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
#include "analyses/shards.h"
#include "analyses/state/retention_store.h"
#include "base/error.h"
#include "store/store.h"

/* decays as rows of consecutive positions per window: each window is cut at
 * its first position with a missing value; the write strengths are the site
 * named with "beta" for "alpha" (zeros where missing), when recorded alike */
int gs_retention_read_decays(store *st, int64_t run, const char *site, int max_positions, float **alpha, float **beta,
                             int64_t **ws, int *nw, int *H) {
    store_head_array A = {0}, B = {0};
    *alpha = *beta = NULL;
    *ws = NULL;
    if (store_read_site_heads(st, run, site, &A) != 0) return -1;
    char bsite[72];
    size_t n = strlen(site);
    snprintf(bsite, sizeof bsite, "%.*sbeta", (int)(n >= 5 && !strcmp(site + n - 5, "alpha") ? n - 5 : n), site);
    int have_beta = store_read_site_heads(st, run, bsite, &B) == 0 && B.n_windows == A.n_windows &&
                    B.n_positions == A.n_positions && B.n_heads == A.n_heads;
    /* P positions read of each window's stride (A's positions) */
    const int64_t stride = A.n_positions, h = A.n_heads;
    const int64_t P = max_positions > 0 && max_positions < stride ? max_positions : stride;
    float *a = malloc((size_t)(A.n_windows * P * h) * sizeof *a);
    float *b = have_beta ? malloc((size_t)(A.n_windows * P * h) * sizeof *b) : NULL;
    int64_t *start = malloc((size_t)(A.n_windows + 1) * sizeof *start);
    if (!a || !start || (have_beta && !b)) {
        free(a); free(b); free(start);
        store_head_array_free(&A);
        store_head_array_free(&B);
        return gs_fail("out of memory for the decays");
    }
    int64_t rows = 0;
    for (int64_t w = 0; w < A.n_windows; w++) {
        start[w] = rows;
        for (int64_t p = 0; p < P; p++) {
            const float *src = A.values + (w * stride + p) * h;
            int ok = 1;
            for (int64_t k = 0; k < h; k++) ok &= !isnan(src[k]);
            if (!ok) break;
            memcpy(a + rows * h, src, (size_t)h * sizeof *a);
            if (b) {
                const float *sb = B.values + (w * stride + p) * h;
                for (int64_t k = 0; k < h; k++) b[rows * h + k] = isnan(sb[k]) ? 0.0f : sb[k];
            }
            rows++;
        }
    }
    start[A.n_windows] = rows;
    *nw = (int)A.n_windows;
    *H = (int)h;
    store_head_array_free(&A);
    store_head_array_free(&B);
    *alpha = a;
    *beta = b;
    *ws = start;
    return 0;
}

void gs_retention_row_opts(const gs_analyze_opts *o, gs_retention_opts *ro) {
    gs_retention_opts_default(ro);
    ro->seed = o->seed;
}

void gs_retention_row_decay_init(gs_analysis *a, const gs_model *m) {
    int di = m ? gs_decay_init_run(m, gs_decay_init_site_layer(a->decay_site), &a->decay_init) : -1;
    if (di == 0 && a->decay_init.H == a->retention.H) a->has_decay_init = 1;
    else if (di == 0) gs_analysis_note(a, "decays vs initialisation: %d decay parameters but %d recorded heads",
                                       a->decay_init.H, a->retention.H);
    else if (di < 0) gs_analysis_note(a, "decays vs initialisation not measured: %s", gs_error());
}

int gs_retention_row_run(gs_analysis_ctx *c) {
    gs_analysis *a = c->a;
    float *alpha = NULL, *beta = NULL;
    int64_t *ws = NULL;
    int nw = 0, H = 0;
    char dbuf[64];
    snprintf(a->decay_site, sizeof a->decay_site, "%s",
             c->o->decay_site ? c->o->decay_site
                              : gs_analysis_site_of_role(c->st, c->run, "decay", 0, "mem.alpha", dbuf, sizeof dbuf));
    int rc = gs_retention_read_decays(c->st, c->run, a->decay_site, c->o->max_positions, &alpha, &beta, &ws, &nw, &H);
    if (rc != 0 && c->info->n_heads <= 0) /* a GPN: say that, not "no rows" */
        rc = gs_retention_run(NULL, NULL, NULL, 0, 0, NULL, &a->retention);
    else if (rc != 0)
        gs_fail_context("retention: reading the decays: ");
    if (rc == 0) {
        gs_retention_row_opts(c->o, &a->retention_opts);
        rc = gs_retention_run(alpha, beta, ws, nw, H, &a->retention_opts, &a->retention);
        if (rc != 0) gs_fail_context("retention: ");
    }
    free(alpha); free(beta); free(ws);
    if (rc != 0) {
        if (c->strict) return -1; /* its messages name retention already */
        gs_analysis_note(a, "retention skipped: %s", gs_error());
        return 1;
    }
    /* did training move the decays? needs the checkpoint (its tensors and metadata) */
    gs_retention_row_decay_init(a, gs_analysis_ctx_model(c));
    return 0;
}

int gs_retention_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o) {
    char extra[192], decay[96] = ""; /* the site only when not GPN's mem.alpha: a GPN run's settings stay as they were */
    if (o->decay_site) snprintf(decay, sizeof decay, ",\"decay_site\":\"%s\"", o->decay_site);
    snprintf(extra, sizeof extra, "\"null_draws\":%d,\"boot\":%d%s", a->retention_opts.null_draws,
             a->retention_opts.boot, decay);
    if (gs_result_begin(w, gs_analysis_stored_name(GS_AN_RETENTION), o, extra) != 0) return -1;
    gs_retention_write(w, &a->retention, &a->retention_opts);
    if (a->has_decay_init) gs_decay_init_write(w, &a->decay_init, &a->retention);
    return gs_result_end(w);
}

/* the n_lags x H curve as one array per head over the lags (NaN prints as null) */
static cJSON *curves_json(const double *R, int n_lags, int H) {
    cJSON *all = cJSON_CreateArray();
    double *y = malloc(sizeof(double) * (size_t)(n_lags > 0 ? n_lags : 1));
    for (int h = 0; y && h < H; h++) {
        for (int i = 0; i < n_lags; i++) y[i] = R[(int64_t)i * H + h];
        cJSON_AddItemToArray(all, cJSON_CreateDoubleArray(y, n_lags));
    }
    free(y);
    return all;
}

/* Did training move the decays, under the keys the store keeps them by
 * (gs_decay_init_write), with the same values: what the findings' sentence
 * says, as numbers. */
static void decay_init_json(cJSON *j, const gs_decay_init *d, const gs_retention *r) {
    cJSON_AddNumberToObject(j, "decays_init_known", d->has_init);
    cJSON_AddItemToObject(j, "tau_param", cJSON_CreateDoubleArray(d->tau_trained, d->H));
    cJSON_AddItemToObject(j, "tau_param_init_percentile", cJSON_CreateDoubleArray(d->init_percentile, d->H));
    if (!d->has_init) return;
    cJSON_AddItemToObject(j, "tau_param_init", cJSON_CreateDoubleArray(d->tau_init, d->H));
    cJSON_AddNumberToObject(j, "decays_init_spearman", d->spearman);
    cJSON_AddNumberToObject(j, "decays_max_abs_dlog_tau", d->max_abs_dlog);
    cJSON_AddNumberToObject(j, "decays_median_abs_dlog_tau", d->median_abs_dlog);
    cJSON_AddNumberToObject(j, "decays_moved", d->moved);
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_pools *p = &r->est[e].pools;
        if (!p->valid) continue;
        char key[64];
        snprintf(key, sizeof key, "slow_pool_in_init%s", gs_ret_estimator_suffix((gs_ret_estimator)e));
        cJSON_AddNumberToObject(j, key, gs_decay_init_split_in_init(d, p->pool));
    }
}

void gs_retention_row_json(cJSON *j, const gs_analysis *a) {
    const gs_retention *r = &a->retention;
    cJSON_AddNumberToObject(j, "heads", r->H);
    cJSON_AddItemToObject(j, "lags", cJSON_CreateIntArray(r->lags, r->n_lags));
    cJSON *np = cJSON_AddArrayToObject(j, "retention_pairs"), *ns = cJSON_AddArrayToObject(j, "retention_starts");
    for (int i = 0; i < r->n_lags; i++) {
        cJSON_AddItemToArray(np, cJSON_CreateNumber((double)r->n_pairs[i]));
        cJSON_AddItemToArray(ns, cJSON_CreateNumber((double)r->n_starts[i]));
    }
    cJSON_AddItemToObject(j, "extrapolated", cJSON_CreateDoubleArray(r->extrapolated, r->H));
    cJSON_AddItemToObject(j, "mean_alpha", cJSON_CreateDoubleArray(r->mean_alpha, r->H));
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_retention_est *es = &r->est[e];
        const gs_pools *p = &es->pools;
        /* the all-starts estimator at the top level (as before); the paper's in "from_start" */
        cJSON *k = e == GS_RET_ALL_STARTS ? j : cJSON_AddObjectToObject(j, "from_start");
        cJSON_AddStringToObject(k, "estimator", gs_ret_estimator_name((gs_ret_estimator)e));
        cJSON_AddItemToObject(k, "e_fold_time", cJSON_CreateDoubleArray(es->e_fold_time, r->H));
        /* "half_life": the old name of e_fold_time (the 1/e time, not a half-life); kept for one version */
        if (e == GS_RET_ALL_STARTS) cJSON_AddItemToObject(k, "half_life", cJSON_CreateDoubleArray(es->e_fold_time, r->H));
        cJSON_AddItemToObject(k, "censored", cJSON_CreateIntArray(es->censored, r->H));
        cJSON_AddItemToObject(k, "R", curves_json(es->R, r->n_lags, r->H)); /* R[h][lag index] */
        if (p->valid) {
            cJSON_AddNumberToObject(k, "gap_log", p->gap);
            cJSON_AddItemToObject(k, "pool", cJSON_CreateIntArray(p->pool, r->H));
            cJSON_AddItemToObject(k, "pool_n", cJSON_CreateIntArray(p->pool_n, 2));
        }
        if (p->score_valid) {
            cJSON_AddNumberToObject(k, "separation", p->separation);
            cJSON_AddNumberToObject(k, "pool_lr", p->lr);
            if (p->null_draws > 0) {
                /* the null p's, SEs and the verdict are the LR's */
                cJSON *np = cJSON_AddObjectToObject(k, "null_p"), *se = cJSON_AddObjectToObject(k, "null_p_se");
                for (int f = 0; f < GS_NULL_COUNT; f++) {
                    cJSON_AddNumberToObject(np, gs_null_family_name((gs_null_family)f), p->null_p[f]);
                    cJSON_AddNumberToObject(se, gs_null_family_name((gs_null_family)f), p->null_se[f]);
                }
                cJSON_AddNumberToObject(k, "null_draws", p->null_draws);
                cJSON_AddStringToObject(k, "pool_verdict", gs_pool_verdict_name(p->verdict));
                if (p->power_sets > 0) {
                    cJSON_AddNumberToObject(k, "power_paper", p->power_paper);
                    cJSON_AddNumberToObject(k, "power_fitted", p->power_fitted);
                }
            }
            if (p->boot_n > 0) {
                double ci[3] = {p->boot_lo, p->boot_median, p->boot_hi};
                cJSON_AddItemToObject(k, "pool_lr_bootstrap", cJSON_CreateDoubleArray(ci, 3));
                cJSON_AddNumberToObject(k, "split_stability", p->boot_same_split);
                if (p->null_draws > 0) {
                    cJSON *oc = cJSON_AddObjectToObject(k, "boot_over_crit95");
                    for (int f = 0; f < GS_NULL_COUNT; f++)
                        cJSON_AddNumberToObject(oc, gs_null_family_name((gs_null_family)f), p->boot_over_crit95[f]);
                }
            }
        }
    }
    cJSON_AddItemToObject(j, "mean_beta", cJSON_CreateDoubleArray(r->mean_beta, r->H));
    if (a->has_decay_init) decay_init_json(j, &a->decay_init, r);
}

void gs_retention_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens) {
    (void)tokens;
    gs_report_retention(f, &a->retention);
}

/* ---------- over the shards (gs_analysis_ctx.shards): the sums of each rank, added up ---------- */

/* One shard's decays, read by the rank that reads the shard. */
typedef struct {
    float *alpha, *beta;
    int64_t *ws;
    int nw, H;
} decays;

static int read_shard_decays(const store_shard *s, const char *site, int max_positions, decays *dk) {
    if (s->begin >= s->end) return 0; /* a rank that had no windows to record (more ranks than batches) */
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int rc = gs_retention_read_decays(st, s->run, site, max_positions, &dk->alpha, &dk->beta, &dk->ws, &dk->nw, &dk->H);
    if (rc) gs_fail_context("%s: reading the decays: ", s->path);
    store_close(st);
    return rc;
}

/* Retention: every rank reads its shards' decays (a shard's, not the job's),
 * the windows are numbered across the shards in rank order, each rank adds
 * its windows' sums for every lag once and per bootstrap resample
 * (gs_retention_accumulate), the sums are added up and rank 0 finishes. */
static int retention_part(gs_job *job, const store_shard *shards, int n, int max_positions, gs_analysis *a) {
    decays *dk = calloc((size_t)n, sizeof *dk);
    int64_t *wins = calloc((size_t)n + 2, sizeof *wins); /* per shard, then H and the longest window */
    gs_retention_sums sums = {0};
    int ok = dk && wins, rc = -1;
    if (!ok) gs_fail("out of memory");
    for (int i = job->rank; ok && i < n; i += job->size) {
        if (read_shard_decays(&shards[i], a->decay_site, max_positions, &dk[i])) { ok = 0; break; }
        wins[i] = dk[i].nw;
        if (dk[i].nw && dk[i].H > wins[n]) wins[n] = dk[i].H;
        for (int w = 0; w < dk[i].nw; w++)
            if (dk[i].ws[w + 1] - dk[i].ws[w] > wins[n + 1]) wins[n + 1] = dk[i].ws[w + 1] - dk[i].ws[w];
    }
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, wins, n) || gs_job_max_i64(job, wins + n, 2)) goto out;
    int64_t nw = 0;
    for (int i = 0; i < n; i++) nw += wins[i];
    for (int i = job->rank; ok && i < n; i += job->size)
        if (dk[i].nw && dk[i].H != wins[n])
            ok = 0, gs_fail("%s: decays of %d heads, another shard's %lld", shards[i].path, dk[i].H, (long long)wins[n]);
    if (ok && nw > INT32_MAX) ok = 0, gs_fail("retention: %lld windows is too many", (long long)nw);
    if (ok && gs_retention_sums_init(&sums, (int)wins[n], (int)nw, (int)wins[n + 1] - 1, &a->retention_opts)) ok = 0;
    int64_t first = 0;
    for (int i = 0; ok && i < n; first += wins[i], i++)
        if (i % job->size == job->rank && dk[i].nw &&
            gs_retention_accumulate(dk[i].alpha, dk[i].beta, dk[i].ws, dk[i].nw, (int)first, &sums)) {
            gs_fail_context("%s: ", shards[i].path);
            ok = 0;
        }
    if (gs_shards_agree(job, ok)) goto out;
    if (gs_job_sum_f64(job, sums.f64, sums.n_f64) || gs_job_sum_i64(job, sums.i64, sums.n_i64)) goto out;
    rc = job->rank ? 0 : gs_retention_finish(&sums, &a->retention_opts, &a->retention);
    if (gs_shards_agree(job, rc == 0)) rc = -1;
out:
    gs_retention_sums_free(&sums);
    for (int i = 0; dk && i < n; i++) free(dk[i].alpha), free(dk[i].beta), free(dk[i].ws);
    free(dk);
    free(wins);
    return rc;
}

int gs_retention_row_run_shards(gs_analysis_ctx *c) {
    const gs_shard_input *in = c->shards;
    gs_analysis *a = c->a;
    char buf[64];
    snprintf(a->decay_site, sizeof a->decay_site, "%s",
             c->o->decay_site ? c->o->decay_site
                              : gs_analysis_site_of_role(c->st, c->run, "decay", 0, "mem.alpha", buf, sizeof buf));
    gs_retention_row_opts(c->o, &a->retention_opts);
    if (retention_part(in->job, in->shards, in->n, c->o->max_positions, a) == 0) {
        /* did training move the decays? (rank 0 loads the model for it, as the store's pass does) */
        if (!in->job->rank) gs_retention_row_decay_init(a, gs_analysis_ctx_model(c));
        return 0;
    }
    if (c->strict) { gs_fail_context("retention: "); return -1; }
    gs_analysis_note(a, "retention skipped: %s", gs_error());
    return 1;
}
