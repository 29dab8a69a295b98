/* GDN's chunked delta rule (engine/arch/gdn/gdn_chunk.c) against the
 * recurrence: T calls of gdn_delta_step (the engine's float step) and the
 * same recurrence in float64, from a random state, on random L2-normed keys
 * and queries, for T across the chunk boundary (1, 63, 64, 65, 200), three
 * decay regimes (alpha near 0, near 1, and spread between) and two head
 * shapes (odd, and the paper's 128 x 256). The outputs of every token and the
 * final state must be within 1e-4 of the float64 recurrence, relative to the
 * largest magnitude of each (max |x - ref| / max |ref|), and so must the
 * float step's: the two forms differ only by rounding. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/arch/gdn/gdn_chunk.h"
#include "engine/arch/gdn/gdn_delta.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float uniform(float lo, float hi) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (float)((rng >> 40) / 16777216.0);
}

static void l2norm(float *x, int n, float scale) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    for (int i = 0; i < n; i++) x[i] = (float)(x[i] * scale / sqrt(ss + 1e-6));
}

/* the recurrence in float64: S <- a S; u = b (v - S^T k); S <- S + k u^T; o = S^T q */
static void reference(double *S, const float *q, const float *k, const float *v, const float *g, const float *beta,
                      int T, int dk, int dv, int ld, double *o) {
    double *u = malloc((size_t)dv * sizeof *u);
    for (int t = 0; t < T; t++) {
        const float *qt = q + (size_t)t * ld, *kt = k + (size_t)t * ld, *vt = v + (size_t)t * ld;
        double a = exp((double)g[t]);
        for (size_t e = 0; e < (size_t)dk * dv; e++) S[e] *= a;
        for (int j = 0; j < dv; j++) {
            double s = 0;
            for (int i = 0; i < dk; i++) s += kt[i] * S[(size_t)i * dv + j];
            u[j] = beta[t] * (vt[j] - s);
        }
        for (int i = 0; i < dk; i++)
            for (int j = 0; j < dv; j++) S[(size_t)i * dv + j] += kt[i] * u[j];
        for (int j = 0; j < dv; j++) {
            double s = 0;
            for (int i = 0; i < dk; i++) s += qt[i] * S[(size_t)i * dv + j];
            o[(size_t)t * dv + j] = s;
        }
    }
    free(u);
}

/* max |x - ref| / max |ref| */
static double max_rel_err(const float *x, const double *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(x[i] - ref[i]), r = fabs(ref[i]);
        if (d > num || isnan(d)) num = isnan(d) ? INFINITY : d;
        if (r > den) den = r;
    }
    return den > 0 ? num / den : num;
}

static const char *regimes[] = {"alpha near 0", "alpha near 1", "alpha spread"};

static void check(int dk, int dv, int T, int regime) {
    /* one strided array holds q | k | v per token, as the engine's rows do */
    int ld = 2 * dk + dv;
    size_t hs = (size_t)dk * dv;
    float *rows = malloc((size_t)T * ld * sizeof *rows), *g = malloc((size_t)T * sizeof *g);
    float *beta = malloc((size_t)T * sizeof *beta), *S = malloc(hs * sizeof *S), *Sf = malloc(hs * sizeof *Sf);
    float *o = malloc((size_t)T * dv * sizeof *o), *of = malloc((size_t)T * dv * sizeof *of);
    float *u = malloc((size_t)dv * sizeof *u);
    double *Sr = malloc(hs * sizeof *Sr), *orf = malloc((size_t)T * dv * sizeof *orf);
    float *scratch = malloc(gdn_chunk_scratch_floats(dk, dv) * sizeof *scratch);
    for (size_t e = 0; e < hs; e++) S[e] = Sf[e] = uniform(-1, 1), Sr[e] = S[e];
    for (int t = 0; t < T; t++) {
        float *r = rows + (size_t)t * ld;
        for (int i = 0; i < ld; i++) r[i] = uniform(-1, 1);
        l2norm(r, dk, 1.0f / sqrtf((float)dk));
        l2norm(r + dk, dk, 1.0f);
        g[t] = regime == 0 ? uniform(-9.0f, -2.0f) : regime == 1 ? uniform(-1e-3f, 0.0f) : uniform(-4.0f, 0.0f);
        beta[t] = uniform(0.0f, 1.0f);
    }
    gdn_chunk_io io = {rows, rows + dk, rows + 2 * dk, g, beta, ld, ld, ld, 1, o, dv};
    gdn_chunk_run(S, &io, T, dk, dv, scratch);
    for (int t = 0; t < T; t++) {
        const float *r = rows + (size_t)t * ld;
        gdn_delta_step(Sf, r + dk, r + 2 * dk, r, expf(g[t]), beta[t], dk, dv, u, of + (size_t)t * dv);
    }
    reference(Sr, rows, rows + dk, rows + 2 * dk, g, beta, T, dk, dv, ld, orf);
    double es = max_rel_err(S, Sr, hs), eo = max_rel_err(o, orf, (size_t)T * dv);
    double fs = max_rel_err(Sf, Sr, hs), fo = max_rel_err(of, orf, (size_t)T * dv);
    printf("d_k %3d d_v %3d T %3d %-12s: chunked S %.1e o %.1e, step S %.1e o %.1e\n", dk, dv, T, regimes[regime], es,
           eo, fs, fo);
    CHECK(es < 1e-4 && eo < 1e-4, "d_k %d d_v %d T %d %s: chunked S %.2e, o %.2e from the float64 recurrence", dk, dv, T,
          regimes[regime], es, eo);
    CHECK(fs < 1e-4 && fo < 1e-4, "d_k %d d_v %d T %d %s: the float step S %.2e, o %.2e from the float64 recurrence",
          dk, dv, T, regimes[regime], fs, fo);
    free(rows), free(g), free(beta), free(S), free(Sf), free(o), free(of), free(u), free(Sr), free(orf), free(scratch);
}

int main(void) {
    const int shapes[][2] = {{7, 13}, {128, 256}};
    const int lengths[] = {1, 63, 64, 65, 200};
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < 5; l++)
            for (int r = 0; r < 3; r++) check(shapes[s][0], shapes[s][1], lengths[l], r);
    return test_summary();
}
