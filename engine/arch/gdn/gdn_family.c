/* The Gated DeltaNet row of the family table: its tensors as the companion's
 * wrapper saves them (fla's GatedDeltaNetModel under "model.", an untied
 * "lm_head.weight"), its config from their shapes, and its sites. */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "engine/arch/decode.h"
#include "engine/arch/gdn/gdn.h"
#include "engine/arch/gdn/gdn_train.h"

_Static_assert(GDN_HOOK_END <= GS_HOOK_LOCAL_LAST + 1, "GDN's hook points overflow the family-local range");

/* sizes: V, D, K = H d_k, Vd = H d_v, H, d_v, f (ffn), the conv's K, 1 */
enum { SZ_V = 1, SZ_D, SZ_K, SZ_VD, SZ_H, SZ_DV, SZ_F, SZ_CONV, SZ_ONE };
#define LAYER(t) [GDN_TENSOR(t)]
static const gs_tensor_name tensors[GDN_N_TENSORS] = {
    [GDN_T_EMBED] = {"model.embeddings.weight", "embedding", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
    LAYER(GDN_ATTN_NORM) = {"model.layers.{i}.attn_norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    LAYER(GDN_Q) = {"model.layers.{i}.attn.q_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_K, SZ_D}},
    LAYER(GDN_K) = {"model.layers.{i}.attn.k_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_K, SZ_D}},
    LAYER(GDN_V) = {"model.layers.{i}.attn.v_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_VD, SZ_D}},
    LAYER(GDN_A) = {"model.layers.{i}.attn.a_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_H, SZ_D}},
    LAYER(GDN_B) = {"model.layers.{i}.attn.b_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_H, SZ_D}},
    LAYER(GDN_A_LOG) = {"model.layers.{i}.attn.A_log", NULL, GS_TENSOR_A_LOG, {SZ_H}},
    LAYER(GDN_DT_BIAS) = {"model.layers.{i}.attn.dt_bias", NULL, GS_TENSOR_DT_BIAS, {SZ_H}},
    LAYER(GDN_QCONV) = {"model.layers.{i}.attn.q_conv1d.weight", NULL, GS_TENSOR_MATRIX, {SZ_K, SZ_ONE, SZ_CONV}},
    LAYER(GDN_KCONV) = {"model.layers.{i}.attn.k_conv1d.weight", NULL, GS_TENSOR_MATRIX, {SZ_K, SZ_ONE, SZ_CONV}},
    LAYER(GDN_VCONV) = {"model.layers.{i}.attn.v_conv1d.weight", NULL, GS_TENSOR_MATRIX, {SZ_VD, SZ_ONE, SZ_CONV}},
    LAYER(GDN_G) = {"model.layers.{i}.attn.g_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_VD, SZ_D}},
    LAYER(GDN_ONORM) = {"model.layers.{i}.attn.o_norm.weight", NULL, GS_TENSOR_NORM, {SZ_DV}},
    LAYER(GDN_O) = {"model.layers.{i}.attn.o_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_VD}},
    LAYER(GDN_MLP_NORM) = {"model.layers.{i}.mlp_norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    LAYER(GDN_GATE) = {"model.layers.{i}.mlp.gate_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_F, SZ_D}},
    LAYER(GDN_UP) = {"model.layers.{i}.mlp.up_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_F, SZ_D}},
    LAYER(GDN_DOWN) = {"model.layers.{i}.mlp.down_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_F}},
    [GDN_T_NORM] = {"model.norm.weight", "output", GS_TENSOR_NORM, {SZ_D}},
    [GDN_T_HEAD] = {"lm_head.weight", "output", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
};
#undef LAYER

static int64_t size_of(const gs_config *c, int sz) {
    switch (sz) {
    case SZ_V: return c->V;
    case SZ_D: return c->d;
    case SZ_K: return (int64_t)c->H * c->dk;
    case SZ_VD: return (int64_t)c->H * c->dv;
    case SZ_H: return c->H;
    case SZ_DV: return c->dv;
    case SZ_F: return c->f;
    case SZ_CONV: return c->conv;
    case SZ_ONE: return 1;
    }
    return 0;
}

const gs_tensor_table gdn_tensors = {tensors, GDN_N_TENSORS, size_of};

static const st_tensor *layer_tensor(const st_file *f, int l, int t) {
    return gs_table_find(f, &gdn_tensors, GDN_TENSOR(t), l);
}

/* a layer-0 tensor's name, for messages */
static const char *layer0_name(int t, char *buf, size_t size) {
    gs_table_name(&gdn_tensors, GDN_TENSOR(t), 0, buf, size);
    return buf;
}

static int recognise(const st_file *f) {
    return gs_table_find(f, &gdn_tensors, GDN_T_EMBED, 0) && layer_tensor(f, 0, GDN_A_LOG);
}

/* __metadata__.config (the companion's config dict) through the strict JSON
 * reader of every user file (base/json.h); NULL when absent or refused
 * (*bad then 1, gs_error() says why). */
static cJSON *config_json(const st_file *f, int *bad) {
    const char *js = safetensors_meta(f, "config");
    cJSON *j = js ? gs_json_parse_strict(js, strlen(js), "__metadata__.config") : NULL;
    *bad = js && !j;
    return j;
}

/* A number of __metadata__.config: 1 and *out when the key holds a number, 0 when absent, null or refused. */
static int config_number(const st_file *f, const char *key, double *out) {
    int bad;
    cJSON *j = config_json(f, &bad);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    int got = cJSON_IsNumber(x);
    if (got) *out = x->valuedouble;
    cJSON_Delete(j);
    return got;
}

/* A boolean of __metadata__.config: 1 true, 0 false, -1 absent. */
static int config_bool(const st_file *f, const char *key) {
    int bad;
    cJSON *j = config_json(f, &bad);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    int v = cJSON_IsBool(x) ? cJSON_IsTrue(x) : -1;
    cJSON_Delete(j);
    return v;
}

static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    c->arch = GS_ARCH_GDN;
    const st_tensor *e = gs_table_find(f, &gdn_tensors, GDN_T_EMBED, 0);
    if (!e || e->ndim != 2) return gs_fail("missing 2-D tensor '%s' (V, D)", tensors[GDN_T_EMBED].name);
    c->V = (int)e->shape[0];
    c->d = c->e = (int)e->shape[1];
    while (c->n_layers <= GDN_MAX_LAYERS && layer_tensor(f, c->n_layers, GDN_A_LOG)) c->n_layers++;
    const st_tensor *A = layer_tensor(f, 0, GDN_A_LOG), *q = layer_tensor(f, 0, GDN_Q), *v = layer_tensor(f, 0, GDN_V);
    const st_tensor *g = layer_tensor(f, 0, GDN_GATE), *cv = layer_tensor(f, 0, GDN_QCONV);
    char name[64];
    if (A->ndim != 1 || A->shape[0] < 1)
        return gs_fail("'%s' must be 1-D with one entry per head", layer0_name(GDN_A_LOG, name, sizeof name));
    c->H = (int)A->shape[0];
    if (!q || q->ndim != 2 || q->shape[0] % c->H)
        return gs_fail("'%s' must be 2-D with a multiple of %d heads rows", layer0_name(GDN_Q, name, sizeof name), c->H);
    if (!v || v->ndim != 2 || v->shape[0] % c->H)
        return gs_fail("'%s' must be 2-D with a multiple of %d heads rows", layer0_name(GDN_V, name, sizeof name), c->H);
    if (!g || g->ndim != 2) return gs_fail("missing 2-D tensor '%s' (ffn, D)", layer0_name(GDN_GATE, name, sizeof name));
    if (!cv || cv->ndim != 3) return gs_fail("missing 3-D tensor '%s' (C, 1, K)", layer0_name(GDN_QCONV, name, sizeof name));
    c->dk = (int)(q->shape[0] / c->H);
    c->dv = (int)(v->shape[0] / c->H);
    c->f = (int)g->shape[0];
    c->conv = (int)cv->shape[2];
    /* fla's default eps where the config has none (shapes cannot tell); its range checked before the cast */
    int bad;
    cJSON *j = config_json(f, &bad);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "norm_eps");
    double eps = 1e-6;
    int rc = bad || (x && !cJSON_IsNull(x) && gs_json_real(x, "__metadata__.config norm_eps", FLT_MIN, 1, &eps)) ? -1 : 0;
    cJSON_Delete(j);
    c->norm_eps = (float)eps;
    return rc;
}

/* Where each size came from, as infer() found it. */
static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    const gs_tensor_table *t = &gdn_tensors;
    gs_table_describe_shape(buf, size, "vocab_size", c->V, f, t, GDN_T_EMBED, 0, "");
    gs_table_describe_shape(buf, size, "hidden_dim", c->d, f, t, GDN_T_EMBED, 0, "");
    gs_describe(buf, size, "n_layers", c->n_layers, "%s for i = 0..%d", tensors[GDN_TENSOR(GDN_A_LOG)].name, c->n_layers - 1);
    gs_table_describe_shape(buf, size, "n_heads", c->H, f, t, GDN_TENSOR(GDN_A_LOG), 0, "");
    gs_table_describe_shape(buf, size, "head_dim", c->dk, f, t, GDN_TENSOR(GDN_Q), 0, " / n_heads");
    gs_table_describe_shape(buf, size, "d_v", c->dv, f, t, GDN_TENSOR(GDN_V), 0, " / n_heads");
    gs_table_describe_shape(buf, size, "ffn_dim", c->f, f, t, GDN_TENSOR(GDN_GATE), 0, "");
    gs_table_describe_shape(buf, size, "conv_size", c->conv, f, t, GDN_TENSOR(GDN_QCONV), 0, "");
    /* eps is a float: its line is written here, in the helpers' form */
    double eps;
    size_t at = strlen(buf);
    snprintf(buf + at, size > at ? size - at : 0, "norm_eps %g (%s)\n", c->norm_eps,
             config_number(f, "norm_eps", &eps) ? "__metadata__.config norm_eps" : "fla's default: no __metadata__.config norm_eps");
}

static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "gdn")) return gs_fail("__metadata__ says arch=%s but the tensors are those of gdn", arch);
    static const struct { const char *key; size_t off; } ints[] = {
        {"vocab_size", offsetof(gs_config, V)},   {"hidden_dim", offsetof(gs_config, d)},
        {"n_layers", offsetof(gs_config, n_layers)}, {"n_heads", offsetof(gs_config, H)},
        {"head_dim", offsetof(gs_config, dk)},    {"ffn_dim", offsetof(gs_config, f)},
        {"conv_size", offsetof(gs_config, conv)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        double v;
        int have = *(const int *)((const char *)c + ints[i].off);
        if (config_number(f, ints[i].key, &v) && v != have)
            return gs_fail("__metadata__.config says %s=%g but the tensor shapes give %d", ints[i].key, v, have);
    }
    double ev, nv;
    if (config_number(f, "expand_v", &ev) && fabs(ev * c->dk - c->dv) > 1e-6 * c->dv)
        return gs_fail("__metadata__.config says expand_v=%g (d_v %g) but the tensor shapes give d_v %d", ev, ev * c->dk,
                       c->dv);
    if (config_number(f, "num_v_heads", &nv) && nv != c->H)
        return gs_fail("__metadata__.config says num_v_heads=%g: grouped value heads are not supported (n_heads %d)", nv,
                       c->H);
    if (config_bool(f, "allow_neg_eigval") == 1)
        return gs_fail("__metadata__.config says allow_neg_eigval: beta in [0, 2) is not supported");
    if (config_bool(f, "use_gate") == 0 || config_bool(f, "use_short_conv") == 0)
        return gs_fail("__metadata__.config turns off use_gate or use_short_conv: only the gated, convolved layer is supported");
    return 0;
}

static int validate(const gs_config *c) {
    if (c->V < 1 || c->d < 1 || c->f < 1 || c->H < 1 || c->dk < 1 || c->dv < 1 || c->n_layers < 1 || c->conv < 1)
        return gs_fail("invalid sizes (V=%d, D=%d, ffn=%d, H=%d, d_k=%d, d_v=%d, layers=%d, conv=%d): all must be positive",
                       c->V, c->d, c->f, c->H, c->dk, c->dv, c->n_layers, c->conv);
    if (c->n_layers > GDN_MAX_LAYERS) return gs_fail("%d layers: at most %d are supported", c->n_layers, GDN_MAX_LAYERS);
    if (c->conv > 16) return gs_fail("short convolution of size %d: at most 16 is supported", c->conv);
    if (!(c->norm_eps > 0)) return gs_fail("norm_eps %g must be positive", (double)c->norm_eps);
    int64_t big = (int64_t)c->V * c->d;
    int64_t wide[] = {(int64_t)c->H * c->dv * c->d, (int64_t)c->f * c->d, (int64_t)c->H * c->dk * c->dv};
    for (int i = 0; i < 3; i++) big = wide[i] > big ? wide[i] : big;
    if (big > INT32_MAX) return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&gdn_tensors, c, s); }

static void write_metadata(const gs_config *c, st_writer *w) {
    char buf[320];
    st_writer_meta(w, "arch", "gdn");
    snprintf(buf, sizeof buf,
             "{\"vocab_size\": %d, \"hidden_dim\": %d, \"n_layers\": %d, \"n_heads\": %d, \"head_dim\": %d, "
             "\"expand_v\": %.9g, \"ffn_dim\": %d, \"conv_size\": %d, \"norm_eps\": %.9g}",
             c->V, c->d, c->n_layers, c->H, c->dk, (double)c->dv / c->dk, c->f, c->conv, (double)c->norm_eps);
    st_writer_meta(w, "config", buf);
}

/* GS_DIM_OWN: conv_state, (conv-1) kept rows of the q | k | v inputs, 2 H d_k + H d_v channels */
static int site_width(const gs_site *s, const gs_config *c) {
    if (s->point != GDN_HOOK_CONV) return 0;
    return c->conv > 1 ? (c->conv - 1) * c->H * (2 * c->dk + c->dv) : 0;
}

/* In step order (docs/hooks.md, "Gated DeltaNet"). Sites at a step are at
 * the position after reading x_t; logits and nll are the prediction of x_t
 * made at the step before (NaN at a window's first step). */
static const gs_site sites[] = {
    {"hook_embed", NULL, GDN_HOOK_EMBED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "the embedding E[x_t], the first layer's input"},
    {"blocks.{i}.hook_resid_pre", NULL, GDN_HOOK_RESID_PRE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the residual stream into layer i"},
    {"blocks.{i}.attn.conv_state", NULL, GDN_HOOK_CONV, GS_SITE_VECTOR, 1, GS_DIM_OWN, GS_ROLE_NONE, 0, 0,
     "the short convolutions' kept inputs after x_t's: conv-1 rows of q | k | v projections, oldest first (edits are carried)"},
    {"blocks.{i}.attn.q", NULL, GDN_HOOK_Q, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "queries l2n(silu(conv(q_proj x))) / sqrt(d_k), as the read uses them"},
    {"blocks.{i}.attn.k", NULL, GDN_HOOK_K, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY, GS_ROLE_NONE, 0, 0,
     "keys l2n(silu(conv(k_proj x))), before the write"},
    {"blocks.{i}.attn.v", NULL, GDN_HOOK_V, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "values silu(conv(v_proj x)), before the write"},
    {"blocks.{i}.attn.beta", NULL, GDN_HOOK_BETA, GS_SITE_HEAD_SCALAR, 1, GS_DIM_HEADS, GS_ROLE_NONE, 0, 0,
     "per-head write strength beta = sigmoid(b_proj x), before the write"},
    {"blocks.{i}.attn.alpha", NULL, GDN_HOOK_ALPHA, GS_SITE_HEAD_SCALAR, 1, GS_DIM_HEADS, GS_ROLE_DECAY, 0, 0,
     "per-head decay alpha = exp(-exp(A_log) softplus(a_proj x + dt_bias)), before the write"},
    /* a per-head vector of d_k * d_v: a kind GS_SITE_HEAD_MATRIX needs a case in cli/cmd_record.c's shape_name */
    {"blocks.{i}.attn.state", NULL, GDN_HOOK_STATE, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY_VAL, GS_ROLE_NONE, 0, 0,
     "per-head delta-rule state S (d_k x d_v, row-major) after the write, before the read (edits are carried)"},
    {"blocks.{i}.attn.o", NULL, GDN_HOOK_O, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "per-head reads o = S^T q before the gated output norm (zero a head's slice to ablate it)"},
    {"blocks.{i}.hook_attn_out", NULL, GDN_HOOK_ATTN_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the attention layer's contribution o_proj(rms(o) silu(g_proj x))"},
    {"blocks.{i}.hook_resid_mid", NULL, GDN_HOOK_RESID_MID, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the residual stream after the attention layer"},
    {"blocks.{i}.hook_mlp_out", NULL, GDN_HOOK_MLP_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the SwiGLU MLP's contribution"},
    {"blocks.{i}.hook_resid_post", NULL, GDN_HOOK_RESID_POST, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_STATE, 0, 0,
     "the residual stream out of layer i (the state: record takes the last layer's)"},
    {"ln_final.hook_normalized", NULL, GDN_HOOK_LN_FINAL, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "the final RMSNorm of the last residual stream: lm_head of it predicts x_{t+1}"},
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1,
     "lm_head of the previous step's final norm: the distribution for x_t (NaN at t = 0)"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t) (NaN at t = 0)"},
};

/* patching's whole state: the delta-rule state and the convolutions' inputs of every layer */
static const char *const carried[] = {"blocks.{i}.attn.state", "blocks.{i}.attn.conv_state", NULL};

/* the logit lens: rms(s, model.norm.weight, norm_eps) lm_head^T (untied) */
static int decode(const gs_model *m, const float *s, float *logits) {
    return gs_decode_rms_head(s, gs_table_tensor(m, &gdn_tensors, GDN_T_NORM, 0), m->cfg.norm_eps, m->cfg.d,
                              gs_table_tensor(m, &gdn_tensors, GDN_T_HEAD, 0), m->cfg.V, logits);
}

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &gdn_tensors, GDN_T_EMBED, 0);
}

/* each layer's own write and read (docs/hooks.md) */
static const gs_delta_memory gdn_delta_memory = {"blocks.{i}.attn.q",     "blocks.{i}.attn.k",    "blocks.{i}.attn.v",
                                                 "blocks.{i}.attn.alpha", "blocks.{i}.attn.beta", "blocks.{i}.attn.o",
                                                 1,                       1};

const gs_family gs_family_gdn = {
    "gdn", "gdn", "Gated DeltaNet (fla)", GS_ARCH_GDN, 0, sites, (int)(sizeof sites / sizeof *sites),
    recognise, "tensors 'model.embeddings.weight' and 'model.layers.0.attn.A_log'", infer, check_metadata, validate,
    tensor_specs, NULL, write_metadata, gdn_cpu_new, NULL, decode, embedding, describe, &gs_train_gdn, NULL,
    site_width, carried,
    0, 0, &gdn_delta_memory, /* no matrix memory; not attributable; its delta rule */
};
