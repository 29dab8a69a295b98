/* Geometry of the state (analyses.md section 1), in one streaming pass:
 * norms, the mean and the covariance (DSYRK in blocks, double), then from the
 * covariance the per-dimension stds, dead dimensions, Pearson correlations,
 * the PCA spectrum (DSYEVD), and the first right singular vector of the
 * uncentered state matrix (top eigenvector of the second moment
 * C (n-1)/n + s_bar s_bar^T), which section 2 compares with s_bar. */
#ifndef GS_ANALYSES_GEOMETRY_H
#define GS_ANALYSES_GEOMETRY_H

#include <stdint.h>

#include "analyses/math/linalg.h"
#include "analyses/states.h"

#define GS_GEOM_SAMPLE 300

typedef struct {
    uint64_t seed;   /* for the correlation-heatmap sample of coordinates */
    int n_sample;    /* coordinates in that sample (300; all when d is smaller) */
    int spectrum;    /* 1: eigenvalues (the expensive part); 0: skip them */
    int block_rows;  /* rows per DSYRK (0: 512) */
} gs_geometry_opts;

void gs_geometry_opts_default(gs_geometry_opts *o);

typedef struct {
    int64_t n, n_windows;
    int d;
    double norm_mean, norm_std;  /* of ||s||; std with n - 1 */
    double mean_sq_norm;         /* mean of ||s||^2 */
    double *mean;                /* d: s_bar */
    double mean_norm;            /* ||s_bar|| */
    double *dim_std;             /* d: per-coordinate std (n - 1), in coordinate order */
    double *dim_std_sorted;      /* d: the same, descending (plot a) */
    int *dim_order;              /* d: coordinate of each entry of dim_std_sorted */
    double median_std;
    int n_dead;                  /* coordinates with std < 1e-3 x median std */
    int n_zero_var;              /* coordinates with zero variance: left out of correlations */
    double corr_mean_abs;        /* mean |r_ij| over pairs i != j of non-constant coordinates */
    double corr_max_abs;
    int corr_max_i, corr_max_j;
    int n_sample;
    int *sample_dims;            /* n_sample coordinates, ascending */
    double *corr_sample;         /* n_sample x n_sample (0 for a zero-variance coordinate, 1 on its diagonal) */
    int has_spectrum;
    double *eigvals;             /* d, descending, clamped at 0 (round-off) */
    double *cum_explained;       /* d: fraction of total variance in the first i+1 */
    double total_var;            /* trace of the covariance */
    int n90, n99;                /* components needed for 90% / 99% */
    double stable_rank;          /* sum / max */
    double participation_ratio;  /* sum^2 / sum of squares */
    double *top_sv;              /* d: unit first right singular vector of S (sign: top_sv . s_bar >= 0) */
    double top_sv_sigma2;        /* its eigenvalue of S^T S / n */
    int top_sv_fallback;         /* 1 when LAPACK answered (power iteration did not converge) */
    /* the centered PC1: top eigenvector of the covariance (sign: pc1 . s_bar >= 0). The uncentered top
     * singular vector above is pulled towards s_bar whenever ||s_bar||^2 exceeds pc1_lambda, so the
     * paper's "s_bar is the top PC" needs both to be read. */
    double *pc1;                 /* d, unit */
    double pc1_lambda;           /* its eigenvalue (the largest of the covariance) */
} gs_geometry;

/* 0, or -1 with gs_error() (fewer than 2 states, identical states, a
 * non-finite value, a stream out of order). */
int gs_geometry_run(gs_state_source *src, const gs_geometry_opts *o, gs_geometry *g);

/* The run in two halves, for sums made in pieces (analyses/shards.h adds
 * them up over MPI ranks): the one pass's sums, then everything computed
 * from them. gs_geometry_run is accumulate + finish. */
typedef struct {
    gs_cov_acc acc;                /* mean and covariance (analyses/math/linalg.h) */
    int64_t n, n_windows;
    double norm_mean, norm_m2, sq; /* Welford's mean and M2 of ||s||; sum of ||s||^2 */
} gs_geometry_sums;
int gs_geometry_accumulate(gs_state_source *src, const gs_geometry_opts *o, gs_geometry_sums *sums);
/* Takes over (and frees) sums->acc. */
int gs_geometry_finish(gs_geometry_sums *sums, const gs_geometry_opts *o, gs_geometry *g);
void gs_geometry_free(gs_geometry *g);

#endif
