/* bench/attention: the effective-attention sweep (gpnscope attention,
 * analyses/causal/effective_attention.h) at the shipped model's size: GPN+M with
 * H = 8 heads of d_k = 32, d_v = 64, one layer (models/gpnm-small; a random
 * model of that config when the file is absent).
 *
 * Cost model. Query t carries r back through t + 1 writes; per write: k.r
 * (d_k multiply-adds), the update r <- alpha r - a k (d_k), and for the
 * heuristic k.q (d_k). So the weights of one head over a window of T are
 *     3 d_k T (T + 1) / 2  multiply-adds  ~ 1.5 d_k T^2,
 * the read check adds d_v T (T + 1) / 2 per weight matrix (exact and
 * heuristic: ~ d_v T^2), and a window costs H x layers times that. Scratch:
 * two T x T double matrices (16 T^2 bytes). The capture is the engine's own
 * forward pass plus copying 2 d_k + 2 d_v + 2 floats per head and step.
 *
 * Rows per T: the engine's forward pass over one window with the capture
 * attached; the weights (exact + heuristic) of every head; the same plus the
 * read check and per-query statistics; the multiply-add rate of the weights
 * (which a true O(T^2 d_k) loop keeps flat as T grows); and the time the cost
 * model predicts from the smallest T's rate. Each timed REPS times, the
 * fastest kept. Not a test: the numbers depend on the machine.
 *
 * usage: bench_attention [MODEL [TMAX [REPS]]]
 *   (default models/gpnm-small/model.safetensors 1024 3; T = 128, 256, ... TMAX) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/causal/effective_attention.h"
#include "base/error.h"
#include "base/prng.h"
#include "engine/arch/family.h"
#include "engine/model.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    gs_delta_trace copy; /* the captured window, kept past the capture's lifetime */
    int have;
} keep_ctx;

static int keep(void *ctx, int64_t w, const gs_delta_trace *tr) {
    (void)w;
    keep_ctx *k = ctx;
    if (k->have) return 0;
    k->copy = *tr;
    float **f[6] = {&k->copy.q, &k->copy.read, &k->copy.k, &k->copy.v, &k->copy.alpha, &k->copy.beta};
    const float *src[6] = {tr->q, tr->read, tr->k, tr->v, tr->alpha, tr->beta};
    size_t n[6] = {(size_t)tr->n_layers * tr->T * tr->H * tr->dk, (size_t)tr->n_layers * tr->T * tr->H * tr->dv,
                   (size_t)tr->n_writes * tr->T * tr->H * tr->dk, (size_t)tr->n_writes * tr->T * tr->H * tr->dv,
                   (size_t)tr->n_writes * tr->T * tr->H, (size_t)tr->n_writes * tr->T * tr->H};
    for (int i = 0; i < 6; i++) {
        if (!(*f[i] = malloc(n[i] * sizeof(float)))) return gs_fail("out of memory");
        memcpy(*f[i], src[i], n[i] * sizeof(float));
    }
    k->have = 1;
    return 0;
}

static int tokens_of(void *ctx, int64_t w, int32_t *tokens) {
    const int *TV = ctx;
    uint64_t r = 12345 + (uint64_t)w;
    for (int t = 0; t < TV[0]; t++) tokens[t] = (int32_t)(gs_splitmix64(&r) % (uint64_t)TV[1]);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "models/gpnm-small/model.safetensors";
    int tmax = argc > 2 ? atoi(argv[2]) : 1024, reps = argc > 3 ? atoi(argv[3]) : 3;
    if (tmax < 128 || reps < 1) { fprintf(stderr, "usage: bench_attention [MODEL [TMAX >= 128 [REPS >= 1]]]\n"); return 2; }
    gs_model *m = gs_model_load(path);
    if (!m) {
        gs_config c = {.n_layers = 1, .d = 256, .e = 96, .f = 640, .H = 8, .dk = 32, .dv = 64, .V = 32000};
        fprintf(stderr, "bench_attention: %s (a random model of gpnm-small's config instead)\n", gs_error());
        gs_family_config("gpn_m", &c);
        if (!(m = gs_model_random(&c, 1))) { fprintf(stderr, "bench_attention: %s\n", gs_error()); return 1; }
    }
    const gs_config *c = &m->cfg;
    printf("effective attention: GPN+M H=%d d_k=%d d_v=%d layers=%d, one window per row, fastest of %d\n", c->H, c->dk,
           c->dv, c->n_layers, reps);
    printf("cost model: weights 1.5 d_k T^2 multiply-adds per head (exact + heuristic), check + d_v T^2, x H x layers\n\n");
    printf("%6s %12s %12s %14s %12s %14s %10s\n", "T", "forward ms", "weights ms", "w+check ms", "Gmadd/s", "model ms", "meas/model");
    double rate0 = 0;
    for (int T = 128; T <= tmax; T *= 2) {
        gs_engine *e = gs_engine_new(m, 1);
        keep_ctx k = {0};
        gs_delta_capture *cap = e ? gs_delta_capture_new(e, T, keep, &k) : NULL;
        if (!cap) { fprintf(stderr, "bench_attention: %s\n", gs_error()); return 1; }
        int TV[2] = {T, c->V};
        runner_sink sink = gs_delta_capture_sink(cap);
        runner_opts ro = {.engine = e, .T = T, .first = 0, .total = 1, .window = tokens_of, .window_ctx = TV};
        double fwd = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            if (runner_run(&ro, &sink, 1, NULL)) { fprintf(stderr, "bench_attention: %s\n", gs_error()); return 1; }
            double dt = now() - t0;
            if (dt < fwd) fwd = dt;
        }
        gs_delta_capture_free(cap);
        gs_engine_free(e);
        double *a = malloc((size_t)T * T * sizeof *a), *h = malloc((size_t)T * T * sizeof *h);
        if (!a || !h) { fprintf(stderr, "bench_attention: out of memory at T = %d\n", T); return 1; }
        double wt = 1e30, ct = 1e30, sink_sum = 0;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            for (int l = 0; l < c->n_layers; l++)
                for (int hd = 0; hd < c->H; hd++) gs_delta_weights(&k.copy, l, hd, a, h), sink_sum += a[(size_t)T * T - 1];
            double t1 = now();
            for (int l = 0; l < c->n_layers; l++)
                for (int hd = 0; hd < c->H; hd++) {
                    gs_delta_weights(&k.copy, l, hd, a, h);
                    for (int t = 0; t < T; t++) {
                        gs_delta_query_stats s;
                        gs_delta_query_stats_of(&k.copy, l, hd, a, h, t, &s);
                        sink_sum += s.read_error;
                    }
                }
            double t2 = now();
            if (t1 - t0 < wt) wt = t1 - t0;
            if (t2 - t1 < ct) ct = t2 - t1;
        }
        double madds = 1.5 * c->dk * (double)T * (T + 1) * c->H * c->n_layers;
        double rate = madds / wt;
        if (rate0 == 0) rate0 = rate;
        double model = madds / rate0;
        printf("%6d %12.1f %12.1f %14.1f %12.2f %14.1f %10.2f\n", T, fwd * 1e3, wt * 1e3, ct * 1e3, rate * 1e-9,
               model * 1e3, wt / model);
        if (sink_sum == 12345.678) printf(" ");
        free(a);
        free(h);
        float *f[6] = {k.copy.q, k.copy.read, k.copy.k, k.copy.v, k.copy.alpha, k.copy.beta};
        for (int i = 0; i < 6; i++) free(f[i]);
    }
    gs_model_free(m);
    return 0;
}
