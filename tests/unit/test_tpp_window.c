/* The Transformer++'s window path (gs_engine_window, the prefill of
 * engine/arch/tpp/tpp_window.c) against the token-by-token step on a random
 * 3-layer model (d 64, 4 heads of 16, FFN 96, V 97):
 *
 * 1. B sequences of T tokens (T = 1, 5, 64, 130: inside, at and across the
 *    attention's query blocks of 64), batch 1 and 3: every token's NLL equals
 *    the step's to 1e-5 relative (the NaN of each sequence's first token
 *    included), and so do the next step's logits, which read the cache and
 *    the pending logits the window left;
 * 2. step 3, window 70, step 2, window 9: the same NLLs as 84 steps (the
 *    cache, the positions and the pending logits carry both ways);
 * 3. with the budget cut (tpp_window_set_rows) to 3 x 40 and 3 x 64 rows,
 *    so that windows at batch 3 run in pieces of 40 tokens (not whole query
 *    blocks) and of 64 (tpp_window_piece says so, or the check fails), 1
 *    and 2 again; and to one row, pieces of 1 token, a window of 130 at
 *    batch 3: the same numbers;
 * 4. a window refuses with a hook set, and a token outside the vocabulary. */
#include "engine/arch/tpp/tpp.h"
#include "window_check.h"

static void check_all(const gs_model *m) {
    const int lengths[] = {1, 5, 64, 130};
    for (int i = 0; i < 4; i++) wc_check_window(m, 1, lengths[i]), wc_check_window(m, 3, lengths[i]);
    const int len[] = {3, 70, 2, 9}, window[] = {0, 1, 0, 1};
    wc_check_mixed(m, 3, len, window, 4);
}

int main(void) {
    gs_config c = {.arch = GS_ARCH_TPP, .n_layers = 3, .d = 64, .e = 64, .f = 96, .H = 4, .dk = 16, .dv = 16, .V = 97};
    gs_model *m = gs_model_random(&c, 21);
    CHECK(m != NULL, "a random Transformer++ model: %s", gs_error());
    if (!m) return test_summary();
    printf("whole windows:\n");
    check_all(m);
    const int pieces[] = {40, 64};
    for (int i = 0; i < 2; i++) {
        printf("a budget of 3 x %d rows (pieces of %d tokens at batch 3):\n", pieces[i], pieces[i]);
        tpp_window_set_rows(3L * pieces[i]);
        CHECK(tpp_window_piece(&c, 3, 130) == pieces[i], "the budget of 3 x %d rows makes pieces of %d tokens, not %d",
              pieces[i], tpp_window_piece(&c, 3, 130), pieces[i]);
        check_all(m);
    }
    printf("pieces of 1 token:\n");
    tpp_window_set_rows(1);
    CHECK(tpp_window_piece(&c, 3, 130) == 1, "a budget of one row makes pieces of %d tokens", tpp_window_piece(&c, 3, 130));
    wc_check_window(m, 3, 130);
    tpp_window_set_rows(0);
    CHECK(tpp_window_piece(&c, 3, 130) == 130, "the default budget splits a window of 3 x 130 rows");
    wc_check_refusals(m, GS_HOOK_RESID_PRE);
    gs_model_free(m);
    return test_summary();
}
