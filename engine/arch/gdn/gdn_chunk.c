/* The chunked gated delta rule (gdn_chunk.h). Per head, token t:
 *   S_t = a_t S_{t-1} + k_t u_t^T,  u_t = b_t (v_t - a_t S_{t-1}^T k_t),  o_t = S_t^T q_t.
 * Unrolled from the chunk's first state S0 with G_i = sum_{j<=i} log a_j and
 * g(i,j) = exp(G_i - G_j) (<= 1 for j <= i: it cannot overflow however long
 * the chunk or strong the decay), a_i S_{i-1} = e^{G_i} S0 + sum_{j<i}
 * g(i,j) k_j u_j^T, so the rows of U satisfy
 *   u_i + b_i sum_{j<i} g(i,j) (k_i.k_j) u_j = b_i (v_i - e^{G_i} S0^T k_i),
 * i.e. (I + A) U = diag(b) (V - diag(e^G) K S0) with A strictly lower
 * triangular: U = (I + A)^-1 R, the small inverse explicit. Then
 *   O = diag(e^G) Q S0 + (M o Q K^T) U,  M_ij = g(i,j) for j <= i, else 0,
 *   S_C = e^{G_C} S0 + K^T diag(g(C, .)) U.
 * Five GEMMs per chunk of C tokens, S swept twice (read once by [K; Q] S0,
 * updated once by the last product) instead of 2 C times. */
#include "engine/arch/gdn/gdn_chunk.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "engine/cpu/ops.h"

size_t gdn_chunk_scratch_floats(int dk, int dv) {
    size_t C = GDN_CHUNK;
    /* [K; Q] (2C x d_k), [K; Q] S0 (2C x d_v), [K; Q] K^T (2C x C), g(i,j) and
     * (I + A)^-1 (C x C each), the right side and U (C x d_v each), e^G */
    return 2 * C * (size_t)dk + 2 * C * (size_t)dv + 2 * C * C + 2 * C * C + 2 * C * (size_t)dv + C;
}

/* y = e^x for x <= 0 (n values of double), flushed to 0 below e^-69 (1e-30):
 * a strong decay's factors would otherwise be subnormal floats, which the
 * GEMMs' kernels multiply many times slower (they reach S through the last
 * product's beta); what is flushed weighs less than 1e-30 of the terms beside
 * it. The exponent is rounded to float first and the exp vectorized
 * (exp_nonpositive_n): the chunk's C (C + 1) / 2 double exp() calls were a
 * tenth of its time. */
static void decay_factors(float *y, const double *x, int n) {
    for (int i = 0; i < n; i++) y[i] = x[i] > -69.0 ? (float)x[i] : -INFINITY;
    exp_nonpositive_n(y, y, n);
}

/* Tinv = (I + L)^-1 for L strictly lower triangular (n x n, row-major, the
 * diagonal and above ignored), by rows: row i of the inverse is e_i minus
 * sum_{k<i} L_ik times row k, each row k nonzero only up to column k. The
 * explicit inverse (as fla's solve_tril makes it) turns the solve into a GEMM:
 * OpenBLAS's strsm at these sizes ran at a fifth of its GEMM's rate. */
static void unit_lower_inverse(float *restrict Tinv, const float *restrict L, int n) {
    for (int i = 0; i < n; i++) {
        float *ti = Tinv + (size_t)i * n;
        for (int j = 0; j < n; j++) ti[j] = 0.0f;
        ti[i] = 1.0f;
        for (int k = 0; k < i; k++) {
            float l = L[(size_t)i * n + k];
            const float *tk = Tinv + (size_t)k * n;
            for (int j = 0; j <= k; j++) ti[j] -= l * tk[j];
        }
    }
}

/* one chunk of n <= GDN_CHUNK tokens */
static void chunk(float *S, const gdn_chunk_io *io, int t0, int n, int dk, int dv, float *scratch) {
    const int C = GDN_CHUNK;
    float *KQ = scratch, *KQS = KQ + (size_t)2 * C * dk, *KK = KQS + (size_t)2 * C * dv, *Gm = KK + (size_t)2 * C * C;
    float *Tinv = Gm + (size_t)C * C, *R = Tinv + (size_t)C * C, *U = R + (size_t)C * dv, *eG = U + (size_t)C * dv;
    double G[GDN_CHUNK], diff[GDN_CHUNK], acc = 0.0; /* double: G_i - G_j loses nothing when the G are large */
    for (int i = 0; i < n; i++) {
        int t = t0 + i;
        memcpy(KQ + (size_t)i * dk, io->k + (size_t)t * io->ldk, (size_t)dk * sizeof(float));
        memcpy(KQ + (size_t)(n + i) * dk, io->q + (size_t)t * io->ldq, (size_t)dk * sizeof(float));
        acc += io->g[(size_t)t * io->ldg];
        G[i] = acc;
    }
    decay_factors(eG, G, n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) diff[j] = G[i] - G[j];
        decay_factors(Gm + (size_t)i * n, diff, i + 1);
    }
    /* K S0 and Q S0 in one product (S0 read once), K K^T and Q K^T in another */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2 * n, dv, dk, 1.0f, KQ, dk, S, dv, 0.0f, KQS, dv);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 2 * n, n, dk, 1.0f, KQ, dk, KQ, dk, 0.0f, KK, n);
    /* R = diag(b) (V - diag(e^G) K S0);  U = (I + A)^-1 R, A_ij = b_i g(i,j) k_i.k_j below the diagonal */
    for (int i = 0; i < n; i++) {
        const float *v = io->v + (size_t)(t0 + i) * io->ldv, *ks = KQS + (size_t)i * dv;
        float b = io->beta[(size_t)(t0 + i) * io->ldg], *r = R + (size_t)i * dv;
        for (int j = 0; j < dv; j++) r[j] = b * (v[j] - eG[i] * ks[j]);
        for (int j = 0; j < i; j++) KK[(size_t)i * n + j] *= b * Gm[(size_t)i * n + j];
    }
    unit_lower_inverse(Tinv, KK, n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dv, n, 1.0f, Tinv, n, R, dv, 0.0f, U, dv);
    /* O = diag(e^G) Q S0 + (M o Q K^T) U */
    float *QK = KK + (size_t)n * n, *O = io->o + (size_t)t0 * io->ldo;
    for (int i = 0; i < n; i++) {
        const float *qs = KQS + (size_t)(n + i) * dv;
        float *o = O + (size_t)i * io->ldo, *qk = QK + (size_t)i * n;
        for (int j = 0; j < dv; j++) o[j] = eG[i] * qs[j];
        for (int j = 0; j < n; j++) qk[j] = j <= i ? qk[j] * Gm[(size_t)i * n + j] : 0.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dv, n, 1.0f, QK, n, U, dv, 1.0f, O, io->ldo);
    /* S = e^{G_C} S0 + K^T diag(g(C, .)) U, the decay as the product's beta (no
     * pass of its own over S); U is done with, so its rows take the weights */
    for (int j = 0; j < n; j++) {
        float w = Gm[(size_t)(n - 1) * n + j], *u = U + (size_t)j * dv;
        for (int i = 0; i < dv; i++) u[i] *= w;
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dk, dv, n, 1.0f, KQ, dk, U, dv, eG[n - 1], S, dv);
}

void gdn_chunk_run(float *S, const gdn_chunk_io *io, int T, int dk, int dv, float *scratch) {
    for (int t0 = 0; t0 < T; t0 += GDN_CHUNK) chunk(S, io, t0, T - t0 < GDN_CHUNK ? T - t0 : GDN_CHUNK, dk, dv, scratch);
}
