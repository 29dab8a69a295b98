/* GDN's window path (gpn_engine_window, engine/arch/gdn/gdn_window.c)
 * against the token-by-token step on a random model with odd d_k and d_v
 * and a short convolution:
 *
 * 1. B sequences of T tokens (T = 1, 63, 64, 65, 130: inside, at and across
 *    the delta rule's chunks of 64), batch 1 and 5: every token's NLL equals
 *    the step's to 1e-5 relative (the NaN of each sequence's first token
 *    included), and so do the next step's logits, which read every carried
 *    state (S, the conv inputs, the carry);
 * 2. steps, then a window, then a window: the first token of a window that
 *    does not start a sequence is predicted (not NaN), from the carry;
 * 3. a window whose rows pass the window's 256 MB of buffers (FFN 4096:
 *    34 KB a row; 2 x 4200 rows) runs in two passes, the second from the
 *    first's carried state: the same NLLs as the steps;
 * 4. a window refuses with a hook set, and a token outside the vocabulary. */
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/engine.h"
#include "testlib.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int32_t token(int V) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int32_t)((rng >> 33) % (uint64_t)V);
}

/* max |a - b| / max |b| over the entries where b is a number, and whether the NaNs agree */
static double diff(const float *a, const float *b, size_t n, int *nan_same) {
    double num = 0, den = 0;
    *nan_same = 1;
    for (size_t i = 0; i < n; i++) {
        if (isnan(b[i]) || isnan(a[i])) { *nan_same &= isnan(a[i]) && isnan(b[i]); continue; }
        if (fabs((double)a[i] - b[i]) > num) num = fabs((double)a[i] - b[i]);
        if (fabs(b[i]) > den) den = fabs(b[i]);
    }
    return den > 0 ? num / den : num;
}

/* steps tokens [t0, t0 + n) of B sequences (rows of T) into nll (rows of T) */
static int step_tokens(gpn_engine *e, const int32_t *tokens, int B, int T, int t0, int n, float *nll) {
    int32_t tok[16];
    for (int t = t0; t < t0 + n; t++) {
        for (int b = 0; b < B; b++) tok[b] = tokens[(size_t)b * T + t];
        if (gpn_engine_step(e, tok, B)) return -1;
        for (int b = 0; b < B; b++) nll[(size_t)b * T + t] = gpn_engine_out(e).nll[b];
    }
    return 0;
}

/* the logits of one more step (every carried state read) into out (B x V) */
static int next_logits(gpn_engine *e, int B, int V, float *out) {
    int32_t tok[16] = {0};
    if (gpn_engine_step(e, tok, B)) return -1;
    memcpy(out, gpn_engine_out(e).logits, (size_t)B * V * sizeof *out);
    return 0;
}

/* the window's NLLs and the next step's logits against the steps' */
static void check_windows(const gpn_model *m, int B, int T) {
    int V = m->cfg.V, same_nan;
    int32_t *tokens = malloc((size_t)B * T * sizeof *tokens);
    float *ns = malloc((size_t)B * T * 4), *nw = malloc((size_t)B * T * 4), *ls = malloc((size_t)B * V * 4),
          *lw = malloc((size_t)B * V * 4);
    for (int i = 0; i < B * T; i++) tokens[i] = token(V);
    gpn_engine *es = gpn_engine_new(m, B), *ew = gpn_engine_new(m, B);
    CHECK(es && ew && !step_tokens(es, tokens, B, T, 0, T, ns) && !next_logits(es, B, V, ls) &&
              !gpn_engine_window(ew, tokens, B, T, nw) && !next_logits(ew, B, V, lw),
          "B %d T %d: %s", B, T, gs_error());
    double dn = diff(nw, ns, (size_t)B * T, &same_nan);
    int nan_nll = same_nan;
    double dl = diff(lw, ls, (size_t)B * V, &same_nan);
    printf("batch %d, T %3d: window against steps: nll %.1e, the next step's logits %.1e\n", B, T, dn, dl);
    CHECK(dn < 1e-5 && nan_nll, "B %d T %d: window NLLs %.2e from the steps' (NaNs %s)", B, T, dn,
          nan_nll ? "agree" : "differ");
    CHECK(dl < 1e-5 && same_nan, "B %d T %d: after the window the next step's logits are %.2e from the steps'", B, T, dl);
    gpn_engine_free(es), gpn_engine_free(ew);
    free(tokens), free(ns), free(nw), free(ls), free(lw);
}

/* 3 steps, a window of 40, a window of 70: the same NLLs as 113 steps */
static void check_mixed(const gpn_model *m) {
    enum { B = 3, T = 113 };
    int V = m->cfg.V, same_nan;
    int32_t tokens[B * T], part[B * 70];
    float ns[B * T], nw[B * T], piece[B * 70];
    for (int i = 0; i < B * T; i++) tokens[i] = token(V);
    gpn_engine *es = gpn_engine_new(m, B), *ew = gpn_engine_new(m, B);
    int ok = es && ew && !step_tokens(es, tokens, B, T, 0, T, ns) && !step_tokens(ew, tokens, B, T, 0, 3, nw);
    const int at[2] = {3, 43}, len[2] = {40, 70};
    for (int k = 0; ok && k < 2; k++) {
        for (int b = 0; b < B; b++) memcpy(part + b * len[k], tokens + b * T + at[k], (size_t)len[k] * sizeof *part);
        ok = !gpn_engine_window(ew, part, B, len[k], piece);
        for (int b = 0; ok && b < B; b++) memcpy(nw + b * T + at[k], piece + b * len[k], (size_t)len[k] * sizeof *nw);
    }
    CHECK(ok, "steps then windows: %s", gs_error());
    double dn = diff(nw, ns, (size_t)B * T, &same_nan);
    int predicted = !isnan(nw[3]) && !isnan(nw[43]) && isnan(nw[0]);
    printf("3 steps, windows of 40 and 70 against 113 steps: nll %.1e\n", dn);
    CHECK(dn < 1e-5 && same_nan && predicted, "steps then windows: nll %.2e from the steps' (NaNs %s, %s)", dn,
          same_nan ? "agree" : "differ", predicted ? "later windows' first tokens predicted" : "a later window's first token is NaN");
    gpn_engine_free(es), gpn_engine_free(ew);
}

static void noop(void *ctx, const gpn_hook_event *ev) { (void)ctx, (void)ev; }

static void check_refusals(const gpn_model *m) {
    gpn_engine *e = gpn_engine_new(m, 2);
    int32_t tok[4] = {1, 2, 3, (int32_t)m->cfg.V};
    float nll[4];
    CHECK(gpn_engine_has_window(e), "the GDN CPU engine has a window path");
    CHECK(gpn_engine_window(e, tok, 2, 2, nll) == -1 && strstr(gs_error(), "outside the vocabulary"),
          "a token outside the vocabulary: %s", gs_error());
    gpn_engine_set_hook(e, GDN_HOOK_STATE, noop, NULL);
    tok[3] = 0;
    CHECK(gpn_engine_window(e, tok, 2, 2, nll) == -1 && strstr(gs_error(), "without hooks"), "a hook set: %s",
          gs_error());
    gpn_engine_free(e);
}

int main(void) {
    gpn_config c = {.arch = GPN_ARCH_GDN, .n_layers = 2, .d = 24, .e = 24, .f = 40, .H = 3, .dk = 7, .dv = 13,
                    .V = 53, .conv = 4, .norm_eps = 1e-6f};
    gpn_model *m = gpn_model_random(&c, 11);
    CHECK(m != NULL, "a random GDN model: %s", gs_error());
    if (!m) return test_summary();
    const int lengths[] = {1, 63, 64, 65, 130};
    for (int i = 0; i < 5; i++) check_windows(m, 1, lengths[i]), check_windows(m, 5, lengths[i]);
    check_mixed(m);
    check_refusals(m);
    gpn_model_free(m);
    c.f = 4096; /* wide rows: this window takes two passes */
    gpn_model *wide = gpn_model_random(&c, 12);
    CHECK(wide != NULL, "a wide random GDN model: %s", gs_error());
    if (wide) check_windows(wide, 2, 4200);
    gpn_model_free(wide);
    return test_summary();
}
