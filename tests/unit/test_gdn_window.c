/* GDN's window path (gs_engine_window, engine/arch/gdn/gdn_window.c)
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
 * 3. with the budget cut (gdn_window_set_rows) to 2 x 100 and 2 x 130
 *    rows, windows of 300 tokens at batch 2 run in passes of one chunk (64)
 *    and of two (128), each from the last one's carried state (S, the conv
 *    inputs, the carry; gdn_window_piece says so, or the check fails): the
 *    same NLLs as the steps, and so with steps and windows interleaved;
 * 4. a window refuses with a hook set, and a token outside the vocabulary. */
#include "engine/arch/gdn/gdn.h"
#include "window_check.h"

int main(void) {
    gs_config c = {.arch = GS_ARCH_GDN, .n_layers = 2, .d = 24, .e = 24, .f = 40, .H = 3, .dk = 7, .dv = 13,
                    .V = 53, .conv = 4, .norm_eps = 1e-6f};
    gs_model *m = gs_model_random(&c, 11);
    CHECK(m != NULL, "a random GDN model: %s", gs_error());
    if (!m) return test_summary();
    const int lengths[] = {1, 63, 64, 65, 130};
    for (int i = 0; i < 5; i++) wc_check_window(m, 1, lengths[i]), wc_check_window(m, 5, lengths[i]);
    const int len[] = {3, 40, 70}, window[] = {0, 1, 1};
    wc_check_mixed(m, 3, len, window, 3);
    wc_check_refusals(m, GDN_HOOK_STATE);
    gs_model_free(m);
    gs_model *m2 = gs_model_random(&c, 12);
    CHECK(m2 != NULL, "a random GDN model: %s", gs_error());
    const int budget[] = {100, 130}, piece[] = {64, 128};
    for (int i = 0; m2 && i < 2; i++) {
        gdn_window_set_rows(2L * budget[i]);
        CHECK(gdn_window_piece(&c, 2, 300) == piece[i], "a budget of 2 x %d rows makes passes of %d tokens, not %d",
              budget[i], gdn_window_piece(&c, 2, 300), piece[i]);
        wc_check_window(m2, 2, 300);
        wc_check_mixed(m2, 2, len, window, 3);
    }
    gdn_window_set_rows(0);
    CHECK(gdn_window_piece(&c, 2, 300) == 300, "the default budget splits a window of 2 x 300 rows");
    gs_model_free(m2);
    return test_summary();
}
