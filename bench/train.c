/* bench_train: training throughput (tokens/s of a whole optimizer step:
 * forward, BPTT backward, AdamW) of every trainable family (GPN+M, and the
 * Transformer++, GDN and Recurrent Transformer at their shipped shapes) next to the
 * GEMM-only ceiling for the same
 * shapes, timed in the same run: every SGEMM the step issues (per-step
 * projections of B rows, the batched decode head and weight gradients), with
 * the same sizes, called back to back on resident buffers. The ratio is the
 * share of the ceiling the trainer reaches; the rest is the memory loops,
 * elementwise ops, softmax and the optimizer.
 *
 *   bench_train [--steps N] [--threads N] [--only small|medium|gpnm15-small|tpp-small|gdn-small|rt-small] [--cpu]
 *
 * --cpu times with this thread's CPU clock instead of the wall clock; with
 * --threads 1 that is robust to other processes on a shared machine.
 */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/arch/rt/rt.h"
#include "train/adamw.h"
#include "engine/tape/train_family.h"
#include "engine/tape/train_init.h"
#include "engine/arch/gpn/gpn_train.h"

typedef struct {
    const char *name;
    const char *family; /* its row's name: run() sets c.arch from it */
    gs_config c;
    int B, T;
} bench_cfg;

static int use_cpu_time; /* --cpu: this thread's CPU time (with --threads 1: robust on a busy machine) */

static double now(void) {
    struct timespec ts;
    clock_gettime(use_cpu_time ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The GEMMs of one training step, as engine/arch/gpn/gpn_train.inc issues them. */
typedef struct { int ta, tb, M, N, K, reps; } gemm_shape;

static int step_gemms(const gs_config *c, int B, int T, gemm_shape *g) {
    train_layout L;
    train_layout_init(&L, c);
    int n = 0, d = c->d, e = c->e, V = c->V, N = c->n_layers, zw = L.zw, BT = B * T;
    int chunk = (1 << 22) / V;
    if (chunk < 1) chunk = 1;
    if (chunk > BT) chunk = BT;
    int nchunk = (BT + chunk - 1) / chunk;
#define G(a, b, m, nn, k, r) (g[n++] = (gemm_shape){a, b, m, nn, k, r})
    G(0, 0, BT, d, e, 1); /* grounding input */
    for (int j = 0; j <= N; j++) {
        G(0, 0, B, L.set[j].width, d, T);  /* forward projection */
        G(0, 1, B, d, L.set[j].width, T);  /* backward dx */
        G(1, 0, d, L.set[j].width, BT, 1); /* weight gradient */
    }
    for (int j = 0; j < N; j++) {
        G(0, 0, B, d, zw, T);  /* [h | read] @ [W2; Wo] */
        G(0, 1, B, zw, d, T);  /* backward */
        G(1, 0, zw, d, BT, 1); /* weight gradient */
    }
    G(0, 0, BT, e, d, 1);          /* decode projection */
    G(0, 1, chunk, V, e, nchunk);  /* logits */
    G(0, 0, chunk, e, V, nchunk);  /* dz */
    G(1, 0, V, e, chunk, nchunk);  /* dE (tied output) */
    G(1, 0, d, e, BT, 1);          /* dP */
    G(0, 1, BT, d, e, 1);          /* dx of the decode */
    G(1, 0, e, d, BT, 1);          /* dF */
    G(0, 1, BT, e, d, 1);          /* d emb */
#undef G
    return n;
}

/* The GEMMs of one Transformer++ / GDN step, as tpp_train.inc / gdn_train.inc
 * (through seq_common.inc's linear_forward / linear_backward) issue them. */
static int linear_gemms(gemm_shape *g, int n, int rows, int in, int out) {
    g[n++] = (gemm_shape){0, 1, rows, out, in, 1}; /* forward */
    g[n++] = (gemm_shape){0, 0, rows, in, out, 1}; /* dX */
    g[n++] = (gemm_shape){1, 0, out, in, rows, 1}; /* dW */
    return n;
}

/* a projection on the Recurrent Transformer's walk: forward and dX one position of the B sequences at a time
 * (T calls of B rows), the weight gradient once over every row after the walk (engine/arch/rt/rt_train.inc) */
static int walked_gemms(gemm_shape *g, int n, int B, int T, int in, int out) {
    g[n++] = (gemm_shape){0, 1, B, out, in, T};     /* forward */
    g[n++] = (gemm_shape){0, 0, B, in, out, T};     /* dX */
    g[n++] = (gemm_shape){1, 0, out, in, B * T, 1}; /* dW */
    return n;
}

static int seq_step_gemms(const gs_config *c, int B, int T, gemm_shape *g) {
    int n = 0, R = B * T, d = c->d, f = c->f, H = c->H, V = c->V;
    int chunk = (1 << 24) / V;
    if (chunk < 1) chunk = 1;
    if (chunk > R) chunk = R;
    int nchunk = (R + chunk - 1) / chunk, K = H * c->dk, Vd = H * c->dv;
    for (int l = 0; l < c->n_layers; l++) {
        if (gs_family_is(c, "transformer++")) {
            for (int i = 0; i < 4; i++) n = linear_gemms(g, n, R, d, d); /* W_q, W_k, W_v, W_o */
            n = linear_gemms(g, n, R, d, 2 * f);                         /* w1 */
            n = linear_gemms(g, n, R, f, d);                             /* w2 */
            int Dh = c->dk;
            g[n++] = (gemm_shape){0, 1, T, T, Dh, B * H}; /* scores */
            g[n++] = (gemm_shape){0, 0, T, Dh, T, B * H}; /* P v */
            g[n++] = (gemm_shape){0, 1, T, T, Dh, B * H}; /* dP */
            g[n++] = (gemm_shape){1, 0, T, Dh, T, B * H}; /* dv */
            g[n++] = (gemm_shape){0, 0, T, Dh, T, B * H}; /* dq */
            g[n++] = (gemm_shape){1, 0, T, Dh, T, B * H}; /* dk */
        } else if (gs_family_is(c, "recurrent-transformer")) { /* its attention is loops over the keys, no GEMM */
            n = linear_gemms(g, n, R, d, d);           /* q_proj */
            n = linear_gemms(g, n, R, d, 2 * d);       /* kv_proj of the input: the diagonal key and value */
            n = walked_gemms(g, n, B, T, d, d);        /* attn_out */
            n = walked_gemms(g, n, B, T, d, f);        /* ff_proj */
            n = walked_gemms(g, n, B, T, f, d);        /* ff_out */
            n = walked_gemms(g, n, B, T, d, 2 * d);    /* kv_proj of the output: the recurrent key and value */
        } else {
            n = linear_gemms(g, n, R, d, K);  /* q_proj */
            n = linear_gemms(g, n, R, d, K);  /* k_proj */
            n = linear_gemms(g, n, R, d, Vd); /* v_proj */
            n = linear_gemms(g, n, R, d, H);  /* a_proj */
            n = linear_gemms(g, n, R, d, H);  /* b_proj */
            n = linear_gemms(g, n, R, d, Vd); /* g_proj */
            n = linear_gemms(g, n, R, Vd, d); /* o_proj */
            n = linear_gemms(g, n, R, d, f);  /* gate_proj */
            n = linear_gemms(g, n, R, d, f);  /* up_proj */
            n = linear_gemms(g, n, R, f, d);  /* down_proj */
        }
    }
    g[n++] = (gemm_shape){0, 1, chunk, V, d, nchunk}; /* logits */
    g[n++] = (gemm_shape){0, 0, chunk, d, V, nchunk}; /* dX of the head */
    g[n++] = (gemm_shape){1, 0, V, d, chunk, nchunk}; /* d of the embedding / lm_head */
    return n;
}

static double gemm_flops(const gemm_shape *g, int n) {
    double f = 0;
    for (int i = 0; i < n; i++) f += 2.0 * g[i].M * g[i].N * (double)g[i].K * g[i].reps;
    return f;
}

typedef struct {
    float *A, *B, *C;
} gemm_bufs;

static void gemm_bufs_init(gemm_bufs *b, const gemm_shape *g, int n) {
    size_t amax = 0, bmax = 0, cmax = 0;
    for (int i = 0; i < n; i++) {
        size_t a = (size_t)g[i].M * g[i].K, bb = (size_t)g[i].K * g[i].N, c = (size_t)g[i].M * g[i].N;
        if (a > amax) amax = a;
        if (bb > bmax) bmax = bb;
        if (c > cmax) cmax = c;
    }
    b->A = malloc(amax * 4);
    b->B = malloc(bmax * 4);
    b->C = calloc(cmax, 4);
    for (size_t i = 0; i < amax; i++) b->A[i] = (float)((i * 7919) % 1000) * 1e-3f;
    for (size_t i = 0; i < bmax; i++) b->B[i] = (float)((i * 104729) % 1000) * 1e-3f;
}

/* one pass over the GEMM list; seconds */
static double time_gemms(const gemm_bufs *b, const gemm_shape *g, int n) {
    double t0 = now();
    for (int i = 0; i < n; i++) {
        const gemm_shape *s = &g[i];
        int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
        for (int k = 0; k < s->reps; k++)
            cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->M, s->N,
                        s->K, 1.0f, b->A, lda, b->B, ldb, 0.0f, b->C, s->N);
    }
    return now() - t0;
}

static int run(const bench_cfg *bc, int steps) {
    gs_config cfg = bc->c;
    const gs_config *c = &cfg;
    if (gs_family_config(bc->family, &cfg) != 0) { fprintf(stderr, "bench_train: %s\n", gs_error()); return 1; }
    gs_model *m = gs_model_new(c);
    if (!m) { fprintf(stderr, "bench_train: %s\n", gs_error()); return 1; }
    const gs_train_i *tr = gs_family_of(c)->train; /* the trainer's own entry: the same tape it runs */
    train_rng r;
    train_rng_seed(&r, 1);
    tr->init(c, m->block, &r);
    adamw_config oc = {.lr = 3e-4, .min_lr_ratio = 0.1, .warmup = 0, .total_steps = 1000, .beta1 = 0.9, .beta2 = 0.95,
                       .eps = 1e-8, .weight_decay = 0.1, .clip = 1.0};
    adamw *opt = adamw_new(c, &oc);
    float *grads = calloc(m->n_params, 4);
    int B = bc->B, T = bc->T;
    void *tp = tr->tape_new(c, B, T);
    int32_t *tok = malloc((size_t)B * T * 4);
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(train_rng_next(&r) % (uint64_t)c->V);
    if (!tp || !opt || !grads) { fprintf(stderr, "bench_train: %s\n", gs_error()); return 1; }
    gemm_shape g[64 + 30 * GS_MAX_LAYERS];
    int seq = tr != &gs_train_gpn && tr != &gs_train_gpn_m; /* the sequence tapes (engine/tape/seq_tape.h), not GPN's */
    int ng = seq ? seq_step_gemms(c, B, T, g) : step_gemms(c, B, T, g);
    gemm_bufs gb;
    gemm_bufs_init(&gb, g, ng);
    double flops = gemm_flops(g, ng);
    /* train steps and GEMM passes interleaved, best of each: a busy machine slows both alike */
    double best = 1e30, tg = 1e30, tf = 0, tb = 0, to = 0;
    for (int s = 0; s <= steps; s++) { /* round 0 warms up */
        double loss, t0 = now();
        memset(grads, 0, m->n_params * 4);
        tr->forward(tp, m->block, tok, grads, &loss);
        double t1 = now();
        tr->backward(tp, m->block, grads, 0);
        double t2 = now(), lr;
        adamw_step(opt, m->block, grads, &lr);
        double t3 = now();
        if (s > 0 && t3 - t0 < best) { best = t3 - t0; tf = t1 - t0; tb = t2 - t1; to = t3 - t2; }
        double tgs = time_gemms(&gb, g, ng);
        if (s > 0 && tgs < tg) tg = tgs;
    }
    free(gb.A);
    free(gb.B);
    free(gb.C);
    double tokens = (double)B * T;
    printf("%-12s %8.2fM %4dx%-4d %9.0f %9.0f %7.1f%% %8.1f %8.1f   fwd %.0f%% bwd %.0f%% adamw %.0f%%  (%zu MB)\n",
           bc->name, m->n_params / 1e6, B, T, tokens / best, tokens / tg, 100.0 * tg / best, flops / best * 1e-9,
           flops / tg * 1e-9, 100 * tf / best, 100 * tb / best, 100 * to / best, tr->tape_bytes(c, B, T) >> 20);
    tr->tape_free(tp);
    adamw_free(opt);
    gs_model_free(m);
    free(grads);
    free(tok);
    return 0;
}

int main(int argc, char **argv) {
    int steps = 5, threads = 0;
    const char *only = NULL;
    static const struct option opts[] = {{"steps", required_argument, 0, 's'}, {"threads", required_argument, 0, 't'},
                                         {"only", required_argument, 0, 'o'}, {"cpu", no_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (ch == 's') steps = atoi(optarg);
        else if (ch == 't') threads = atoi(optarg);
        else if (ch == 'o') only = optarg;
        else if (ch == 'c') use_cpu_time = 1;
        else {
            printf("usage: bench_train [--steps N] [--threads N] [--cpu]\n"
                   "                   [--only small|medium|gpnm15-small|tpp-small|gdn-small|rt-small]\n"
                   "  training tokens/s (best of N steps after one warm-up) next to the GEMM-only ceiling\n"
                   "  measured in the same run; --cpu: thread CPU time (use with --threads 1)\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (use_cpu_time && threads != 1) {
        fprintf(stderr, "bench_train: --cpu measures one thread; add --threads 1\n");
        return 2;
    }
    if (threads > 0) openblas_set_num_threads(threads);
    /* LLaMA-2 vocabulary: the decode head and tied embedding are a large share of the work */
    bench_cfg cfgs[] = {
        {"small", "gpn_m", {.n_layers = 1, .d = 128, .e = 64, .f = 256, .H = 8, .dk = 16, .dv = 16,
                   .V = 32000}, 8, 64},
        {"medium", "gpn_m", {.n_layers = 1, .d = 384, .e = 96, .f = 768, .H = 8, .dk = 32, .dv = 48,
                    .V = 32000}, 16, 128},
        /* the three configs trained under one budget (configs/gpnm15-small.json, tpp-small.json, gdn-small.json),
         * at their shapes and windows */
        {"gpnm15-small", "gpn_m", {.n_layers = 1, .d = 256, .e = 96, .f = 640, .H = 15, .dk = 32,
                          .dv = 64, .V = 32000}, 8, 512},
        {"tpp-small", "transformer++", {.n_layers = 4, .d = 128, .e = 128, .f = 320, .H = 4, .dk = 32, .dv = 32,
                       .V = 32000, .norm_eps = 1e-6f}, 8, 512},
        {"gdn-small", "gdn", {.n_layers = 4, .d = 64, .e = 64, .f = 512, .H = 4, .dk = 16, .dv = 32,
                       .V = 32000, .conv = 4, .norm_eps = 1e-6f}, 8, 512},
        /* configs/rt-small.json under the same budget: the paper's options (GELU, q/k LayerNorms, ALiBi 8) */
        {"rt-small", "recurrent-transformer", {.n_layers = 4, .d = 72, .e = 72, .f = 288, .H = 4, .dk = 18, .dv = 18,
                      .V = 32000, .norm_eps = 1e-5f, .activation = RT_ACT_GELU, .qk_norm = 1, .alibi_bias_max = 8.0f}, 8, 512},
    };
    printf("config        params  BxT       train tok/s  GEMM tok/s  ratio  GFLOP/s (train, GEMM only)\n");
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
        if (!only || !strcmp(only, cfgs[i].name))
            if (run(&cfgs[i], steps) != 0) return 1;
    return 0;
}
