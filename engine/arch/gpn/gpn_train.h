/* Forward and backward of a GPN / GPN+M over a window of B sequences x T
 * tokens (backpropagation through time), for the trainer (float32, SGEMM)
 * and for gradient checks (float64, DGEMM), from one source
 * (gpn_train.inc, compiled by gpn_train.c),
 * with its parameter layout (gpn_layout.c) and its training entries.
 *
 * Layout trick: rms(x, w) @ K = (x / rms(x)) @ (diag(w) K). Every projection
 * that reads the same state vector is therefore one GEMM against a folded,
 * concatenated matrix (a "set"): set 0 reads s_t (the memory write's v, beta,
 * decay and next-step key, plus layer 0's query, read gate, FFN and predict
 * gate), set j reads c_j (layer j), set N reads s_pred (fuse gate). Each layer
 * ends with one GEMM [swiglu(u) | read] @ [W2; W_o]. The decode head does not
 * feed the recurrence, so it runs after the loop over all B*T rows at once,
 * and every weight gradient is one GEMM over B*T rows after the backward loop.
 *
 * The loss is the mean NLL over the B*T tokens, step t predicting x_t from the
 * state before it (docs/gpn-model.md). Truncated BPTT (bptt = K > 0): the
 * gradient through the carried state (s, prev, M) is stopped where a step
 * index is a multiple of K; the forward pass is unchanged. */
#ifndef GS_ENGINE_ARCH_GPN_TRAIN_H
#define GS_ENGINE_ARCH_GPN_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/tape/train_family.h"

#define TRAIN_NONE ((size_t)-1)
#define TRAIN_MAX_SEGS 8

typedef struct {
    size_t K, norm, bias; /* offsets in the parameter block (bias may be TRAIN_NONE) */
    int col, n;           /* columns of the set's output */
} train_segment;

typedef struct {
    int n_seg, width;
    train_segment seg[TRAIN_MAX_SEGS];
} train_set;

typedef struct {
    size_t ffn_norm_w, ffn_w1, ffn_w2, pg_norm_w, pg_gate_k, pg_gate_b;
    size_t read_norm_w, read_W_q_k, read_W_q_b, read_W_gate_k, read_out_norm_w, read_W_o_k;
} train_layer_offsets;

/* Where every tensor lives in the parameter block (gs_tensor_specs order)
 * and how the folded projection sets are laid out. */
typedef struct {
    gs_config c;
    size_t n_params;
    size_t embedding, decode_norm_w, decode_proj_k, decode_bias, fuse_norm_w, fuse_proj_k, fg_norm_w, fg_gate_k,
        fg_gate_b;
    size_t write_norm_w, write_W_k_k, write_W_k_b, write_W_v_k, write_W_beta_k, write_A_log, write_dt_bias,
        write_W_a_k;
    train_layer_offsets L[GS_MAX_LAYERS];
    int n_sets; /* n_layers + 1 */
    train_set set[GS_MAX_LAYERS + 1];
    int c_kn, c_v, c_beta, c_a;     /* columns of the memory write in set 0 */
    int lbase[GS_MAX_LAYERS];      /* first column of layer j in set j */
    int c_q, c_gr, c_u, c_pg;       /* layer columns relative to lbase */
    int zw;                         /* f + H*dv: width of [swiglu | read] */
} train_layout;

int train_layout_init(train_layout *L, const gs_config *c);
/* Bytes a tape of B x T allocates (activations kept for the backward pass). */
size_t gpn_tape_bytes(const gs_config *c, int B, int T);

#define TRAIN_WINDOW_DECLARE(R, S)                                                                                   \
    typedef struct gpn_tape_##S gpn_tape_##S;                                                                        \
    gpn_tape_##S *gpn_tape_new_##S(const gs_config *c, int B, int T);                                               \
    void gpn_tape_free_##S(gpn_tape_##S *tp);                                                                        \
    /* Forward over tokens (B x T, sequence-major) from the carried state (s0, prev0: B x d; M0: B x H*dk*dv;       \
     * NULL = zeros). With grads != NULL, also accumulates the decode head's gradient into grads and keeps what     \
     * gpn_tape_backward needs. *loss = mean NLL. Returns 0, or -1 (token out of range) with gs_error(). */          \
    int gpn_tape_forward_##S(gpn_tape_##S *tp, const R *params, const int32_t *tokens, const R *s0, const R *prev0,   \
                             const R *M0, R *grads, double *loss);                                                   \
    /* Accumulate dLoss/dparams into grads (after a forward with grads); bptt = 0: full window. */                  \
    void gpn_tape_backward_##S(gpn_tape_##S *tp, const R *params, R *grads, int bptt);                               \
    /* Per-token NLL of the last forward, B x T sequence-major. */                                                   \
    void gpn_tape_nll_##S(const gpn_tape_##S *tp, R *out);                                                           \
    /* The carried state entering step t (0..T) of the last forward; any output may be NULL. */                     \
    void gpn_tape_state_##S(const gpn_tape_##S *tp, int t, R *s, R *prev, R *M);

TRAIN_WINDOW_DECLARE(float, f32)
TRAIN_WINDOW_DECLARE(double, f64)

extern const gs_train_i gs_train_gpn, gs_train_gpn_m;

#endif
