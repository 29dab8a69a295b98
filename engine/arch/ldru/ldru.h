/* MLP-LDRU ("Length Generalization with Log-Depth Recurrent Units", arXiv
 * 2605.26035): a string of symbols is embedded, then reduced by a balanced
 * binary tree of one learned operator on pairs, level by level, and the root
 * is classified. The operator on a pair (h_i, h_j), each d wide
 * (docs/ldru.md has the equations and every choice made where the
 * description was unclear):
 *
 *   z        = silu(W1 [h_i; h_j] + b1)                 2d -> 4d
 *   [g_i;g_j] = sigmoid(W2 z + b2)                      4d -> 2d, the gates
 *   f_i = V_i (g_i * h_i) + b_i,  f_j = V_j (g_j * h_j) + b_j   (V_i, V_j start as the identity)
 *   o        = W_out (f_i + f_j) + b_out
 *   node     = LayerNorm(o + W_f2 silu(W_f1 o + c_1) + c_2)   the residual FFN + LayerNorm shared by all levels
 *
 * Level 0 holds the T embeddings; level L+1 combines the pairs (2k, 2k+1) of
 * level L, a zero vector standing in for the missing right partner when
 * level L has an odd count; the single node of the last level is the root
 * (for T = 1 the embedding itself). The classifier reads the root:
 * logits = W_c root + b_c.
 *
 * Two ways to run it, which give the same numbers (tests/unit/test_ldru.c):
 *   - ldru_tree_forward: a batch of B strings of one length T, every node of
 *     every level kept (and what training's backward needs);
 *   - the engine (family row gs_family_ldru, one symbol a step): the state is
 *     a binary counter of completed subtrees (at most one per level); a symbol
 *     pushes its leaf and merges completed pairs; the prefix state at t is that
 *     stack finished with the padding rule, which is exactly the root the
 *     tree gives for x_0..x_t (ldru_finish). */
#ifndef GS_ENGINE_ARCH_LDRU_H
#define GS_ENGINE_ARCH_LDRU_H

#include <stddef.h>
#include <stdint.h>

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

extern const gs_family gs_family_ldru;

/* Levels 0..LDRU_MAX_LEVELS-1: strings of up to 2^(LDRU_MAX_LEVELS-1) symbols. */
#define LDRU_MAX_LEVELS 21
#define LDRU_MAX_LENGTH (1 << (LDRU_MAX_LEVELS - 1))
/* The levels the engine's per-level site "tree.level.{i}" has (cfg.n_layers):
 * enough for the longest task string (GS_TASK_MAX_LENGTH 1000 < 2^10). */
#define LDRU_SITE_LEVELS 11
#define LDRU_LN_EPS 1e-5f

#define LDRU_HOOK(n) ((gs_hook_point)(GS_HOOK_LOCAL + (n)))
#define LDRU_HOOK_NODE LDRU_HOOK(0)   /* "tree.level.{i}" */
#define LDRU_HOOK_PREFIX LDRU_HOOK(1) /* "prefix" */

/* The tensors, in the order tensor_specs lays them out (ldru_tensors, ldru_family.c). */
enum { LDRU_EMBED, LDRU_W1, LDRU_B1, LDRU_W2, LDRU_B2, LDRU_V_LEFT, LDRU_B_LEFT, LDRU_V_RIGHT, LDRU_B_RIGHT,
       LDRU_W_OUT, LDRU_B_OUT, LDRU_F1, LDRU_C1, LDRU_F2, LDRU_C2, LDRU_LN_W, LDRU_LN_B, LDRU_HEAD_W, LDRU_HEAD_B,
       LDRU_N_TENSORS };
extern const gs_tensor_table ldru_tensors;

/* Pointers into a parameter block laid out by the family's tensor_specs
 * (a model's block, or a trainer's gradient block of the same layout). */
typedef struct {
    int S, d, f, C; /* symbols, width, FFN width, classes */
    const float *t[LDRU_N_TENSORS];
} ldru_weights;

void ldru_weights_bind(const gs_config *c, const float *block, ldru_weights *w);
/* The offset of tensor t (an LDRU_* index) in the block, in floats. */
size_t ldru_tensor_offset(const gs_config *c, int t);

/* ---- the tree over a batch of B strings of one length T ---- */

/* Level L has count[L] = ceil(T / 2^L) nodes; node k of level L covers the
 * segment [k 2^L, min((k + 1) 2^L, T)) of the string: complete (2^L symbols,
 * no padding inside) unless it is the last one of its level and T is not a
 * multiple of 2^L. Node (b, L, k) is row offset[L] + b * count[L] + k of h. */
typedef struct {
    int B, T, d, C, n_levels; /* levels 0..n_levels-1; the last has one node per string, the root */
    int count[LDRU_MAX_LEVELS];
    size_t offset[LDRU_MAX_LEVELS];
    size_t rows;      /* every node of every string */
    float *h;         /* rows x d: every node vector */
    float *logits;    /* B x C: the classifier on each root */
    /* what backward needs, per row of level >= 1 (row r of level L is the
     * pair it combined): [h_i; h_j] (2d), W1's pre-activation (4d), the gates
     * (2d), o (d), the FFN's pre-activation (f), LayerNorm's input (d), mean and
     * 1/std (2) */
    float *x, *a, *g, *o, *p, *r, *stats;
    float *work; /* the operator's temporaries for one level */
    float *dh, *dx, *bwork; /* backward: every node's gradient, a level's pairs' and temporaries */
    float *arena;
} ldru_tree;

/* Allocate for B strings of length T (1..LDRU_MAX_LENGTH); 0, or -1 with gs_error(). */
int ldru_tree_alloc(ldru_tree *t, const gs_config *c, int B, int T);
void ldru_tree_free(ldru_tree *t);
/* Run symbols[b * T + i] (each in 0..S-1) through the tree: every node and the logits. */
void ldru_tree_forward(ldru_tree *t, const ldru_weights *w, const int32_t *symbols);
/* Node k of level L of string b (d floats); its segment is ldru_segment's. */
const float *ldru_tree_node(const ldru_tree *t, int b, int level, int k);
void ldru_segment(int T, int level, int k, int *start, int *end);
/* The root of string b (d floats). */
const float *ldru_tree_root(const ldru_tree *t, int b);
/* Backward from dlogits (B x C) into grads (a block of the model's layout,
 * accumulated); the tree must hold the forward of the same symbols. */
void ldru_tree_backward(ldru_tree *t, const ldru_weights *w, const int32_t *symbols, const float *dlogits, float *grads);

/* ---- the operator and the streaming form ---- */

/* out (M x d) = the operator on M pairs (left, right rows of d), through the
 * shared FFN + LayerNorm; right NULL: every right partner is the zero pad.
 * scratch: M * (ldru_scratch_floats(w)) floats. */
size_t ldru_scratch_floats(const ldru_weights *w);
void ldru_combine(const ldru_weights *w, const float *left, const float *right, int M, float *out, float *scratch);
/* logits (C) of one state vector. */
void ldru_classify(const ldru_weights *w, const float *h, float *logits);

/* A binary counter of completed subtrees: after n symbols, one node of level
 * L for every bit L set in n, highest level first (the leftmost segment). */
typedef struct {
    long n;                        /* symbols read */
    int depth;                     /* nodes on the stack */
    int level[LDRU_MAX_LEVELS];
    float *node;                   /* LDRU_MAX_LEVELS x d, stack order */
} ldru_stack;

/* The prefix state of the stack: the root the tree gives for the n symbols
 * read (the stack's nodes combined with the padding rule); out: d floats;
 * scratch: 2 d + ldru_scratch_floats(w) floats. */
void ldru_finish(const ldru_weights *w, const ldru_stack *s, float *out, float *scratch);

int ldru_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);

#endif
