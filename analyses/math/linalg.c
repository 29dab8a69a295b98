#include "analyses/math/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int gs_cov_acc_init(gs_cov_acc *a, int d, int cap) {
    memset(a, 0, sizeof *a);
    if (d < 1) return gs_fail("covariance of %d-dimensional rows: the dimension must be positive", d);
    if (cap <= 0) cap = 512;
    a->d = d;
    a->cap = cap;
    a->shift = calloc((size_t)d, sizeof(double));
    a->sum = calloc((size_t)d, sizeof(double));
    a->S = calloc((size_t)d * d, sizeof(double));
    a->blk = malloc((size_t)cap * d * sizeof(double));
    if (!a->shift || !a->sum || !a->S || !a->blk) {
        gs_cov_acc_free(a);
        return gs_fail("out of memory for a %d x %d covariance", d, d);
    }
    return 0;
}

void gs_cov_acc_free(gs_cov_acc *a) {
    free(a->shift);
    free(a->sum);
    free(a->S);
    free(a->blk);
    memset(a, 0, sizeof *a);
}

int gs_cov_acc_add(gs_cov_acc *a, const float *x, int64_t rows) {
    const int d = a->d;
    if (rows <= 0) return 0;
    if (a->n == 0) {
        /* the reference point: mean of the first block, so later blocks are
         * accumulated as small deviations from a point near the mean */
        for (int64_t r = 0; r < rows; r++)
            for (int j = 0; j < d; j++) a->shift[j] += x[r * d + j];
        for (int j = 0; j < d; j++) a->shift[j] /= (double)rows;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += a->cap) {
        int b = (int)(rows - r0 < a->cap ? rows - r0 : a->cap);
        for (int r = 0; r < b; r++) {
            const float *xr = x + (r0 + r) * d;
            double *o = a->blk + (int64_t)r * d;
            for (int j = 0; j < d; j++) {
                o[j] = (double)xr[j] - a->shift[j];
                a->sum[j] += o[j];
            }
        }
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, d, b, 1.0, a->blk, d, 1.0, a->S, d);
    }
    a->n += rows;
    return 0;
}

int gs_cov_acc_finish(const gs_cov_acc *a, double *mean, double *cov) {
    const int d = a->d;
    const int64_t n = a->n;
    if (n < 2) return gs_fail("a covariance needs at least 2 rows (got %lld)", (long long)n);
    double *m = malloc((size_t)d * sizeof *m);
    if (!m) return gs_fail("out of memory");
    for (int j = 0; j < d; j++) m[j] = a->sum[j] / (double)n;
    for (int i = 0; i < d; i++) {
        for (int j = i; j < d; j++) {
            double v = (a->S[(int64_t)i * d + j] - (double)n * m[i] * m[j]) / (double)(n - 1);
            cov[(int64_t)i * d + j] = v;
            cov[(int64_t)j * d + i] = v;
        }
    }
    for (int j = 0; j < d; j++) mean[j] = a->shift[j] + m[j];
    free(m);
    return 0;
}

static int cmp_desc(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

int gs_sym_eigvals(double *A, int d, double *w) {
    /* the matrix is symmetric, so row- and column-major are the same matrix */
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'U', d, A, d, w);
    if (info != 0)
        return gs_fail("eigenvalues of a %d x %d matrix: LAPACKE_dsyevd returned %d (%s)", d, d, (int)info,
                       info < 0 ? "bad argument" : "no convergence");
    qsort(w, (size_t)d, sizeof *w, cmp_desc);
    return 0;
}

/* y = (A + u u^T) x */
static void sym_apply(const double *A, const double *u, int d, const double *x, double *y) {
    cblas_dsymv(CblasRowMajor, CblasUpper, d, 1.0, A, d, x, 1, 0.0, y, 1);
    if (u) cblas_daxpy(d, cblas_ddot(d, u, 1, x, 1), u, 1, y, 1);
}

int gs_top_eigvec(const double *A, const double *u, const double *start, int d, double *vec, double *val,
                  int *used_fallback) {
    if (used_fallback) *used_fallback = 0;
    double *y = malloc((size_t)d * sizeof *y);
    if (!y) return gs_fail("out of memory");
    const double *s0 = start ? start : u;
    double nrm = s0 ? cblas_dnrm2(d, s0, 1) : 0.0;
    if (nrm > 0) {
        for (int j = 0; j < d; j++) vec[j] = s0[j] / nrm;
    } else {
        for (int j = 0; j < d; j++) vec[j] = 1.0 / sqrt((double)d);
    }
    int converged = 0;
    double theta = 0;
    for (int it = 0; it < 300 && !converged; it++) {
        sym_apply(A, u, d, vec, y);
        theta = cblas_ddot(d, vec, 1, y, 1);
        /* residual ||A v - theta v|| against theta: the eigenvector error is
         * about this over the relative gap */
        double r2 = 0;
        for (int j = 0; j < d; j++) r2 += (y[j] - theta * vec[j]) * (y[j] - theta * vec[j]);
        double ny = cblas_dnrm2(d, y, 1);
        if (ny == 0) break; /* A v = 0: a zero matrix or an unlucky start */
        if (theta > 0 && sqrt(r2) <= 1e-11 * theta) converged = 1;
        for (int j = 0; j < d; j++) vec[j] = y[j] / ny;
    }
    free(y);
    if (!converged) {
        /* one eigenpair from LAPACK: slower (a full tridiagonal reduction) but exact */
        if (used_fallback) *used_fallback = 1;
        double *B = malloc((size_t)d * d * sizeof *B);
        lapack_int *isuppz = malloc(2 * sizeof *isuppz);
        if (!B || !isuppz) { free(B); free(isuppz); return gs_fail("out of memory for a %d x %d matrix", d, d); }
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) {
                double v = A[(int64_t)i * d + j] + (u ? u[i] * u[j] : 0.0);
                B[(int64_t)i * d + j] = v;
                B[(int64_t)j * d + i] = v;
            }
        lapack_int m = 0;
        double w[1];
        lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', d, B, d, 0, 0, d, d, 0.0, &m, w, vec, d,
                                         isuppz);
        free(B);
        free(isuppz);
        if (info != 0 || m != 1)
            return gs_fail("top eigenvector of a %d x %d matrix: LAPACKE_dsyevr returned %d", d, d, (int)info);
        theta = w[0];
    } else {
        /* one more Rayleigh quotient on the normalised vector */
        double *z = malloc((size_t)d * sizeof *z);
        if (!z) return gs_fail("out of memory");
        sym_apply(A, u, d, vec, z);
        theta = cblas_ddot(d, vec, 1, z, 1);
        free(z);
    }
    *val = theta;
    return 0;
}

int gs_ridge_solve(const double *A, int d, double lambda, double *B, int m) {
    double *G = malloc((size_t)d * d * sizeof *G);
    if (!G) return gs_fail("out of memory for a %d x %d matrix", d, d);
    memcpy(G, A, (size_t)d * d * sizeof *G);
    for (int i = 0; i < d; i++) G[(int64_t)i * d + i] += lambda;
    lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', d, m, G, d, B, m);
    free(G);
    if (info != 0)
        return gs_fail("ridge solve (%d x %d, lambda %g): LAPACKE_dposv returned %d (%s)", d, d, lambda, (int)info,
                       info > 0 ? "the matrix is not positive definite: raise the ridge" : "bad argument");
    return 0;
}
