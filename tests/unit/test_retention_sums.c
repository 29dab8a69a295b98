/* Retention as sums over pieces of the windows (gs_retention_sums, what
 * `analyze --shards --only retention` reduces with MPI): jittered decays in
 * windows of different lengths, cut into three pieces, each piece summed on
 * its own, the pieces' sums added up and finished, give gs_retention_run's
 * curves, 1/e times (censored or not), pools and bootstrap to 1e-12
 * relative. Pieces numbered from 0 instead of by their place in the whole
 * (a broken reduction) must not: the bootstrap draws windows by number. */
#include <math.h>

#include "analyses/state/retention.h"
#include "analyses/math/stats.h"
#include "testlib.h"

enum { H = 4, NW = 9 };

static double worst;
static void near(double a, double b) {
    if (isnan(a) && isnan(b)) return;
    double d = fabs(a - b) / fmax(fabs(b), 1e-300);
    if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
}

static double compare(const gs_retention *x, const gs_retention *y) {
    worst = 0;
    if (x->n_lags != y->n_lags || x->H != y->H || x->n_rows != y->n_rows) return INFINITY;
    for (int i = 0; i < x->n_lags; i++)
        if (x->n_pairs[i] != y->n_pairs[i] || x->n_starts[i] != y->n_starts[i]) return INFINITY;
    for (int h = 0; h < H; h++) {
        near(x->extrapolated[h], y->extrapolated[h]);
        near(x->mean_alpha[h], y->mean_alpha[h]);
        near(x->mean_beta[h], y->mean_beta[h]);
    }
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_retention_est *a = &x->est[e], *b = &y->est[e];
        for (int64_t i = 0; i < (int64_t)x->n_lags * H; i++) near(a->R[i], b->R[i]);
        for (int h = 0; h < H; h++) {
            near(a->e_fold_time[h], b->e_fold_time[h]);
            if (a->censored[h] != b->censored[h]) return INFINITY;
        }
        if (a->pools.score_valid != b->pools.score_valid || a->pools.boot_n != b->pools.boot_n) return INFINITY;
        near(a->pools.separation, b->pools.separation);
        near(a->pools.boot_lo, b->pools.boot_lo);
        near(a->pools.boot_median, b->pools.boot_median);
        near(a->pools.boot_hi, b->pools.boot_hi);
        near(a->pools.boot_same_split, b->pools.boot_same_split);
    }
    return worst;
}

/* the pieces [0, 3), [3, 7), [7, 9) summed apart and added up, their windows numbered by their place
 * in the whole (renumber: from 0 in each piece, the broken reduction) */
static int in_pieces(const float *a, const float *b, const int64_t *ws, int renumber, gs_retention *r) {
    const int cut[] = {0, 3, 7, NW};
    int maxT = 0;
    for (int w = 0; w < NW; w++) maxT = (int)fmax(maxT, (double)(ws[w + 1] - ws[w]));
    gs_retention_sums total, piece;
    if (gs_retention_sums_init(&total, H, NW, maxT - 1, NULL)) return -1;
    for (int p = 0; p < 3; p++) {
        if (gs_retention_sums_init(&piece, H, NW, maxT - 1, NULL)) return -1;
        const int first = cut[p], n = cut[p + 1] - cut[p];
        int64_t local[NW + 1];
        for (int w = 0; w <= n; w++) local[w] = ws[first + w] - ws[first];
        /* each piece as its own arrays, as a shard's are */
        int rc = gs_retention_accumulate(a + ws[first] * H, b + ws[first] * H, local, n, renumber ? 0 : first, &piece);
        for (int64_t i = 0; i < total.n_f64; i++) total.f64[i] += piece.f64[i];
        for (int64_t i = 0; i < total.n_i64; i++) total.i64[i] += piece.i64[i];
        gs_retention_sums_free(&piece);
        if (rc) return -1;
    }
    int rc = gs_retention_finish(&total, NULL, r);
    gs_retention_sums_free(&total);
    return rc;
}

int main(void) {
    const double alpha[H] = {0.6, 0.85, 0.97, 0.9995}; /* the last outlives every window: censored */
    int64_t ws[NW + 1] = {0};
    for (int w = 0; w < NW; w++) ws[w + 1] = ws[w] + 20 + 7 * w; /* 20 .. 76 steps */
    float *a = malloc(sizeof(float) * (size_t)ws[NW] * H), *b = malloc(sizeof(float) * (size_t)ws[NW] * H);
    gs_rng rng = {42};
    for (int64_t i = 0; i < ws[NW]; i++)
        for (int h = 0; h < H; h++) {
            a[i * H + h] = (float)pow(alpha[h], exp(0.4 * gs_rng_normal(&rng)));
            b[i * H + h] = (float)gs_rng_uniform(&rng);
        }
    gs_retention one, pieces, wrong;
    CHECK(gs_retention_run(a, b, ws, NW, H, NULL, &one) == 0, "the one pass");
    CHECK(one.est[0].censored[H - 1] && !one.est[0].censored[0], "a censored head and one that is not");
    CHECK(one.est[0].pools.boot_n > 0, "the bootstrap ran (%d resamples)", one.est[0].pools.boot_n);
    CHECK(in_pieces(a, b, ws, 0, &pieces) == 0, "the pieces");
    double d = compare(&pieces, &one);
    CHECK(d < 1e-12, "pieces added up equal the one pass: worst relative difference %.1e", d);
    printf("pieces vs one pass: worst relative difference %.1e\n", d);
    CHECK(in_pieces(a, b, ws, 1, &wrong) == 0, "the pieces, numbered from 0");
    d = compare(&wrong, &one);
    CHECK(d > 1e-6, "pieces numbered from 0 draw other resamples: %.1e", d);
    gs_retention_free(&one);
    gs_retention_free(&pieces);
    gs_retention_free(&wrong);
    free(a);
    free(b);
    return test_summary();
}
