/* The Transformer++ family against the tpp2 fixture, which the companion's own
 * torch module computed (tests/fixtures/reference/README.md): every
 * resid_post_{i}, final_hidden, logits and nll within 1e-4, read through the
 * engine's sites (captures of probes/ and the kept rows), under the engine's
 * step convention (the fixture's position t is the engine's step t for the
 * residual stream, step t + 1 for the logits and the nll); batch invariance;
 * BF16 weights within bf16 rounding; an edit of a cached key persists;
 * metadata that is missing or contradicts the shapes is refused in one line.
 *
 * test_family_tpp [WEIGHTS EXPECT]: another pair (tests/cli/family_tpp.sh
 * makes them with tests/reference/tpp_reference.py), else tpp2. */
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "engine/checkpoint/safetensors.h"
#include "probes/probes.h"
#include "fixture_compare.h"
#include "testlib.h"

/* The sites compared, by site name and the expect file's name ("%d": a layer). */
static const struct { const char *site, *expect; int per_layer; } sites[] = {
    {"hook_embed", "embed", 0},
    {"blocks.%d.hook_resid_pre", "resid_pre_%d", 1},
    {"blocks.%d.attn.hook_q", "q_%d", 1},
    {"blocks.%d.attn.hook_k", "k_%d", 1},
    {"blocks.%d.attn.hook_v", "v_%d", 1},
    {"blocks.%d.hook_attn_out", "attn_out_%d", 1},
    {"blocks.%d.hook_resid_mid", "resid_mid_%d", 1},
    {"blocks.%d.hook_mlp_out", "mlp_out_%d", 1},
    {"blocks.%d.hook_resid_post", "resid_post_%d", 1},
    {"ln_final.hook_normalized", "final_hidden", 0},
};
#define N_SITES ((int)(sizeof sites / sizeof *sites))
#define MAX_CAPS (2 + 8 * GPN_MAX_LAYERS)

typedef struct {
    int B, T, d, V, L, n;
    char name[MAX_CAPS][40], expect[MAX_CAPS][40];
    float *cap[MAX_CAPS];       /* (B, T, d) of each captured site */
    int last_resid;             /* index of the last layer's resid_post */
    float *logits, *nll;        /* logits of steps 1..T (B, T, V); nll of steps 1..T-1 (B, T-1) */
    float *nll0;                /* (B): the nll at step 0, NaN */
    int top1_0;                 /* every top1 at step 0 is -1 */
} run_out;

static void run_out_free(run_out *r) {
    for (int i = 0; i < r->n; i++) free(r->cap[i]);
    free(r->logits); free(r->nll); free(r->nll0);
}

/* Run B sequences of T tokens, `batch` at a time, capturing every site of
 * `sites`, then one more step (of token 0) whose logits are the prediction
 * made at position T - 1. */
static int run_model(const gpn_model *m, const int32_t *tokens, int B, int T, int batch, run_out *r) {
    const gpn_config *c = &m->cfg;
    memset(r, 0, sizeof *r);
    r->B = B, r->T = T, r->d = c->d, r->V = c->V, r->L = c->n_layers;
    size_t BT = (size_t)B * T;
    for (int s = 0; s < N_SITES; s++)
        for (int l = 0; l < (sites[s].per_layer ? c->n_layers : 1); l++) {
            snprintf(r->name[r->n], sizeof r->name[0], sites[s].site, l);
            snprintf(r->expect[r->n], sizeof r->expect[0], sites[s].expect, l);
            if (!strcmp(sites[s].expect, "resid_post_%d")) r->last_resid = r->n;
            r->cap[r->n++] = calloc(BT * c->d, 4);
        }
    r->logits = calloc(BT * c->V, 4), r->nll = calloc(BT, 4), r->nll0 = calloc(B, 4);
    r->top1_0 = 1;
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gpn_engine *e = gpn_engine_new(m, batch);
        probe_set *ps = e ? probe_set_new(e) : NULL;
        if (!ps) { gpn_engine_free(e); return -1; }
        probe_capture *cap[MAX_CAPS];
        for (int i = 0; i < r->n; i++)
            if (!(cap[i] = probe_capture_add(ps, r->name[i]))) { probe_set_free(ps); gpn_engine_free(e); return -1; }
        gpn_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            int32_t tok[64];
            for (int b = 0; b < nb; b++) tok[b] = t < T ? tokens[(size_t)(b0 + b) * T + t] : 0;
            if (gpn_engine_step(e, tok, nb) != 0) { probe_set_free(ps); gpn_engine_free(e); return -1; }
            gpn_step_out o = gpn_engine_out(e);
            const float *logits = gpn_engine_site(e, GPN_HOOK_LOGITS), *nll = gpn_engine_site(e, GPN_HOOK_NLL);
            if (!logits || !nll || o.nll != nll) { probe_set_free(ps); gpn_engine_free(e); return gs_fail("no kept logits/nll"); }
            for (int b = 0; b < nb; b++) {
                size_t row = (size_t)(b0 + b) * T + t;
                for (int i = 0; t < T && i < r->n; i++)
                    memcpy(r->cap[i] + row * c->d, cap[i]->data + (size_t)b * c->d, (size_t)c->d * 4);
                if (t == 0) {
                    r->nll0[b0 + b] = nll[b];
                    r->top1_0 &= o.top1[b] == -1;
                    continue;
                }
                memcpy(r->logits + (row - 1) * c->V, logits + (size_t)b * c->V, (size_t)c->V * 4);
                if (t < T) r->nll[(size_t)(b0 + b) * (T - 1) + t - 1] = nll[b];
            }
        }
        probe_set_free(ps);
        gpn_engine_free(e);
    }
    return 0;
}

/* Save the model's tensors with the given metadata (key, value, ..., NULL) and load it back. */
static gpn_model *resave(const gpn_model *m, const char *path, const char *const *meta) {
    gpn_tensor_spec specs[GPN_MAX_TENSORS];
    int n = gpn_tensor_specs(&m->cfg, specs);
    st_writer *w = st_writer_new();
    for (int i = 0; i < n; i++) st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, m->block + specs[i].offset);
    for (int i = 0; meta && meta[i]; i += 2) st_writer_meta(w, meta[i], meta[i + 1]);
    int rc = st_writer_save(w, path);
    st_writer_free(w);
    return rc ? NULL : gpn_model_load(path);
}

static void refused(const gpn_model *m, const char *dir, const char *what, const char *const *meta, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/refused.safetensors", dir);
    gpn_model *bad = resave(m, path, meta);
    const char *err = gs_error();
    CHECK(!bad && strstr(err, needle) && !strchr(err, '\n'), "%s: loaded, or the error '%s' lacks '%s'", what, err, needle);
    if (!bad) printf("  refused %s: %s\n", what, err);
    gpn_model_free(bad);
}

/* zero the keys of position 0 in layer 0 (probe handler) */
static void zero_first_keys(void *ctx, const gpn_hook_event *ev) {
    (void)ctx;
    for (int b = 0; b < ev->B; b++)
        if (ev->positions[b] == 0) memset(ev->data + (size_t)b * ev->width, 0, (size_t)ev->width * sizeof(float));
}

static void check_pair(const char *fx, const char *wpath, const char *epath) {
    gpn_model *m = gpn_model_load(wpath);
    CHECK(m != NULL, "load %s: %s", fx, gs_error());
    st_file *ex = safetensors_open(epath);
    CHECK(ex != NULL, "open %s: %s", epath, gs_error());
    if (!m || !ex) { gpn_model_free(m); safetensors_close(ex); return; }
    const gs_family *fam = gs_family_of(&m->cfg);
    CHECK(m->cfg.arch == GPN_ARCH_TPP && fam && !fam->predicts_first_token, "%s: not a Transformer++", fx);
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1], d = m->cfg.d, V = m->cfg.V;
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);
    long BTd = (long)B * T * d;

    /* 1. float32, the whole batch at once */
    run_out full;
    CHECK(run_model(m, tokens, B, T, B, &full) == 0, "run: %s", gs_error());
    /* every site the expect file has (tpp2: resid_post_{i}, final_hidden; the
     * reference's files: all of them) */
    int compared = 0;
    for (int i = 0; i < full.n; i++)
        if (safetensors_find(ex, full.expect[i])) compare_fixture(fx, ex, full.expect[i], full.cap[i], BTd, 1e-4), compared++;
    printf("  %-6s %d of %d captured sites in the expect file\n", fx, compared, full.n);
    CHECK(compared >= m->cfg.n_layers + 1, "%s: only %d sites to compare", fx, compared);
    compare_fixture(fx, ex, "logits", full.logits, (long)B * T * V, 1e-4);
    compare_fixture(fx, ex, "nll", full.nll, (long)B * (T - 1), 1e-4);
    int nan0 = 1;
    for (int b = 0; b < B; b++) nan0 &= isnan(full.nll0[b]);
    CHECK(nan0 && full.top1_0, "%s: step 0 predicts nothing: its nll must be NaN and its top1 -1", fx);

    /* 2. batch invariance: one sequence at a time (GEMV instead of GEMM) */
    run_out one;
    CHECK(run_model(m, tokens, B, T, 1, &one) == 0, "run one at a time: %s", gs_error());
    double e1 = rel_err(one.cap[one.last_resid], full.cap[full.last_resid], BTd);
    double e2 = rel_err(one.logits, full.logits, (long)B * T * V);
    printf("  %-6s batch invariance: resid_post %.2e, logits %.2e\n", fx, e1, e2);
    CHECK(e1 < 1e-5 && e2 < 1e-5, "%s: batch of %d vs one at a time (%.2e, %.2e)", fx, B, e1, e2);
    run_out_free(&one);

    /* 3. BF16 weights: drift no more than 3x a control model's, whose weights
     * carry random relative noise of bf16's size (test_parity.c's measure) */
    const char *dir = scratch_dir(fx);
    char bpath[512];
    snprintf(bpath, sizeof bpath, "%s/%s.bf16.safetensors", dir, fx);
    CHECK(gpn_model_save(m, bpath, 1) == 0, "save bf16: %s", gs_error());
    gpn_model *mb = gpn_model_load(bpath), *mc = gpn_model_new(&m->cfg);
    CHECK(mb && mc, "bf16 round trip: %s", gs_error());
    if (mb && mc) {
        uint64_t rng = 12345;
        for (size_t i = 0; i < m->n_params; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(rng >> 11) / 9007199254740992.0 - 0.5;
            mc->block[i] = (float)(m->block[i] * (1.0 + u * (1.0 / 256.0)));
        }
        CHECK(!strcmp(mb->source_dtype, "BF16") && mb->cfg.H == m->cfg.H, "bf16 file: %s, %d heads", mb->source_dtype, mb->cfg.H);
        run_out rb, rc;
        CHECK(run_model(mb, tokens, B, T, B, &rb) == 0 && run_model(mc, tokens, B, T, B, &rc) == 0, "%s", gs_error());
        double eb = rel_err(rb.logits, full.logits, (long)B * T * V), ec = rel_err(rc.logits, full.logits, (long)B * T * V);
        printf("  %-6s bf16 logits drift %.2e, control (2^-9 noise) %.2e\n", fx, eb, ec);
        CHECK(eb > 0 && eb < 3 * ec + 1e-3, "%s bf16 drift %.3e vs control %.3e", fx, eb, ec);
        run_out_free(&rb);
        run_out_free(&rc);
    }
    gpn_model_free(mb);
    gpn_model_free(mc);

    /* 4. an edit of blocks.0.attn.hook_k reaches the cache: zeroing position
     * 0's keys leaves step 0 alone (one key: its weight is 1 whatever it is)
     * and changes every later step */
    gpn_engine *e = gpn_engine_new(m, B);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    int cap = ps != NULL;
    CHECK(cap && probe_add(ps, "blocks.0.attn.hook_k", zero_first_keys, NULL) == 0, "probes: %s", gs_error());
    if (cap) {
        gpn_engine_reset(e);
        double same = 0, moved = 0;
        for (int t = 0; t < 3 && t < T; t++) {
            int32_t tok[64];
            for (int b = 0; b < B; b++) tok[b] = tokens[(size_t)b * T + t];
            CHECK(gpn_engine_step(e, tok, B) == 0, "step: %s", gs_error());
            /* sequence 0's last resid_post against the unedited run's */
            gpn_step_out o = gpn_engine_out(e);
            double diff = 0;
            for (int k = 0; k < d; k++) diff += fabs(o.s_pred[k] - full.cap[full.last_resid][(size_t)t * d + k]);
            if (t == 0) same = diff;
            else moved += diff;
        }
        printf("  %-6s zeroed cached keys: step 0 moved %.2e, steps 1-2 moved %.2e\n", fx, same, moved);
        CHECK(same < 1e-4 && moved > 1e-3, "%s: editing hook_k: step 0 moved %.3e, later %.3e", fx, same, moved);
    }
    probe_set_free(ps);
    gpn_engine_free(e);

    /* 5. the heads come from metadata, which may confirm and never contradict */
    char heads[16];
    snprintf(heads, sizeof heads, "%d", m->cfg.H);
    const char *none[] = {NULL}, *plain[] = {"n_heads", heads, NULL};
    char cfg7[64];
    snprintf(cfg7, sizeof cfg7, "{\"n_heads\": %d, \"n_layers\": 7}", m->cfg.H);
    const char *wrong_layers[] = {"config", cfg7, NULL};
    const char *wrong_arch[] = {"arch", "gpn_m", "n_heads", heads, NULL};
    const char *not_json[] = {"config", "{n_heads: 2", NULL};
    refused(m, dir, "no heads", none, "number of attention heads");
    refused(m, dir, "n_layers 7", wrong_layers, "n_layers=7");
    refused(m, dir, "arch gpn_m", wrong_arch, "arch=gpn_m");
    refused(m, dir, "config not JSON", not_json, "not a JSON object");
    char path[512];
    snprintf(path, sizeof path, "%s/plain_heads.safetensors", dir);
    gpn_model *mp = resave(m, path, plain);
    CHECK(mp && mp->cfg.H == m->cfg.H, "a plain n_heads key: %s", mp ? "wrong heads" : gs_error());
    gpn_model_free(mp);

    run_out_free(&full);
    gpn_model_free(m);
    safetensors_close(ex);
    free(tokens);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        for (int i = 1; i + 1 < argc; i += 2) {
            const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
            check_pair(name, argv[i], argv[i + 1]);
        }
        return test_summary();
    }
    check_pair("tpp2", fixture("reference/tpp2.weights.safetensors"), fixture("reference/tpp2.expect.safetensors"));
    return test_summary();
}
