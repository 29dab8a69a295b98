/* The CUDA kernels' per-element math (engine/cpu/kernel_math.h), run on the CPU:
 * the column-wise memory write/read one GPU thread does per column must equal
 * the CPU engine's row-wise memory_write_read; the mergeable log-sum-exp the
 * logits kernel reduces with must give the CPU's nll, entropy and top-1 in
 * any merge order (a GPU tree reduction is one such order); the scalar
 * functions must match their float64 definitions. */
#include <stdint.h>

#include "engine/cpu/kernel_math.h"
#include "engine/cpu/ops.h"
#include "testlib.h"

static uint64_t rng = 88172645463325252ull;
static float uniform(void) { /* xorshift64*, in [-1, 1) */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (float)((rng * 2685821657736338717ull) >> 40) / (float)(1 << 23) - 1.0f;
}

static void fill(float *x, long n, float scale) {
    for (long i = 0; i < n; i++) x[i] = scale * uniform();
}

/* keys/queries as the engine makes them: relu then l2n, so some are zero */
static void relu_l2n(float *x, int H, int dk) { relu_l2norm_heads(x, 1, H, dk); }

static void test_memory_columns(int H, int dk, int dv, int with_read) {
    long mem = (long)H * dk * dv;
    float *M0 = malloc(mem * 4), *Mrow = malloc(mem * 4), *Mcol = malloc(mem * 4);
    float *k = malloc((size_t)H * dk * 4), *q = malloc((size_t)H * dk * 4), *v = malloc((size_t)H * dv * 4);
    float alpha[16], beta[16], norm_row[16], norm_col[16];
    float *o_row = calloc((size_t)H * dv, 4), *o_col = calloc((size_t)H * dv, 4);
    fill(M0, mem, 0.5f);
    fill(k, (long)H * dk, 1.0f);
    fill(q, (long)H * dk, 1.0f);
    fill(v, (long)H * dv, 2.0f);
    relu_l2n(k, H, dk);
    relu_l2n(q, H, dk);
    for (int h = 0; h < H; h++) {
        alpha[h] = 0.5f + 0.5f * (uniform() + 1.0f) / 2.0f;
        beta[h] = (uniform() + 1.0f) / 2.0f;
    }
    memcpy(Mrow, M0, mem * 4);
    memcpy(Mcol, M0, mem * 4);
    memory_pass mp = {.M = Mrow, .k = k, .v = v, .alpha = alpha, .beta = beta, .q = with_read ? q : NULL,
                      .o = with_read ? o_row : NULL, .norms = norm_row};
    memory_write_read(&mp, H, dk, dv);
    for (int h = 0; h < H; h++) {
        double ss = 0.0;
        for (int j = 0; j < dv; j++) {
            float oj = 0.0f;
            ss += gs_memory_column(Mcol + (long)h * dk * dv, k + h * dk, with_read ? q + h * dk : NULL, v[h * dv + j],
                                   alpha[h], beta[h], dk, dv, j, &oj);
            o_col[h * dv + j] = oj;
        }
        norm_col[h] = (float)sqrt(ss);
    }
    double e_m = rel_err(Mcol, Mrow, mem), e_n = rel_err(norm_col, norm_row, H);
    CHECK(e_m < 1e-6, "H%d dk%d dv%d: column write differs from the row write (rel %.2e)", H, dk, dv, e_m);
    CHECK(e_n < 1e-6, "H%d dk%d dv%d: column norms differ (rel %.2e)", H, dk, dv, e_n);
    CHECK(rel_err(Mcol, M0, mem) > 1e-3, "the write changed nothing: the test would not see a wrong update");
    if (with_read) {
        double e_o = rel_err(o_col, o_row, (long)H * dv);
        CHECK(e_o < 1e-6, "H%d dk%d dv%d: column read differs (rel %.2e)", H, dk, dv, e_o);
        /* a later layer's read of the written memory */
        float *o_read = malloc((size_t)H * dv * 4), *o_read_col = malloc((size_t)H * dv * 4);
        memory_read(o_read, q, Mrow, H, dk, dv);
        for (int h = 0; h < H; h++)
            for (int j = 0; j < dv; j++)
                o_read_col[h * dv + j] = gs_memory_read_column(Mrow + (long)h * dk * dv, q + h * dk, dk, dv, j);
        double e_r = rel_err(o_read_col, o_read, (long)H * dv);
        CHECK(e_r < 1e-6, "H%d dk%d dv%d: column read of layer > 0 differs (rel %.2e)", H, dk, dv, e_r);
        free(o_read), free(o_read_col);
    }
    printf("  memory H%-2d dk%-3d dv%-3d read=%d: column form = row form\n", H, dk, dv, with_read);
    free(M0), free(Mrow), free(Mcol), free(k), free(q), free(v), free(o_row), free(o_col);
}

/* The CPU engine carries k M from one step to the next (pred_next, found in
 * the write pass with the next step's keys): three steps so must give exactly
 * the memory, norms and reads of three steps that find k M afresh, pred_next
 * written over pred in place as the engine does. */
static void test_carried_prediction(int H, int dk, int dv) {
    long mem = (long)H * dk * dv, hk = (long)H * dk, hv = (long)H * dv;
    float *M0 = malloc(mem * 4), *Ma = malloc(mem * 4), *Mb = malloc(mem * 4);
    float *keys = malloc(4 * hk * 4), *q = malloc(hk * 4), *v = malloc(hv * 4), *pred = malloc(hv * 4);
    float *oa = malloc(hv * 4), *ob = malloc(hv * 4), alpha[16], beta[16], na[16], nb[16];
    fill(M0, mem, 0.5f);
    for (int t = 0; t < 4; t++) {
        fill(keys + t * hk, hk, 1.0f);
        relu_l2n(keys + t * hk, H, dk);
    }
    memcpy(Ma, M0, mem * 4);
    memcpy(Mb, M0, mem * 4);
    /* the carried path starts from k M of the first keys, as the last step would have left it:
     * alpha 1 and beta 0 leave M as it is, and k_next = the first keys gives their k M */
    {
        float *zero_v = calloc(hv, 4), one[16], zero[16];
        for (int h = 0; h < H; h++) one[h] = 1.0f, zero[h] = 0.0f;
        float *scratch = malloc(mem * 4);
        memcpy(scratch, M0, mem * 4);
        memory_pass probe = {.M = scratch, .k = keys, .v = zero_v, .alpha = one, .beta = zero,
                             .k_next = keys, .pred_next = pred};
        memory_write_read(&probe, H, dk, dv);
        CHECK(rel_err(scratch, M0, mem) == 0.0, "alpha 1, beta 0 changed the memory");
        free(zero_v), free(scratch);
    }
    int differ = 0;
    for (int t = 0; t < 3; t++) {
        fill(v, hv, 2.0f);
        fill(q, hk, 1.0f);
        relu_l2n(q, H, dk);
        for (int h = 0; h < H; h++) {
            alpha[h] = 0.5f + 0.25f * (uniform() + 1.0f);
            beta[h] = (uniform() + 1.0f) / 2.0f;
        }
        memory_pass afresh = {.M = Ma, .k = keys + t * hk, .v = v, .alpha = alpha, .beta = beta, .q = q, .o = oa,
                              .norms = na};
        memory_pass carried = {.M = Mb, .k = keys + t * hk, .v = v, .alpha = alpha, .beta = beta, .pred = pred,
                               .q = q, .o = ob, .k_next = keys + (t + 1) * hk, .pred_next = pred, .norms = nb};
        memory_write_read(&afresh, H, dk, dv);
        memory_write_read(&carried, H, dk, dv);
        differ += memcmp(Ma, Mb, mem * 4) != 0;
        differ += memcmp(oa, ob, hv * 4) != 0;
        differ += memcmp(na, nb, H * 4) != 0;
    }
    CHECK(differ == 0, "H%d dk%d dv%d: carrying k M changed %d results of 9", H, dk, dv, differ);
    CHECK(rel_err(Ma, M0, mem) > 1e-3, "the writes changed nothing: the test would not see a wrong update");
    printf("  memory H%-2d dk%-3d dv%-3d: k M carried between steps = found afresh, bit for bit\n", H, dk, dv);
    free(M0), free(Ma), free(Mb), free(keys), free(q), free(v), free(pred), free(oa), free(ob);
}

/* Reduce a row of logits like the GPU: each of `threads` lanes pushes a
 * strided slice, then lanes merge pairwise in a butterfly tree. */
static gs_lse tree_lse(const float *z, int V, int threads) {
    gs_lse lane[1024];
    for (int t = 0; t < threads; t++) {
        lane[t] = gs_lse_empty();
        for (int i = t; i < V; i += threads) lane[t] = gs_lse_push(lane[t], z[i], i);
    }
    for (int stride = threads / 2; stride > 0; stride /= 2)
        for (int t = 0; t < stride; t++) lane[t] = gs_lse_merge(lane[t], lane[t + stride]);
    return lane[0];
}

static void test_logits(int V, float scale, int planted_tie) {
    float *z = malloc((size_t)V * 4);
    fill(z, V, scale);
    int target = V / 3;
    if (planted_tie) { /* the first index of the maximum wins, as on the CPU */
        z[V - 5] = 4.0f * scale;
        z[7] = 4.0f * scale;
    }
    float nll, ent;
    int top;
    logits_stats(z, &target, 1, V, &nll, &ent, &top);
    int threads_list[] = {1, 32, 512};
    for (int k = 0; k < 3; k++) {
        gs_lse a = tree_lse(z, V, threads_list[k]);
        float g_nll = gs_lse_logz(a) - z[target], g_ent = gs_lse_entropy(a);
        CHECK(fabsf(g_nll - nll) <= 1e-4f * fmaxf(1.0f, fabsf(nll)), "V %d, %d lanes: nll %.6f vs CPU %.6f", V,
              threads_list[k], g_nll, nll);
        CHECK(fabsf(g_ent - ent) <= 1e-4f * fmaxf(1.0f, fabsf(ent)), "V %d, %d lanes: entropy %.6f vs CPU %.6f", V,
              threads_list[k], g_ent, ent);
        CHECK(a.best == top, "V %d, %d lanes: top-1 %d vs CPU %d", V, threads_list[k], a.best, top);
    }
    if (planted_tie) CHECK(top == 7, "CPU top-1 of a tie should be the first index, got %d", top);
    printf("  logits V %-6d scale %-4g tie=%d: nll %.4f entropy %.4f top1 %d in every merge order\n", V, scale,
           planted_tie, nll, ent, top);
    free(z);
}

/* logits a hook banned (-inf): finite answers, equal on both forms */
static void test_banned_logits(void) {
    float z[] = {-INFINITY, -INFINITY, 1.0f, 2.0f, -INFINITY, 0.5f, 3.0f, -1.0f, -INFINITY, -INFINITY};
    int V = (int)(sizeof z / sizeof *z), target = 3;
    float nll, ent;
    int top;
    logits_stats(z, &target, 1, V, &nll, &ent, &top);
    double s = exp(1.0) + exp(2.0) + exp(0.5) + exp(3.0) + exp(-1.0), logz = log(s);
    double want_ent = logz - (1 * exp(1.0) + 2 * exp(2.0) + 0.5 * exp(0.5) + 3 * exp(3.0) - exp(-1.0)) / s;
    CHECK(fabs(nll - (logz - 2.0)) < 1e-5 && fabs(ent - want_ent) < 1e-5 && top == 6,
          "CPU with -inf logits: nll %g (want %g) entropy %g (want %g) top1 %d", nll, logz - 2.0, ent, want_ent, top);
    for (int threads = 1; threads <= 8; threads *= 2) {
        gs_lse a = tree_lse(z, V, threads);
        float g_nll = gs_lse_logz(a) - z[target], g_ent = gs_lse_entropy(a);
        CHECK(fabsf(g_nll - nll) < 1e-5f && fabsf(g_ent - ent) < 1e-5f && a.best == top,
              "%d lanes with -inf logits: nll %g entropy %g top1 %d, CPU %g %g %d", threads, g_nll, g_ent, a.best, nll,
              ent, top);
    }
    printf("  logits with -inf entries: nll %.4f entropy %.4f on both forms\n", nll, ent);
}

/* A NaN logit leaves no distribution: nll and entropy NaN; top-1 the
 * largest of the other logits (wherever the NaN is, in either lane of the
 * vectorized maximum), 0 when all are NaN. */
static void test_nan_logits(void) {
    float z[19];
    struct { int nan_at, max_at, V; } cases[] = {{3, 11, 16}, {0, 8, 16}, {9, 1, 19}, {12, 18, 19}, {2, 5, 7}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int V = cases[c].V, target = 1, top = -1;
        for (int i = 0; i < V; i++) z[i] = (float)(i % 5) * 0.25f;
        z[cases[c].max_at] = 5.0f;
        z[cases[c].nan_at] = NAN;
        float nll = 0, ent = 0;
        logits_stats(z, &target, 1, V, &nll, &ent, &top);
        CHECK(isnan(nll) && isnan(ent) && top == cases[c].max_at, "V %d NaN at %d, max at %d: nll %g entropy %g top1 %d",
              V, cases[c].nan_at, cases[c].max_at, nll, ent, top);
    }
    for (int i = 0; i < 19; i++) z[i] = NAN;
    int target = 0, top = -1;
    float nll = 0, ent = 0;
    logits_stats(z, &target, 1, 19, &nll, &ent, &top);
    CHECK(isnan(nll) && isnan(ent) && top == 0, "all NaN: nll %g entropy %g top1 %d", nll, ent, top);
    printf("  logits with a NaN: nll and entropy NaN, top-1 the largest other logit\n");
}

static void test_scalars(void) {
    double worst = 0.0;
    for (int i = -400; i <= 400; i++) {
        float x = i * 0.1f;
        double xd = x;
        double sp = xd > 30 ? xd : log1p(exp(xd));
        double want[] = {1 / (1 + exp(-xd)), xd / (1 + exp(-xd)), sp};
        float got[] = {gs_sigmoid(x), gs_silu(x), gs_softplus(x)};
        for (int k = 0; k < 3; k++) {
            double e = fabs(got[k] - want[k]) / fmax(1e-30, fmax(fabs(want[k]), 1e-6));
            if (e > worst) worst = e;
        }
        float A_log = 0.1f * (i % 25), dt = -2.0f + 0.01f * (i % 300);
        double alpha = exp(-exp((double)A_log) * log1p(exp(xd + dt)));
        double e = fabs(gs_decay(x, A_log, dt) - alpha);
        CHECK(e < 1e-6 + 1e-5 * alpha, "decay(%g, %g, %g) = %g, want %g", x, A_log, dt, gs_decay(x, A_log, dt), alpha);
    }
    CHECK(worst < 1e-5, "sigmoid/silu/softplus: worst relative error %.2e", worst);
    CHECK(fabsf(gs_rms_scale(4.0f * 3, 3) - 1.0f / sqrtf(4.0f + GPN_RMS_EPS)) < 1e-7f, "rms scale");
    CHECK(gs_lse_merge(gs_lse_empty(), gs_lse_empty()).s == 0.0f, "empty merge stays empty");
    printf("  scalars: worst relative error %.2e over [-40, 40]\n", worst);
}

/* The vectorized SiLU and exp (ops.c) against the scalar forms in double:
 * within 1e-6 relative (plus 1e-30 absolute, for values that underflow) over
 * a range wider than any activation, both arguments' signs, the NaN and
 * infinities, out aliasing the input, and every length's tail. */
static void test_vector_silu_exp(void) {
    enum { N = 4099 };
    static float g[N], v[N], out[N], x[N], y[N];
    for (int i = 0; i < N; i++) {
        g[i] = 40.0f * uniform(); /* [-40, 40) */
        v[i] = uniform();
        x[i] = -100.0f * (uniform() + 1.0f) / 2.0f; /* [-100, 0] */
    }
    g[0] = 0.0f, g[1] = -0.0f, g[2] = 1e-30f, g[3] = -88.0f, g[4] = 88.0f;
    x[0] = 0.0f, x[1] = -87.5f, x[2] = -INFINITY, x[3] = -1e-8f;
    double worst_silu = 0, worst_exp = 0;
    for (long n = 1; n <= N; n = n * 3 + 1) {
        silu_mul(out, g, v, n);
        for (long i = 0; i < n; i++) {
            double want = (double)g[i] / (1.0 + exp(-(double)g[i])) * v[i];
            double err = fabs(out[i] - want) / (fabs(want) + 1e-30);
            if (fabs(out[i] - want) > 1e-30 && err > worst_silu) worst_silu = err;
        }
        exp_nonpositive_n(y, x, n);
        for (long i = 0; i < n; i++) {
            double want = exp((double)x[i]), err = fabs(y[i] - want) / (want + 1e-30);
            if (fabs(y[i] - want) > 1e-30 && err > worst_exp) worst_exp = err;
        }
    }
    CHECK(worst_silu < 1e-6, "silu_mul: worst relative error %.2e", worst_silu);
    CHECK(worst_exp < 1e-6, "exp_nonpositive_n: worst relative error %.2e", worst_exp);
    float special[4] = {NAN, INFINITY, -INFINITY, 2.0f}, r[4];
    silu_mul(r, special, NULL, 4);
    CHECK(isnan(r[0]) && isinf(r[1]) && r[1] > 0 && r[2] == 0.0f && fabsf(r[3] - 2.0f / (1.0f + expf(-2.0f))) < 1e-6f,
          "silu of NaN, inf, -inf, 2: %g %g %g %g", r[0], r[1], r[2], r[3]);
    memcpy(out, g, sizeof g); /* in place, as the engine calls it */
    silu_mul(out, out, NULL, N);
    silu_mul_pooled(y, g, NULL, N);
    CHECK(!memcmp(out, y, sizeof y), "silu in place or over the pool differs from silu into a new array");
}

/* softmax_rows (the window paths' attention) against softmax in double of
 * the same float differences p - max (their rounding, up to |p - max| 2^-24,
 * is the scalar softmax's too): within 1e-6 relative at lengths with and
 * without a vector tail, a row
 * with -inf (a weight of 0), and a NaN making the row NaN */
static void test_softmax_rows(void) {
    static float p[1031];
    double worst = 0;
    int lens[] = {1, 7, 8, 9, 64, 1031};
    for (int k = 0; k < 6; k++) {
        int n = lens[k];
        for (int i = 0; i < n; i++) p[i] = 12.0f * uniform();
        double mx = -INFINITY, sum = 0, want[1031];
        for (int i = 0; i < n; i++) mx = p[i] > mx ? p[i] : mx;
        for (int i = 0; i < n; i++) sum += want[i] = exp((double)(p[i] - (float)mx));
        softmax_rows(p, n);
        for (int i = 0; i < n; i++) {
            double err = fabs(p[i] - want[i] / sum) / (want[i] / sum);
            worst = err > worst ? err : worst;
        }
    }
    CHECK(worst < 1e-6, "softmax_rows: worst relative error %.2e", worst);
    float q[3] = {0.0f, -INFINITY, 0.0f}, r[3] = {1.0f, NAN, 2.0f};
    softmax_rows(q, 3);
    softmax_rows(r, 3);
    CHECK(fabsf(q[0] - 0.5f) < 1e-7f && q[1] == 0.0f && fabsf(q[2] - 0.5f) < 1e-7f, "softmax of 0, -inf, 0: %g %g %g",
          q[0], q[1], q[2]);
    CHECK(isnan(r[0]) && isnan(r[1]) && isnan(r[2]), "softmax of a row with a NaN: %g %g %g", r[0], r[1], r[2]);
}

int main(void) {
    test_scalars();
    test_memory_columns(3, 8, 16, 1);
    test_memory_columns(8, 32, 64, 1);
    test_memory_columns(2, 33, 17, 0);
    test_carried_prediction(3, 8, 16);
    test_carried_prediction(15, 128, 256);
    test_carried_prediction(2, 33, 17);
    test_logits(1000, 1.0f, 0);
    test_logits(32000, 8.0f, 0);
    test_logits(32000, 3.0f, 1);
    test_banned_logits();
    test_nan_logits();
    test_vector_silu_exp();
    test_softmax_rows();
    return test_summary();
}
