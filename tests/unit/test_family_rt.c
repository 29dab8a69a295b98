/* The Recurrent Transformer family (engine/arch/rt/) against references
 * computed outside our C: the rt2 fixture (a float64 transcription of the
 * source's reference loop, tests/fixtures/reference/README.md) and, given as
 * arguments, pairs from tests/reference/rt_reference.py (every site). Every
 * output is read through the engine's sites (probes/ captures and the kept
 * rows) within 1e-4, the attention pattern with its NaNs where the reference
 * has them; the engine decodes one position at a time while the reference
 * runs the source's whole-sequence loop, so equal outputs show incremental
 * decoding equals the full loop. Then batch invariance, BF16 within rounding,
 * an edit of a recurrent key reaching later positions, and configs the
 * engine does not run refused in one line.
 *
 * test_family_rt [WEIGHTS EXPECT]...: those pairs, else rt2. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/checkpoint/safetensors.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "testlib.h"

/* The sites compared, by site name and the expect file's name ("%d": a layer). */
static const struct { const char *site, *expect; int per_layer; } sites[] = {
    {"hook_embed", "embed", 0},
    {"blocks.%d.hook_resid_pre", "resid_pre_%d", 1},
    {"blocks.%d.attn.hook_q", "q_%d", 1},
    {"blocks.%d.attn.hook_k", "k_%d", 1},
    {"blocks.%d.attn.hook_v", "v_%d", 1},
    {"blocks.%d.attn.hook_pattern", "pattern_%d", 1},
    {"blocks.%d.attn.hook_diag_share", "diag_share_%d", 1},
    {"blocks.%d.hook_attn_out", "attn_out_%d", 1},
    {"blocks.%d.hook_resid_mid", "resid_mid_%d", 1},
    {"blocks.%d.hook_mlp_out", "mlp_out_%d", 1},
    {"blocks.%d.hook_resid_post", "resid_post_%d", 1},
    {"blocks.%d.attn.hook_k_rec", "recurrent_k_%d", 1},
    {"blocks.%d.attn.hook_v_rec", "recurrent_v_%d", 1},
    {"ln_final.hook_normalized", "final_hidden", 0},
};
#define N_SITES ((int)(sizeof sites / sizeof *sites))
#define MAX_CAPS (2 + 13 * 4)

typedef struct {
    int B, T, V, n;
    char name[MAX_CAPS][48], expect[MAX_CAPS][48];
    int width[MAX_CAPS];
    float *cap[MAX_CAPS]; /* (B, T, width) of each captured site */
    int last_resid;
    float *logits, *nll;  /* logits of steps 1..T (B, T, V); nll of steps 1..T-1 (B, T-1) */
    int nan0;             /* every nll at step 0 is NaN and its top1 -1 */
} run_out;

static void run_out_free(run_out *r) {
    for (int i = 0; i < r->n; i++) free(r->cap[i]);
    free(r->logits);
    free(r->nll);
}

/* B sequences of T tokens, `batch` at a time, every site captured, then one
 * more step whose logits are the prediction made at position T - 1. */
static int run_model(const gpn_model *m, const int32_t *tokens, int B, int T, int batch, run_out *r) {
    const gpn_config *c = &m->cfg;
    memset(r, 0, sizeof *r);
    r->B = B, r->T = T, r->V = c->V, r->nan0 = 1;
    for (int s = 0; s < N_SITES; s++)
        for (int l = 0; l < (sites[s].per_layer ? c->n_layers : 1) && r->n < MAX_CAPS; l++) {
            snprintf(r->name[r->n], sizeof r->name[0], sites[s].site, l);
            snprintf(r->expect[r->n], sizeof r->expect[0], sites[s].expect, l);
            if (!strcmp(sites[s].expect, "resid_post_%d")) r->last_resid = r->n;
            r->n++;
        }
    r->logits = calloc((size_t)B * T * c->V, 4), r->nll = calloc((size_t)B * T, 4);
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gpn_engine *e = gpn_engine_new(m, batch);
        probe_set *ps = e ? probe_set_new(e) : NULL;
        if (!ps) { gpn_engine_free(e); return -1; }
        probe_capture *cap[MAX_CAPS];
        for (int i = 0; i < r->n; i++) {
            if (!(cap[i] = probe_capture_add(ps, r->name[i]))) { probe_set_free(ps); gpn_engine_free(e); return -1; }
            r->width[i] = cap[i]->width;
            if (!r->cap[i]) r->cap[i] = calloc((size_t)B * T * cap[i]->width, 4);
        }
        gpn_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            int32_t tok[64];
            for (int b = 0; b < nb; b++) tok[b] = t < T ? tokens[(size_t)(b0 + b) * T + t] : 0;
            if (gpn_engine_step(e, tok, nb) != 0) { probe_set_free(ps); gpn_engine_free(e); return -1; }
            gpn_step_out o = gpn_engine_out(e);
            const float *logits = gpn_engine_site(e, GPN_HOOK_LOGITS), *nll = gpn_engine_site(e, GPN_HOOK_NLL);
            if (!logits || !nll) { probe_set_free(ps); gpn_engine_free(e); return gs_fail("no kept logits/nll"); }
            for (int b = 0; b < nb; b++) {
                size_t row = (size_t)(b0 + b) * T + t;
                for (int i = 0; t < T && i < r->n; i++)
                    memcpy(r->cap[i] + row * r->width[i], cap[i]->data + (size_t)b * r->width[i], (size_t)r->width[i] * 4);
                if (t == 0) {
                    r->nan0 &= isnan(nll[b]) && o.top1[b] == -1;
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

/* ||got - want|| / ||want|| over the entries where want is a number; NaN in
 * one and not the other is a failure (the pattern's positions before 0) */
static void compare(const char *fx, const st_file *ex, const char *name, const float *got, long n_got) {
    const st_tensor *t = safetensors_find(ex, name);
    CHECK(t && t->numel == n_got, "%s: fixture lacks %s of %ld values", fx, name, n_got);
    if (!t || t->numel != n_got) return;
    float *want = malloc((size_t)n_got * 4);
    st_tensor_to_f32(t, want);
    double num = 0, den = 0;
    long nan_mismatch = 0, nans = 0;
    for (long i = 0; i < n_got; i++) {
        if (isnan(want[i]) || isnan(got[i])) {
            nan_mismatch += isnan(want[i]) != isnan(got[i]);
            nans++;
            continue;
        }
        num += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        den += (double)want[i] * want[i];
    }
    double err = den > 0 ? sqrt(num / den) : sqrt(num);
    printf("  %-6s %-16s rel err %.2e%s\n", fx, name, err, nans ? " (NaN before position 0 alike)" : "");
    CHECK(err < 1e-4 && !nan_mismatch, "%s %s: relative error %.3e, %ld NaNs where the other has a number", fx, name,
          err, nan_mismatch);
    free(want);
}

/* Save the model's tensors with the metadata of `path_from` (its config
 * with `key` set to the JSON `value`; key NULL: no config at all), drop
 * tensor `drop` (or none), add `extra` (a copy of the first norm), and load it. */
static gpn_model *resave(const gpn_model *m, const char *from, const char *path, const char *key, const char *value,
                         const char *drop, const char *extra) {
    st_file *f = safetensors_open(from);
    const char *js = f ? safetensors_meta(f, "config") : NULL;
    cJSON *cfg = js ? cJSON_Parse(js) : NULL;
    char *text = NULL;
    if (cfg && key) {
        cJSON *v = cJSON_Parse(value);
        if (cJSON_GetObjectItemCaseSensitive(cfg, key)) cJSON_ReplaceItemInObjectCaseSensitive(cfg, key, v);
        else cJSON_AddItemToObject(cfg, key, v);
        text = cJSON_PrintUnformatted(cfg);
    }
    gpn_tensor_spec specs[GPN_MAX_TENSORS];
    int n = gpn_tensor_specs(&m->cfg, specs);
    st_writer *w = st_writer_new();
    for (int i = 0; i < n; i++)
        if (!drop || strcmp(drop, specs[i].name))
            st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, m->block + specs[i].offset);
    if (extra) st_writer_add(w, extra, ST_F32, 1, specs[1].shape, m->block + specs[1].offset);
    if (text) st_writer_meta(w, "config", text);
    else if (js && !key && value) st_writer_meta(w, "config", value); /* a raw config text */
    else if (js && !key && !value && (drop || extra)) st_writer_meta(w, "config", js);
    int rc = st_writer_save(w, path);
    st_writer_free(w);
    cJSON_free(text);
    cJSON_Delete(cfg);
    safetensors_close(f);
    return rc ? NULL : gpn_model_load(path);
}

static void refused(const gpn_model *m, const char *from, const char *dir, const char *key, const char *value,
                    const char *drop, const char *extra, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/refused.safetensors", dir);
    gpn_model *bad = resave(m, from, path, key, value, drop, extra);
    const char *err = gs_error();
    CHECK(!bad && strstr(err, needle) && !strchr(err, '\n'), "%s=%s: loaded, or the error '%s' lacks '%s'",
          key ? key : "-", value ? value : "-", bad ? "" : err, needle);
    if (!bad) printf("  refused %s=%s: %s\n", key ? key : drop ? drop : extra ? extra : "(config)", value ? value : "", err);
    gpn_model_free(bad);
}

/* zero the recurrent keys written at position 0 (probe handler) */
static void zero_first(void *ctx, const gpn_hook_event *ev) {
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
    CHECK(m->cfg.arch == GPN_ARCH_RT && fam && !fam->predicts_first_token, "%s: not a Recurrent Transformer", fx);
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1], d = m->cfg.d, V = m->cfg.V;
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);

    /* 1. the whole batch at once: every site the expect file has */
    run_out full;
    CHECK(run_model(m, tokens, B, T, B, &full) == 0, "run: %s", gs_error());
    int compared = 0;
    for (int i = 0; i < full.n; i++)
        if (safetensors_find(ex, full.expect[i]))
            compare(fx, ex, full.expect[i], full.cap[i], (long)B * T * full.width[i]), compared++;
    printf("  %-6s %d of %d captured sites in the expect file\n", fx, compared, full.n);
    CHECK(compared >= 2 * m->cfg.n_layers + 1, "%s: only %d sites to compare", fx, compared);
    compare(fx, ex, "logits", full.logits, (long)B * T * V);
    compare(fx, ex, "nll", full.nll, (long)B * (T - 1));
    CHECK(full.nan0, "%s: step 0 predicts nothing: its nll must be NaN and its top1 -1", fx);

    /* 2. batch invariance: one sequence at a time (GEMV instead of GEMM) */
    run_out one;
    CHECK(run_model(m, tokens, B, T, 1, &one) == 0, "run one at a time: %s", gs_error());
    double e1 = rel_err(one.cap[one.last_resid], full.cap[full.last_resid], (long)B * T * d);
    double e2 = rel_err(one.logits, full.logits, (long)B * T * V);
    printf("  %-6s batch invariance: resid_post %.2e, logits %.2e\n", fx, e1, e2);
    CHECK(e1 < 1e-5 && e2 < 1e-5, "%s: batch of %d vs one at a time (%.2e, %.2e)", fx, B, e1, e2);
    run_out_free(&one);

    /* 3. BF16 weights: drift no more than 3x a control model's whose weights
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
        CHECK(!memcmp(&mb->cfg, &m->cfg, sizeof m->cfg), "%s: the saved config reads back different", fx);
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

    /* 4. the memory keeps an edit: zeroing layer 0's recurrent keys of
     * position 0 leaves step 0 alone (they are written after its output)
     * and changes every later step, which reads them */
    gpn_engine *e = gpn_engine_new(m, B);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    int ok = ps && probe_add(ps, "blocks.0.attn.hook_k_rec", zero_first, NULL) == 0;
    CHECK(ok, "probes: %s", gs_error());
    if (ok) {
        gpn_engine_reset(e);
        double same = 0, moved = 0;
        for (int t = 0; t < 3 && t < T; t++) {
            int32_t tok[64];
            for (int b = 0; b < B; b++) tok[b] = tokens[(size_t)b * T + t];
            CHECK(gpn_engine_step(e, tok, B) == 0, "step: %s", gs_error());
            gpn_step_out o = gpn_engine_out(e);
            double diff = 0;
            for (int k = 0; k < d; k++) diff += fabs(o.s_pred[k] - full.cap[full.last_resid][(size_t)t * d + k]);
            if (t == 0) same = diff;
            else moved += diff;
        }
        printf("  %-6s zeroed recurrent keys of position 0: step 0 moved %.2e, steps 1-2 moved %.2e\n", fx, same, moved);
        CHECK(same == 0 && moved > 1e-3, "%s: editing hook_k_rec: step 0 moved %.3e, later %.3e", fx, same, moved);
    }
    probe_set_free(ps);
    gpn_engine_free(e);

    /* 5. what the engine does not run, or metadata that contradicts the
     * shapes, is refused in one line */
    refused(m, wpath, dir, NULL, NULL, NULL, NULL, "must carry its OLMo model config");
    refused(m, wpath, dir, NULL, "{n_heads: 2", NULL, NULL, "not a JSON object");
    refused(m, wpath, dir, "rope", "true", NULL, NULL, "rope=true: RoPE with the recurrent block");
    refused(m, wpath, dir, "alibi", "false", NULL, NULL, "absolute positions");
    refused(m, wpath, dir, "n_kv_heads", "1", NULL, NULL, "fewer KV heads");
    refused(m, wpath, dir, "multi_query_attention", "true", NULL, NULL, "multi_query_attention=true: fewer KV heads");
    refused(m, wpath, dir, "activation_type", "\"silu\"", NULL, NULL, "activation_type 'silu' is unknown");
    refused(m, wpath, dir, "block_type", "\"sequential\"", NULL, NULL, "runs the recurrent block");
    refused(m, wpath, dir, "layer_norm_type", "\"rms\"", NULL, NULL, "layer_norm_type 'rms'");
    refused(m, wpath, dir, "n_layers", "7", NULL, NULL, "n_layers=7");
    refused(m, wpath, dir, "d_model", "48", NULL, NULL, "d_model=48");
    refused(m, wpath, dir, "n_heads", "5", NULL, NULL, "does not divide");
    refused(m, wpath, dir, "n_heads", "null", NULL, NULL, "lacks n_heads");
    refused(m, wpath, dir, "include_bias", "true", NULL, NULL, "include_bias");
    refused(m, wpath, dir, "weight_tying", "true", NULL, NULL, "tied head");
    refused(m, wpath, dir, "norm_after", "true", NULL, NULL, "post-norm");
    refused(m, wpath, dir, "clip_qkv", "-1", NULL, NULL, "clip_qkv");
    refused(m, wpath, dir, "alibi", "\"yes\"", NULL, NULL, "alibi is not true or false");
    refused(m, wpath, dir, "attention_layer_norm", m->cfg.qk_norm ? "false" : "true", NULL, NULL, "attention_layer_norm");
    refused(m, wpath, dir, "vocab_size", "100000", NULL, NULL, "vocab_size=100000");
    refused(m, wpath, dir, NULL, NULL, "transformer.ff_out.weight", NULL, "tied head");
    refused(m, wpath, dir, NULL, NULL, NULL, "transformer.blocks.0.attn_norm.bias", "biases");
    refused(m, wpath, dir, NULL, NULL, NULL, "transformer.wpe.weight", "absolute positions");

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
    check_pair("rt2", fixture("reference/rt2.weights.safetensors"), fixture("reference/rt2.expect.safetensors"));
    return test_summary();
}
