/* The registry row "geometry" (docs/analyses.md, 1): the state's norms,
 * per-dimension spread, correlations and spectrum (analyses/state/geometry.c). */
#include <stdlib.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
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

int gs_geometry_row_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_geometry *g = &a->geometry;
    gs_result_writer w;
    if (gs_result_begin(&w, st, a->run_id, gs_analysis_stored_name(GS_AN_GEOMETRY), o, NULL, cv) != 0) return -1;
    gs_result_scalar(&w, GS_KEY_N_STATES, (double)g->n, NULL);
    gs_result_scalar(&w, GS_KEY_N_WINDOWS, (double)g->n_windows, NULL);
    gs_result_scalar(&w, GS_KEY_D, g->d, NULL);
    gs_result_scalar(&w, GS_KEY_NORM_MEAN, g->norm_mean, "mean ||s||");
    gs_result_scalar(&w, GS_KEY_NORM_STD, g->norm_std, "std ||s||, n - 1");
    gs_result_scalar(&w, GS_KEY_MEAN_NORM, g->mean_norm, "||s_bar||");
    gs_result_scalar(&w, GS_KEY_MEDIAN_STD, g->median_std, NULL);
    gs_result_scalar(&w, GS_KEY_DIM_STD_MIN, g->dim_std_sorted[g->d - 1], NULL);
    gs_result_scalar(&w, GS_KEY_DIM_STD_MAX, g->dim_std_sorted[0], NULL);
    gs_result_scalar(&w, GS_KEY_DEAD_DIMS, g->n_dead, "std < 1e-3 x median std");
    gs_result_scalar(&w, GS_KEY_ZERO_VARIANCE_DIMS, g->n_zero_var, "left out of the correlations");
    gs_result_scalar(&w, GS_KEY_CORR_MEAN_ABS, g->corr_mean_abs, "mean |r| over pairs i != j");
    gs_result_scalar(&w, GS_KEY_CORR_MAX_ABS, g->corr_max_abs, NULL);
    gs_result_scalar(&w, GS_KEY_PARTICIPATION_RATIO, g->participation_ratio, "(sum l)^2 / sum l^2");
    gs_result_scalar(&w, GS_KEY_TOTAL_VARIANCE, g->total_var, NULL);
    gs_result_scalar(&w, GS_KEY_TOP_SV_FALLBACK, g->top_sv_fallback, "1: LAPACK dsyevr answered");
    double *x = gs_result_iota(g->d, 1);
    gs_result_series(&w, GS_KEY_DIM_STD_SORTED, x, g->dim_std_sorted, NULL, g->d);
    if (g->has_spectrum) {
        gs_result_scalar(&w, GS_KEY_COMPONENTS_90, g->n90, NULL);
        gs_result_scalar(&w, GS_KEY_COMPONENTS_99, g->n99, NULL);
        gs_result_scalar(&w, GS_KEY_STABLE_RANK, g->stable_rank, "sum l / max l");
        gs_result_series(&w, GS_KEY_EIGENVALUES, x, g->eigvals, NULL, g->d);
        gs_result_series(&w, GS_KEY_CUMULATIVE_EXPLAINED, x, g->cum_explained, NULL, g->d);
    }
    free(x);
    gs_result_vector(&w, GS_KEY_MEAN, g->mean, g->d);
    gs_result_vector(&w, GS_KEY_DIM_STD, g->dim_std, g->d);
    gs_result_vector(&w, GS_KEY_TOP_SINGULAR_VECTOR, g->top_sv, g->d);
    gs_result_vector(&w, GS_KEY_PC1, g->pc1, g->d); /* centered, signed toward s_bar: the view colours by it */
    gs_result_vector(&w, GS_KEY_CORR_SAMPLE, g->corr_sample, (int64_t)g->n_sample * g->n_sample);
    double *sd = gs_result_ints(g->sample_dims, g->n_sample);
    gs_result_vector(&w, GS_KEY_CORR_SAMPLE_DIMS, sd, g->n_sample);
    free(sd);
    return gs_result_end(&w);
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
