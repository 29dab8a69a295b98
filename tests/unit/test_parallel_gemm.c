/* gs_gemm_parallel_beside (engine/cpu/parallel_gemm.c): a GEMM's column
 * parts and another loop's chunks in one queue. The GEMM comes out bit for
 * bit as gs_gemm_parallel makes it (the same parts, each one OpenBLAS call),
 * and within float rounding of a double reference; the loop sees every item
 * exactly once, in chunks of at most `grain`; an empty GEMM still runs the
 * loop and an empty loop still runs the GEMM. The pool is set to 3 threads
 * before its first use, so every split happens whatever the machine's cores:
 * GEMMs of one part (under 64 columns a thread) and of several, with and
 * without a bias, W stored either way. */
#include <stdatomic.h>
#include <stdint.h>

#include "engine/cpu/parallel_gemm.h"
#include "testlib.h"

#define MAX_ITEMS 1000

typedef struct {
    atomic_int seen[MAX_ITEMS];
    atomic_int too_big; /* a chunk longer than the grain */
    long grain;
} loop_check;

static void count_items(void *ctx, long i0, long i1) {
    loop_check *c = ctx;
    if (i1 - i0 > c->grain) atomic_fetch_add(&c->too_big, 1);
    for (long i = i0; i < i1; i++) atomic_fetch_add(&c->seen[i], 1);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float uniform(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 - 0.5);
}

static float *random_floats(long n) {
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (long i = 0; i < n; i++) x[i] = uniform();
    return x;
}

/* largest |out - in @ W (+ bias)| in double over the largest |reference| */
static double reference_error(const float *out, const float *in, const float *W, int transposed, const float *bias,
                              int B, int k, int n) {
    double worst = 0, big = 0;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n; j++) {
            double s = bias ? bias[j] : 0;
            for (int i = 0; i < k; i++) s += (double)in[(long)b * k + i] * (transposed ? W[(long)j * k + i] : W[(long)i * n + j]);
            worst = fmax(worst, fabs(s - out[(long)b * n + j]));
            big = fmax(big, fabs(s));
        }
    return big > 0 ? worst / big : worst;
}

static void check_case(int B, int k, int n, int transposed, int with_bias, long items, long grain) {
    float *in = random_floats((long)B * k), *W = random_floats((long)k * n), *bias = with_bias ? random_floats(n) : NULL;
    float *plain = random_floats((long)B * n), *beside = random_floats((long)B * n); /* not zero: beta is 0 or bias */
    loop_check *c = calloc(1, sizeof *c);
    c->grain = grain;
    int restore = 0;
    gs_gemm_threads_begin(&restore);
    gs_gemm_parallel(plain, in, W, transposed, bias, B, k, n);
    gs_gemm_parallel_beside(beside, in, W, transposed, bias, B, k, n, items, grain, count_items, c);
    gs_gemm_threads_end(restore);
    char what[160];
    snprintf(what, sizeof what, "B %d, k %d, n %d%s%s, %ld items in grains of %ld", B, k, n,
             transposed ? ", W transposed" : "", with_bias ? ", bias" : "", items, grain);
    if (n > 0 && B > 0) {
        CHECK(!memcmp(plain, beside, (size_t)B * n * sizeof(float)), "%s: not bit for bit gs_gemm_parallel's", what);
        double err = reference_error(beside, in, W, transposed, bias, B, k, n);
        CHECK(err < 1e-5, "%s: %.2e from the double reference", what, err);
    }
    int missed = 0, twice = 0;
    for (long i = 0; i < MAX_ITEMS; i++) {
        int s = atomic_load(&c->seen[i]);
        if (i < items && s != 1) s == 0 ? missed++ : twice++;
        if (i >= items && s != 0) twice++;
    }
    CHECK(!missed && !twice, "%s: %d items never seen, %d seen more than once or out of range", what, missed, twice);
    CHECK(!atomic_load(&c->too_big), "%s: %d chunks longer than the grain", what, atomic_load(&c->too_big));
    free(in), free(W), free(bias), free(plain), free(beside), free(c);
}

int main(void) {
    setenv("GPNSCOPE_THREADS", "3", 1); /* read once, at the pool's first use */
    CHECK(gs_parallel_threads() == 3, "the pool has %d threads, not 3", gs_parallel_threads());
    check_case(16, 96, 4096, 0, 0, 256, 1);   /* 12 parts (4 a thread) among 256 chunks */
    check_case(16, 96, 4096, 1, 1, 256, 7);   /* chunks of 7, the last short */
    check_case(33, 70, 500, 0, 1, 5, 1);      /* more parts than chunks */
    check_case(8, 40, 150, 1, 0, 999, 100);   /* one part (under 64 columns a thread) */
    check_case(4, 64, 1024, 0, 0, 0, 1);      /* no loop: the GEMM alone */
    check_case(4, 64, 0, 0, 0, 37, 4);        /* no GEMM: the loop alone */
    check_case(1, 300, 2048, 0, 1, 1, 1);     /* one row, one item */
    return test_summary();
}
