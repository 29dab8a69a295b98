/* The Gated DeltaNet family (engine/arch/gdn/) against references computed
 * outside our C: the gdn2 fixture (fla's naive recurrence and layer wiring,
 * tests/fixtures/reference/README.md) and, given as arguments, pairs from the
 * float64 numpy reference (tests/reference/gdn_reference.py). Every output is
 * read through the engine's sites by probes/ captures, within 1e-4 relative
 * error; then batch invariance, BF16 weights within rounding, and
 * interventions on the delta-rule state: a no-op hook on every site changes
 * nothing bit for bit, zeroing one head's S at one step changes that
 * sequence's later NLLs and nothing before it or in the other sequence. */
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/checkpoint/safetensors.h"
#include "probes/probes.h"
#include "testlib.h"

/* a site and the name of its tensor in the expect files ("{i}" the layer);
 * shift 1: the site at step t + 1 holds the reference's position t (the
 * prediction of the next token, docs/hooks.md) */
typedef struct {
    const char *site, *key;
    int shift;
} site_key;

static const site_key keys[] = {
    {"hook_embed", "embed", 0},
    {"blocks.{i}.hook_resid_pre", "resid_pre_{i}", 0},
    {"blocks.{i}.attn.q", "q_{i}", 0},
    {"blocks.{i}.attn.k", "k_{i}", 0},
    {"blocks.{i}.attn.v", "v_{i}", 0},
    {"blocks.{i}.attn.beta", "beta_{i}", 0},
    {"blocks.{i}.attn.alpha", "alpha_{i}", 0},
    {"blocks.{i}.attn.state", "state_{i}", 0},
    {"blocks.{i}.attn.o", "o_{i}", 0},
    {"blocks.{i}.hook_attn_out", "attn_out_{i}", 0},
    {"blocks.{i}.hook_resid_mid", "resid_mid_{i}", 0},
    {"blocks.{i}.hook_mlp_out", "mlp_out_{i}", 0},
    {"blocks.{i}.hook_resid_post", "resid_post_{i}", 0},
    {"ln_final.hook_normalized", "final_hidden", 0},
    {"logits", "logits", 1},
    {"nll", "nll", 1},
};
#define N_KEYS ((int)(sizeof keys / sizeof *keys))
#define MAX_CAP 256

static void fill(const char *pattern, int layer, char *out, size_t size) {
    const char *at = strstr(pattern, "{i}");
    if (!at) { snprintf(out, size, "%s", pattern); return; }
    snprintf(out, size, "%.*s%d%s", (int)(at - pattern), pattern, layer, at + 3);
}

/* Every captured site of a run over B sequences of T tokens (T + 1 steps:
 * the last step, on token 0, holds the prediction made after x_{T-1}), laid
 * out (B, T + 1, width), `batch` sequences at a time. */
typedef struct {
    int n;
    char name[MAX_CAP][64];
    const site_key *key[MAX_CAP];
    int width[MAX_CAP];
    float *data[MAX_CAP];
} run_out;

static void run_free(run_out *r) {
    for (int i = 0; i < r->n; i++) free(r->data[i]);
    memset(r, 0, sizeof *r);
}

typedef struct {
    int layer, head, seq, at;
    int dkdv;
    int fired;
} zero_state;

static void zero_state_fn(void *ctx, const gpn_hook_event *ev) {
    zero_state *z = ctx;
    if (ev->layer != z->layer || z->seq >= ev->B || ev->positions[z->seq] != z->at) return;
    memset(ev->data + (size_t)z->seq * ev->width + (size_t)z->head * z->dkdv, 0, (size_t)z->dkdv * sizeof(float));
    z->fired++;
}

static void noop_fn(void *ctx, const gpn_hook_event *ev) {
    (*(int *)ctx)++;
    (void)ev;
}

/* only: capture just these site patterns (NULL: every one); noop: also a
 * no-op handler on every site; z: the state edit (or NULL) */
static int run_model(const gpn_model *m, const int32_t *tokens, int B, int T, int batch, const char *const *only,
                     int noop, zero_state *z, run_out *r) {
    const gpn_config *c = &m->cfg;
    memset(r, 0, sizeof *r);
    int noops = 0;
    for (int k = 0; k < N_KEYS; k++) {
        int want = !only;
        for (int j = 0; only && only[j]; j++) want |= !strcmp(only[j], keys[k].site);
        if (!want) continue;
        for (int l = 0; l < (strstr(keys[k].site, "{i}") ? c->n_layers : 1); l++) {
            if (r->n == MAX_CAP) return gs_fail("more than %d site tensors: use fewer layers", MAX_CAP);
            fill(keys[k].site, l, r->name[r->n], sizeof r->name[r->n]);
            r->key[r->n] = &keys[k];
            r->n++;
        }
    }
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gpn_engine *e = gpn_engine_new(m, batch);
        probe_set *ps = e ? probe_set_new(e) : NULL;
        if (!ps) { gpn_engine_free(e); return -1; }
        probe_capture *cap[MAX_CAP];
        for (int i = 0; i < r->n; i++) {
            if (!(cap[i] = probe_capture_add(ps, r->name[i]))) goto fail;
            r->width[i] = cap[i]->width;
            if (!r->data[i]) r->data[i] = calloc((size_t)B * (T + 1) * cap[i]->width, sizeof(float));
        }
        if (noop)
            for (int k = 0; k < N_KEYS; k++) {
                char name[64];
                const char *at = strstr(keys[k].site, "{i}");
                if (at) snprintf(name, sizeof name, "%.*s*%s", (int)(at - keys[k].site), keys[k].site, at + 3);
                else snprintf(name, sizeof name, "%s", keys[k].site);
                if (probe_add(ps, name, noop_fn, &noops) != 0) goto fail;
            }
        if (z && probe_add(ps, "blocks.*.attn.state", zero_state_fn, z) != 0) goto fail;
        gpn_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            int32_t tok[64];
            for (int b = 0; b < nb; b++) tok[b] = t < T ? tokens[(long)(b0 + b) * T + t] : 0;
            if (gpn_engine_step(e, tok, nb) != 0) goto fail;
            for (int i = 0; i < r->n; i++)
                for (int b = 0; b < nb; b++)
                    memcpy(r->data[i] + ((size_t)(b0 + b) * (T + 1) + t) * r->width[i],
                           cap[i]->data + (size_t)b * r->width[i], (size_t)r->width[i] * sizeof(float));
        }
        probe_set_free(ps);
        gpn_engine_free(e);
        continue;
    fail:
        probe_set_free(ps);
        gpn_engine_free(e);
        return -1;
    }
    if (noop) CHECK(noops > 0, "the no-op handlers never ran");
    return 0;
}

static const float *find(const run_out *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->name[i], name)) return r->data[i];
    return NULL;
}

/* The reference's (B, T', width) tensor against the run's rows t + shift. */
static int compare(const char *label, const run_out *r, int i, const st_file *ex, int B, int T, int required) {
    char key[64];
    const char *at = strstr(r->name[i], "blocks.");
    int layer = at ? atoi(at + 7) : 0;
    fill(r->key[i]->key, layer, key, sizeof key);
    const st_tensor *t = safetensors_find(ex, key);
    if (!t) {
        CHECK(!required, "%s: the reference lacks %s", label, key);
        return 0;
    }
    int w = r->width[i], Tr = (int)t->shape[1], sh = r->key[i]->shift;
    CHECK(t->numel == (int64_t)B * Tr * w && Tr + sh <= T + 1, "%s: %s has %lld values, expected B %d x T %d x %d", label,
          key, (long long)t->numel, B, Tr, w);
    if (t->numel != (int64_t)B * Tr * w) return 0;
    float *want = malloc((size_t)t->numel * sizeof(float)), *got = malloc((size_t)t->numel * sizeof(float));
    st_tensor_to_f32(t, want);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < Tr; s++)
            memcpy(got + ((size_t)b * Tr + s) * w, r->data[i] + ((size_t)b * (T + 1) + s + sh) * w, (size_t)w * sizeof(float));
    double err = rel_err(got, want, (long)t->numel);
    printf("  %-6s %-30s rel err %.2e\n", label, r->name[i], err);
    CHECK(err < 1e-4, "%s %s: relative error %.3e >= 1e-4", label, r->name[i], err);
    free(want);
    free(got);
    return 1;
}

static void check_pair(const char *label, const char *wpath, const char *epath, int all_required) {
    gpn_model *m = gpn_model_load(wpath);
    CHECK(m != NULL, "load %s: %s", wpath, gs_error());
    st_file *ex = safetensors_open(epath);
    CHECK(ex != NULL, "open %s: %s", epath, gs_error());
    if (!m || !ex) { gpn_model_free(m); safetensors_close(ex); return; }
    CHECK(m->cfg.arch == GPN_ARCH_GDN, "%s: recognised as %s, not gdn", label, gpn_arch_name(m->cfg.arch));
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    CHECK(B <= 64, "%s: at most 64 sequences (%d)", label, B);
    if (B > 64) { gpn_model_free(m); safetensors_close(ex); return; }
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);

    /* 1. every site, whole batch */
    run_out full;
    CHECK(run_model(m, tokens, B, T, B, NULL, 0, NULL, &full) == 0, "run: %s", gs_error());
    int compared = 0;
    static const char *fixture_keys[] = {"resid_post_", "alpha_", "beta_", "final_hidden", "logits", "nll"};
    for (int i = 0; i < full.n; i++) {
        int req = all_required;
        for (int k = 0; k < 6; k++) req |= !strncmp(full.key[i]->key, fixture_keys[k], strlen(fixture_keys[k]));
        compared += compare(label, &full, i, ex, B, T, req);
    }
    printf("  %-6s %d site tensors compared\n", label, compared);
    const float *nll = find(&full, "nll");
    int first_nan = 1;
    for (int b = 0; b < B; b++) first_nan &= isnan(nll[(size_t)b * (T + 1)]);
    CHECK(first_nan, "%s: the NLL at a window's first step is not NaN", label);

    /* 2. batch invariance, one sequence at a time, and with nothing hooked on
     * the state (the write and the read fused in one pass) */
    char last[64];
    snprintf(last, sizeof last, "blocks.%d.hook_resid_post", m->cfg.n_layers - 1);
    const char *few[] = {"blocks.{i}.hook_resid_post", "nll", NULL};
    run_out single;
    CHECK(run_model(m, tokens, B, T, 1, few, 0, NULL, &single) == 0, "run single: %s", gs_error());
    long n_res = (long)B * (T + 1) * m->cfg.d;
    double e1 = rel_err(find(&single, last), find(&full, last), n_res);
    double e2 = 0;
    for (int b = 0; b < B; b++)
        e2 = fmax(e2, rel_err(find(&single, "nll") + (size_t)b * (T + 1) + 1, nll + (size_t)b * (T + 1) + 1, T));
    printf("  %-6s batch invariance: resid_post %.2e, nll %.2e\n", label, e1, e2);
    CHECK(e1 < 1e-5 && e2 < 1e-5, "%s: batch of %d vs one at a time differ (%.2e, %.2e)", label, B, e1, e2);
    run_free(&single);

    /* 3. BF16 weights: drift no more than 3x that of a control with 2^-9
     * relative noise on every weight (as tests/unit/test_parity.c) */
    char bpath[600];
    snprintf(bpath, sizeof bpath, "%s/%s.bf16.safetensors", scratch_dir("family_gdn"), label);
    CHECK(gpn_model_save(m, bpath, 1) == 0, "save bf16: %s", gs_error());
    gpn_model *mb = gpn_model_load(bpath), *mc = gpn_model_new(&m->cfg);
    CHECK(mb && mc, "bf16 model: %s", gs_error());
    if (mb && mc) {
        uint64_t rng = 12345;
        for (size_t i = 0; i < m->n_params; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(rng >> 11) / 9007199254740992.0 - 0.5;
            mc->block[i] = (float)(m->block[i] * (1.0 + u * (1.0 / 256.0)));
        }
        CHECK(!strcmp(mb->source_dtype, "BF16") && mb->cfg.norm_eps == m->cfg.norm_eps && mb->cfg.conv == m->cfg.conv,
              "bf16 round trip: dtype %s", mb->source_dtype);
        run_out rb, rc;
        CHECK(run_model(mb, tokens, B, T, B, few, 0, NULL, &rb) == 0, "run bf16: %s", gs_error());
        CHECK(run_model(mc, tokens, B, T, B, few, 0, NULL, &rc) == 0, "run control: %s", gs_error());
        double eb = rel_err(find(&rb, last), find(&full, last), n_res);
        double ec = rel_err(find(&rc, last), find(&full, last), n_res);
        printf("  %-6s bf16 resid_post drift %.2e, control (2^-9 noise) %.2e\n", label, eb, ec);
        CHECK(eb > 0 && eb < 3 * ec + 1e-3, "%s bf16 drift %.3e vs control %.3e", label, eb, ec);
        run_free(&rb);
        run_free(&rc);
    }
    gpn_model_free(mb);
    gpn_model_free(mc);

    /* 4. interventions on S: a no-op handler on every site is invisible; zeroing
     * head 0 of layer 0 in sequence 0 at position T/2 changes that sequence's
     * NLLs after T/2 and nothing else */
    const char *outs[] = {"logits", "nll", NULL};
    run_out plain, same, cut;
    CHECK(run_model(m, tokens, B, T, B, outs, 0, NULL, &plain) == 0, "run plain: %s", gs_error());
    CHECK(run_model(m, tokens, B, T, B, outs, 1, NULL, &same) == 0, "run no-op: %s", gs_error());
    long nv = (long)B * (T + 1) * m->cfg.V;
    CHECK(!memcmp(find(&same, "logits"), find(&plain, "logits"), (size_t)nv * sizeof(float)),
          "%s: no-op hooks on every site changed the logits", label);
    CHECK(!memcmp(find(&same, "logits"), find(&full, "logits"), (size_t)nv * sizeof(float)),
          "%s: capturing every site changed the logits", label);
    zero_state z = {0, 0, 0, T / 2, m->cfg.dk * m->cfg.dv, 0};
    CHECK(run_model(m, tokens, B, T, B, outs, 0, &z, &cut) == 0, "run zero: %s", gs_error());
    CHECK(z.fired == 1, "%s: the state edit ran %d times", label, z.fired);
    const float *cn = find(&cut, "nll");
    int before_same = 1, others_same = 1, after_changed = 0;
    for (int b = 0; b < B; b++)
        for (int t = 1; t <= T; t++) {
            float a = cn[(size_t)b * (T + 1) + t], o = nll[(size_t)b * (T + 1) + t];
            if (b == 0 && t <= T / 2) before_same &= a == o;
            if (b == 0 && t > T / 2) after_changed |= fabsf(a - o) > 1e-6f * fabsf(o);
            if (b != 0) others_same &= a == o;
        }
    CHECK(before_same && others_same, "%s: zeroing S at position %d changed an earlier NLL or another sequence's", label,
          T / 2);
    CHECK(after_changed, "%s: zeroing head 0's S at position %d changed no later NLL", label, T / 2);
    printf("  %-6s state edit: later NLLs change, earlier and other sequences' do not; no-op hooks: bit for bit\n", label);
    run_free(&plain);
    run_free(&same);
    run_free(&cut);

    run_free(&full);
    gpn_model_free(m);
    safetensors_close(ex);
    free(tokens);
}

static void check_given(const char *label, const char *wpath, const char *epath) {
    check_pair(label, wpath, epath, 1);
}

/* test_family_gdn [WEIGHTS EXPECT]...: the given pairs (every site required),
 * else the gdn2 fixture (the sites it holds). */
int main(int argc, char **argv) {
    if (test_each_pair(argc, argv, check_given)) return test_summary();
    check_pair("gdn2", fixture("reference/gdn2.weights.safetensors"), fixture("reference/gdn2.expect.safetensors"), 0);
    return test_summary();
}
