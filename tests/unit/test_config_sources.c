/* `gpnscope info`'s sources (gs_family.describe): every family says where
 * each size came from, the shape of the tensor it was read from or the
 * metadata key, and a Transformer++'s heads name the key they were read from
 * (the config's, or a plain n_heads that takes precedence); Elman's too. */
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "io/checkpoint/safetensors.h"
#include "engine/model.h"
#include "testlib.h"

/* The sources of a file, as info prints them (the empty string on failure). */
static void sources(const char *path, char *buf, size_t size) {
    buf[0] = 0;
    st_file *f = safetensors_open(path);
    gs_config c;
    const gs_family *fam = f ? gs_family_of_file(f) : NULL;
    CHECK(fam && fam->describe && fam->infer(f, &c) == 0, "%s: %s", path, fam ? "no describe" : gs_error());
    if (fam && fam->describe && fam->infer(f, &c) == 0) fam->describe(f, &c, buf, size);
    safetensors_close(f);
}

static void has(const char *what, const char *buf, const char *line) {
    CHECK(strstr(buf, line) != NULL, "%s: no line '%s' in:\n%s", what, line, buf);
}

int main(void) {
    char buf[4096];
    sources(fixture("reference/tpp2.weights.safetensors"), buf, sizeof buf);
    has("tpp2", buf, "n_heads 2 (__metadata__.config n_heads)\n");
    has("tpp2", buf, "hidden_dim 32 (embedding.weight [89, 32])\n");
    has("tpp2", buf, "ffn_dim 64 (blocks.0.ffn.w2.weight [32, 64])\n");
    has("tpp2", buf, "n_layers 2 (blocks.{i}.attn.W_q.weight for i = 0..1)\n");
    has("tpp2", buf, "pattern_keys 64 (fixed:");

    /* a plain n_heads key is read before the config's: the source says so */
    gs_model *m = gs_model_load(fixture("reference/tpp2.weights.safetensors"));
    CHECK(m != NULL, "load tpp2: %s", gs_error());
    if (m) {
        char path[512];
        snprintf(path, sizeof path, "%s/plain.safetensors", scratch_dir("config_sources"));
        const char *meta[] = {"n_heads", "2", NULL};
        CHECK(gs_model_save_meta(m, path, 0, meta) == 0, "save: %s", gs_error());
        sources(path, buf, sizeof buf);
        has("plain n_heads", buf, "n_heads 2 (__metadata__ n_heads)\n");
        gs_model_free(m);
    }

    sources(fixture("reference/gdn2.weights.safetensors"), buf, sizeof buf);
    has("gdn2", buf, "n_heads 2 (model.layers.0.attn.A_log [2])\n");
    has("gdn2", buf, "head_dim 8 (model.layers.0.attn.q_proj.weight [16, 32] / n_heads)\n");
    has("gdn2", buf, "d_v 16 (model.layers.0.attn.v_proj.weight [32, 32] / n_heads)\n");
    has("gdn2", buf, "conv_size 4 (model.layers.0.attn.q_conv1d.weight [16, 1, 4])\n");
    has("gdn2", buf, "norm_eps 1e-06 (");

    sources(fixture("reference/gpnm1.weights.safetensors"), buf, sizeof buf);
    has("gpnm1", buf, "n_heads 3 (write_A_log [3])\n");
    has("gpnm1", buf, "d_val 12 (write_W_v_k [40, 36] / n_heads)\n");
    has("gpnm1", buf, "d_state 40 (decode_norm_w [40])\n");
    sources(fixture("reference/gpn.weights.safetensors"), buf, sizeof buf);
    has("gpn", buf, "d_ffn 44 (ffn_w2_k [44, 36])\n");
    has("gpn", buf, "d_emb 20 (embedding [89, 20])\n");

    /* Elman has no fixture: a random one, saved */
    gs_config ec = {.arch = GS_ARCH_ELMAN, .n_layers = 1, .d = 8, .e = 8, .V = 11};
    gs_model *em = gs_model_random(&ec, 3);
    CHECK(em != NULL, "an Elman model: %s", gs_error());
    if (em) {
        char path[512];
        snprintf(path, sizeof path, "%s/elman.safetensors", scratch_dir("config_sources"));
        CHECK(gs_model_save(em, path, 0) == 0, "save: %s", gs_error());
        sources(path, buf, sizeof buf);
        has("elman", buf, "vocab_size 11 (embedding [11, 8])\n");
        has("elman", buf, "d_state 8 (embedding [11, 8] (the decode is tied))\n");
        gs_model_free(em);
    }

    /* a buffer too small is cut, never overrun */
    char tiny[24];
    memset(tiny, 'x', sizeof tiny);
    sources(fixture("reference/gpn.weights.safetensors"), tiny, 16);
    CHECK(strlen(tiny) < 16 && tiny[16] == 'x', "describe wrote past its buffer");
    return test_summary();
}
