/* The chunked gated delta rule (gdn_chunk.h). Per head, token t:
 *   S_t = a_t S_{t-1} + k_t u_t^T,  u_t = b_t (v_t - a_t S_{t-1}^T k_t),  o_t = S_t^T q_t.
 * Unrolled from the chunk's first state S0 with G_i = sum_{j<=i} log a_j and
 * g(i,j) = exp(G_i - G_j) (<= 1 for j <= i: it cannot overflow however long
 * the chunk or strong the decay), a_i S_{i-1} = e^{G_i} S0 + sum_{j<i}
 * g(i,j) k_j u_j^T, so the rows of U satisfy
 *   u_i + b_i sum_{j<i} g(i,j) (k_i.k_j) u_j = b_i (v_i - e^{G_i} S0^T k_i),
 * i.e. (I + A) U = diag(b) (V - diag(e^G) K S0) with A strictly lower
 * triangular: one unit-triangular solve (strsm). Then
 *   O = diag(e^G) Q S0 + (M o Q K^T) U,  M_ij = g(i,j) for j <= i, else 0,
 *   S_C = e^{G_C} S0 + K^T diag(g(C, .)) U.
 * Five GEMMs and a solve per chunk of C tokens, S swept twice (read by K S0
 * and Q S0, written by the last product) instead of 2 C times. */
#include "engine/arch/gdn/gdn_chunk.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

size_t gdn_chunk_scratch_floats(int dk, int dv) {
    size_t C = GDN_CHUNK;
    /* Q, K (C x d_k each, packed), the weighted K, V -> U (C x d_v), K K^T and Q K^T (C x C), G */
    return 3 * C * (size_t)dk + C * (size_t)dv + 2 * C * C + C;
}

/* one chunk of n <= GDN_CHUNK tokens */
static void chunk(float *S, const gdn_chunk_io *io, int t0, int n, int dk, int dv, float *scratch) {
    const int C = GDN_CHUNK;
    float *Q = scratch, *K = Q + (size_t)C * dk, *Kw = K + (size_t)C * dk, *U = Kw + (size_t)C * dk;
    float *KK = U + (size_t)C * dv, *QK = KK + (size_t)C * C, *eG = QK + (size_t)C * C;
    double G[GDN_CHUNK], acc = 0.0; /* double: G_i - G_j loses nothing when the G are large */
    for (int i = 0; i < n; i++) {
        int t = t0 + i;
        memcpy(Q + (size_t)i * dk, io->q + (size_t)t * io->ldq, (size_t)dk * sizeof(float));
        memcpy(K + (size_t)i * dk, io->k + (size_t)t * io->ldk, (size_t)dk * sizeof(float));
        acc += io->g[(size_t)t * io->ldg];
        G[i] = acc;
        eG[i] = (float)exp(acc);
    }
    /* U = diag(b) (V - diag(e^G) K S0) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dv, dk, 1.0f, K, dk, S, dv, 0.0f, U, dv);
    for (int i = 0; i < n; i++) {
        const float *v = io->v + (size_t)(t0 + i) * io->ldv;
        float b = io->beta[(size_t)(t0 + i) * io->ldg], *u = U + (size_t)i * dv;
        for (int j = 0; j < dv; j++) u[j] = b * (v[j] - eG[i] * u[j]);
    }
    /* (I + A) U = that, A_ij = b_i g(i,j) k_i.k_j below the diagonal (the solve reads only that part) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, dk, 1.0f, K, dk, K, dk, 0.0f, KK, n);
    for (int i = 0; i < n; i++) {
        float b = io->beta[(size_t)(t0 + i) * io->ldg];
        for (int j = 0; j < i; j++) KK[(size_t)i * n + j] *= b * (float)exp(G[i] - G[j]);
    }
    cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, dv, 1.0f, KK, n, U, dv);
    /* O = diag(e^G) Q S0 + (M o Q K^T) U */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, dk, 1.0f, Q, dk, K, dk, 0.0f, QK, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) QK[(size_t)i * n + j] = j <= i ? QK[(size_t)i * n + j] * (float)exp(G[i] - G[j]) : 0.0f;
    float *O = io->o + (size_t)t0 * io->ldo;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dv, dk, 1.0f, Q, dk, S, dv, 0.0f, O, io->ldo);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < dv; j++) O[(size_t)i * io->ldo + j] *= eG[i];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dv, n, 1.0f, QK, n, U, dv, 1.0f, O, io->ldo);
    /* S = e^{G_C} S0 + K^T diag(g(C, .)) U */
    for (int j = 0; j < n; j++) {
        float w = (float)exp(G[n - 1] - G[j]);
        for (int i = 0; i < dk; i++) Kw[(size_t)j * dk + i] = w * K[(size_t)j * dk + i];
    }
    size_t hs = (size_t)dk * dv;
    for (size_t e = 0; e < hs; e++) S[e] *= eG[n - 1];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dk, dv, n, 1.0f, Kw, dk, U, dv, 1.0f, S, dv);
}

void gdn_chunk_run(float *S, const gdn_chunk_io *io, int T, int dk, int dv, float *scratch) {
    for (int t0 = 0; t0 < T; t0 += GDN_CHUNK) chunk(S, io, t0, T - t0 < GDN_CHUNK ? T - t0 : GDN_CHUNK, dk, dv, scratch);
}
