/* The Recurrent Transformer row of the family table: its tensors (OLMo's
 * state-dict names), the config from their shapes and from the run's OLMo
 * model config in __metadata__.config (OLMo's own keys, its defaults where a
 * key is absent), what the engine does not run refused in one line, and its
 * sites. */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "engine/arch/attention.h"
#include "engine/arch/rt/rt.h"
#include "engine/arch/rt/rt_train.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof *(a)))

_Static_assert(RT_HOOK_END <= GS_HOOK_LOCAL_LAST + 1, "the RT's hook points overflow the family-local range");

static const char *const activation_names[] = {"gelu", "relu", "swiglu"};

/* sizes: V, d (d_model), f (mlp_hidden_size), ff_out's width (f / 2 under
 * swiglu), d where attention_layer_norm adds q_norm and k_norm (else 0) */
enum { SZ_V = 1, SZ_D, SZ_2D, SZ_F, SZ_FF_OUT, SZ_QK_NORM };
static const gs_tensor_name tensors[RT_N_TENSORS] = {
    [RT_WTE] = {"transformer.wte.weight", "embedding", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
    [RT_ATTN_NORM] = {"transformer.blocks.{i}.attn_norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    [RT_Q_NORM] = {"transformer.blocks.{i}.q_norm.weight", NULL, GS_TENSOR_NORM, {SZ_QK_NORM}},
    [RT_K_NORM] = {"transformer.blocks.{i}.k_norm.weight", NULL, GS_TENSOR_NORM, {SZ_QK_NORM}},
    [RT_Q_PROJ] = {"transformer.blocks.{i}.q_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [RT_KV_PROJ] = {"transformer.blocks.{i}.kv_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_2D, SZ_D}},
    [RT_ATTN_OUT] = {"transformer.blocks.{i}.attn_out.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [RT_FF_NORM] = {"transformer.blocks.{i}.ff_norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    [RT_FF_PROJ] = {"transformer.blocks.{i}.ff_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_F, SZ_D}},
    [RT_FF_OUT] = {"transformer.blocks.{i}.ff_out.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_FF_OUT}},
    [RT_LN_F] = {"transformer.ln_f.weight", "output", GS_TENSOR_NORM, {SZ_D}},
    [RT_HEAD] = {"transformer.ff_out.weight", "output", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
};

static int ff_out_width(const gs_config *c) { return c->activation == RT_ACT_SWIGLU ? c->f / 2 : c->f; }

static int64_t size_of(const gs_config *c, int sz) {
    switch (sz) {
    case SZ_V: return c->V;
    case SZ_D: return c->d;
    case SZ_2D: return 2 * (int64_t)c->d;
    case SZ_F: return c->f;
    case SZ_FF_OUT: return ff_out_width(c);
    case SZ_QK_NORM: return c->qk_norm ? c->d : 0;
    }
    return 0;
}

const gs_tensor_table rt_tensors = {tensors, RT_N_TENSORS, size_of};

static int recognise(const st_file *f) {
    return gs_table_find(f, &rt_tensors, RT_WTE, 0) && gs_table_find(f, &rt_tensors, RT_KV_PROJ, 0);
}

static const st_tensor *layer0(const st_file *f, rt_tensor id) { return gs_table_find(f, &rt_tensors, id, 0); }

/* The run's OLMo model config: a JSON object, or NULL (-1 with gs_error()
 * when present and not an object, 0 when absent). */
static int config_of(const st_file *f, cJSON **out) {
    *out = NULL;
    const char *js = safetensors_meta(f, "config");
    if (!js) return 0;
    cJSON *j = gs_json_parse_strict(js, strlen(js), "__metadata__.config");
    if (!j) return -1;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return gs_fail("__metadata__ config is not a JSON object (the run's OLMo model: section as JSON, e.g. "
                       "{\"d_model\": 1024, \"n_heads\": 16, ...})");
    }
    *out = j;
    return 1;
}

/* A key of the config: 1 with its value, 0 when absent or null (OLMo's
 * default applies), -1 with gs_error() when it has the wrong type. */
static int cfg_number(const cJSON *j, const char *key, double *out) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x || cJSON_IsNull(x)) return 0;
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) return gs_fail("__metadata__.config %s is not a number", key);
    *out = x->valuedouble;
    return 1;
}

/* A key that becomes a float or an int: 1 with its value inside [lo, hi]
 * (checked before any conversion), 0 when absent or null, -1 with gs_error(). */
static int cfg_real(const cJSON *j, const char *key, double lo, double hi, double *out) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x || cJSON_IsNull(x)) return 0;
    return gs_json_real(x, NULL, lo, hi, out) ? gs_fail_context("__metadata__.config: ") : 1;
}

static int cfg_int(const cJSON *j, const char *key, int64_t lo, int64_t hi, int64_t *out) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x || cJSON_IsNull(x)) return 0;
    return gs_json_int(x, NULL, lo, hi, out) ? gs_fail_context("__metadata__.config: ") : 1;
}

static int cfg_bool(const cJSON *j, const char *key, int *out) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x || cJSON_IsNull(x)) return 0;
    if (!cJSON_IsBool(x)) return gs_fail("__metadata__.config %s is not true or false", key);
    *out = cJSON_IsTrue(x);
    return 1;
}

static int cfg_string(const cJSON *j, const char *key, const char **out) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x || cJSON_IsNull(x)) return 0;
    if (!cJSON_IsString(x)) return gs_fail("__metadata__.config %s is not a string", key);
    *out = x->valuestring;
    return 1;
}

/* A boolean with OLMo's default when absent; -1 with gs_error(). */
static int cfg_flag(const cJSON *j, const char *key, int dflt) {
    int v = dflt, got = cfg_bool(j, key, &v);
    return got < 0 ? -1 : v;
}

/* The sizes from the shapes, the options from the config. */
static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    c->arch = GS_ARCH_RT;
    const st_tensor *e = layer0(f, RT_WTE), *fp = layer0(f, RT_FF_PROJ);
    if (!e || e->ndim != 2) return gs_fail("missing 2-D tensor 'transformer.wte.weight' (embedding_size, d_model)");
    if (!fp || fp->ndim != 2) return gs_fail("missing 2-D tensor 'transformer.blocks.0.ff_proj.weight' (mlp_hidden_size, d_model)");
    c->V = (int)e->shape[0];
    c->d = c->e = (int)e->shape[1];
    c->f = (int)fp->shape[0];
    for (c->n_layers = 0; c->n_layers <= GS_MAX_LAYERS; c->n_layers++)
        if (!gs_table_find(f, &rt_tensors, RT_KV_PROJ, c->n_layers)) break;
    c->qk_norm = layer0(f, RT_Q_NORM) != NULL;
    cJSON *j;
    int have = config_of(f, &j);
    if (have < 0) return -1;
    if (!have)
        return gs_fail("a Recurrent Transformer checkpoint must carry its OLMo model config (heads, activation, ALiBi "
                       "cannot be read from shapes): gpnscope convert MODEL.pt OUT.safetensors --config CONFIG.json, "
                       "with the run's model: section as JSON");
    int64_t H = 0;
    double eps = 1e-5, amax = 8.0, clip = 0;
    const char *act = "swiglu"; /* OLMo's defaults (olmo/config.py ModelConfig) */
    int rc = -1;
    /* each becomes a float or an int: in its range first (1e300 is no float) */
    if (cfg_real(j, "layer_norm_eps", FLT_MIN, 1, &eps) < 0 || cfg_real(j, "alibi_bias_max", -FLT_MAX, FLT_MAX, &amax) < 0 ||
        cfg_real(j, "clip_qkv", -FLT_MAX, FLT_MAX, &clip) < 0 || cfg_string(j, "activation_type", &act) < 0)
        goto done;
    int got = cfg_int(j, "n_heads", 1, c->d, &H); /* at most d_model */
    if (got < 0) goto done;
    if (!got) {
        gs_fail("__metadata__.config lacks n_heads: the heads split q_proj's rows, which no shape shows");
        goto done;
    }
    c->activation = -1;
    for (int i = 0; i < ARRAY_LEN(activation_names); i++)
        if (!strcmp(act, activation_names[i])) c->activation = i;
    if (c->activation < 0) {
        gs_fail("__metadata__.config activation_type '%s' is unknown (OLMo has gelu, relu, swiglu)", act);
        goto done;
    }
    if (clip < 0) {
        gs_fail("__metadata__.config clip_qkv=%g must be positive", clip);
        goto done;
    }
    c->H = (int)H;
    c->dk = c->dv = c->d / c->H;
    c->norm_eps = (float)eps;
    c->alibi_bias_max = (float)amax;
    c->clip_qkv = (float)clip;
    rc = 0;
done:
    cJSON_Delete(j);
    return rc;
}

/* Tensors of options the engine does not compute: their presence would be
 * ignored silently, so they are refused. */
static int refuse_tensors(const st_file *f, const gs_config *c) {
    static const char *const extra[] = {"transformer.wpe.weight", "transformer.emb_norm.weight", "transformer.ln_f.bias",
                                        "transformer.ff_out.bias"};
    for (int i = 0; i < ARRAY_LEN(extra); i++)
        if (safetensors_find(f, extra[i]))
            return gs_fail("the checkpoint has '%s': absolute positions, an embedding norm and biases are not supported "
                           "(the paper's runs have none)", extra[i]);
    /* each layer weight's bias: its name with .bias for .weight */
    static const rt_tensor layer[] = {RT_ATTN_NORM, RT_FF_NORM, RT_Q_NORM,   RT_K_NORM, RT_Q_PROJ,
                                      RT_KV_PROJ,   RT_ATTN_OUT, RT_FF_PROJ, RT_FF_OUT};
    for (int l = 0; l < c->n_layers; l++)
        for (int i = 0; i < ARRAY_LEN(layer); i++) {
            char name[80];
            gs_table_name(&rt_tensors, layer[i], l, name, sizeof name);
            char *suffix = strrchr(name, '.'); /* ".weight" */
            snprintf(suffix, sizeof name - (size_t)(suffix - name), ".bias");
            if (safetensors_find(f, name))
                return gs_fail("the checkpoint has '%s': biases (include_bias, bias_for_layer_norm) are not supported",
                               name);
        }
    if (!layer0(f, RT_HEAD))
        return gs_fail("no 'transformer.ff_out.weight': a tied head (weight_tying) is not supported");
    if (c->qk_norm != (layer0(f, RT_K_NORM) != NULL))
        return gs_fail("the checkpoint has only one of q_norm and k_norm: attention_layer_norm makes both");
    return 0;
}

/* OLMo's options: those the shapes show must agree with them, and values the
 * engine does not compute are refused, each in one line. */
static int check_config(const cJSON *j, const gs_config *c) {
    static const struct { const char *key; int want; const char *why; } flags[] = {
        {"rope", 0, "RoPE with the recurrent block is not supported (the source asserts against it)"},
        {"alibi", 1, "without ALiBi OLMo adds absolute positions (transformer.wpe), which are not supported"},
        {"multi_query_attention", 0, "fewer KV heads than heads is not supported (the source asserts against it)"},
        {"weight_tying", 0, "a tied head is not supported (the paper's runs are untied)"},
        {"include_bias", 0, "linear biases are not supported (the paper's runs have none)"},
        {"bias_for_layer_norm", 0, "LayerNorm biases are not supported (the paper's runs have none)"},
        {"layer_norm_with_affine", 1, "LayerNorms without a weight are not supported"},
        {"attention_layer_norm_with_affine", 1, "q/k LayerNorms without a weight are not supported"},
        {"norm_after", 0, "post-norm blocks are not supported"},
        {"embedding_layer_norm", 0, "an embedding LayerNorm is not supported"},
        {"scale_logits", 0, "scaled logits are not supported"},
    };
    /* an absent key takes the value that holds for the tensors (weight_tying,
     * include_bias: refuse_tensors checked them), not OLMo's dataclass default */
    for (int i = 0; i < ARRAY_LEN(flags); i++) {
        int v = cfg_flag(j, flags[i].key, flags[i].want);
        if (v < 0) return -1;
        if (v != flags[i].want)
            return gs_fail("__metadata__.config %s=%s: %s", flags[i].key, v ? "true" : "false", flags[i].why);
    }
    if (!cJSON_GetObjectItemCaseSensitive(j, "alibi"))
        return gs_fail("__metadata__.config lacks alibi (OLMo's default is false, with absolute positions): the recurrent "
                       "block runs with alibi: true");
    int aln = cfg_flag(j, "attention_layer_norm", c->qk_norm);
    if (aln < 0) return -1;
    if (aln != c->qk_norm)
        return gs_fail("__metadata__.config says attention_layer_norm=%s but the checkpoint has %s q_norm/k_norm",
                       aln ? "true" : "false", c->qk_norm ? "its" : "no");
    const char *s = NULL;
    if (cfg_string(j, "block_type", &s) < 0) return -1;
    if (s && strcmp(s, "recurrent") && strcmp(s, "recurrent_autograd"))
        return gs_fail("__metadata__.config block_type '%s': this family runs the recurrent block (recurrent, "
                       "recurrent_autograd)", s);
    s = NULL;
    if (cfg_string(j, "layer_norm_type", &s) < 0) return -1;
    if (s && strcmp(s, "default") && strcmp(s, "low_precision"))
        return gs_fail("__metadata__.config layer_norm_type '%s' is not supported (default, low_precision)", s);
    double x = 0;
    int got;
    if ((got = cfg_number(j, "n_kv_heads", &x)) < 0) return -1;
    if (got && x != c->H)
        return gs_fail("__metadata__.config n_kv_heads=%g: fewer KV heads than heads (%d) is not supported (the source "
                       "asserts against it)", x, c->H);
    if ((got = cfg_number(j, "block_group_size", &x)) < 0) return -1;
    if (got && x != 1) return gs_fail("__metadata__.config block_group_size=%g is not supported", x);
    static const struct { const char *key; size_t off; } ints[] = {
        {"d_model", offsetof(gs_config, d)},
        {"n_layers", offsetof(gs_config, n_layers)},
        {"mlp_hidden_size", offsetof(gs_config, f)},
    };
    for (int i = 0; i < ARRAY_LEN(ints); i++) {
        int shape = *(const int *)((const char *)c + ints[i].off);
        if ((got = cfg_number(j, ints[i].key, &x)) < 0) return -1;
        if (got && x != shape)
            return gs_fail("__metadata__.config says %s=%g but the tensor shapes give %d", ints[i].key, x, shape);
    }
    double vocab = 0, emb = 0;
    int has_vocab = cfg_number(j, "vocab_size", &vocab), has_emb = cfg_number(j, "embedding_size", &emb);
    if (has_vocab < 0 || has_emb < 0) return -1;
    /* the embedding has embedding_size rows (vocab_size when unset), vocab_size of them real tokens */
    if (has_emb && emb != c->V)
        return gs_fail("__metadata__.config says embedding_size=%g but transformer.wte.weight has %d rows", emb, c->V);
    if (has_vocab && (has_emb ? vocab > c->V : vocab != c->V))
        return gs_fail("__metadata__.config says vocab_size=%g but transformer.wte.weight has %d rows", vocab, c->V);
    return 0;
}

static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "recurrent-transformer") && strcmp(arch, "rt"))
        return gs_fail("__metadata__ says arch=%s but the tensors are those of recurrent-transformer", arch);
    if (refuse_tensors(f, c)) return -1;
    cJSON *j;
    if (config_of(f, &j) <= 0) return -1; /* infer() required it */
    int rc = check_config(j, c);
    cJSON_Delete(j);
    return rc;
}

static int validate(const gs_config *c) {
    if (gs_attn_validate(c, "Recurrent Transformer", "d_model", "mlp_hidden_size")) return -1;
    if (c->activation < RT_ACT_GELU || c->activation > RT_ACT_SWIGLU)
        return gs_fail("activation %d is none of gelu, relu, swiglu", c->activation);
    if (c->activation == RT_ACT_SWIGLU && c->f % 2)
        return gs_fail("swiglu halves mlp_hidden_size=%d, which must be even", c->f);
    /* a negative alibi_bias_max makes slopes above 1 that overflow: OLMo's are 2^-(positive) */
    if (!(c->norm_eps > 0) || !(c->clip_qkv >= 0) || !(c->alibi_bias_max >= 0) || !isfinite(c->alibi_bias_max))
        return gs_fail("layer_norm_eps %g, clip_qkv %g, alibi_bias_max %g: eps must be positive, clip_qkv >= 0 (0: none), "
                       "alibi_bias_max finite and >= 0", (double)c->norm_eps, (double)c->clip_qkv,
                       (double)c->alibi_bias_max);
    if ((int64_t)c->V * c->d > INT32_MAX || (int64_t)c->f * c->d > INT32_MAX)
        return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&rt_tensors, c, s); }

/* The config as OLMo's own model: section, so a saved model reads back the same way. */
static void write_metadata(const gs_config *c, st_writer *w) {
    char buf[768], clip[32] = "null";
    if (c->clip_qkv > 0) snprintf(clip, sizeof clip, "%.9g", (double)c->clip_qkv);
    snprintf(buf, sizeof buf,
             "{\"d_model\": %d, \"n_heads\": %d, \"n_layers\": %d, \"mlp_hidden_size\": %d, \"vocab_size\": %d, "
             "\"alibi\": true, \"rope\": false, \"alibi_bias_max\": %.9g, \"activation_type\": \"%s\", "
             "\"layer_norm_type\": \"default\", \"layer_norm_with_affine\": true, \"bias_for_layer_norm\": false, "
             "\"layer_norm_eps\": %.9g, \"attention_layer_norm\": %s, \"attention_layer_norm_with_affine\": true, "
             "\"include_bias\": false, \"weight_tying\": false, \"block_type\": \"recurrent\", \"clip_qkv\": %s}",
             c->d, c->H, c->n_layers, c->f, c->V, (double)c->alibi_bias_max, activation_names[c->activation],
             (double)c->norm_eps, c->qk_norm ? "true" : "false", clip);
    st_writer_meta(w, "arch", "recurrent-transformer");
    st_writer_meta(w, "config", buf);
}

/* one "NAME VALUE (SOURCE)" line with a value that is not an integer */
static void describe_text(char *buf, size_t size, const char *name, const char *value, const char *source) {
    size_t at = strlen(buf);
    snprintf(buf + at, size > at ? size - at : 0, "%s %s (%s)\n", name, value, source);
}

/* Where each size and option came from, as infer() found it. */
static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    cJSON *j = NULL;
    config_of(f, &j);
    const char *given = "__metadata__.config %s", *dflt = "OLMo's default: no __metadata__.config %s";
#define SOURCE(key) (cJSON_GetObjectItemCaseSensitive(j, key) && !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, key)) \
                         ? given : dflt)
    char src[96], value[32];
    gs_table_describe_shape(buf, size, "vocab_size", c->V, f, &rt_tensors, RT_WTE, 0, "");
    gs_table_describe_shape(buf, size, "d_model", c->d, f, &rt_tensors, RT_WTE, 0, "");
    gs_describe(buf, size, "n_layers", c->n_layers, "%s for i = 0..%d", tensors[RT_KV_PROJ].name, c->n_layers - 1);
    gs_table_describe_shape(buf, size, "mlp_hidden_size", c->f, f, &rt_tensors, RT_FF_PROJ, 0, "");
    gs_describe(buf, size, "n_heads", c->H, "__metadata__.config n_heads");
    gs_describe(buf, size, "d_head", c->dk, "d_model / n_heads");
    snprintf(src, sizeof src, SOURCE("activation_type"), "activation_type");
    describe_text(buf, size, "activation_type", activation_names[c->activation], src);
    snprintf(value, sizeof value, "%g", (double)c->norm_eps);
    snprintf(src, sizeof src, SOURCE("layer_norm_eps"), "layer_norm_eps");
    describe_text(buf, size, "layer_norm_eps", value, src);
    snprintf(value, sizeof value, "%g", (double)c->alibi_bias_max);
    snprintf(src, sizeof src, SOURCE("alibi_bias_max"), "alibi_bias_max");
    describe_text(buf, size, "alibi_bias_max", value, src);
    snprintf(value, sizeof value, c->clip_qkv > 0 ? "%g" : "none", (double)c->clip_qkv);
    snprintf(src, sizeof src, SOURCE("clip_qkv"), "clip_qkv");
    describe_text(buf, size, "clip_qkv", value, src);
#undef SOURCE
    describe_text(buf, size, "attention_layer_norm", c->qk_norm ? "true" : "false",
                  c->qk_norm ? "transformer.blocks.0.q_norm.weight present" : "no transformer.blocks.0.q_norm.weight");
    gs_attn_describe_pattern(buf, size);
    cJSON_Delete(j);
}

/* In step order (docs/hooks.md, "Recurrent Transformer"). The per-layer
 * sites of step t are at position t; logits and nll are the prediction of
 * x_t made at step t - 1. */
static const gs_site sites[] = {
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1,
     "the distribution for x_t: ff_out(ln_f(resid_post)) of step t-1 (NaN at t = 0)"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t) (NaN at t = 0)"},
    {"hook_embed", NULL, GS_HOOK_EMBED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1, "wte[x_t]"},
    {"blocks.{i}.hook_resid_pre", NULL, GS_HOOK_RESID_PRE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the residual stream entering block i"},
    {"blocks.{i}.attn.hook_q", NULL, GS_HOOK_ATTN_Q, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "queries q_norm(q_proj attn_norm(resid_pre)) per head"},
    {"blocks.{i}.attn.hook_k", NULL, GS_HOOK_ATTN_K, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "the diagonal key k_norm(kv_proj attn_norm(resid_pre)): read at this position only"},
    {"blocks.{i}.attn.hook_v", NULL, GS_HOOK_ATTN_V, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "the diagonal value: read at this position only"},
    {"blocks.{i}.attn.hook_pattern", NULL, RT_HOOK_PATTERN, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_PATTERN, GS_ROLE_NONE,
     0, 0, "softmax weights per head on the 64 most recent keys: recurrent K_{t-63}..K_{t-1}, the diagonal key last (NaN "
           "before position 0); an edit changes the read"},
    {"blocks.{i}.attn.hook_diag_share", NULL, RT_HOOK_DIAG, GS_SITE_HEAD_SCALAR, 1, GS_DIM_HEADS, GS_ROLE_NONE, 0, 0,
     "per head, the weight on the diagonal key (1 - it: on the layer's own earlier outputs)"},
    {"blocks.{i}.hook_attn_out", NULL, GS_HOOK_ATTN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "attention's contribution: attn_out of the heads' reads"},
    {"blocks.{i}.hook_resid_mid", NULL, GS_HOOK_RESID_MID, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "resid_pre + attn_out"},
    {"blocks.{i}.hook_mlp_out", NULL, GS_HOOK_FFN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the MLP's contribution ff_out(act(ff_proj ff_norm(resid_mid)))"},
    {"blocks.{i}.hook_resid_post", NULL, GS_HOOK_RESID_POST, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_STATE, 0, 0,
     "resid_mid + mlp_out: the block's output (the state: the last layer's by default)"},
    {"blocks.{i}.attn.hook_k_rec", NULL, RT_HOOK_K_REC, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "the recurrent key k_norm(kv_proj attn_norm(resid_post)) that later positions read (kept as edited)"},
    {"blocks.{i}.attn.hook_v_rec", NULL, RT_HOOK_V_REC, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "the recurrent value kv_proj attn_norm(resid_post) that later positions read (kept as edited)"},
    {"ln_final.hook_normalized", NULL, GS_HOOK_FINAL_NORM, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "ln_f(last resid_post): decoded by ff_out into the prediction of x_{t+1}"},
};

/* the logit lens: transformer.ff_out(ln_f(s)) */
static int decode(const gs_model *m, const float *s, float *logits) {
    int d = m->cfg.d;
    float *xn = malloc((size_t)d * sizeof *xn);
    if (!xn) return gs_fail("out of memory decoding a state");
    rt_layer_norm(xn, s, gs_table_tensor(m, &rt_tensors, RT_LN_F, 0), 1, d, m->cfg.norm_eps);
    const float *head = gs_table_tensor(m, &rt_tensors, RT_HEAD, 0);
    for (int v = 0; v < m->cfg.V; v++) {
        double acc = 0;
        for (int i = 0; i < d; i++) acc += (double)head[(size_t)v * d + i] * xn[i];
        logits[v] = (float)acc;
    }
    free(xn);
    return 0;
}

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &rt_tensors, RT_WTE, 0);
}

const gs_family gs_family_rt = {
    "recurrent-transformer", "recurrent-transformer", "Recurrent Transformer (OLMo recurrent block)", GS_ARCH_RT, 0,
    sites, ARRAY_LEN(sites), recognise, "tensors 'transformer.wte.weight' and 'transformer.blocks.0.kv_proj.weight'",
    infer, check_metadata, validate, tensor_specs, NULL, write_metadata, rt_cpu_new, NULL, decode, embedding, describe,
    &gs_train_rt, NULL, NULL, NULL,
    0, 0, NULL, /* no matrix memory; not attributable; no delta-rule memory */
};
