/* The Gated DeltaNet family (engine/arch/gdn/) against references computed
 * outside our C: the gdn2 fixture (fla's naive recurrence and layer wiring,
 * tests/fixtures/reference/README.md) and, given as arguments, pairs from the
 * float64 numpy reference (tests/reference/gdn_reference.py). Every output is
 * read through the engine's sites by probes/ captures, within 1e-4 relative
 * error; then batch invariance, BF16 weights within rounding, and
 * interventions on the delta-rule state: a no-op hook on every site changes
 * nothing bit for bit, zeroing one head's S at one step changes that
 * sequence's later NLLs and nothing before it or in the other sequence;
 * the window path's NLLs (gs_engine_window) against the same reference.
 * The runs and the parity checks are tests/unit/family_check.h's. */
#include <math.h>
#include <stdint.h>

#include "family_check.h"

/* every site of a GDN layer and its tensor's name in the expect files */
static const fc_site sites[] = {
    FC_SITES_IN,
    {"blocks.%d.attn.q", "q_%d", 1},
    {"blocks.%d.attn.k", "k_%d", 1},
    {"blocks.%d.attn.v", "v_%d", 1},
    {"blocks.%d.attn.beta", "beta_%d", 1},
    {"blocks.%d.attn.alpha", "alpha_%d", 1},
    {"blocks.%d.attn.state", "state_%d", 1},
    {"blocks.%d.attn.o", "o_%d", 1},
    FC_SITES_BLOCK_OUT,
    FC_SITE_FINAL,
};
#define N_SITES FC_N_SITES(sites)

typedef struct {
    int layer, head, seq, at;
    int dkdv;
    int fired;
} zero_state;

static void zero_state_fn(void *ctx, const gs_hook_event *ev) {
    zero_state *z = ctx;
    if (ev->layer != z->layer || z->seq >= ev->B || ev->positions[z->seq] != z->at) return;
    memset(ev->data + (size_t)z->seq * ev->width + (size_t)z->head * z->dkdv, 0, (size_t)z->dkdv * sizeof(float));
    z->fired++;
}

static void noop_fn(void *ctx, const gs_hook_event *ev) {
    (*(int *)ctx)++;
    (void)ev;
}

static void check_pair(const char *fx, const char *wpath, const char *epath, int all_required) {
    fc_pair pr;
    if (fc_open(fx, wpath, epath, GS_ARCH_GDN, &pr)) return;
    const gs_model *m = pr.m;
    int B = pr.B, T = pr.T, L = m->cfg.n_layers;

    /* 1-3: every site the file holds (the numpy reference's pairs: every site; the gdn2 fixture: resid_post,
     * alpha and beta of each layer and final_hidden), logits, nll, batch invariance, BF16 drift */
    fc_run full;
    fc_parity(fx, m, pr.ex, sites, N_SITES, pr.tokens, B, T, all_required ? 12 * L + 2 : 3 * L + 1, &full);

    /* the window path (gs_engine_window: whole windows, chunked delta rule) against the same reference NLLs */
    gs_engine *we = gs_engine_new(m, B);
    float *wnll = malloc((size_t)B * T * sizeof *wnll), *shifted = malloc((size_t)B * (T - 1) * sizeof *shifted);
    CHECK(we && wnll && shifted && gs_engine_window(we, pr.tokens, B, T, wnll) == 0, "%s: window: %s", fx, gs_error());
    if (we && wnll && shifted) {
        int nan0 = 1;
        for (int b = 0; b < B; b++) {
            nan0 &= isnan(wnll[(size_t)b * T]);
            memcpy(shifted + (size_t)b * (T - 1), wnll + (size_t)b * T + 1, (size_t)(T - 1) * sizeof *shifted);
        }
        CHECK(nan0, "%s: the window's NLL of each sequence's first token must be NaN", fx);
        fc_compare(fx, pr.ex, "nll", shifted, (long)B * (T - 1), 1e-4);
        printf("  %-6s window path (gs_engine_window): its nll is the second nll line above\n", fx);
    }
    free(wnll), free(shifted);
    gs_engine_free(we);

    /* 4. interventions on S: a no-op handler on every site is invisible; zeroing
     * head 0 of layer 0 in sequence 0 at position T/2 changes that sequence's
     * NLLs after T/2 and nothing else */
    int noops = 0;
    fc_hook every[N_SITES];
    char patterns[N_SITES][64];
    for (int k = 0; k < N_SITES; k++) {
        snprintf(patterns[k], sizeof patterns[k], sites[k].site, 0);
        if (sites[k].per_layer) {
            const char *at = strstr(sites[k].site, "%d");
            snprintf(patterns[k], sizeof patterns[k], "%.*s*%s", (int)(at - sites[k].site), sites[k].site, at + 2);
        }
        every[k] = (fc_hook){patterns[k], noop_fn, &noops};
    }
    fc_run same, cut;
    CHECK(fc_run_hooked(m, NULL, 0, pr.tokens, B, T, B, every, N_SITES, &same) == 0, "run no-op: %s", gs_error());
    CHECK(noops > 0, "the no-op handlers never ran");
    long nv = (long)B * T * m->cfg.V;
    CHECK(!memcmp(same.logits, full.logits, (size_t)nv * sizeof(float)),
          "%s: no-op hooks on every site (or capturing every site) changed the logits", fx);
    zero_state z = {0, 0, 0, T / 2, m->cfg.dk * m->cfg.dv, 0};
    fc_hook cut_s = {"blocks.*.attn.state", zero_state_fn, &z};
    CHECK(fc_run_hooked(m, NULL, 0, pr.tokens, B, T, B, &cut_s, 1, &cut) == 0, "run zero: %s", gs_error());
    CHECK(z.fired == 1, "%s: the state edit ran %d times", fx, z.fired);
    /* nll[b][t - 1]: the NLL of x_t, predicted at step t from the state after x_{t-1} */
    int before_same = 1, others_same = 1, after_changed = 0;
    for (int b = 0; b < B; b++)
        for (int t = 1; t < T; t++) {
            float a = cut.nll[(size_t)b * (T - 1) + t - 1], o = full.nll[(size_t)b * (T - 1) + t - 1];
            if (b == 0 && t <= T / 2) before_same &= a == o;
            if (b == 0 && t > T / 2) after_changed |= fabsf(a - o) > 1e-6f * fabsf(o);
            if (b != 0) others_same &= a == o;
        }
    CHECK(before_same && others_same, "%s: zeroing S at position %d changed an earlier NLL or another sequence's", fx,
          T / 2);
    CHECK(after_changed, "%s: zeroing head 0's S at position %d changed no later NLL", fx, T / 2);
    printf("  %-6s state edit: later NLLs change, earlier and other sequences' do not; no-op hooks: bit for bit\n", fx);
    fc_run_free(&same);
    fc_run_free(&cut);
    fc_run_free(&full);
    fc_close(&pr);
}

static void check_required(const char *fx, const char *wpath, const char *epath) { check_pair(fx, wpath, epath, 1); }
static void check_fixture(const char *fx, const char *wpath, const char *epath) { check_pair(fx, wpath, epath, 0); }

/* test_family_gdn [WEIGHTS EXPECT]...: the given pairs (every site required),
 * else the gdn2 fixture (the sites it holds). */
int main(int argc, char **argv) { return fc_main(argc, argv, "gdn2", argc > 1 ? check_required : check_fixture); }
