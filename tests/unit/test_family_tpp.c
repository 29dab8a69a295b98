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
#include "family_check.h"

/* The sites compared, by site name and the expect file's name ("%d": a layer). */
static const fc_site sites[] = {
    FC_SITES_IN,
    {"blocks.%d.attn.hook_q", "q_%d", 1},
    {"blocks.%d.attn.hook_k", "k_%d", 1},
    {"blocks.%d.attn.hook_v", "v_%d", 1},
    FC_SITES_BLOCK_OUT,
    FC_SITE_FINAL,
};
#define N_SITES FC_N_SITES(sites)

/* Save the model's tensors with the given metadata (key, value, ..., NULL) and load it back. */
static gs_model *resave(const gs_model *m, const char *path, const char *const *meta) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&m->cfg, specs);
    st_writer *w = st_writer_new();
    for (int i = 0; i < n; i++) st_writer_add(w, specs[i].name, ST_F32, specs[i].ndim, specs[i].shape, m->block + specs[i].offset);
    for (int i = 0; meta && meta[i]; i += 2) st_writer_meta(w, meta[i], meta[i + 1]);
    int rc = st_writer_save(w, path);
    st_writer_free(w);
    return rc ? NULL : gs_model_load(path);
}

static void refused(const gs_model *m, const char *dir, const char *what, const char *const *meta, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/refused.safetensors", dir);
    fc_check_refused(resave(m, path, meta), what, needle);
}

static void check_pair(const char *fx, const char *wpath, const char *epath) {
    fc_pair pr;
    if (fc_open(fx, wpath, epath, GS_ARCH_TPP, &pr)) return;
    gs_model *m = pr.m;

    /* 1-3. every site (tpp2: resid_post_{i}, final_hidden; the reference's
     * files: all of them), batch invariance, BF16 (family_check.h) */
    fc_run full;
    fc_parity(fx, m, pr.ex, sites, N_SITES, pr.tokens, pr.B, pr.T, m->cfg.n_layers + 1, &full);
    const char *dir = scratch_dir(fx);

    /* 4. an edit of blocks.0.attn.hook_k reaches the cache: zeroing position
     * 0's keys leaves step 0 alone (one key: its weight is 1 whatever it is)
     * and changes every later step */
    fc_check_edit(fx, &pr, "blocks.0.attn.hook_k", "cached keys", &full, 1e-4);

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
    refused(m, dir, "config not JSON", not_json, "not valid JSON");
    char path[512];
    snprintf(path, sizeof path, "%s/plain_heads.safetensors", dir);
    gs_model *mp = resave(m, path, plain);
    CHECK(mp && mp->cfg.H == m->cfg.H, "a plain n_heads key: %s", mp ? "wrong heads" : gs_error());
    gs_model_free(mp);

    fc_run_free(&full);
    fc_close(&pr);
}

int main(int argc, char **argv) { return fc_main(argc, argv, "tpp2", check_pair); }
