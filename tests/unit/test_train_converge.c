/* Training reaches a known entropy floor. The task is a noisy order-2
 * recurrence over V = 8 tokens: in each window of T tokens, x_0 and x_1 are
 * uniform; after that x_t = (x_{t-1} + x_{t-2}) mod V with probability 1 - eps,
 * else uniform. Predicting it needs the token two steps back (the state must
 * carry it). The best possible mean NLL per token is
 *   (2 ln V + (T - 2) H) / T,   H = -p ln p - (V - 1) (eps/V) ln(eps/V),  p = 1 - eps + eps/V,
 * and on the held-out sample itself the optimal predictor's NLL is computed
 * exactly; a small GPN+M trained for 1000 steps (a few seconds) must come
 * within 0.03 nats of it, starting from ln V. */
#include <stdint.h>

#include "base/error.h"
#include "engine/train/train.h"
#include "testlib.h"

enum { V = 8, T = 32, B = 16, STEPS = 1000, EVAL_WINDOWS = 128 };
static const double EPS = 0.1, MARGIN = 0.03;

static uint64_t rs = 12345;
static double urand(void) {
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rs >> 11) / 9007199254740992.0;
}

/* writes n windows; returns the optimal predictor's mean NLL on them */
static double generate(const char *dir, long windows) {
    char path[4200];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    CHECK(system(path) == 0, "mkdir %s", dir);
    snprintf(path, sizeof path, "%s/data_0000.bin", dir);
    FILE *f = fopen(path, "wb");
    double nll = 0;
    uint32_t a = 0, b = 0;
    for (long i = 0; i < windows * T; i++) {
        int pos = (int)(i % T);
        uint32_t x;
        if (pos < 2 || urand() < EPS) x = (uint32_t)(urand() * V);
        else x = (a + b) % V;
        if (pos < 2) nll += log(V);
        else nll += x == (a + b) % V ? -log(1 - EPS + EPS / V) : -log(EPS / V);
        fwrite(&x, 4, 1, f);
        a = b;
        b = x;
    }
    fclose(f);
    return nll / (double)(windows * T);
}

int main(void) {
    const char *dir = scratch_dir("train_converge");
    char train[4200], eval[4200];
    snprintf(train, sizeof train, "%s/train", dir);
    snprintf(eval, sizeof eval, "%s/eval", dir);
    generate(train, (long)STEPS * B);
    double sample_floor = generate(eval, EVAL_WINDOWS);
    double p = 1 - EPS + EPS / V, H = -p * log(p) - (V - 1) * (EPS / V) * log(EPS / V);
    double floor_ = (2 * log(V) + (T - 2) * H) / T;

    train_config c;
    train_config_defaults(&c);
    c.model = (gpn_config){.arch = GPN_ARCH_GPN_M, .n_layers = 1, .d = 32, .e = 16, .f = 64, .H = 2, .dk = 8, .dv = 8, .V = V};
    snprintf(c.train_dir, sizeof c.train_dir, "%s", train);
    snprintf(c.eval_dir, sizeof c.eval_dir, "%s", eval);
    snprintf(c.out_dir, sizeof c.out_dir, "%s/out", dir);
    c.seq_len = T;
    c.batch = B;
    c.steps = c.opt.total_steps = STEPS;
    c.opt.warmup = STEPS / 10;
    c.opt.lr = 0.01;
    c.opt.weight_decay = 0;
    c.shuffle = 1;
    c.seed = 1;
    c.eval_every = STEPS / 4;
    c.threads = 1; /* tiny GEMMs: threads only add hand-offs */
    gpn_trainer *t = gpn_trainer_new(&c, NULL);
    CHECK(t != NULL, "trainer: %s", gs_error());
    if (!t) return test_summary();
    double first = NAN, last = NAN;
    train_report r;
    while (!gpn_trainer_done(t)) {
        if (gpn_trainer_step(t, &r) != 0) { CHECK(0, "step: %s", gs_error()); break; }
        if (!isnan(r.eval_loss)) {
            if (isnan(first)) first = r.eval_loss;
            last = r.eval_loss;
            printf("  step %4ld: held-out NLL %.4f (optimal on this sample %.4f, expected floor %.4f)\n", r.step,
                   r.eval_loss, sample_floor, floor_);
        }
    }
    printf("  gap to the optimal predictor after %d steps: %.4f nats (margin %.2f); ln V = %.4f\n", STEPS,
           last - sample_floor, MARGIN, log(V));
    CHECK(last - sample_floor < MARGIN, "held-out NLL %.4f is %.4f above the floor %.4f", last, last - sample_floor,
          sample_floor);
    CHECK(last - sample_floor > -0.02, "held-out NLL %.4f beats the optimal predictor (%.4f): the loss is wrong", last,
          sample_floor);
    CHECK(fabs(sample_floor - floor_) < 0.05, "sample floor %.4f far from the expected %.4f", sample_floor, floor_);
    CHECK(first > last, "no progress: %.4f then %.4f", first, last);
    gpn_trainer_free(t);
    return test_summary();
}
