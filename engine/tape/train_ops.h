/* Training ops of the GPN step, each a _forward with a matching _backward
 * (llm.c style), compiled twice from one source (train_ops.inc): *_f32 for
 * training (SGEMM) and *_f64 for gradient checks against finite differences
 * (DGEMM). Row ops work on one sequence's vector; matmul/fold work on R rows.
 *
 * Backward conventions: gradients of inputs that can have several consumers
 * (dx of rmsnorm, matmul, ground's dsp, memory_read's dM, every parameter
 * gradient) are ACCUMULATED (+=); gradients that have exactly one producer
 * in the model (dpre of gate / relu_l2norm / decay, du of swiglu, dgr/don of
 * read_gate, dk/dv/dalpha/dbeta of memory_write) are WRITTEN (=). */
#ifndef GS_ENGINE_TRAIN_OPS_H
#define GS_ENGINE_TRAIN_OPS_H

#define TRAIN_RMS_EPS 1e-6
#define TRAIN_L2_EPS 1e-12

#define TRAIN_OPS_DECLARE(R, S)                                                                                      \
    /* y = x / sqrt(mean(x^2) + eps) * w (w may be NULL: no weight); *rstd = 1/sqrt(...) */                          \
    void rmsnorm_forward_##S(R *y, R *rstd, const R *x, const R *w, int n);                                          \
    void rmsnorm_backward_##S(R *dx, R *dw, const R *dy, const R *x, R rstd, const R *w, int n);                     \
    /* y[R x n] = x[R x k] @ W[k x n] (+ b) */                                                                       \
    void matmul_forward_##S(R *y, const R *x, const R *W, const R *b, int rows, int k, int n);                       \
    void matmul_backward_##S(R *dx, R *dW, R *db, const R *dy, const R *x, const R *W, int rows, int k, int n);      \
    /* RMSNorm weight folded into the next matrix: Wf[r, c] = w[r] K[r, c] (Wf row stride ldf) */                   \
    void fold_forward_##S(R *Wf, int ldf, const R *K, const R *w, int rows, int cols);                               \
    void fold_backward_##S(R *dK, R *dw, const R *G, int ldg, const R *K, const R *w, int rows, int cols);           \
    /* gate: g = sig(pre) */                                                                                         \
    void gate_forward_##S(R *g, const R *pre, int n);                                                                \
    void gate_backward_##S(R *dpre, const R *dg, const R *g, int n);                                                 \
    /* h = silu(u[:f]) * u[f:] */                                                                                    \
    void swiglu_forward_##S(R *h, const R *u, int f);                                                                \
    void swiglu_backward_##S(R *du, const R *dh, const R *u, int f);                                                 \
    /* per head of width dk: k = l2n(relu(pre)) */                                                                   \
    void relu_l2norm_forward_##S(R *k, const R *pre, int H, int dk);                                                 \
    void relu_l2norm_backward_##S(R *dpre, const R *dk_, const R *k, const R *pre, int H, int dk);                   \
    /* alpha = exp(-exp(A_log) softplus(pre + dt_bias)) per head */                                                  \
    void decay_forward_##S(R *alpha, const R *pre, const R *A_log, const R *dt_bias, int H);                         \
    void decay_backward_##S(R *dpre, R *dA_log, R *ddt_bias, const R *dalpha, const R *pre, const R *alpha,          \
                            const R *A_log, const R *dt_bias, int H);                                                \
    /* delta-rule write of one sequence: delta = v - k M_old, M_new = alpha M_old + beta k delta^T per head.         \
     * Backward: dM holds dL/dM_new on entry and dL/dM_old on exit. */                                               \
    void memory_write_forward_##S(R *M_new, R *delta, const R *M_old, const R *k, const R *v, const R *alpha,        \
                                  const R *beta, int H, int dk, int dv);                                             \
    void memory_write_backward_##S(R *dM, R *dk_, R *dv_, R *dalpha, R *dbeta, const R *M_old, const R *k,           \
                                   const R *delta, const R *alpha, const R *beta, int H, int dk, int dv);            \
    /* o_h = q_h M_h */                                                                                              \
    void memory_read_forward_##S(R *o, const R *q, const R *M, int H, int dk, int dv);                               \
    void memory_read_backward_##S(R *dq, R *dM, const R *do_, const R *q, const R *M, int H, int dk, int dv);        \
    /* read output gate: y = silu(gr) * on */                                                                        \
    void read_gate_forward_##S(R *y, const R *gr, const R *on, int n);                                               \
    void read_gate_backward_##S(R *dgr, R *don, const R *dy, const R *gr, const R *on, int n);                       \
    /* ground: sg = fg * sp + gin */                                                                                 \
    void ground_forward_##S(R *sg, const R *fg, const R *sp, const R *gin, int n);                                   \
    void ground_backward_##S(R *dfg, R *dsp, R *dgin, const R *dsg, const R *fg, const R *sp, int n);                \
    /* nll = logsumexp(z) - z[target]; backward: dz = dnll (softmax(z) - onehot(target)) */                          \
    double crossentropy_forward_##S(const R *z, int target, int V);                                                  \
    void crossentropy_backward_##S(R *dz, const R *z, int target, int V, R dnll);

TRAIN_OPS_DECLARE(float, f32)
TRAIN_OPS_DECLARE(double, f64)

#endif
