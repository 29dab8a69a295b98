/* MLP-LDRU's backward through the tree (llm.c style: each forward op of
 * ldru_combine_taped has its backward here, in reverse order, from the tape
 * the tree keeps). Gradients accumulate into a block of the model's layout;
 * the pad's gradient is dropped (it is a constant). Checked against finite
 * differences by tests/unit/test_ldru_grad.c. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "engine/arch/ldru/ldru.h"
#include "engine/arch/ldru/ldru_ops.h"

/* dW[out x in] += dY^T X, db[out] += column sums of dY (M rows) */
static void grad_linear(float *dW, float *db, const float *dY, const float *X, int ldx, int M, int in, int out) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, M, 1.0f, dY, out, X, ldx, 1.0f, dW, in);
    for (int m = 0; db && m < M; m++)
        for (int j = 0; j < out; j++) db[j] += dY[(size_t)m * out + j];
}

/* dX[M x in] (rows ldx apart) (+)= dY W, W [out, in] */
static void grad_input(float *dX, int ldx, const float *dY, const float *W, int M, int in, int out, float beta) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, in, out, 1.0f, dY, out, W, in, beta, dX, ldx);
}

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static float dsilu(float a) {
    float s = sigmoid(a);
    return s * (1.0f + a * (1.0f - s));
}

/* The operator's backward on M pairs: dy (M x d, the nodes' gradient) to dx
 * (M x 2d, [dh_i; dh_j]), weight gradients into G (pointers into the grads
 * block, as w's into the weights). work: M * (ldru_work_floats + 11 d + 2 f) floats at least. */
static void combine_backward(const ldru_weights *w, const ldru_weights *G, int M, const ldru_tape_rows *tp,
                             const float *dy, float *dx, float *work) {
    int d = w->d, f = w->f;
    const float *const *t = w->t;
    float *const *g = (float *const *)G->t;
    size_t Md = (size_t)M * d;
    float *z = work, *u = z + 4 * Md, *fs = u + 2 * Md, *q = fs + Md;
    float *dr = q + (size_t)M * f, *dq = dr + Md, *dp = dq + (size_t)M * f, *dO = dp + (size_t)M * f;
    float *dfs = dO + Md, *du = dfs + Md, *ds = du + 2 * Md, *dz = ds + 2 * Md;
    /* recompute what the tape does not hold */
    for (size_t i = 0; i < 4 * Md; i++) z[i] = ldru_silu(tp->a[i]);
    for (size_t i = 0; i < 2 * Md; i++) u[i] = tp->g[i] * tp->x[i];
    for (int m = 0; m < M; m++)
        for (int k = 0; k < d; k++) fs[(size_t)m * d + k] = t[LDRU_B_LEFT][k] + t[LDRU_B_RIGHT][k];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, u, 2 * d, t[LDRU_V_LEFT], d, 1.0f, fs, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, u + d, 2 * d, t[LDRU_V_RIGHT], d, 1.0f, fs, d);
    for (size_t i = 0; i < (size_t)M * f; i++) q[i] = ldru_silu(tp->p[i]);
    /* LayerNorm */
    for (int m = 0; m < M; m++) {
        const float *r = tp->r + (size_t)m * d, *gy = dy + (size_t)m * d;
        float mean = tp->stats[2 * m], rstd = tp->stats[2 * m + 1], *o = dr + (size_t)m * d;
        double s1 = 0, s2 = 0;
        for (int k = 0; k < d; k++) {
            float xh = (r[k] - mean) * rstd, dxh = gy[k] * t[LDRU_LN_W][k];
            g[LDRU_LN_W][k] += gy[k] * xh;
            g[LDRU_LN_B][k] += gy[k];
            s1 += dxh, s2 += dxh * xh;
            o[k] = dxh;
        }
        float m1 = (float)(s1 / d), m2 = (float)(s2 / d);
        for (int k = 0; k < d; k++) o[k] = rstd * (o[k] - m1 - (r[k] - mean) * rstd * m2);
    }
    /* r = o + F2 silu(F1 o + c1) + c2 */
    grad_linear(g[LDRU_F2], g[LDRU_C2], dr, q, f, M, f, d);
    grad_input(dq, f, dr, t[LDRU_F2], M, f, d, 0.0f);
    for (size_t i = 0; i < (size_t)M * f; i++) dp[i] = dq[i] * dsilu(tp->p[i]);
    grad_linear(g[LDRU_F1], g[LDRU_C1], dp, tp->o, d, M, d, f);
    memcpy(dO, dr, Md * sizeof(float));
    grad_input(dO, d, dp, t[LDRU_F1], M, d, f, 1.0f);
    /* o = W_out fs + b_out; fs = V_i u_i + V_j u_j + b_i + b_j */
    grad_linear(g[LDRU_W_OUT], g[LDRU_B_OUT], dO, fs, d, M, d, d);
    grad_input(dfs, d, dO, t[LDRU_W_OUT], M, d, d, 0.0f);
    grad_linear(g[LDRU_V_LEFT], g[LDRU_B_LEFT], dfs, u, 2 * d, M, d, d);
    grad_linear(g[LDRU_V_RIGHT], g[LDRU_B_RIGHT], dfs, u + d, 2 * d, M, d, d);
    grad_input(du, 2 * d, dfs, t[LDRU_V_LEFT], M, d, d, 0.0f);
    grad_input(du + d, 2 * d, dfs, t[LDRU_V_RIGHT], M, d, d, 0.0f);
    /* u = g * x, g = sigmoid(W2 z + b2) */
    for (size_t i = 0; i < 2 * Md; i++) {
        float gi = tp->g[i];
        ds[i] = du[i] * tp->x[i] * gi * (1.0f - gi);
        dx[i] = du[i] * gi;
    }
    grad_linear(g[LDRU_W2], g[LDRU_B2], ds, z, 4 * d, M, 4 * d, 2 * d);
    grad_input(dz, 4 * d, ds, t[LDRU_W2], M, 4 * d, 2 * d, 0.0f);
    /* z = silu(a), a = W1 x + b1 */
    for (size_t i = 0; i < 4 * Md; i++) dz[i] *= dsilu(tp->a[i]);
    grad_linear(g[LDRU_W1], g[LDRU_B1], dz, tp->x, 2 * d, M, 2 * d, 4 * d);
    grad_input(dx, 2 * d, dz, t[LDRU_W1], M, 2 * d, 4 * d, 1.0f);
}

void ldru_tree_backward(ldru_tree *t, const ldru_weights *w, const int32_t *symbols, const float *dlogits, float *grads) {
    int d = w->d, B = t->B;
    gs_config c = {.V = w->S, .d = d, .f = w->f, .n_classes = w->C, .arch = GS_ARCH_LDRU};
    ldru_weights G;
    ldru_weights_bind(&c, grads, &G);
    float *const *g = (float *const *)G.t;
    float *dh = t->dh, *dx = t->dx, *work = t->bwork;
    memset(dh, 0, t->rows * d * sizeof(float));
    /* the classifier on the roots */
    const float *roots = ldru_tree_root(t, 0);
    grad_linear(g[LDRU_HEAD_W], g[LDRU_HEAD_B], dlogits, roots, d, B, d, w->C);
    grad_input(dh + t->offset[t->n_levels - 1] * d, d, dlogits, w->t[LDRU_HEAD_W], B, d, w->C, 0.0f);
    for (int L = t->n_levels - 1; L >= 1; L--) {
        int n = t->count[L - 1], m = t->count[L];
        ldru_tape_rows tp = ldru_tree_tape(t, w->f, t->offset[L]);
        combine_backward(w, &G, B * m, &tp, dh + t->offset[L] * d, dx, work);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < m; k++) {
                const float *src = dx + ((size_t)b * m + k) * 2 * d;
                float *left = dh + (t->offset[L - 1] + (size_t)b * n + 2 * k) * d;
                for (int i = 0; i < d; i++) left[i] += src[i];
                if (2 * k + 1 < n)
                    for (int i = 0; i < d; i++) left[d + i] += src[d + i];
            }
    }
    for (size_t i = 0; i < (size_t)B * t->T; i++) {
        float *e = g[LDRU_EMBED] + (size_t)symbols[i] * d;
        for (int k = 0; k < d; k++) e[k] += dh[i * d + k];
    }
}
