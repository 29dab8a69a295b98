/* What the forward (ldru_model.c) shares with the backward
 * (ldru_backward.c) and the engine backend (ldru_cpu.c): the operator's
 * tape and its products. Internal to engine/arch/ldru/. */
#ifndef GS_ENGINE_ARCH_LDRU_OPS_H
#define GS_ENGINE_ARCH_LDRU_OPS_H

#include "engine/arch/ldru/ldru.h"

/* What one call of the operator keeps for M pairs, rows of: x = [h_i; h_j]
 * (2d), a = W1 x + b1 (4d), g = the gates (2d), o (d), p = W_f1 o + c_1 (f),
 * r = o + FFN(o), LayerNorm's input (d), stats = mean, 1/std (2). */
typedef struct {
    float *x, *a, *g, *o, *p, *r, *stats;
} ldru_tape_rows;

size_t ldru_tape_floats(const ldru_weights *w); /* per pair */
size_t ldru_work_floats(const ldru_weights *w); /* temporaries per pair */
/* The operator on M pairs whose tp->x is filled: the rest of the tape and
 * out (M x d); work: M * ldru_work_floats floats. */
void ldru_combine_taped(const ldru_weights *w, int M, const ldru_tape_rows *tp, float *out, float *work);
/* Y[M x out] = X[M x in] W^T + b, X's rows ldx apart, W [out, in]. */
void ldru_linear(float *Y, const float *X, int ldx, const float *W, const float *b, int M, int in, int out);
float ldru_silu(float x);
/* The tape rows of the tree from row `row` on (the rows of h). */
ldru_tape_rows ldru_tree_tape(const ldru_tree *t, int f, size_t row);

#endif
