/* The registry row "geometry" (docs/analyses.md, 1): the state's norms,
 * per-dimension spread, correlations and spectrum (analyses/state/geometry.c). */
#include <stdlib.h>
#include <string.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
#include "analyses/shards.h"
#include "base/error.h"
#include "analyses/shared_keys.h"
#include "analyses/state/geometry_keys.h"

void gs_geometry_row_opts(const gs_analyze_opts *o, gs_geometry_opts *go) {
    gs_geometry_opts_default(go);
    go->seed = o->seed;
}

int gs_geometry_row_run(gs_analysis_ctx *c) {
    gs_geometry_opts go;
    gs_geometry_row_opts(c->o, &go);
    if (gs_geometry_run(c->src, &go, &c->a->geometry) != 0) { gs_fail_context("geometry: "); return -1; }
    return 0;
}

int gs_geometry_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o) {
    const gs_geometry *g = &a->geometry;
    if (gs_result_begin(w, gs_analysis_stored_name(GS_AN_GEOMETRY), o, NULL) != 0) return -1;
    gs_result_scalar(w, GS_KEY_N_STATES, (double)g->n, NULL);
    gs_result_scalar(w, GS_KEY_N_WINDOWS, (double)g->n_windows, NULL);
    gs_result_scalar(w, GS_KEY_D, g->d, NULL);
    gs_result_scalar(w, GS_KEY_NORM_MEAN, g->norm_mean, "mean ||s||");
    gs_result_scalar(w, GS_KEY_NORM_STD, g->norm_std, "std ||s||, n - 1");
    gs_result_scalar(w, GS_KEY_MEAN_NORM, g->mean_norm, "||s_bar||");
    gs_result_scalar(w, GS_KEY_MEDIAN_STD, g->median_std, NULL);
    gs_result_scalar(w, GS_KEY_DIM_STD_MIN, g->dim_std_sorted[g->d - 1], NULL);
    gs_result_scalar(w, GS_KEY_DIM_STD_MAX, g->dim_std_sorted[0], NULL);
    gs_result_scalar(w, GS_KEY_DEAD_DIMS, g->n_dead, "std < 1e-3 x median std");
    gs_result_scalar(w, GS_KEY_ZERO_VARIANCE_DIMS, g->n_zero_var, "left out of the correlations");
    gs_result_scalar(w, GS_KEY_CORR_MEAN_ABS, g->corr_mean_abs, "mean |r| over pairs i != j");
    gs_result_scalar(w, GS_KEY_CORR_MAX_ABS, g->corr_max_abs, NULL);
    gs_result_scalar(w, GS_KEY_PARTICIPATION_RATIO, g->participation_ratio, "(sum l)^2 / sum l^2");
    gs_result_scalar(w, GS_KEY_TOTAL_VARIANCE, g->total_var, NULL);
    gs_result_scalar(w, GS_KEY_TOP_SV_FALLBACK, g->top_sv_fallback, "1: LAPACK dsyevr answered");
    double *x = gs_result_iota(g->d, 1);
    gs_result_series(w, GS_KEY_DIM_STD_SORTED, x, g->dim_std_sorted, NULL, g->d);
    if (g->has_spectrum) {
        gs_result_scalar(w, GS_KEY_COMPONENTS_90, g->n90, NULL);
        gs_result_scalar(w, GS_KEY_COMPONENTS_99, g->n99, NULL);
        gs_result_scalar(w, GS_KEY_STABLE_RANK, g->stable_rank, "sum l / max l");
        gs_result_series(w, GS_KEY_EIGENVALUES, x, g->eigvals, NULL, g->d);
        gs_result_series(w, GS_KEY_CUMULATIVE_EXPLAINED, x, g->cum_explained, NULL, g->d);
    }
    free(x);
    gs_result_vector(w, GS_KEY_MEAN, g->mean, g->d);
    gs_result_vector(w, GS_KEY_DIM_STD, g->dim_std, g->d);
    gs_result_vector(w, GS_KEY_TOP_SINGULAR_VECTOR, g->top_sv, g->d);
    gs_result_vector(w, GS_KEY_PC1, g->pc1, g->d); /* centered, signed toward s_bar: the view colours by it */
    gs_result_vector(w, GS_KEY_CORR_SAMPLE, g->corr_sample, (int64_t)g->n_sample * g->n_sample);
    double *sd = gs_result_ints(g->sample_dims, g->n_sample);
    gs_result_vector(w, GS_KEY_CORR_SAMPLE_DIMS, sd, g->n_sample);
    free(sd);
    return gs_result_end(w);
}

/* The JSON of analyze, of one store or of shards (docs/scale.md): every number the result holds that is
 * stored (the scalars, the spectrum and the mean). */
void gs_geometry_row_json(cJSON *j, const gs_analysis *a) {
    const gs_geometry *g = &a->geometry;
    cJSON_AddNumberToObject(j, "n_states", (double)g->n);
    cJSON_AddNumberToObject(j, "n_windows", (double)g->n_windows);
    cJSON_AddNumberToObject(j, "d", g->d);
    cJSON_AddNumberToObject(j, "norm_mean", g->norm_mean);
    cJSON_AddNumberToObject(j, "norm_std", g->norm_std);
    cJSON_AddNumberToObject(j, "mean_norm", g->mean_norm);
    cJSON_AddNumberToObject(j, "median_std", g->median_std);
    cJSON_AddNumberToObject(j, "dim_std_min", g->dim_std_sorted[g->d - 1]);
    cJSON_AddNumberToObject(j, "dim_std_max", g->dim_std_sorted[0]);
    cJSON_AddNumberToObject(j, "dead_dims", g->n_dead);
    cJSON_AddNumberToObject(j, "zero_variance_dims", g->n_zero_var);
    cJSON_AddNumberToObject(j, "corr_mean_abs", g->corr_mean_abs);
    cJSON_AddNumberToObject(j, "corr_max_abs", g->corr_max_abs);
    cJSON_AddNumberToObject(j, "participation_ratio", g->participation_ratio);
    cJSON_AddNumberToObject(j, "total_variance", g->total_var);
    if (g->has_spectrum) {
        cJSON_AddNumberToObject(j, "components_90", g->n90);
        cJSON_AddNumberToObject(j, "components_99", g->n99);
        cJSON_AddNumberToObject(j, "stable_rank", g->stable_rank);
        cJSON_AddItemToObject(j, "eigenvalues", cJSON_CreateDoubleArray(g->eigvals, g->d));
    }
    cJSON_AddItemToObject(j, "mean", cJSON_CreateDoubleArray(g->mean, g->d));
}

void gs_geometry_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens) {
    (void)tokens;
    gs_report_geometry(f, &a->geometry);
}

/* ---------- over the shards (gs_analysis_ctx.shards): the sums of each rank, added up ---------- */

/* Every rank's sums moved to one reference point c and added up (see
 * analyses/math/linalg.h: S is the sum of (x - shift)(x - shift)^T). With
 * delta = shift_r - c, x - c = (x - shift_r) + delta, so
 *   sum' = sum + n delta,  S' = S + sum delta^T + delta sum^T + n delta delta^T.
 * c is the lowest rank's with states: rank 0's first window, the merged
 * store's reference point, so the two differ by summation order only.
 * Welford's (n, mean, M2) of the norms combine by Chan's rule. */
static int reduce_sums(gs_job *job, gs_geometry_sums *s) {
    const int K = job->size, d = s->acc.d;
    int rc = -1;
    double *per = calloc((size_t)K * 3, sizeof *per), *c = calloc((size_t)d, sizeof *c);
    int64_t *counts = calloc((size_t)K + 2, sizeof *counts);
    if (!per || !c || !counts) { gs_fail("out of memory"); goto out; }
    per[3 * job->rank] = (double)s->n;
    per[3 * job->rank + 1] = s->norm_mean;
    per[3 * job->rank + 2] = s->norm_m2;
    counts[job->rank] = s->n;
    if (gs_job_sum_f64(job, per, 3 * (int64_t)K) || gs_job_sum_i64(job, counts, K)) goto out;
    int ref = 0;
    while (ref < K - 1 && counts[ref] == 0) ref++;
    if (job->rank == ref) memcpy(c, s->acc.shift, (size_t)d * sizeof *c);
    if (gs_job_sum_f64(job, c, d)) goto out;
    double *sum = s->acc.sum, *S = s->acc.S;
    const double n = (double)s->n;
    if (s->n > 0) {
        for (int i = 0; i < d; i++) s->acc.shift[i] -= c[i]; /* delta */
        const double *dl = s->acc.shift;
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) S[(int64_t)i * d + j] += sum[i] * dl[j] + dl[i] * sum[j] + n * dl[i] * dl[j];
        for (int i = 0; i < d; i++) sum[i] += n * dl[i];
    }
    memcpy(s->acc.shift, c, (size_t)d * sizeof *c);
    int64_t totals[2] = {s->n, s->n_windows};
    double sq = s->sq;
    if (gs_job_sum_f64(job, sum, d) || gs_job_sum_f64(job, S, (int64_t)d * d) || gs_job_sum_i64(job, totals, 2) ||
        gs_job_sum_f64(job, &sq, 1))
        goto out;
    s->n = s->acc.n = totals[0];
    s->n_windows = totals[1];
    s->sq = sq;
    double mean = 0, m2 = 0;
    for (int r = 0; r < K; r++) mean += per[3 * r] * per[3 * r + 1];
    mean = s->n ? mean / (double)s->n : 0;
    for (int r = 0; r < K; r++) {
        double dm = per[3 * r + 1] - mean;
        m2 += per[3 * r + 2] + per[3 * r] * dm * dm;
    }
    s->norm_mean = mean;
    s->norm_m2 = m2;
    rc = 0;
out:
    free(per);
    free(c);
    free(counts);
    return rc;
}

static int share_mean(gs_job *job, gs_geometry *g);

static int geometry_part(gs_job *job, gs_state_source *src, const gs_analyze_opts *o, gs_analysis *a) {
    gs_geometry_opts go;
    gs_geometry_row_opts(o, &go);
    gs_geometry_sums sums;
    int rc = gs_geometry_accumulate(src, &go, &sums);
    if (gs_shards_agree(job, rc == 0)) {
        if (rc == 0) gs_cov_acc_free(&sums.acc);
        return -1;
    }
    if (reduce_sums(job, &sums)) { gs_cov_acc_free(&sums.acc); return -1; }
    rc = 0;
    if (job->rank) gs_cov_acc_free(&sums.acc);
    else rc = gs_geometry_finish(&sums, &go, &a->geometry); /* takes over sums.acc */
    if (gs_shards_agree(job, rc == 0)) return -1;
    return share_mean(job, &a->geometry);
}

/* What the default direction's pass reads of the geometry (its mean, norms and
 * counts), rank 0's exact numbers sent to every rank: a sum with zeros
 * elsewhere, exact in floating point. */
static int share_mean(gs_job *job, gs_geometry *g) {
    int64_t d = g->d, counts[3] = {g->d, g->n, g->n_windows};
    if (gs_job_max_i64(job, &d, 1)) return -1;
    if (job->rank) {
        memset(g, 0, sizeof *g);
        counts[0] = counts[1] = counts[2] = 0;
        if (!(g->mean = calloc((size_t)d, sizeof *g->mean))) return gs_fail("out of memory");
    }
    double norms[2] = {job->rank ? 0 : g->mean_norm, job->rank ? 0 : g->norm_mean};
    if (gs_job_sum_i64(job, counts, 3) || gs_job_sum_f64(job, g->mean, d) || gs_job_sum_f64(job, norms, 2)) return -1;
    g->d = (int)counts[0];
    g->n = counts[1];
    g->n_windows = counts[2];
    g->mean_norm = norms[0];
    g->norm_mean = norms[1];
    return 0;
}

int gs_geometry_row_run_shards(gs_analysis_ctx *c) {
    return geometry_part(c->shards->job, c->src, c->o, c->a) ? -1 : 0;
}
