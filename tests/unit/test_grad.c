/* Every training _backward against central finite differences in float64:
 * each op alone, then the whole model's mean NLL over a window with respect
 * to every parameter element (GPN+M with 2 layers and a decoder bias, GPN+M
 * with a carried initial state, GPN with and without the bias), full BPTT
 * through the memory; then truncated BPTT against finite differences of the
 * truncated objective (each chunk run from the frozen state at its start),
 * and truncation with K >= T equal to full BPTT; then Transformer++ and Gated
 * DeltaNet (engine/arch/gdn/gdn_train.h), two layers each, every parameter,
 * attention over the whole window and the delta rule backpropagated through
 * every step of it; then the Recurrent Transformer, BPTT through each layer's
 * attention over its own earlier outputs (and, as a control, the same check
 * with the term through the recurrent keys and values dropped must fail).
 * Relative error per tensor
 * ||fd - analytic|| / ||analytic|| must be below 1e-6. */
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/rt/rt.h"
#include "engine/tape/train_ops.h"
#include "engine/arch/gdn/gdn_train.h"
#include "engine/arch/rt/rt_train.h"
#include "engine/arch/tpp/tpp_train.h"
#include "engine/arch/gpn/gpn_train.h"
#include "testlib.h"

#define TOL 1e-6
#define FD_H 2e-6  /* FD truncation error ~h^2, rounding ~1e-16/h: both ~1e-8 here */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [0, 1) */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double srand_(double a) { return (2 * urand() - 1) * a; }
static void fill(double *x, long n, double a) {
    for (long i = 0; i < n; i++) x[i] = srand_(a);
}

static double worst = 0.0;
static void report(const char *what, double err) {
    printf("  %-44s rel err %.2e\n", what, err);
    if (err > worst) worst = err;
    CHECK(err < TOL, "%s: relative error %.3e", what, err);
}

static double rel(const double *a, const double *b, long n) {
    double num = 0, den = 0;
    for (long i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ---- per-op checks: L = <w, op(inputs)> for a random w ---------------------- */

typedef double (*op_loss)(const double *in, void *ctx);
/* central differences of f over in[0..n) into fd */
static void fdiff(op_loss f, double *in, long n, void *ctx, double *fd) {
    for (long i = 0; i < n; i++) {
        double x = in[i];
        in[i] = x + FD_H;
        double lp = f(in, ctx);
        in[i] = x - FD_H;
        double lm = f(in, ctx);
        in[i] = x;
        fd[i] = (lp - lm) / (2 * FD_H);
    }
}
static double dotw(const double *w, const double *y, long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += w[i] * y[i];
    return s;
}

typedef struct { int n, use_w; double wout[64]; } rms_ctx;
static double rms_loss(const double *in, void *v) {
    rms_ctx *c = v;
    double y[64], r;
    rmsnorm_forward_f64(y, &r, in, c->use_w ? in + c->n : NULL, c->n);
    return dotw(c->wout, y, c->n);
}
static void check_rmsnorm(int use_w) {
    rms_ctx c = {.n = 13, .use_w = use_w};
    double in[26], fd[26], an[26] = {0}, r, y[13];
    fill(in, 13, 1.5);
    for (int i = 0; i < 13; i++) in[13 + i] = 1 + srand_(0.5);
    fill(c.wout, 13, 1);
    long n = use_w ? 26 : 13;
    fdiff(rms_loss, in, n, &c, fd);
    rmsnorm_forward_f64(y, &r, in, use_w ? in + 13 : NULL, 13);
    rmsnorm_backward_f64(an, use_w ? an + 13 : NULL, c.wout, in, r, use_w ? in + 13 : NULL, 13);
    report(use_w ? "rmsnorm (x, w)" : "rmsnorm (x, no weight)", rel(fd, an, n));
}

typedef struct { int R, k, n; double w[64]; } mm_ctx;
static double mm_loss(const double *in, void *v) {
    mm_ctx *c = v;
    double y[64];
    const double *x = in, *W = in + c->R * c->k, *b = W + c->k * c->n;
    matmul_forward_f64(y, x, W, b, c->R, c->k, c->n);
    return dotw(c->w, y, (long)c->R * c->n);
}
static void check_matmul(void) {
    mm_ctx c = {.R = 3, .k = 5, .n = 4};
    long n = 3 * 5 + 5 * 4 + 4;
    double in[64], fd[64], an[64] = {0};
    fill(in, n, 1);
    fill(c.w, 12, 1);
    fdiff(mm_loss, in, n, &c, fd);
    matmul_backward_f64(an, an + 15, an + 35, c.w, in, in + 15, 3, 5, 4);
    report("matmul (x, W, b)", rel(fd, an, n));
}

typedef struct { int rows, cols; double w[64]; } fold_ctx;
static double fold_loss(const double *in, void *v) {
    fold_ctx *c = v;
    double y[64];
    fold_forward_f64(y, c->cols, in, in + c->rows * c->cols, c->rows, c->cols);
    return dotw(c->w, y, (long)c->rows * c->cols);
}
static void check_fold(void) {
    fold_ctx c = {.rows = 4, .cols = 3};
    double in[16], fd[16], an[16] = {0};
    fill(in, 16, 1);
    fill(c.w, 12, 1);
    fdiff(fold_loss, in, 16, &c, fd);
    fold_backward_f64(an, an + 12, c.w, 3, in, in + 12, 4, 3);
    report("fold (K, norm weight)", rel(fd, an, 16));
}

/* ops of the form y = op(x) elementwise-ish, with one input vector */
typedef struct { int which, n, H, dk; double w[64], aux[16]; } vec_ctx;
enum { OP_GATE, OP_SWIGLU, OP_RELU_L2N, OP_DECAY, OP_READ_GATE, OP_GROUND, OP_XENT };
static double vec_loss(const double *in, void *v) {
    vec_ctx *c = v;
    double y[64];
    switch (c->which) {
    case OP_GATE: gate_forward_f64(y, in, c->n); return dotw(c->w, y, c->n);
    case OP_SWIGLU: swiglu_forward_f64(y, in, c->n); return dotw(c->w, y, c->n);
    case OP_RELU_L2N: relu_l2norm_forward_f64(y, in, c->H, c->dk); return dotw(c->w, y, (long)c->H * c->dk);
    case OP_DECAY: decay_forward_f64(y, in, in + c->H, in + 2 * c->H, c->H); return dotw(c->w, y, c->H);
    case OP_READ_GATE: read_gate_forward_f64(y, in, in + c->n, c->n); return dotw(c->w, y, c->n);
    case OP_GROUND: ground_forward_f64(y, in, in + c->n, in + 2 * c->n, c->n); return dotw(c->w, y, c->n);
    case OP_XENT: return 1.7 * crossentropy_forward_f64(in, 3, c->n);
    }
    return 0;
}
static void check_vec_ops(void) {
    double in[64], fd[64], an[64], y[64];
    vec_ctx c;
    /* gate */
    c = (vec_ctx){.which = OP_GATE, .n = 9};
    fill(in, 9, 3); fill(c.w, 9, 1);
    fdiff(vec_loss, in, 9, &c, fd);
    gate_forward_f64(y, in, 9);
    gate_backward_f64(an, c.w, y, 9);
    report("gate (sigmoid)", rel(fd, an, 9));
    /* swiglu */
    c = (vec_ctx){.which = OP_SWIGLU, .n = 7};
    fill(in, 14, 2); fill(c.w, 7, 1);
    fdiff(vec_loss, in, 14, &c, fd);
    swiglu_backward_f64(an, c.w, in, 7);
    report("swiglu", rel(fd, an, 14));
    /* relu + l2norm per head (pre-activations kept away from the kink) */
    c = (vec_ctx){.which = OP_RELU_L2N, .H = 3, .dk = 5};
    for (int i = 0; i < 15; i++) { in[i] = srand_(1); if (fabs(in[i]) < 0.05) in[i] += 0.1; }
    fill(c.w, 15, 1);
    fdiff(vec_loss, in, 15, &c, fd);
    relu_l2norm_forward_f64(y, in, 3, 5);
    relu_l2norm_backward_f64(an, c.w, y, in, 3, 5);
    report("relu + l2norm per head", rel(fd, an, 15));
    /* decay: inputs pre, A_log, dt_bias */
    c = (vec_ctx){.which = OP_DECAY, .H = 4};
    fill(in, 4, 2);
    for (int h = 0; h < 4; h++) { in[4 + h] = log(0.5 + 3 * urand()); in[8 + h] = srand_(2); }
    fill(c.w, 4, 1);
    fdiff(vec_loss, in, 12, &c, fd);
    decay_forward_f64(y, in, in + 4, in + 8, 4);
    memset(an, 0, sizeof an);
    decay_backward_f64(an, an + 4, an + 8, c.w, in, y, in + 4, in + 8, 4);
    report("decay (pre, A_log, dt_bias)", rel(fd, an, 12));
    /* read gate */
    c = (vec_ctx){.which = OP_READ_GATE, .n = 6};
    fill(in, 12, 2); fill(c.w, 6, 1);
    fdiff(vec_loss, in, 12, &c, fd);
    read_gate_backward_f64(an, an + 6, c.w, in, in + 6, 6);
    report("read gate silu(g) * rms(o)", rel(fd, an, 12));
    /* ground: inputs fg, sp, gin */
    c = (vec_ctx){.which = OP_GROUND, .n = 5};
    fill(in, 15, 1); fill(c.w, 5, 1);
    fdiff(vec_loss, in, 15, &c, fd);
    memset(an, 0, sizeof an);
    ground_backward_f64(an, an + 5, an + 10, c.w, in, in + 5, 5);
    report("ground fg * s_pred + gin", rel(fd, an, 15));
    /* cross-entropy */
    c = (vec_ctx){.which = OP_XENT, .n = 11};
    fill(in, 11, 3);
    fdiff(vec_loss, in, 11, &c, fd);
    memset(an, 0, sizeof an);
    crossentropy_backward_f64(an, in, 3, 11, 1.7);
    report("softmax cross-entropy", rel(fd, an, 11));
}

/* memory write: inputs M_old, k, v, alpha, beta; loss <W, M_new> */
enum { MH = 2, MDK = 3, MDV = 4, MSZ = MH * MDK * MDV };
typedef struct { double w[MSZ]; int read; } mem_ctx;
static double memw_loss(const double *in, void *v) {
    mem_ctx *c = v;
    double Mn[MSZ], delta[MH * MDV];
    const double *Mo = in, *k = in + MSZ, *vv = k + MH * MDK, *al = vv + MH * MDV, *be = al + MH;
    memory_write_forward_f64(Mn, delta, Mo, k, vv, al, be, MH, MDK, MDV);
    return dotw(c->w, Mn, MSZ);
}
static double memr_loss(const double *in, void *v) {
    mem_ctx *c = v;
    double o[MH * MDV];
    memory_read_forward_f64(o, in + MSZ, in, MH, MDK, MDV);
    return dotw(c->w, o, MH * MDV);
}
static void check_memory(void) {
    mem_ctx c;
    long n = MSZ + MH * MDK + MH * MDV + 2 * MH;
    double in[64], fd[64], an[64] = {0}, Mn[MSZ], delta[MH * MDV];
    fill(in, n, 1);
    for (int h = 0; h < MH; h++) { in[n - 2 * MH + h] = 0.2 + 0.7 * urand(); in[n - MH + h] = 0.1 + 0.8 * urand(); }
    fill(c.w, MSZ, 1);
    fdiff(memw_loss, in, n, &c, fd);
    double *Mo = in, *k = in + MSZ, *vv = k + MH * MDK, *al = vv + MH * MDV, *be = al + MH;
    memory_write_forward_f64(Mn, delta, Mo, k, vv, al, be, MH, MDK, MDV);
    memcpy(an, c.w, sizeof c.w); /* dM enters as dL/dM_new, leaves as dL/dM_old */
    memory_write_backward_f64(an, an + MSZ, an + MSZ + MH * MDK, an + MSZ + MH * MDK + MH * MDV,
                              an + MSZ + MH * MDK + MH * MDV + MH, Mo, k, delta, al, be, MH, MDK, MDV);
    report("memory write (M, k, v, alpha, beta)", rel(fd, an, n));
    /* read: inputs M, q */
    long nr = MSZ + MH * MDK;
    fill(in, nr, 1);
    fill(c.w, MH * MDV, 1);
    fdiff(memr_loss, in, nr, &c, fd);
    memset(an, 0, sizeof an);
    memory_read_backward_f64(an + MSZ, an, c.w, in + MSZ, in, MH, MDK, MDV);
    report("memory read (M, q)", rel(fd, an, nr));
}

/* ---- whole model over a window -------------------------------------------- */

typedef struct {
    gpn_tape_f64 *tp;
    const int32_t *tok;
    const double *s0, *prev0, *M0;
} win_ctx;

static double window_loss(const double *params, void *v) {
    win_ctx *w = v;
    double loss = NAN;
    int rc = gpn_tape_forward_f64(w->tp, params, w->tok, w->s0, w->prev0, w->M0, NULL, &loss);
    CHECK(rc == 0, "forward: %s", gs_error());
    return loss;
}

/* random parameters in ranges where every gate, decay and key is non-trivial */
static void random_params(const gs_config *c, double *P) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    for (int i = 0; i < n; i++) {
        double *x = P + specs[i].offset;
        long m = (long)specs[i].numel;
        switch (specs[i].role) {
        case GS_TENSOR_MATRIX: fill(x, m, 1.2 / sqrt((double)specs[i].shape[0])); break;
        case GS_TENSOR_NORM: for (long k = 0; k < m; k++) x[k] = 1 + srand_(0.3); break;
        case GS_TENSOR_BIAS: fill(x, m, 0.3); break;
        case GS_TENSOR_A_LOG: for (long k = 0; k < m; k++) x[k] = log(0.3 + 2 * urand()); break;
        case GS_TENSOR_DT_BIAS: for (long k = 0; k < m; k++) x[k] = srand_(1.5); break;
        }
    }
}

/* analytic gradient of the window (full BPTT or truncated) */
static void analytic(win_ctx *w, const double *P, double *g, long np, int bptt) {
    memset(g, 0, (size_t)np * sizeof *g);
    double loss;
    CHECK(gpn_tape_forward_f64(w->tp, P, w->tok, w->s0, w->prev0, w->M0, g, &loss) == 0, "forward: %s", gs_error());
    gpn_tape_backward_f64(w->tp, P, g, bptt);
}

static void check_tensors(const char *label, const gs_config *c, const double *fd, const double *an) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    double tensor_worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < n; i++) {
        double e = rel(fd + specs[i].offset, an + specs[i].offset, (long)specs[i].numel);
        double norm = 0;
        for (size_t k = 0; k < specs[i].numel; k++) norm += an[specs[i].offset + k] * an[specs[i].offset + k];
        CHECK(norm > 0, "%s: gradient of %s is exactly zero (not exercised)", label, specs[i].name);
        CHECK(e < TOL, "%s: %s relative error %.3e", label, specs[i].name, e);
        if (e > tensor_worst) { tensor_worst = e; worst_name = specs[i].name; }
    }
    char what[160];
    snprintf(what, sizeof what, "%s: %d tensors (worst %s)", label, n, worst_name);
    report(what, tensor_worst);
}

static void check_model(const char *label, gs_config c, int B, int T, int with_state) {
    long np = (long)gs_param_count(&c);
    double *P = malloc((size_t)np * sizeof *P), *fd = malloc((size_t)np * sizeof *P), *an = malloc((size_t)np * sizeof *P);
    random_params(&c, P);
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(urand() * c.V);
    long mem = (long)c.H * c.dk * c.dv;
    double *s0 = NULL, *prev0 = NULL, *M0 = NULL;
    if (with_state) {
        s0 = malloc((size_t)B * c.d * sizeof *s0); fill(s0, (long)B * c.d, 1);
        prev0 = malloc((size_t)B * c.d * sizeof *s0); fill(prev0, (long)B * c.d, 1);
        M0 = malloc((size_t)B * mem * sizeof *s0 + 8); fill(M0, (long)B * mem, 0.5);
    }
    win_ctx w = {gpn_tape_new_f64(&c, B, T), tok, s0, prev0, M0};
    CHECK(w.tp != NULL, "tape: %s", gs_error());
    if (w.tp) {
        fdiff(window_loss, P, np, &w, fd);
        analytic(&w, P, an, np, 0);
        char what[128];
        snprintf(what, sizeof what, "%s, %ld params, B=%d T=%d", label, np, B, T);
        check_tensors(what, &c, fd, an);
    }
    gpn_tape_free_f64(w.tp);
    free(P); free(fd); free(an); free(tok); free(s0); free(prev0); free(M0);
}

/* Truncated BPTT at K: the analytic truncated gradient equals finite
 * differences of sum_c (T_c/T) loss_c(theta; frozen state at chunk c's start),
 * the states frozen at their values under the unperturbed parameters. */
typedef struct {
    gs_config c;
    int B, T, K;
    const int32_t *tok;
    double **s, **prev, **M; /* frozen state at each chunk start */
} trunc_ctx;

static double trunc_loss(const double *P, void *v) {
    trunc_ctx *tc = v;
    double total = 0;
    int32_t *sub = malloc((size_t)tc->B * tc->K * sizeof *sub);
    for (int c0 = 0, ci = 0; c0 < tc->T; c0 += tc->K, ci++) {
        int len = tc->T - c0 < tc->K ? tc->T - c0 : tc->K;
        for (int b = 0; b < tc->B; b++) memcpy(sub + (long)b * len, tc->tok + (long)b * tc->T + c0, (size_t)len * sizeof *sub);
        gpn_tape_f64 *tp = gpn_tape_new_f64(&tc->c, tc->B, len);
        double loss;
        gpn_tape_forward_f64(tp, P, sub, tc->s[ci], tc->prev[ci], tc->M[ci], NULL, &loss);
        gpn_tape_free_f64(tp);
        total += loss * len / tc->T;
    }
    free(sub);
    return total;
}

static void check_truncated(gs_config c, int B, int T, int K) {
    long np = (long)gs_param_count(&c), mem = (long)c.H * c.dk * c.dv;
    double *P = malloc((size_t)np * sizeof *P), *fd = malloc((size_t)np * sizeof *P), *an = malloc((size_t)np * sizeof *P);
    double *full = malloc((size_t)np * sizeof *P);
    random_params(&c, P);
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(urand() * c.V);
    win_ctx w = {gpn_tape_new_f64(&c, B, T), tok, NULL, NULL, NULL};
    int nch = (T + K - 1) / K;
    trunc_ctx tc = {c, B, T, K, tok, calloc((size_t)nch, sizeof(double *)), calloc((size_t)nch, sizeof(double *)),
                    calloc((size_t)nch, sizeof(double *))};
    analytic(&w, P, an, np, K);
    for (int ci = 0; ci < nch; ci++) { /* states of the unperturbed forward (still in the tape) */
        tc.s[ci] = malloc((size_t)B * c.d * sizeof(double));
        tc.prev[ci] = malloc((size_t)B * c.d * sizeof(double));
        tc.M[ci] = malloc((size_t)(B * mem + 1) * sizeof(double));
        gpn_tape_state_f64(w.tp, ci * K, tc.s[ci], tc.prev[ci], tc.M[ci]);
    }
    fdiff(trunc_loss, P, np, &tc, fd);
    char what[128];
    snprintf(what, sizeof what, "truncated BPTT K=%d (T=%d) vs FD of truncated loss", K, T);
    check_tensors(what, &c, fd, an);
    /* the truncation must change something (else the test proves nothing) */
    analytic(&w, P, full, np, 0);
    double diff = rel(an, full, np);
    printf("  truncated vs full BPTT gradient differ by %.2e (relative)\n", diff);
    CHECK(diff > 1e-4, "truncation at K=%d did not change the gradient (%.2e)", K, diff);
    /* K >= T is full BPTT exactly */
    analytic(&w, P, an, np, T);
    double same = rel(an, full, np);
    report("truncated BPTT with K = T equals full BPTT", same);
    CHECK(same == 0.0, "K=T differs from full BPTT by %.3e", same);
    for (int ci = 0; ci < nch; ci++) { free(tc.s[ci]); free(tc.prev[ci]); free(tc.M[ci]); }
    free(tc.s); free(tc.prev); free(tc.M);
    gpn_tape_free_f64(w.tp);
    free(P); free(fd); free(an); free(full); free(tok);
}

/* ---- Transformer++ and GDN: the whole window, every parameter --------------- */

typedef struct {
    gs_arch arch;
    void *tp; /* tpp_tape_f64, gdn_tape_f64 or rt_tape_f64 */
    const int32_t *tok;
    double *grads; /* NULL: loss only */
} seq_ctx;

static double seq_run(seq_ctx *s, const double *P) {
    double loss = NAN;
    int rc = s->arch == GS_ARCH_TPP ? tpp_tape_forward_f64(s->tp, P, s->tok, s->grads, &loss)
             : s->arch == GS_ARCH_RT ? rt_tape_forward_f64(s->tp, P, s->tok, s->grads, &loss)
                                      : gdn_tape_forward_f64(s->tp, P, s->tok, s->grads, &loss);
    CHECK(rc == 0, "forward: %s", gs_error());
    if (s->grads) {
        if (s->arch == GS_ARCH_TPP) tpp_tape_backward_f64(s->tp, P, s->grads);
        else if (s->arch == GS_ARCH_RT) rt_tape_backward_f64(s->tp, P, s->grads);
        else gdn_tape_backward_f64(s->tp, P, s->grads);
    }
    return loss;
}

static double seq_loss(const double *P, void *v) {
    seq_ctx *s = v;
    s->grads = NULL;
    return seq_run(s, P);
}

static void check_seq_model(const char *label, gs_config c, int B, int T) {
    long np = (long)gs_param_count(&c);
    double *P = malloc((size_t)np * sizeof *P), *fd = malloc((size_t)np * sizeof *P), *an = calloc((size_t)np, sizeof *P);
    random_params(&c, P);
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(urand() * c.V);
    int tpp = c.arch == GS_ARCH_TPP, rt = c.arch == GS_ARCH_RT;
    seq_ctx s = {c.arch,
                 tpp ? (void *)tpp_tape_new_f64(&c, B, T) : rt ? (void *)rt_tape_new_f64(&c, B, T)
                                                              : (void *)gdn_tape_new_f64(&c, B, T),
                 tok, NULL};
    CHECK(s.tp != NULL, "tape: %s", gs_error());
    if (s.tp) {
        fdiff(seq_loss, P, np, &s, fd);
        s.grads = an;
        seq_run(&s, P);
        char what[128];
        snprintf(what, sizeof what, "%s, %ld params, B=%d T=%d", label, np, B, T);
        check_tensors(what, &c, fd, an);
        if (rt) { /* the control: without what later positions send back through K_t, V_t the check must fail */
            rt_tape_cut_recurrence_f64(s.tp, 1);
            memset(an, 0, (size_t)np * sizeof *an);
            seq_run(&s, P);
            double cut = rel(fd, an, np);
            snprintf(what, sizeof what, "%s with the through-K/V term dropped", label);
            printf("  %-44s rel err %.2e (must be far above %.0e)\n", what, cut, TOL);
            CHECK(cut > 1e-3, "%s: the gradient check does not see the recurrence (rel err %.3e)", label, cut);
        }
    }
    if (tpp) tpp_tape_free_f64(s.tp);
    else if (rt) rt_tape_free_f64(s.tp);
    else gdn_tape_free_f64(s.tp);
    free(P); free(fd); free(an); free(tok);
}

int main(void) {
    printf("ops:\n");
    check_rmsnorm(0);
    check_rmsnorm(1);
    check_matmul();
    check_fold();
    check_vec_ops();
    check_memory();

    printf("whole model (mean NLL of a window, full BPTT):\n");
    gs_config m2 = {.arch = GS_ARCH_GPN_M, .n_layers = 2, .d = 6, .e = 5, .f = 7, .H = 2, .dk = 3, .dv = 4, .V = 11,
                     .decoder_bias = 1};
    check_model("GPN+M N=2 + decoder bias", m2, 2, 6, 0);
    gs_config m1 = {.arch = GS_ARCH_GPN_M, .n_layers = 1, .d = 5, .e = 4, .f = 6, .H = 3, .dk = 2, .dv = 3, .V = 9};
    check_model("GPN+M N=1 from a carried state", m1, 2, 5, 1);
    gs_config g1 = {.arch = GS_ARCH_GPN, .n_layers = 1, .d = 6, .e = 5, .f = 8, .V = 10, .decoder_bias = 1};
    check_model("GPN + decoder bias", g1, 3, 5, 0);
    g1.decoder_bias = 0;
    check_model("GPN", g1, 2, 4, 1);

    printf("truncated BPTT:\n");
    check_truncated(m2, 2, 7, 3);

    printf("Transformer++ and Gated DeltaNet (mean NLL of the predicted tokens, the full window):\n");
    gs_config tpp = {.arch = GS_ARCH_TPP, .n_layers = 2, .d = 8, .e = 8, .f = 6, .H = 2, .dk = 4, .dv = 4, .V = 11};
    check_seq_model("Transformer++ N=2, 2 heads", tpp, 2, 7);
    gs_config gdn = {.arch = GS_ARCH_GDN, .n_layers = 2, .d = 6, .e = 6, .f = 5, .H = 2, .dk = 3, .dv = 4, .V = 9,
                      .conv = 3, .norm_eps = 1e-6f};
    check_seq_model("GDN N=2, 2 heads, conv 3", gdn, 2, 8);
    printf("Recurrent Transformer (BPTT through each layer's attention over its own earlier outputs):\n");
    gs_config rt = {.arch = GS_ARCH_RT, .n_layers = 2, .d = 6, .e = 6, .f = 10, .H = 2, .dk = 3, .dv = 3, .V = 9,
                     .norm_eps = 1e-5f, .activation = RT_ACT_GELU, .qk_norm = 1, .alibi_bias_max = 8.0f};
    check_seq_model("RT N=2, 2 heads, gelu, q/k norms", rt, 2, 7);
    gs_config rt_relu = {.arch = GS_ARCH_RT, .n_layers = 2, .d = 4, .e = 4, .f = 6, .H = 2, .dk = 2, .dv = 2,
                          .V = 7, .norm_eps = 1e-5f, .activation = RT_ACT_RELU, .alibi_bias_max = 2.0f};
    check_seq_model("RT N=2, relu, no q/k norms", rt_relu, 3, 6);

    printf("largest relative error: %.2e (tolerance %.0e)\n", worst, TOL);
    return test_summary();
}
