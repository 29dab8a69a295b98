/* Linear algebra for the analyses, over CBLAS and LAPACKE, all in double.
 *
 * gs_cov_acc accumulates the mean and covariance of float32 rows streamed in
 * blocks: each block is widened to double, shifted by a fixed reference (the
 * first block's mean) and added with one DSYRK, so the states are never held
 * twice and a large common offset (the paper's ||s_bar|| ~ 107 against
 * per-coordinate std ~ 1-11) does not cancel the precision of the centered
 * moments. Matrices are d x d, row-major and full (both triangles). */
#ifndef GS_ANALYSES_LINALG_H
#define GS_ANALYSES_LINALG_H

#include <stdint.h>

typedef struct {
    int d;
    int64_t n;      /* rows added */
    double *shift;  /* d: reference point (mean of the first block) */
    double *sum;    /* d: sum of (x - shift) */
    double *S;      /* d x d: sum of (x - shift)(x - shift)^T, upper triangle until finished */
    double *blk;    /* block buffer, cap x d */
    int cap;
} gs_cov_acc;

/* cap = rows per DSYRK block (0: 512). 0, or -1 with gs_error(). */
int gs_cov_acc_init(gs_cov_acc *a, int d, int cap);
void gs_cov_acc_free(gs_cov_acc *a);
/* Add `rows` float32 rows (row-major, rows x d). Values must be finite (the
 * caller checks, so it can name the offending state). */
int gs_cov_acc_add(gs_cov_acc *a, const float *x, int64_t rows);
/* mean (d) and the unbiased covariance (d x d, divided by n - 1, full
 * matrix; may be a->S itself, to save a d x d copy). Needs n >= 2. */
int gs_cov_acc_finish(const gs_cov_acc *a, double *mean, double *cov);

/* Eigenvalues of the symmetric d x d matrix A (destroyed), descending, with
 * LAPACKE_dsyevd (no vectors). */
int gs_sym_eigvals(double *A, int d, double *w);
/* Top eigenpair of the symmetric A + u u^T (u may be NULL), A untouched:
 * power iteration started from `start` (or u), which converges in a few steps
 * when the top eigenvalue is well separated (the mean-dominated second moment
 * of states); falls back to LAPACKE_dsyevr for that one pair when it does not
 * converge. *used_fallback tells which path answered (may be NULL). */
int gs_top_eigvec(const double *A, const double *u, const double *start, int d, double *vec, double *val,
                  int *used_fallback);
/* Solve (A + lambda I) X = B for X by Cholesky (LAPACKE_dposv). A is d x d
 * (untouched), B is d x m (row-major, overwritten with X). */
int gs_ridge_solve(const double *A, int d, double lambda, double *B, int m);

#endif
