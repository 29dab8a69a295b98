/* MLP-LDRU's forward (ldru.h): the operator on a batch of pairs as CBLAS
 * products over the pairs, the tree level by level, and the padding rule
 * that finishes the streaming form's stack. Weights are [out, in]. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/arch/ldru/ldru_ops.h"

size_t ldru_tensor_offset(const gs_config *c, int t) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    gs_tensor_specs(c, specs);
    return specs[t].offset;
}

void ldru_weights_bind(const gs_config *c, const float *block, ldru_weights *w) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    gs_tensor_specs(c, specs);
    w->S = c->V, w->d = c->d, w->f = c->f, w->C = c->n_classes;
    for (int t = 0; t < LDRU_N_TENSORS; t++) w->t[t] = block + specs[t].offset;
}

/* Y[M x out] = X[M x in] W^T + b (X rows ldx apart) */
void ldru_linear(float *Y, const float *X, int ldx, const float *W, const float *b, int M, int in, int out) {
    for (int m = 0; m < M; m++) memcpy(Y + (size_t)m * out, b, (size_t)out * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, out, in, 1.0f, X, ldx, W, in, 1.0f, Y, out);
}

float ldru_silu(float x) { return x / (1.0f + expf(-x)); }

size_t ldru_tape_floats(const ldru_weights *w) { return 10 * (size_t)w->d + (size_t)w->f + 2; }
size_t ldru_work_floats(const ldru_weights *w) { return 7 * (size_t)w->d + (size_t)w->f; }
size_t ldru_scratch_floats(const ldru_weights *w) { return ldru_tape_floats(w) + ldru_work_floats(w); }

void ldru_combine_taped(const ldru_weights *w, int M, const ldru_tape_rows *tp, float *out, float *work) {
    int d = w->d, f = w->f;
    const float *const *t = w->t;
    float *z = work, *u = z + (size_t)M * 4 * d, *fs = u + (size_t)M * 2 * d, *q = fs + (size_t)M * d;
    ldru_linear(tp->a, tp->x, 2 * d, t[LDRU_W1], t[LDRU_B1], M, 2 * d, 4 * d);
    for (size_t i = 0; i < (size_t)M * 4 * d; i++) z[i] = ldru_silu(tp->a[i]);
    ldru_linear(tp->g, z, 4 * d, t[LDRU_W2], t[LDRU_B2], M, 4 * d, 2 * d);
    for (size_t i = 0; i < (size_t)M * 2 * d; i++) {
        tp->g[i] = 1.0f / (1.0f + expf(-tp->g[i]));
        u[i] = tp->g[i] * tp->x[i];
    }
    /* f_i + f_j = V_i u_i + V_j u_j + b_i + b_j */
    for (int m = 0; m < M; m++)
        for (int k = 0; k < d; k++) fs[(size_t)m * d + k] = t[LDRU_B_LEFT][k] + t[LDRU_B_RIGHT][k];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, u, 2 * d, t[LDRU_V_LEFT], d, 1.0f, fs, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, d, d, 1.0f, u + d, 2 * d, t[LDRU_V_RIGHT], d, 1.0f, fs, d);
    ldru_linear(tp->o, fs, d, t[LDRU_W_OUT], t[LDRU_B_OUT], M, d, d);
    ldru_linear(tp->p, tp->o, d, t[LDRU_F1], t[LDRU_C1], M, d, f);
    for (size_t i = 0; i < (size_t)M * f; i++) q[i] = ldru_silu(tp->p[i]);
    ldru_linear(tp->r, q, f, t[LDRU_F2], t[LDRU_C2], M, f, d);
    for (size_t i = 0; i < (size_t)M * d; i++) tp->r[i] += tp->o[i];
    for (int m = 0; m < M; m++) {
        const float *r = tp->r + (size_t)m * d;
        double mean = 0, var = 0;
        for (int k = 0; k < d; k++) mean += r[k];
        mean /= d;
        for (int k = 0; k < d; k++) var += (r[k] - mean) * (r[k] - mean);
        float rstd = (float)(1.0 / sqrt(var / d + LDRU_LN_EPS));
        tp->stats[2 * m] = (float)mean, tp->stats[2 * m + 1] = rstd;
        for (int k = 0; k < d; k++)
            out[(size_t)m * d + k] = (r[k] - (float)mean) * rstd * t[LDRU_LN_W][k] + t[LDRU_LN_B][k];
    }
}

/* the tape rows of a scratch area of M pairs (ldru_tape_floats each) */
static ldru_tape_rows scratch_tape(const ldru_weights *w, int M, float *s) {
    size_t d = w->d, f = w->f;
    ldru_tape_rows tp;
    tp.x = s, s += M * 2 * d;
    tp.a = s, s += M * 4 * d;
    tp.g = s, s += M * 2 * d;
    tp.o = s, s += M * d;
    tp.p = s, s += M * f;
    tp.r = s, s += M * d;
    tp.stats = s;
    return tp;
}

void ldru_combine(const ldru_weights *w, const float *left, const float *right, int M, float *out, float *scratch) {
    int d = w->d;
    ldru_tape_rows tp = scratch_tape(w, M, scratch);
    for (int m = 0; m < M; m++) {
        memcpy(tp.x + (size_t)m * 2 * d, left + (size_t)m * d, (size_t)d * sizeof(float));
        if (right) memcpy(tp.x + (size_t)m * 2 * d + d, right + (size_t)m * d, (size_t)d * sizeof(float));
        else memset(tp.x + (size_t)m * 2 * d + d, 0, (size_t)d * sizeof(float));
    }
    ldru_combine_taped(w, M, &tp, out, scratch + (size_t)M * ldru_tape_floats(w));
}

void ldru_classify(const ldru_weights *w, const float *h, float *logits) {
    ldru_linear(logits, h, w->d, w->t[LDRU_HEAD_W], w->t[LDRU_HEAD_B], 1, w->d, w->C);
}

/* ---- the tree ---- */

int ldru_tree_alloc(ldru_tree *t, const gs_config *c, int B, int T) {
    memset(t, 0, sizeof *t);
    if (T < 1 || T > LDRU_MAX_LENGTH) return gs_fail("string length %d: 1..%d are supported", T, LDRU_MAX_LENGTH);
    if (B < 1) return gs_fail("batch %d must be positive", B);
    t->B = B, t->T = T, t->d = c->d, t->C = c->n_classes;
    for (int n = T, L = 0;; L++) {
        t->count[L] = n, t->offset[L] = t->rows, t->rows += (size_t)B * n;
        t->n_levels = L + 1;
        if (n == 1) break;
        n = (n + 1) / 2;
    }
    ldru_weights w = {.d = c->d, .f = c->f};
    size_t d = c->d, tape = ldru_tape_floats(&w), work = ldru_work_floats(&w) * (size_t)B * t->count[t->n_levels > 1];
    size_t widest = (size_t)B * t->count[t->n_levels > 1];
    size_t bwork = widest * (ldru_work_floats(&w) + 14 * d + 2 * (size_t)c->f);
    size_t floats = t->rows * (2 * d + tape) + (size_t)B * t->C + work + widest * 2 * d + bwork;
    if (!(t->arena = malloc(floats * sizeof(float))))
        return gs_fail("out of memory for the tree of %d strings of length %d (%zu MB)", B, T, floats * 4 >> 20);
    float *p = t->arena;
    t->h = p, p += t->rows * d;
    t->x = p, p += t->rows * 2 * d;
    t->a = p, p += t->rows * 4 * d;
    t->g = p, p += t->rows * 2 * d;
    t->o = p, p += t->rows * d;
    t->p = p, p += t->rows * (size_t)c->f;
    t->r = p, p += t->rows * d;
    t->stats = p, p += t->rows * 2;
    t->logits = p, p += (size_t)B * t->C;
    t->work = p, p += work;
    t->dh = p, p += t->rows * d;
    t->dx = p, p += widest * 2 * d;
    t->bwork = p;
    return 0;
}

void ldru_tree_free(ldru_tree *t) {
    free(t->arena);
    memset(t, 0, sizeof *t);
}

ldru_tape_rows ldru_tree_tape(const ldru_tree *t, int f, size_t row) {
    size_t d = t->d;
    return (ldru_tape_rows){t->x + row * 2 * d, t->a + row * 4 * d, t->g + row * 2 * d, t->o + row * d,
                            t->p + row * f,     t->r + row * d,     t->stats + row * 2};
}

void ldru_tree_forward(ldru_tree *t, const ldru_weights *w, const int32_t *symbols) {
    int d = w->d, B = t->B;
    for (size_t i = 0; i < (size_t)B * t->T; i++)
        memcpy(t->h + i * d, w->t[LDRU_EMBED] + (size_t)symbols[i] * d, (size_t)d * sizeof(float));
    for (int L = 0; L + 1 < t->n_levels; L++) {
        int n = t->count[L], m = t->count[L + 1];
        ldru_tape_rows tp = ldru_tree_tape(t, w->f, t->offset[L + 1]);
        /* pair (2k, 2k + 1) of level L; the zero pad when 2k + 1 = n */
        for (int b = 0; b < B; b++)
            for (int k = 0; k < m; k++) {
                float *x = tp.x + ((size_t)b * m + k) * 2 * d;
                const float *left = t->h + (t->offset[L] + (size_t)b * n + 2 * k) * d;
                memcpy(x, left, (size_t)d * sizeof(float));
                if (2 * k + 1 < n) memcpy(x + d, left + d, (size_t)d * sizeof(float));
                else memset(x + d, 0, (size_t)d * sizeof(float));
            }
        ldru_combine_taped(w, B * m, &tp, t->h + t->offset[L + 1] * d, t->work);
    }
    ldru_linear(t->logits, ldru_tree_root(t, 0), d, w->t[LDRU_HEAD_W], w->t[LDRU_HEAD_B], B, d, w->C);
}

const float *ldru_tree_node(const ldru_tree *t, int b, int level, int k) {
    return t->h + (t->offset[level] + (size_t)b * t->count[level] + k) * t->d;
}

const float *ldru_tree_root(const ldru_tree *t, int b) { return ldru_tree_node(t, b, t->n_levels - 1, 0); }

void ldru_segment(int T, int level, int k, int *start, int *end) {
    long s = (long)k << level, e = (long)(k + 1) << level;
    *start = (int)s, *end = (int)(e < T ? e : T);
}

/* ---- the streaming form ---- */

void ldru_finish(const ldru_weights *w, const ldru_stack *s, float *out, float *scratch) {
    int d = w->d, idx = s->depth - 1, have = 0;
    float *cur = scratch, *tmp = scratch + d, *work = scratch + 2 * d;
    for (int L = 0; L < LDRU_MAX_LEVELS; L++) {
        int stacked = idx >= 0 && s->level[idx] == L;
        const float *node = stacked ? s->node + (size_t)idx * d : NULL;
        if (s->n <= (1L << L)) { /* one node at this level: the root */
            memcpy(out, have ? cur : node, (size_t)d * sizeof(float));
            return;
        }
        if (!have && !stacked) continue; /* every node of this level is complete and paired */
        /* the level's last node: the stacked one, the partial one (cur) with the
         * stacked one as its left partner, or the partial one with the pad */
        if (!have) ldru_combine(w, node, NULL, 1, tmp, work);
        else if (stacked) ldru_combine(w, node, cur, 1, tmp, work);
        else ldru_combine(w, cur, NULL, 1, tmp, work);
        memcpy(cur, tmp, (size_t)d * sizeof(float));
        have = 1;
        idx -= stacked;
    }
}
