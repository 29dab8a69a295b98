/* The result keys of the registry row "geometry" (analyses/state/run_geometry.c): each key's name, meaning and unit,
 * declared once. Writers and readers use the GS_KEY_* constants; `gpnscope analyze --keys`
 * lists the table (analyses/result_keys.h). */
#ifndef GS_ANALYSES_STATE_GEOMETRY_KEYS_H
#define GS_ANALYSES_STATE_GEOMETRY_KEYS_H

#include "analyses/result_keys.h"
#include "analyses/shared_keys.h"

/* X(constant, name, meaning, unit): the keys only this analysis writes */
#define GS_GEOMETRY_KEYS(X) \
    X(GS_KEY_N_STATES, "n_states", "states read", "count") \
    X(GS_KEY_N_WINDOWS, "n_windows", "windows read", "count") \
    X(GS_KEY_D, "d", "state dimension", "count") \
    X(GS_KEY_NORM_MEAN, "norm_mean", "mean ||s||", "") \
    X(GS_KEY_NORM_STD, "norm_std", "std ||s||, n - 1", "") \
    X(GS_KEY_MEDIAN_STD, "median_std", "median per-dimension std", "") \
    X(GS_KEY_DIM_STD_MIN, "dim_std_min", "smallest per-dimension std", "") \
    X(GS_KEY_DIM_STD_MAX, "dim_std_max", "largest per-dimension std", "") \
    X(GS_KEY_DEAD_DIMS, "dead_dims", "dimensions with std < 1e-3 x median std", "count") \
    X(GS_KEY_ZERO_VARIANCE_DIMS, "zero_variance_dims", "dimensions left out of the correlations", "count") \
    X(GS_KEY_CORR_MEAN_ABS, "corr_mean_abs", "mean |r| over dimension pairs i != j", "") \
    X(GS_KEY_CORR_MAX_ABS, "corr_max_abs", "largest |r| over dimension pairs", "") \
    X(GS_KEY_PARTICIPATION_RATIO, "participation_ratio", "(sum l)^2 / sum l^2 of the covariance eigenvalues", "dimensions") \
    X(GS_KEY_TOTAL_VARIANCE, "total_variance", "sum of the covariance eigenvalues", "") \
    X(GS_KEY_TOP_SV_FALLBACK, "top_sv_fallback", "1: LAPACK dsyevr answered", "") \
    X(GS_KEY_DIM_STD_SORTED, "dim_std_sorted", "series: per-dimension std, largest first", "") \
    X(GS_KEY_COMPONENTS_90, "components_90", "components explaining 90% of the variance", "count") \
    X(GS_KEY_COMPONENTS_99, "components_99", "components explaining 99% of the variance", "count") \
    X(GS_KEY_STABLE_RANK, "stable_rank", "sum l / max l", "dimensions") \
    X(GS_KEY_EIGENVALUES, "eigenvalues", "series: covariance eigenvalues, largest first", "") \
    X(GS_KEY_CUMULATIVE_EXPLAINED, "cumulative_explained", "series: cumulative explained variance", "fraction") \
    X(GS_KEY_MEAN, "mean", "vector: s_bar", "") \
    X(GS_KEY_DIM_STD, "dim_std", "vector: per-dimension std", "") \
    X(GS_KEY_TOP_SINGULAR_VECTOR, "top_singular_vector", "vector: first right singular vector", "") \
    X(GS_KEY_PC1, "pc1", "vector: centered PC1, signed toward s_bar", "") \
    X(GS_KEY_CORR_SAMPLE, "corr_sample", "vector: correlation matrix of the sampled dimensions, row-major", "") \
    X(GS_KEY_CORR_SAMPLE_DIMS, "corr_sample_dims", "vector: the sampled dimensions", "index")

/* the keys of analyses/shared_keys.h this analysis writes too */
#define GS_GEOMETRY_SHARED_KEYS(S) \
    S(GS_KEY_MEAN_NORM)

GS_GEOMETRY_KEYS(GS_KEY_DECLARE)


#endif
