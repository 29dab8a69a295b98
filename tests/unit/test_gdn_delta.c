/* GDN's delta rule in two sweeps over S (engine/arch/gdn/gdn_delta.c)
 * against the recurrence as fla's naive_recurrent_gated_delta_rule writes it,
 * one sweep per step, and the batched engine that calls it:
 *
 * 1. the kernel: several tokens on random states, odd d_k and d_v and the
 *    paper's 128 x 256, with and without the read of o: S, u and o equal the
 *    four-sweep recurrence bit for bit (both round every value the same way);
 * 2. the batch step: a random GDN model with odd d_k and d_v at batch 2, 5
 *    and 17, every sequence's logits and NLL at every step against the same
 *    sequence alone at batch 1, < 1e-5 relative as in
 *    test_family_incremental.c (not bit for bit: batch 1's projections are
 *    GEMVs, a batch's are GEMMs, and OpenBLAS sums each in its own order;
 *    that alone leaves about 1.2e-6 on the logits here, 5e-7 between two
 *    batch sizes; the delta rule's own rounding is part 1's, bit for bit);
 * 3. the read fused into the write against the separate read the engine runs
 *    when a hook is on the state (a no-op one here): the same bits. */
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/arch/gdn/gdn_delta.h"
#include "engine/engine.h"
#include "testlib.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float uniform(float lo, float hi) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (float)((rng >> 40) / 16777216.0);
}

/* fla's naive recurrence for one token, a sweep of S per line of it:
 *   h = h * exp(g); v = (v - (h * k[..., None]).sum(-2)) * beta; h = h + k[..., None] * v[..., None, :]; o = q h */
static void reference_step(float *S, const float *k, const float *v, const float *q, float alpha, float beta, int dk,
                           int dv, float *u, float *o) {
    for (int e = 0; e < dk * dv; e++) S[e] *= alpha;
    for (int j = 0; j < dv; j++) u[j] = 0.0f;
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) u[j] += k[i] * S[i * dv + j];
    for (int j = 0; j < dv; j++) u[j] = beta * (v[j] - u[j]);
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) S[i * dv + j] += k[i] * u[j];
    for (int j = 0; j < dv; j++) o[j] = 0.0f;
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) o[j] += q[i] * S[i * dv + j];
}

static void check_kernel(int dk, int dv) {
    size_t n = (size_t)dk * dv;
    float *S = malloc(n * 4), *R = malloc(n * 4), *k = malloc(dk * 4), *q = malloc(dk * 4);
    float *v = malloc(dv * 4), *u = malloc(dv * 4), *ru = malloc(dv * 4), *o = malloc(dv * 4), *ro = malloc(dv * 4);
    for (size_t e = 0; e < n; e++) S[e] = R[e] = uniform(-1, 1);
    int same_S = 1, same_u = 1, same_o = 1, same_S_unread = 1, steps = 6;
    for (int t = 0; t < steps; t++) {
        for (int i = 0; i < dk; i++) k[i] = uniform(-1, 1) / sqrtf((float)dk), q[i] = uniform(-1, 1);
        for (int j = 0; j < dv; j++) v[j] = uniform(-2, 2);
        float alpha = uniform(0.5f, 1.0f), beta = uniform(0.0f, 1.0f);
        int read = t % 3 != 2; /* every third token without o, as when a hook is on the state */
        gdn_delta_step(S, k, v, q, alpha, beta, dk, dv, u, read ? o : NULL);
        reference_step(R, k, v, q, alpha, beta, dk, dv, ru, ro);
        int s = !memcmp(S, R, n * 4);
        if (read) same_S &= s, same_o &= !memcmp(o, ro, dv * 4U);
        else same_S_unread &= s;
        same_u &= !memcmp(u, ru, dv * 4U);
    }
    CHECK(same_S && same_u && same_o, "d_k %d d_v %d: S %s, u %s, o %s the recurrence's bits after %d tokens", dk, dv,
          same_S ? "has" : "lacks", same_u ? "has" : "lacks", same_o ? "has" : "lacks", steps);
    CHECK(same_S_unread, "d_k %d d_v %d: without the read of o, S lacks the recurrence's bits", dk, dv);
    free(S), free(R), free(k), free(q), free(v), free(u), free(ru), free(o), free(ro);
}

static void noop_state(void *ctx, const gs_hook_event *ev) {
    (*(int *)ctx)++;
    (void)ev;
}

#define T 7

/* logits (B, T, V) and nll (B, T) of B sequences of T tokens at `batch` at a
 * time (rows of the batch left idle past B), the state hooked or not; the
 * prediction of step t's token is read at step t, so step 0's is skipped */
static int run(const gs_model *m, const int32_t *tokens, int B, int batch, int hook_state, float *logits, float *nll,
               int *hooks_fired) {
    int V = m->cfg.V;
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gs_engine *e = gs_engine_new(m, batch);
        if (!e) return -1;
        if (hook_state) gs_engine_set_hook(e, GDN_HOOK_STATE, noop_state, hooks_fired);
        gs_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            int32_t tok[32];
            for (int b = 0; b < nb; b++) tok[b] = t < T ? tokens[(b0 + b) * T + t] : 0;
            if (gs_engine_step(e, tok, nb)) { gs_engine_free(e); return -1; }
            gs_step_out o = gs_engine_out(e);
            for (int b = 0; t > 0 && b < nb; b++) {
                size_t row = (size_t)(b0 + b) * T + t - 1;
                memcpy(logits + row * V, o.logits + (size_t)b * V, (size_t)V * 4);
                nll[row] = o.nll[b];
            }
        }
        gs_engine_free(e);
    }
    return 0;
}

static double rel_diff(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), den += (double)b[i] * b[i];
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void check_batches(void) {
    gs_config c = {.arch = GS_ARCH_GDN, .n_layers = 2, .d = 24, .e = 24, .f = 40, .H = 3, .dk = 7, .dv = 13,
                    .V = 53, .conv = 4, .norm_eps = 1e-6f};
    gs_model *m = gs_model_random(&c, 7);
    CHECK(m != NULL, "a random GDN model: %s", gs_error());
    if (!m) return;
    enum { MAXB = 17 };
    int32_t tokens[MAXB * T];
    for (int i = 0; i < MAXB * T; i++) tokens[i] = (int32_t)uniform(0, (float)c.V - 0.01f);
    size_t nl = (size_t)MAXB * T * c.V, nn = (size_t)MAXB * T;
    float *l1 = malloc(nl * 4), *n1 = malloc(nn * 4), *lb = malloc(nl * 4), *nb = malloc(nn * 4);
    float *lh = malloc(nl * 4), *nh = malloc(nn * 4);
    int fired = 0;
    CHECK(!run(m, tokens, MAXB, 1, 0, l1, n1, &fired), "batch 1: %s", gs_error());
    const int batches[] = {2, 5, 17};
    for (int i = 0; i < 3; i++) {
        int B = batches[i];
        CHECK(!run(m, tokens, MAXB, B, 0, lb, nb, &fired), "batch %d: %s", B, gs_error());
        CHECK(!run(m, tokens, MAXB, B, 1, lh, nh, &fired), "batch %d, state hooked: %s", B, gs_error());
        double dl = rel_diff(lb, l1, nl), dn = rel_diff(nb, n1, nn);
        printf("batch %2d against batch 1: logits %.2e, nll %.2e relative\n", B, dl, dn);
        CHECK(dl < 1e-5 && dn < 1e-5, "batch %d against batch 1: logits %.2e, nll %.2e (want < 1e-5)", B, dl, dn);
        CHECK(!memcmp(lb, lh, nl * 4), "batch %d: the read fused into the write differs from the separate read", B);
    }
    CHECK(fired >= 3 * T * c.n_layers, "the state hook fired %d times", fired);
    free(l1), free(n1), free(lb), free(nb), free(lh), free(nh);
    gs_model_free(m);
}

int main(void) {
    const int shapes[][2] = {{1, 1}, {3, 5}, {7, 13}, {17, 33}, {128, 256}, {129, 255}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) check_kernel(shapes[i][0], shapes[i][1]);
    check_batches();
    return test_summary();
}
