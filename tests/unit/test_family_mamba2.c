/* The Mamba-2 family (engine/arch/mamba2/) against its float64 numpy
 * reference (tests/reference/mamba2_reference.py, written from mamba_ssm's
 * step and selective_state_update reference; run with $GPNSCOPE_PYTHON, or
 * pairs given as arguments). Every site is read through the engine's sites
 * by probes/ captures and must be within 1e-5 relative error of the
 * reference (the logits, the nll, the SSM state and the rest); then batch
 * invariance, BF16 weights within rounding (a save and reload that also reads
 * the options back from __metadata__), every decay in (0, 1), and
 * interventions on the SSM state: a no-op hook on every site changes nothing
 * bit for bit, zeroing one head's state at one step changes that sequence's
 * later NLLs and nothing before it or in the other sequences. The runs and
 * the parity checks are tests/unit/family_check.h's. */
#include <math.h>
#include <stdint.h>

#include "engine/arch/mamba2/mamba2.h"
#include "family_check.h"

static const fc_site sites[] = {
    FC_SITES_IN,
    {"blocks.%d.mixer.conv_state", "conv_state_%d", 1},
    {"blocks.%d.mixer.x", "x_%d", 1},
    {"blocks.%d.mixer.B", "B_%d", 1},
    {"blocks.%d.mixer.C", "C_%d", 1},
    {"blocks.%d.mixer.dt", "dt_%d", 1},
    {"blocks.%d.mixer.decay", "decay_%d", 1},
    {"blocks.%d.mixer.ssm_state", "ssm_state_%d", 1},
    {"blocks.%d.mixer.y", "y_%d", 1},
    {"blocks.%d.hook_mixer_out", "mixer_out_%d", 1},
    {"blocks.%d.hook_resid_post", "resid_post_%d", 1},
    FC_SITE_FINAL,
};
#define N_SITES FC_N_SITES(sites)

typedef struct {
    int layer, head, seq, at, per_head, fired;
} zero_state;

static void zero_state_fn(void *ctx, const gs_hook_event *ev) {
    zero_state *z = ctx;
    if (ev->layer != z->layer || z->seq >= ev->B || ev->positions[z->seq] != z->at) return;
    memset(ev->data + (size_t)z->seq * ev->width + (size_t)z->head * z->per_head, 0, (size_t)z->per_head * sizeof(float));
    z->fired++;
}

static void noop_fn(void *ctx, const gs_hook_event *ev) {
    (*(int *)ctx)++;
    (void)ev;
}

static void check_pair(const char *fx, const char *wpath, const char *epath) {
    fc_pair pr;
    if (fc_open(fx, wpath, epath, MAMBA2_ARCH, &pr)) return;
    const gs_model *m = pr.m;
    int B = pr.B, T = pr.T, L = m->cfg.n_layers, H = m->cfg.H;

    /* every site, logits, nll (1e-4), batch invariance, BF16 drift; then every tensor again at 1e-5 */
    fc_run full;
    fc_parity(fx, m, pr.ex, sites, N_SITES, pr.tokens, B, T, 11 * L + 2, &full);
    for (int i = 0; i < full.n; i++) fc_compare(fx, pr.ex, full.expect[i], full.cap[i], (long)B * T * full.width[i], 1e-5);
    fc_compare(fx, pr.ex, "logits", full.logits, (long)B * T * m->cfg.V, 1e-5);
    fc_compare(fx, pr.ex, "nll", full.nll, (long)B * (T - 1), 1e-5);
    int in_range = 1;
    for (int i = 0; i < full.n; i++)
        for (long k = 0; !strncmp(full.expect[i], "decay_", 6) && k < (long)B * T * H; k++)
            in_range &= full.cap[i][k] > 0 && full.cap[i][k] < 1;
    CHECK(in_range, "%s: a decay outside (0, 1)", fx);

    /* a no-op handler on every site is invisible; zeroing head 1 of the last
     * layer's state in sequence 0 at position T/2 changes that sequence's
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
    CHECK(!memcmp(same.logits, full.logits, (size_t)B * T * m->cfg.V * sizeof(float)),
          "%s: no-op hooks on every site (or capturing every site) changed the logits", fx);
    zero_state z = {L - 1, H > 1, 0, T / 2, m->cfg.dv * m->cfg.dk, 0};
    fc_hook cut_s = {"blocks.*.mixer.ssm_state", zero_state_fn, &z};
    CHECK(fc_run_hooked(m, NULL, 0, pr.tokens, B, T, B, &cut_s, 1, &cut) == 0, "run zero: %s", gs_error());
    CHECK(z.fired == 1, "%s: the state edit ran %d times", fx, z.fired);
    /* nll[b][t - 1]: the NLL of x_t, predicted at step t - 1's end from the state after x_{t-1} */
    int before_same = 1, others_same = 1, after_changed = 0;
    for (int b = 0; b < B; b++)
        for (int t = 1; t < T; t++) {
            float a = cut.nll[(size_t)b * (T - 1) + t - 1], o = full.nll[(size_t)b * (T - 1) + t - 1];
            if (b == 0 && t <= T / 2) before_same &= a == o;
            if (b == 0 && t > T / 2) after_changed |= fabsf(a - o) > 1e-6f * fabsf(o);
            if (b != 0) others_same &= a == o;
        }
    CHECK(before_same && others_same, "%s: zeroing the state at position %d changed an earlier NLL or another sequence's",
          fx, T / 2);
    CHECK(after_changed, "%s: zeroing a head's state at position %d changed no later NLL", fx, T / 2);
    printf("  %-6s state edit: later NLLs change, earlier and other sequences' do not; no-op hooks: bit for bit\n", fx);
    fc_run_free(&same);
    fc_run_free(&cut);
    fc_run_free(&full);
    fc_close(&pr);
}

int main(int argc, char **argv) {
    /* the family's id is its own: no other row answers to it */
    gs_config c = {.arch = MAMBA2_ARCH};
    CHECK(gs_family_of(&c) == &gs_family_mamba2 && gs_family_by_name("mamba2") == &gs_family_mamba2,
          "the family table does not find mamba2 by its id and name");
    if (test_each_pair(argc, argv, check_pair)) return test_summary();
    const char *py = test_numpy_python(), *src = getenv("GPNSCOPE_SOURCE");
    if (!py) return test_skip(TEST_NO_NUMPY);
    if (!src) src = ".";
    char cmd[8600];
    /* V D layers heads head_dim state groups conv tied B T seed: two groups of two heads and an
     * lm_head; one group, tied, a 3-tap conv; one head per group, 2 layers of 6 heads */
    static const int cases[][12] = {{61, 24, 2, 4, 8, 16, 2, 4, 0, 3, 40, 5},
                                    {53, 20, 3, 3, 8, 8, 1, 3, 1, 2, 33, 6},
                                    {47, 16, 2, 6, 4, 8, 6, 4, 0, 4, 24, 7}};
    const char *dir = scratch_dir("test_family_mamba2");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const int *k = cases[i];
        char prefix[4200], e[4300], label[16];
        snprintf(label, sizeof label, "m2_%zu", i);
        snprintf(prefix, sizeof prefix, "%s/%s", dir, label);
        snprintf(cmd, sizeof cmd, "'%s' '%s/tests/reference/mamba2_reference.py' make '%s' %d %d %d %d %d %d %d %d %d %d %d %d",
                 py, src, prefix, k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11]);
        CHECK(system(cmd) == 0, "the reference failed: %s", cmd);
        snprintf(e, sizeof e, "%s.expect.safetensors", prefix);
        check_pair(label, prefix, e); /* the folder: model.safetensors and config.json */
    }
    return test_summary();
}
