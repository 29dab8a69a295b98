/* Planted data for the analyses tests: owned state arrays, Gaussian samples,
 * random orthonormal bases and exactly whitened samples. */
#ifndef GS_TEST_ANALYSES_UTIL_H
#define GS_TEST_ANALYSES_UTIL_H

#include <lapacke.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/states.h"
#include "analyses/math/stats.h"

typedef struct {
    gs_states s;
    float *x;
    int64_t *window;
    int32_t *pos;
    gs_state_source src;
    gs_states_cursor cur;
} owned_states;

/* n_windows windows of T states each, positions 0..T-1, window ids 100 + w */
static inline void owned_alloc(owned_states *o, int n_windows, int T, int d) {
    int64_t n = (int64_t)n_windows * T;
    o->x = calloc((size_t)(n * d), sizeof(float));
    o->window = malloc((size_t)n * sizeof(int64_t));
    o->pos = malloc((size_t)n * sizeof(int32_t));
    for (int w = 0; w < n_windows; w++)
        for (int t = 0; t < T; t++) {
            o->window[(int64_t)w * T + t] = 100 + w;
            o->pos[(int64_t)w * T + t] = t;
        }
    o->s.n = n;
    o->s.d = d;
    o->s.x = o->x;
    o->s.window = o->window;
    o->s.pos = o->pos;
}

/* (re)build the source after filling or changing the arrays */
static inline gs_state_source *owned_source(owned_states *o) {
    o->s.x = o->x;
    o->s.window = o->window;
    o->s.pos = o->pos;
    gs_states_source(&o->src, &o->cur, &o->s);
    return &o->src;
}

static inline void owned_free(owned_states *o) {
    free(o->x);
    free(o->window);
    free(o->pos);
    memset(o, 0, sizeof *o);
}

/* d x d random orthonormal matrix (row-major), from the QR of a Gaussian matrix */
static inline void random_orthonormal(double *U, int d, gs_rng *rng) {
    for (int64_t i = 0; i < (int64_t)d * d; i++) U[i] = gs_rng_normal(rng);
    double *tau = malloc((size_t)d * sizeof *tau);
    LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, d, d, U, d, tau);
    LAPACKE_dorgqr(LAPACK_ROW_MAJOR, d, d, d, U, d, tau);
    free(tau);
}

/* n x d matrix Z (row-major) with column means exactly 0 and Z^T Z = (n-1) I */
static inline void whitened_sample(double *Z, int64_t n, int d, gs_rng *rng) {
    for (int64_t i = 0; i < n * d; i++) Z[i] = gs_rng_normal(rng);
    for (int j = 0; j < d; j++) {
        double m = 0;
        for (int64_t i = 0; i < n; i++) m += Z[i * d + j];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++) Z[i * d + j] -= m;
    }
    double *tau = malloc((size_t)d * sizeof *tau);
    LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)n, d, Z, d, tau);
    LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (int)n, d, d, Z, d, tau);
    free(tau);
    double f = sqrt((double)(n - 1));
    for (int64_t i = 0; i < n * d; i++) Z[i] *= f;
}

#endif
