/* The Transformer++'s attention pattern site, blocks.{i}.attn.hook_pattern,
 * on the tpp2 fixture: each head's row holds the softmax weights of its
 * query (hook_q) on the most recent GS_PATTERN_KEYS keys (hook_k, both after
 * RoPE), recomputed here in double from the captured q and k; NaN where the
 * key would precede position 0; and an edit of the pattern changes the read:
 * all weight on the current key makes layer 0's attention output
 * W_o v_t exactly, which differs from the unedited output. The windows are
 * longer than GS_PATTERN_KEYS, so the window's sliding is tested too. */
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "testlib.h"

#define T_STEPS (GS_PATTERN_KEYS + 6)

/* all weight on the current key (the last column) in every head */
static void attend_to_self(void *ctx, const gs_hook_event *ev) {
    (void)ctx;
    for (int i = 0; i < ev->B * ev->width; i++) {
        int col = i % GS_PATTERN_KEYS;
        if (!isnan(ev->data[i])) ev->data[i] = col == GS_PATTERN_KEYS - 1 ? 1.0f : 0.0f;
    }
}

int main(void) {
    gs_model *m = gs_model_load(fixture("reference/tpp2.weights.safetensors"));
    CHECK(m != NULL, "load tpp2: %s", gs_error());
    if (!m) return test_summary();
    const gs_config *c = &m->cfg;
    int B = 2, H = c->H, Dh = c->dk, d = c->d, P = GS_PATTERN_KEYS;
    const gs_family *fam = gs_family_of(c);
    const gs_site *site = NULL;
    int layer = -1;
    CHECK(probe_parse_site(c, "blocks.1.attn.hook_pattern", &site, &layer) == 0 && layer == 1, "parse: %s", gs_error());
    CHECK(site && gs_site_width(site, c) == H * P && site->kind == GS_SITE_HEAD_VECTOR && fam,
          "hook_pattern: width %d, expected %d", site ? gs_site_width(site, c) : -1, H * P);

    /* 1. capture: the pattern equals softmax(q k^T / sqrt(Dh)) over the window */
    gs_engine *e = gs_engine_new(m, B);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    probe_capture *pat = ps ? probe_capture_add(ps, "blocks.1.attn.hook_pattern") : NULL;
    probe_capture *q = ps ? probe_capture_add(ps, "blocks.1.attn.hook_q") : NULL;
    probe_capture *k = ps ? probe_capture_add(ps, "blocks.1.attn.hook_k") : NULL;
    CHECK(pat && q && k, "captures: %s", gs_error());
    if (!pat || !q || !k) { probe_set_free(ps); gs_engine_free(e); gs_model_free(m); return test_summary(); }
    float *keys = calloc((size_t)B * T_STEPS * d, sizeof *keys); /* every step's keys, to rebuild the weights */
    double worst = 0;
    int nan_ok = 1, windows_full = 0;
    gs_engine_reset(e);
    for (int t = 0; t < T_STEPS; t++) {
        int32_t tok[2] = {(t * 7 + 3) % c->V, (t * 13 + 5) % c->V};
        CHECK(gs_engine_step(e, tok, B) == 0, "step: %s", gs_error());
        for (int b = 0; b < B; b++) {
            memcpy(keys + ((size_t)b * T_STEPS + t) * d, k->data + (size_t)b * d, (size_t)d * sizeof *keys);
            for (int h = 0; h < H; h++) {
                const float *qh = q->data + (size_t)b * d + (size_t)h * Dh;
                double s[T_STEPS], mx = -INFINITY, sum = 0;
                for (int j = 0; j <= t; j++) {
                    const float *kj = keys + ((size_t)b * T_STEPS + j) * d + (size_t)h * Dh;
                    s[j] = 0;
                    for (int i = 0; i < Dh; i++) s[j] += (double)qh[i] * kj[i];
                    s[j] /= sqrt((double)Dh);
                    mx = s[j] > mx ? s[j] : mx;
                }
                for (int j = 0; j <= t; j++) sum += s[j] = exp(s[j] - mx);
                const float *row = pat->data + ((size_t)b * H + h) * P;
                for (int col = 0; col < P; col++) {
                    int key = t - (P - 1) + col;
                    if (key < 0) { nan_ok &= isnan(row[col]); continue; }
                    double err = fabs(row[col] - s[key] / sum);
                    worst = err > worst || isnan(row[col]) ? (isnan(row[col]) ? INFINITY : err) : worst;
                }
                windows_full += t >= P;
            }
        }
    }
    printf("  pattern vs softmax(q k / sqrt(Dh)) in double: max abs error %.2e over %d steps\n", worst, T_STEPS);
    CHECK(worst < 1e-6, "pattern differs from the softmax weights by %.3e", worst);
    CHECK(nan_ok, "the columns before position 0 are not NaN");
    CHECK(windows_full > 0, "no step had more keys than the window");
    free(keys);
    probe_set_free(ps);

    /* 2. an edit reaches the read: all weight on the current key gives
     * attn_out = W_o v_t in layer 0 */
    const float *W_o = gs_model_tensor(m, "blocks.0.attn.W_o.weight");
    double moved = 0, off = 0;
    for (int edited = 0; edited < 2; edited++) {
        ps = probe_set_new(e);
        probe_capture *v = ps ? probe_capture_add(ps, "blocks.0.attn.hook_v") : NULL;
        probe_capture *out = ps ? probe_capture_add(ps, "blocks.0.hook_attn_out") : NULL;
        CHECK(v && out && W_o, "captures: %s", gs_error());
        if (!v || !out || !W_o) break;
        if (edited) CHECK(probe_add(ps, "blocks.0.attn.hook_pattern", attend_to_self, NULL) == 0, "probe: %s", gs_error());
        gs_engine_reset(e);
        for (int t = 0; t < 5; t++) {
            int32_t tok[2] = {(t * 7 + 3) % c->V, (t * 13 + 5) % c->V};
            CHECK(gs_engine_step(e, tok, B) == 0, "step: %s", gs_error());
            for (int b = 0; t > 0 && b < B; b++) /* at t = 0 the only key has weight 1 anyway */
                for (int i = 0; i < d; i++) {
                    double want = 0;
                    for (int j = 0; j < d; j++) want += (double)W_o[(size_t)i * d + j] * v->data[(size_t)b * d + j];
                    double diff = fabs(out->data[(size_t)b * d + i] - want);
                    if (edited) off = diff > off ? diff : off;
                    else moved += diff;
                }
        }
        probe_set_free(ps);
    }
    printf("  edited pattern: attn_out vs W_o v_t %.2e; unedited differs by %.2e in all\n", off, moved);
    CHECK(off < 1e-5, "with all weight on the current key attn_out is not W_o v_t (%.3e)", off);
    CHECK(moved > 1e-2, "the unedited output equals W_o v_t (%.3e): the edit test proves nothing", moved);
    gs_engine_free(e);
    gs_model_free(m);
    return test_summary();
}
