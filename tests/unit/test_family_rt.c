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

#include "family_check.h"

/* The sites compared, by site name and the expect file's name ("%d": a layer). */
static const fc_site sites[] = {
    FC_SITES_IN,
    {"blocks.%d.attn.hook_q", "q_%d", 1},
    {"blocks.%d.attn.hook_k", "k_%d", 1},
    {"blocks.%d.attn.hook_v", "v_%d", 1},
    {"blocks.%d.attn.hook_pattern", "pattern_%d", 1},
    {"blocks.%d.attn.hook_diag_share", "diag_share_%d", 1},
    FC_SITES_BLOCK_OUT,
    {"blocks.%d.attn.hook_k_rec", "recurrent_k_%d", 1},
    {"blocks.%d.attn.hook_v_rec", "recurrent_v_%d", 1},
    FC_SITE_FINAL,
};
#define N_SITES FC_N_SITES(sites)

/* Save the model's tensors with the metadata of `path_from` (its config
 * with `key` set to the JSON `value`; key NULL: no config at all), drop
 * tensor `drop` (or none), add `extra` (a copy of the first norm), and load it. */
static gs_model *resave(const gs_model *m, const char *from, const char *path, const char *key, const char *value,
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
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&m->cfg, specs);
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
    return rc ? NULL : gs_model_load(path);
}

static void refused(const gs_model *m, const char *from, const char *dir, const char *key, const char *value,
                    const char *drop, const char *extra, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/refused.safetensors", dir);
    char what[512];
    snprintf(what, sizeof what, "%s=%s", key ? key : drop ? drop : extra ? extra : "(config)", value ? value : "");
    fc_check_refused(resave(m, from, path, key, value, drop, extra), what, needle);
}

static void check_pair(const char *fx, const char *wpath, const char *epath) {
    fc_pair pr;
    if (fc_open(fx, wpath, epath, GS_ARCH_RT, &pr)) return;
    gs_model *m = pr.m;

    /* 1-3. every site, batch invariance, BF16 (family_check.h) */
    fc_run full;
    fc_parity(fx, m, pr.ex, sites, N_SITES, pr.tokens, pr.B, pr.T, 2 * m->cfg.n_layers + 1, &full);
    const char *dir = scratch_dir(fx);

    /* 4. the memory keeps an edit: zeroing layer 0's recurrent keys of
     * position 0 leaves step 0 alone (they are written after its output)
     * and changes every later step, which reads them */
    fc_check_edit(fx, &pr, "blocks.0.attn.hook_k_rec", "recurrent keys of position 0", &full, DBL_TRUE_MIN);

    /* 5. what the engine does not run, or metadata that contradicts the
     * shapes, is refused in one line */
    refused(m, wpath, dir, NULL, NULL, NULL, NULL, "must carry its OLMo model config");
    refused(m, wpath, dir, NULL, "{n_heads: 2", NULL, NULL, "not valid JSON");
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
    refused(m, wpath, dir, "alibi_bias_max", "-3", NULL, NULL, "alibi_bias_max finite and >= 0");
    refused(m, wpath, dir, "alibi", "\"yes\"", NULL, NULL, "alibi is not true or false");
    refused(m, wpath, dir, "attention_layer_norm", m->cfg.qk_norm ? "false" : "true", NULL, NULL, "attention_layer_norm");
    refused(m, wpath, dir, "vocab_size", "100000", NULL, NULL, "vocab_size=100000");
    refused(m, wpath, dir, NULL, NULL, "transformer.ff_out.weight", NULL, "tied head");
    refused(m, wpath, dir, NULL, NULL, NULL, "transformer.blocks.0.attn_norm.bias", "biases");
    refused(m, wpath, dir, NULL, NULL, NULL, "transformer.wpe.weight", "absolute positions");

    fc_run_free(&full);
    fc_close(&pr);
}

int main(int argc, char **argv) { return fc_main(argc, argv, "rt2", check_pair); }
