/* The Transformer++ row of the family table: its tensors (the companion's
 * state-dict names), the config from their shapes and from the companion's
 * config dict in __metadata__.config, and its sites. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "engine/arch/attention.h"
#include "engine/arch/decode.h"
#include "engine/arch/tpp/tpp.h"
#include "engine/arch/tpp/tpp_train.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof *(a)))

/* the companion's state-dict names; sizes: V, d (hidden_dim), 2f and f (ffn_dim) */
enum { SZ_V = 1, SZ_D, SZ_2F, SZ_F };
static const gs_tensor_name tensors[TPP_N_TENSORS] = {
    [TPP_EMBED] = {"embedding.weight", "embedding", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
    [TPP_ATTN_NORM] = {"blocks.{i}.attn.norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    [TPP_W_Q] = {"blocks.{i}.attn.W_q.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [TPP_W_K] = {"blocks.{i}.attn.W_k.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [TPP_W_V] = {"blocks.{i}.attn.W_v.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [TPP_W_O] = {"blocks.{i}.attn.W_o.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [TPP_FFN_NORM] = {"blocks.{i}.ffn.norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    [TPP_W1] = {"blocks.{i}.ffn.w1.weight", NULL, GS_TENSOR_MATRIX, {SZ_2F, SZ_D}},
    [TPP_W2] = {"blocks.{i}.ffn.w2.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_F}},
    [TPP_NORM] = {"norm.weight", "final norm", GS_TENSOR_NORM, {SZ_D}},
};

static int64_t size_of(const gs_config *c, int sz) {
    switch (sz) {
    case SZ_V: return c->V;
    case SZ_D: return c->d;
    case SZ_2F: return 2 * (int64_t)c->f;
    case SZ_F: return c->f;
    }
    return 0;
}

const gs_tensor_table tpp_tensors = {tensors, TPP_N_TENSORS, size_of};

static int recognise(const st_file *f) {
    return gs_table_find(f, &tpp_tensors, TPP_EMBED, 0) && gs_table_find(f, &tpp_tensors, TPP_W_Q, 0);
}

static const st_tensor *matrix(const st_file *f, tpp_tensor id) {
    char name[64];
    gs_table_name(&tpp_tensors, id, 0, name, sizeof name);
    const st_tensor *t = safetensors_find(f, name);
    if (!t || t->ndim != 2) gs_fail("missing 2-D tensor '%s'", name);
    return t && t->ndim == 2 ? t : NULL;
}

/* An integer of __metadata__: its plain key ("n_heads") or that key of the
 * JSON config; 1 with *out, 0 when absent, -1 with gs_error(). */
static int meta_int(const st_file *f, const char *key, long *out) {
    const char *v = safetensors_meta(f, key);
    if (v) {
        char *end;
        *out = strtol(v, &end, 10);
        if (!*v || *end) return gs_fail("__metadata__ %s='%s' is not an integer", key, v);
        return 1;
    }
    const char *js = safetensors_meta(f, "config");
    if (!js) return 0;
    cJSON *j = gs_json_parse_strict(js, strlen(js), "__metadata__ config");
    if (!j) return -1;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return gs_fail("__metadata__ config is not a JSON object (the companion's model config, e.g. "
                       "{\"n_heads\": 12, ...})");
    }
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    int64_t x_int = 0;
    /* a size: checked in range before it becomes an integer (1e300 would not fit) */
    int rc = !x ? 0 : gs_json_int(x, NULL, 0, INT32_MAX, &x_int) ? gs_fail_context("__metadata__ config: ") : 1;
    if (rc == 1) *out = (long)x_int;
    cJSON_Delete(j);
    return rc;
}

static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    c->arch = GS_ARCH_TPP;
    const st_tensor *e = matrix(f, TPP_EMBED), *w2 = matrix(f, TPP_W2);
    if (!e || !w2) return -1;
    c->V = (int)e->shape[0];
    c->d = c->e = (int)e->shape[1];
    c->f = (int)w2->shape[1];
    for (c->n_layers = 0; c->n_layers <= GS_MAX_LAYERS; c->n_layers++)
        if (!gs_table_find(f, &tpp_tensors, TPP_W_Q, c->n_layers)) break;
    /* the heads split W_q's rows, which no shape shows: never guess them */
    long H = 0;
    int got = meta_int(f, "n_heads", &H);
    if (got < 0) return -1;
    if (!got)
        return gs_fail("a Transformer++ checkpoint must say its number of attention heads, which its shapes cannot "
                       "tell: convert the .pt with gpnscope convert --config CONFIG.json (the companion's model config), or add "
                       "__metadata__ n_heads");
    if (H < 1 || H > c->d) return gs_fail("__metadata__ n_heads=%ld: it must be 1..%d (hidden_dim)", H, c->d);
    c->H = (int)H;
    c->dk = c->dv = c->d / c->H;
    return 0;
}

static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "transformer++") && strcmp(arch, "tpp"))
        return gs_fail("__metadata__ says arch=%s but the tensors are those of transformer++", arch);
    const struct { const char *key; int value; } keys[] = {
        {"vocab_size", c->V}, {"hidden_dim", c->d}, {"n_layers", c->n_layers}, {"ffn_dim", c->f}, {"n_heads", c->H},
    };
    for (int i = 0; i < ARRAY_LEN(keys); i++) {
        long x = 0;
        int got = meta_int(f, keys[i].key, &x);
        if (got < 0) return -1;
        if (got && x != keys[i].value)
            return gs_fail("__metadata__ says %s=%ld but the checkpoint has %d", keys[i].key, x, keys[i].value);
    }
    /* a plain n_heads and the config's must not disagree either */
    const char *js = safetensors_meta(f, "config");
    cJSON *j = js ? gs_json_parse_strict(js, strlen(js), "__metadata__ config") : NULL;
    const cJSON *h = j ? cJSON_GetObjectItemCaseSensitive(j, "n_heads") : NULL;
    int rc = h && cJSON_IsNumber(h) && h->valuedouble != c->H
                 ? gs_fail("__metadata__ says n_heads=%d but its config says n_heads=%g", c->H, h->valuedouble)
                 : 0;
    cJSON_Delete(j);
    return rc;
}

static int validate(const gs_config *c) {
    if (gs_attn_validate(c, "Transformer++", "hidden_dim", "ffn_dim")) return -1;
    /* the source's RoPE splits each head in two halves and its cos/sin tables
     * are 2 * (Dh / 2) wide: an odd head size does not run there */
    if (c->dk % 2) return gs_fail("head size %d = hidden_dim / n_heads is odd: RoPE needs an even one", c->dk);
    if ((int64_t)c->V * c->d > INT32_MAX || (int64_t)2 * c->f * c->d > INT32_MAX)
        return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&tpp_tensors, c, s); }

/* The config as the companion's own dict (TransformerConfig.from_dict), so a
 * saved model reads back, and reads in the companion's tools, the same way. */
static void write_metadata(const gs_config *c, st_writer *w) {
    char buf[256];
    snprintf(buf, sizeof buf, "{\"vocab_size\": %d, \"hidden_dim\": %d, \"n_layers\": %d, \"n_heads\": %d, \"ffn_dim\": %d}",
             c->V, c->d, c->n_layers, c->H, c->f);
    st_writer_meta(w, "arch", "transformer++");
    st_writer_meta(w, "config", buf);
}

/* Where each size came from, as infer() found it. */
static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    gs_table_describe_shape(buf, size, "vocab_size", c->V, f, &tpp_tensors, TPP_EMBED, 0, "");
    gs_table_describe_shape(buf, size, "hidden_dim", c->d, f, &tpp_tensors, TPP_EMBED, 0, "");
    gs_describe(buf, size, "n_layers", c->n_layers, "%s for i = 0..%d", tensors[TPP_W_Q].name, c->n_layers - 1);
    gs_table_describe_shape(buf, size, "ffn_dim", c->f, f, &tpp_tensors, TPP_W2, 0, "");
    if (safetensors_meta(f, "n_heads")) gs_describe(buf, size, "n_heads", c->H, "__metadata__ n_heads");
    else gs_describe(buf, size, "n_heads", c->H, "__metadata__.config n_heads");
    gs_describe(buf, size, "d_head", c->dk, "hidden_dim / n_heads");
    gs_attn_describe_pattern(buf, size);
}

/* In step order. Residual sites of step t are at position t (after reading
 * x_t); logits and nll are the prediction of x_t, made at step t-1. */
static const gs_site sites[] = {
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1,
     "the distribution for x_t: rms(resid_post) E^T of step t-1 (NaN at t = 0)"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t) (NaN at t = 0)"},
    {"hook_embed", NULL, GS_HOOK_EMBED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1, "E[x_t]"},
    {"blocks.{i}.hook_resid_pre", NULL, GS_HOOK_RESID_PRE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the residual stream entering block i"},
    {"blocks.{i}.attn.hook_q", NULL, GS_HOOK_ATTN_Q, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "queries W_q rms(resid_pre) per head, after RoPE"},
    {"blocks.{i}.attn.hook_k", NULL, GS_HOOK_ATTN_K, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "keys per head, after RoPE (what the KV cache keeps)"},
    {"blocks.{i}.attn.hook_v", NULL, GS_HOOK_ATTN_V, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "values per head (what the KV cache keeps)"},
    {"blocks.{i}.attn.hook_pattern", NULL, TPP_HOOK_PATTERN, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_PATTERN, GS_ROLE_NONE, 0,
     0, "softmax weights per head on the 64 most recent keys, the current last (NaN before position 0); an edit changes the read"},
    {"blocks.{i}.hook_attn_out", NULL, GS_HOOK_ATTN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "attention's contribution: W_o of the heads' causal softmax reads"},
    {"blocks.{i}.hook_resid_mid", NULL, GS_HOOK_RESID_MID, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "resid_pre + attn_out"},
    {"blocks.{i}.hook_mlp_out", NULL, GS_HOOK_FFN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the SwiGLU FFN's contribution"},
    {"blocks.{i}.hook_resid_post", NULL, GS_HOOK_RESID_POST, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_STATE, 0, 0,
     "resid_mid + mlp_out: the block's output (the state: the last layer's by default)"},
    {"ln_final.hook_normalized", NULL, GS_HOOK_FINAL_NORM, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "rms(last resid_post, norm.weight): decoded into the prediction of x_{t+1}"},
};

/* the logit lens: rms(s, norm.weight, 1e-6) E^T, the tied head */
static int decode(const gs_model *m, const float *s, float *logits) {
    return gs_decode_rms_head(s, gs_table_tensor(m, &tpp_tensors, TPP_NORM, 0), 1e-6f, m->cfg.d,
                              gs_table_tensor(m, &tpp_tensors, TPP_EMBED, 0), m->cfg.V, logits);
}

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &tpp_tensors, TPP_EMBED, 0);
}

const gs_family gs_family_tpp = {
    "transformer++", "transformer++", "Transformer++, the GPN paper's baseline", GS_ARCH_TPP, 0, sites,
    ARRAY_LEN(sites), recognise, "tensors 'embedding.weight' and 'blocks.0.attn.W_q.weight'", infer, check_metadata,
    validate, tensor_specs, NULL, write_metadata, tpp_cpu_new, NULL, decode, embedding, describe, &gs_train_tpp, NULL, NULL, NULL,
    0, 0, NULL, /* no matrix memory; not attributable; no delta-rule memory */
};
