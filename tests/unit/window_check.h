/* The checks a window path (gs_engine_window) passes against the
 * token-by-token step, whatever the family: test_gdn_window.c and
 * test_tpp_window.c. Static functions, one copy per test. */
#ifndef GS_TESTS_WINDOW_CHECK_H
#define GS_TESTS_WINDOW_CHECK_H

#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h"
#include "testlib.h"

#define WC_MAX_BATCH 16

static uint64_t wc_rng = 0x2545f4914f6cdd1dull;
static int32_t wc_token(int V) {
    wc_rng ^= wc_rng << 13, wc_rng ^= wc_rng >> 7, wc_rng ^= wc_rng << 17;
    return (int32_t)((wc_rng >> 33) % (uint64_t)V);
}

/* max |a - b| / max |b| over the entries where b is a number, and whether the NaNs agree */
static double wc_diff(const float *a, const float *b, size_t n, int *nan_same) {
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
static int wc_step_tokens(gs_engine *e, const int32_t *tokens, int B, int T, int t0, int n, float *nll) {
    int32_t tok[WC_MAX_BATCH];
    for (int t = t0; t < t0 + n; t++) {
        for (int b = 0; b < B; b++) tok[b] = tokens[(size_t)b * T + t];
        if (gs_engine_step(e, tok, B)) return -1;
        for (int b = 0; b < B; b++) nll[(size_t)b * T + t] = gs_engine_out(e).nll[b];
    }
    return 0;
}

/* a window over tokens [t0, t0 + n) of B sequences (rows of T), its NLLs into nll (rows of T) */
static int wc_window_tokens(gs_engine *e, const int32_t *tokens, int B, int T, int t0, int n, float *nll) {
    int32_t *part = calloc((size_t)B * n, sizeof *part);
    float *piece = malloc((size_t)B * n * sizeof *piece);
    if (!part || !piece) {
        free(part), free(piece);
        return gs_fail("out of memory");
    }
    for (int b = 0; b < B; b++) memcpy(part + (size_t)b * n, tokens + (size_t)b * T + t0, (size_t)n * sizeof *part);
    int rc = gs_engine_window(e, part, B, n, piece);
    for (int b = 0; !rc && b < B; b++) memcpy(nll + (size_t)b * T + t0, piece + (size_t)b * n, (size_t)n * sizeof *nll);
    free(part), free(piece);
    return rc;
}

/* the logits of one more step (every carried state read) into out (B x V) */
static int wc_next_logits(gs_engine *e, int B, int V, float *out) {
    int32_t tok[WC_MAX_BATCH] = {0};
    if (gs_engine_step(e, tok, B)) return -1;
    memcpy(out, gs_engine_out(e).logits, (size_t)B * V * sizeof *out);
    return 0;
}

/* B sequences of T tokens as one window against T steps: every NLL (the NaN
 * of each sequence's first token included) and the next step's logits,
 * which read every carried state, to 1e-5 relative */
static void wc_check_window(const gs_model *m, int B, int T) {
    int V = m->cfg.V, same_nan;
    int32_t *tokens = malloc((size_t)B * T * sizeof *tokens);
    float *ns = malloc((size_t)B * T * 4), *nw = malloc((size_t)B * T * 4), *ls = malloc((size_t)B * V * 4),
          *lw = malloc((size_t)B * V * 4);
    for (int i = 0; i < B * T; i++) tokens[i] = wc_token(V);
    gs_engine *es = gs_engine_new(m, B), *ew = gs_engine_new(m, B);
    CHECK(es && ew && !wc_step_tokens(es, tokens, B, T, 0, T, ns) && !wc_next_logits(es, B, V, ls) &&
              !gs_engine_window(ew, tokens, B, T, nw) && !wc_next_logits(ew, B, V, lw),
          "B %d T %d: %s", B, T, gs_error());
    double dn = wc_diff(nw, ns, (size_t)B * T, &same_nan);
    int nan_nll = same_nan;
    double dl = wc_diff(lw, ls, (size_t)B * V, &same_nan);
    printf("batch %d, T %3d: window against steps: nll %.1e, the next step's logits %.1e\n", B, T, dn, dl);
    CHECK(dn < 1e-5 && nan_nll, "B %d T %d: window NLLs %.2e from the steps' (NaNs %s)", B, T, dn,
          nan_nll ? "agree" : "differ");
    CHECK(dl < 1e-5 && same_nan, "B %d T %d: after the window the next step's logits are %.2e from the steps'", B, T, dl);
    gs_engine_free(es), gs_engine_free(ew);
    free(tokens), free(ns), free(nw), free(ls), free(lw);
}

/* Steps and windows in turn over B sequences: len[k] tokens each, stepped
 * where window[k] is 0, else one window; the same NLLs as that many steps,
 * and a window that does not start a sequence has its first token predicted
 * (not NaN), from what the steps or windows before it carried. */
static void wc_check_mixed(const gs_model *m, int B, const int *len, const int *window, int parts) {
    int V = m->cfg.V, T = 0, same_nan;
    for (int k = 0; k < parts; k++) T += len[k];
    int32_t *tokens = malloc((size_t)B * T * sizeof *tokens);
    float *ns = malloc((size_t)B * T * 4), *nw = malloc((size_t)B * T * 4);
    for (int i = 0; i < B * T; i++) tokens[i] = wc_token(V);
    gs_engine *es = gs_engine_new(m, B), *ew = gs_engine_new(m, B);
    int ok = es && ew && !wc_step_tokens(es, tokens, B, T, 0, T, ns), predicted = 1;
    char plan[256] = "";
    for (int k = 0, at = 0; ok && k < parts; at += len[k++]) {
        ok = !(window[k] ? wc_window_tokens : wc_step_tokens)(ew, tokens, B, T, at, len[k], nw);
        for (int b = 0; ok && window[k] && at > 0 && b < B; b++) predicted &= !isnan(nw[(size_t)b * T + at]);
        snprintf(plan + strlen(plan), sizeof plan - strlen(plan), "%s%s %d", k ? ", " : "", window[k] ? "window" : "step",
                 len[k]);
    }
    CHECK(ok, "%s: %s", plan, gs_error());
    double dn = wc_diff(nw, ns, (size_t)B * T, &same_nan);
    printf("%s against %d steps: nll %.1e\n", plan, T, dn);
    CHECK(dn < 1e-5 && same_nan && predicted && isnan(nw[0]), "%s: nll %.2e from the steps' (NaNs %s, %s)", plan, dn,
          same_nan ? "agree" : "differ",
          predicted ? "later windows' first tokens predicted" : "a later window's first token is NaN");
    gs_engine_free(es), gs_engine_free(ew);
    free(tokens), free(ns), free(nw);
}

static void wc_noop(void *ctx, const gs_hook_event *ev) { (void)ctx, (void)ev; }

/* a window refuses a token outside the vocabulary, and any hook set (here `hook`) */
static void wc_check_refusals(const gs_model *m, gs_hook_point hook) {
    gs_engine *e = gs_engine_new(m, 2);
    int32_t tok[4] = {1, 2, 3, (int32_t)m->cfg.V};
    float nll[4];
    CHECK(gs_engine_has_window(e), "the %s CPU engine has a window path", gs_arch_name(m->cfg.arch));
    CHECK(gs_engine_window(e, tok, 2, 2, nll) == -1 && strstr(gs_error(), "outside the vocabulary"),
          "a token outside the vocabulary: %s", gs_error());
    gs_engine_set_hook(e, hook, wc_noop, NULL);
    tok[3] = 0;
    CHECK(gs_engine_window(e, tok, 2, 2, nll) == -1 && strstr(gs_error(), "without hooks"), "a hook set: %s",
          gs_error());
    gs_engine_free(e);
}

#endif
