/* The Mamba-2 row of the family table: its tensors as Hugging Face's
 * Mamba2ForCausalLM saves them (backbone.*, lm_head or tied), its sizes from
 * their shapes, its options from the config.json beside the file or our own
 * __metadata__.config (the same keys), and its sites. */
#include <cjson/cJSON.h>
#include <float.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/json.h"
#include "engine/arch/decode.h"
#include "engine/arch/mamba2/mamba2.h"

_Static_assert(M2_HOOK_END <= GS_HOOK_LOCAL_LAST + 1, "Mamba-2's hook points overflow the family-local range");

#define EMBED "backbone.embeddings.weight"
#define LM_HEAD "lm_head.weight"

/* sizes: V, D, d_inner, the conv's channels, the in_proj rows z | xBC | dt,
 * H, the conv's K, 1, and V where the head is untied (0: tied, no lm_head) */
enum { SZ_V = 1, SZ_D, SZ_INNER, SZ_CONV_DIM, SZ_IN_PROJ, SZ_H, SZ_CONV, SZ_ONE, SZ_HEAD };
#define LAYER(t) [M2_TENSOR(t)]
static const gs_tensor_name tensors[M2_N_TENSORS] = {
    [M2_T_EMBED] = {EMBED, "embedding", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
    LAYER(M2_NORM) = {"backbone.layers.{i}.norm.weight", NULL, GS_TENSOR_NORM, {SZ_D}},
    LAYER(M2_IN_PROJ) = {"backbone.layers.{i}.mixer.in_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_IN_PROJ, SZ_D}},
    LAYER(M2_CONV_W) = {"backbone.layers.{i}.mixer.conv1d.weight", NULL, GS_TENSOR_MATRIX, {SZ_CONV_DIM, SZ_ONE, SZ_CONV}},
    LAYER(M2_CONV_B) = {"backbone.layers.{i}.mixer.conv1d.bias", NULL, GS_TENSOR_BIAS, {SZ_CONV_DIM}},
    LAYER(M2_DT_BIAS) = {"backbone.layers.{i}.mixer.dt_bias", NULL, GS_TENSOR_DT_BIAS, {SZ_H}},
    LAYER(M2_A_LOG) = {"backbone.layers.{i}.mixer.A_log", NULL, GS_TENSOR_A_LOG, {SZ_H}},
    LAYER(M2_D) = {"backbone.layers.{i}.mixer.D", NULL, GS_TENSOR_BIAS, {SZ_H}},
    LAYER(M2_GNORM) = {"backbone.layers.{i}.mixer.norm.weight", NULL, GS_TENSOR_NORM, {SZ_INNER}},
    LAYER(M2_OUT_PROJ) = {"backbone.layers.{i}.mixer.out_proj.weight", NULL, GS_TENSOR_MATRIX, {SZ_D, SZ_INNER}},
    [M2_T_NORM_F] = {"backbone.norm_f.weight", "output", GS_TENSOR_NORM, {SZ_D}},
    [M2_T_HEAD] = {LM_HEAD, "output", GS_TENSOR_MATRIX, {SZ_HEAD, SZ_D}},
};
#undef LAYER

static int64_t size_of(const gs_config *c, int sz) {
    switch (sz) {
    case SZ_V: return c->V;
    case SZ_D: return c->d;
    case SZ_INNER: return mamba2_inner(c);
    case SZ_CONV_DIM: return mamba2_conv_dim(c);
    case SZ_IN_PROJ: return (int64_t)mamba2_inner(c) + mamba2_conv_dim(c) + c->H;
    case SZ_H: return c->H;
    case SZ_CONV: return c->conv;
    case SZ_ONE: return 1;
    case SZ_HEAD: return mamba2_opts_of(c).tied ? 0 : c->V;
    }
    return 0;
}

const gs_tensor_table mamba2_tensors = {tensors, M2_N_TENSORS, size_of};

static const st_tensor *layer_tensor(const st_file *f, int l, int t) {
    return gs_table_find(f, &mamba2_tensors, M2_TENSOR(t), l);
}

/* a layer-0 tensor's name, for messages */
static const char *layer0_name(int t, char *buf, size_t size) {
    gs_table_name(&mamba2_tensors, M2_TENSOR(t), 0, buf, size);
    return buf;
}

static int recognise(const st_file *f) { return safetensors_find(f, EMBED) && layer_tensor(f, 0, M2_A_LOG); }

/* The two places a config may be: our own __metadata__.config and a
 * config.json beside the file (transformers' Mamba2Config keys in both). */
typedef struct {
    cJSON *json[2];
    char where[2][600];
} sources;

/* JSON as Python's json module writes it: Infinity, -Infinity and NaN are
 * no JSON (time_step_limit's default is [0.0, Infinity]), so outside strings
 * they become the strings "Infinity", "-Infinity", "NaN" (number_or_inf
 * reads the first two where a number may be infinite), and the result goes
 * through the strict reader of every user file (base/json.h): no text after
 * the object, no NUL in a key, no number that overflows a double. */
static cJSON *parse_python_json(const char *text, size_t len, const char *what) {
    static const char *const bare[] = {"-Infinity", "Infinity", "NaN"};
    char *out = malloc(2 * len + 1); /* each word grows by its two quotes: never more than double */
    if (!out) { gs_fail("%s: out of memory", what); return NULL; }
    size_t k = 0;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        if (in_string) {
            if (text[i] == '\\' && i + 1 < len) out[k++] = text[i++];
            else if (text[i] == '"') in_string = 0;
        } else if (text[i] == '"') {
            in_string = 1;
        } else {
            size_t n = 0;
            for (size_t b = 0; b < 3 && !n; b++)
                if (len - i >= strlen(bare[b]) && !memcmp(text + i, bare[b], strlen(bare[b]))) n = strlen(bare[b]);
            if (n) {
                out[k++] = '"';
                memcpy(out + k, text + i, n);
                k += n, i += n - 1;
                out[k++] = '"';
                continue;
            }
        }
        out[k++] = text[i];
    }
    cJSON *j = gs_json_parse_strict(out, k, what);
    free(out);
    return j;
}

/* A number, or Python's Infinity / -Infinity (strings after parse_python_json). */
static int number_or_inf(const cJSON *x, double *out) {
    if (cJSON_IsNumber(x)) return *out = x->valuedouble, 1;
    if (cJSON_IsString(x) && !strcmp(x->valuestring, "Infinity")) return *out = INFINITY, 1;
    if (cJSON_IsString(x) && !strcmp(x->valuestring, "-Infinity")) return *out = -INFINITY, 1;
    return 0;
}

static int sources_open(const st_file *f, sources *s) {
    memset(s, 0, sizeof *s);
    const char *meta = safetensors_meta(f, "config");
    snprintf(s->where[0], sizeof s->where[0], "__metadata__.config");
    if (meta && !(s->json[0] = parse_python_json(meta, strlen(meta), s->where[0]))) return -1;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", f->path ? f->path : ".");
    snprintf(s->where[1], sizeof s->where[1], "%s/config.json", dirname(dir));
    FILE *probe = fopen(s->where[1], "r");
    if (!probe) return 0;
    fclose(probe);
    size_t len;
    char *text = gs_read_file(s->where[1], "config ", 4096, (size_t)1 << 30, &len);
    if (!text) return -1;
    s->json[1] = parse_python_json(text, len, s->where[1]);
    free(text);
    return s->json[1] ? 0 : -1;
}

static void sources_close(sources *s) { cJSON_Delete(s->json[0]), cJSON_Delete(s->json[1]); }

/* key's item in the first source that has it (not null); *from: which */
static const cJSON *option(const sources *s, const char *key, int *from) {
    for (int i = 0; i < 2; i++) {
        const cJSON *x = s->json[i] ? cJSON_GetObjectItemCaseSensitive(s->json[i], key) : NULL;
        if (x && !cJSON_IsNull(x)) {
            if (from) *from = i;
            return x;
        }
    }
    return NULL;
}

/* the options from the sources, their defaults (transformers' Mamba2Config) where absent */
static int read_options(const sources *s, gs_config *c, mamba2_opts *o) {
    const cJSON *g = option(s, "n_groups", NULL), *eps = option(s, "layer_norm_epsilon", NULL);
    const cJSON *lim = option(s, "time_step_limit", NULL);
    o->n_groups = 1, o->dt_min = 0.0f, o->dt_max = INFINITY;
    c->norm_eps = 1e-5f;
    int64_t groups;
    double e, lo, hi;
    /* ranges checked before any conversion (a cast of 1e300 to int is undefined) */
    if (g && gs_json_int(g, "config n_groups", 1, 1 << 20, &groups)) return -1;
    if (g) o->n_groups = (int)groups;
    if (eps && gs_json_real(eps, "config layer_norm_epsilon", FLT_MIN, 1, &e)) return -1;
    if (eps) c->norm_eps = (float)e;
    if (lim) {
        const cJSON *a = cJSON_GetArrayItem(lim, 0), *b = cJSON_GetArrayItem(lim, 1);
        if (!cJSON_IsArray(lim) || cJSON_GetArraySize(lim) != 2 || !number_or_inf(a, &lo) || !number_or_inf(b, &hi) ||
            !(lo >= 0 && lo <= FLT_MAX) || !(hi > lo) || (isfinite(hi) && hi > FLT_MAX))
            return gs_fail("config time_step_limit must be [min, max] with 0 <= min < max (max may be Infinity), "
                           "both within a float's range");
        o->dt_min = (float)lo, o->dt_max = isfinite(hi) ? (float)hi : INFINITY;
    }
    /* what this engine does not compute is refused, not ignored */
    static const struct { const char *key; int want; } flags[] = {
        {"use_bias", 0}, {"use_conv_bias", 1}, {"rms_norm", 1}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        const cJSON *x = option(s, flags[i].key, NULL);
        if (x && cJSON_IsBool(x) && cJSON_IsTrue(x) != flags[i].want)
            return gs_fail("config %s=%s is not supported (only Mamba2Config's default, %s)", flags[i].key,
                           flags[i].want ? "false" : "true", flags[i].want ? "true" : "false");
    }
    const cJSON *act = option(s, "hidden_act", NULL);
    if (act && (!cJSON_IsString(act) || (strcmp(act->valuestring, "silu") && strcmp(act->valuestring, "swish"))))
        return gs_fail("config hidden_act must be silu (the convolution's activation)");
    return 0;
}

static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    c->arch = MAMBA2_ARCH;
    const st_tensor *e = safetensors_find(f, EMBED);
    if (!e || e->ndim != 2) return gs_fail("missing 2-D tensor '" EMBED "' (V, D)");
    c->V = (int)e->shape[0];
    c->d = c->e = (int)e->shape[1];
    while (c->n_layers <= M2_MAX_LAYERS && layer_tensor(f, c->n_layers, M2_A_LOG)) c->n_layers++;
    const st_tensor *A = layer_tensor(f, 0, M2_A_LOG), *in = layer_tensor(f, 0, M2_IN_PROJ);
    const st_tensor *cw = layer_tensor(f, 0, M2_CONV_W), *out = layer_tensor(f, 0, M2_OUT_PROJ);
    char name[64];
    if (A->ndim != 1 || A->shape[0] < 1)
        return gs_fail("'%s' must be 1-D, one entry per head", layer0_name(M2_A_LOG, name, sizeof name));
    c->H = (int)A->shape[0];
    if (!out || out->ndim != 2 || out->shape[1] % c->H)
        return gs_fail("'%s' must be 2-D with a multiple of %d heads columns", layer0_name(M2_OUT_PROJ, name, sizeof name),
                       c->H);
    if (!cw || cw->ndim != 3) return gs_fail("missing 3-D tensor '%s' (C, 1, K)", layer0_name(M2_CONV_W, name, sizeof name));
    if (!in || in->ndim != 2) return gs_fail("missing 2-D tensor '%s'", layer0_name(M2_IN_PROJ, name, sizeof name));
    int inner = (int)out->shape[1], convd = (int)cw->shape[0];
    c->dv = inner / c->H;
    c->conv = (int)cw->shape[2];
    if (in->shape[0] != (int64_t)inner + convd + c->H)
        return gs_fail("in_proj has %lld rows, not z | xBC | dt = %d + %d + %d: a gated MLP beside the SSM (d_mlp > 0) "
                       "is not supported", (long long)in->shape[0], inner, convd, c->H);
    sources s;
    mamba2_opts o = {0};
    int rc = sources_open(f, &s) || read_options(&s, c, &o) ? -1 : 0;
    sources_close(&s);
    if (rc) return -1;
    if ((convd - inner) % (2 * o.n_groups) || convd <= inner)
        return gs_fail("conv1d has %d channels: d_inner %d + 2 x n_groups %d x d_state leaves no whole d_state", convd,
                       inner, o.n_groups);
    c->dk = (convd - inner) / (2 * o.n_groups);
    o.tied = safetensors_find(f, LM_HEAD) == NULL;
    gs_own_set(mamba2_opts, c, &o);
    return 0;
}

/* Where each size came from, as infer() found it. */
static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    mamba2_opts o = mamba2_opts_of(c);
    sources s;
    int have = sources_open(f, &s) == 0;
    int from = -1;
    gs_describe_shape(buf, size, "vocab_size", c->V, f, EMBED, "");
    gs_describe_shape(buf, size, "hidden_size", c->d, f, EMBED, "");
    const gs_tensor_table *t = &mamba2_tensors;
    gs_describe(buf, size, "num_hidden_layers", c->n_layers, "%s for i = 0..%d", tensors[M2_TENSOR(M2_A_LOG)].name,
                c->n_layers - 1);
    gs_table_describe_shape(buf, size, "num_heads", c->H, f, t, M2_TENSOR(M2_A_LOG), 0, "");
    gs_table_describe_shape(buf, size, "head_dim", c->dv, f, t, M2_TENSOR(M2_OUT_PROJ), 0, " / num_heads");
    gs_table_describe_shape(buf, size, "conv_kernel", c->conv, f, t, M2_TENSOR(M2_CONV_W), 0, "");
    from = -1;
    if (have) option(&s, "n_groups", &from);
    gs_describe(buf, size, "n_groups", o.n_groups, "%s", from >= 0 ? s.where[from] : "Mamba2Config's default: no n_groups");
    gs_table_describe_shape(buf, size, "state_size", c->dk, f, t, M2_TENSOR(M2_CONV_W), 0,
                            " (channels - d_inner) / 2 n_groups");
    gs_describe(buf, size, "tie_word_embeddings", o.tied, "%s", o.tied ? "no " LM_HEAD : LM_HEAD " present");
    from = -1;
    if (have) option(&s, "layer_norm_epsilon", &from);
    size_t at = strlen(buf);
    snprintf(buf + at, size > at ? size - at : 0, "layer_norm_epsilon %g (%s)\n", c->norm_eps,
             from >= 0 ? s.where[from] : "Mamba2Config's default: no layer_norm_epsilon");
    if (have) sources_close(&s);
}

/* every key both sources hold agrees with the shapes (a config may confirm, never contradict) */
static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "mamba2")) return gs_fail("__metadata__ says arch=%s but the tensors are those of mamba2", arch);
    mamba2_opts o = mamba2_opts_of(c);
    sources s;
    if (sources_open(f, &s)) {
        sources_close(&s);
        return -1;
    }
    const struct { const char *key; double have; } keys[] = {
        {"vocab_size", c->V},      {"hidden_size", c->d},         {"num_hidden_layers", c->n_layers},
        {"num_heads", c->H},       {"head_dim", c->dv},           {"state_size", c->dk},
        {"n_groups", o.n_groups},  {"conv_kernel", c->conv},      {"expand", (double)mamba2_inner(c) / c->d},
        {"layer_norm_epsilon", c->norm_eps},
    };
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++)
        for (size_t k = 0; s.json[i] && k < sizeof keys / sizeof *keys && !rc; k++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(s.json[i], keys[k].key);
            if (cJSON_IsNumber(x) && fabs(x->valuedouble - keys[k].have) > 1e-6 * fabs(keys[k].have))
                rc = gs_fail("%s says %s=%g but the tensor shapes give %g", s.where[i], keys[k].key, x->valuedouble,
                             keys[k].have);
        }
    for (int i = 0; i < 2 && !rc; i++) {
        const cJSON *tie = s.json[i] ? cJSON_GetObjectItemCaseSensitive(s.json[i], "tie_word_embeddings") : NULL;
        if (cJSON_IsBool(tie) && cJSON_IsTrue(tie) != o.tied)
            rc = gs_fail("%s says tie_word_embeddings=%s but the file %s " LM_HEAD, s.where[i], o.tied ? "false" : "true",
                         o.tied ? "has no" : "has its own");
    }
    sources_close(&s);
    return rc;
}

static int validate(const gs_config *c) {
    mamba2_opts o = mamba2_opts_of(c);
    if (c->V < 1 || c->d < 1 || c->H < 1 || c->dv < 1 || c->dk < 1 || c->n_layers < 1 || c->conv < 1 || o.n_groups < 1)
        return gs_fail("invalid sizes (V=%d, D=%d, heads=%d, head_dim=%d, state=%d, layers=%d, conv=%d, groups=%d): all "
                       "must be positive", c->V, c->d, c->H, c->dv, c->dk, c->n_layers, c->conv, o.n_groups);
    if (c->H % o.n_groups) return gs_fail("%d heads do not split into %d groups", c->H, o.n_groups);
    if (c->n_layers > M2_MAX_LAYERS) return gs_fail("%d layers: at most %d are supported", c->n_layers, M2_MAX_LAYERS);
    if (c->conv > 16) return gs_fail("convolution of size %d: at most 16 is supported", c->conv);
    if (!(c->norm_eps > 0)) return gs_fail("layer_norm_epsilon %g must be positive", (double)c->norm_eps);
    int64_t rows = (int64_t)mamba2_inner(c) + mamba2_conv_dim(c) + c->H;
    int64_t big = (int64_t)c->V * c->d, wide[] = {rows * c->d, (int64_t)c->H * c->dv * c->dk};
    for (int i = 0; i < 2; i++) big = wide[i] > big ? wide[i] : big;
    if (big > INT32_MAX) return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&mamba2_tensors, c, s); }

static void write_metadata(const gs_config *c, st_writer *w) {
    mamba2_opts o = mamba2_opts_of(c);
    char buf[512], hi[32];
    if (isinf(o.dt_max)) snprintf(hi, sizeof hi, "Infinity"); /* as Python writes it: parse_python_json reads it back */
    else snprintf(hi, sizeof hi, "%.9g", (double)o.dt_max);
    st_writer_meta(w, "arch", "mamba2");
    snprintf(buf, sizeof buf,
             "{\"model_type\": \"mamba2\", \"vocab_size\": %d, \"hidden_size\": %d, \"num_hidden_layers\": %d, "
             "\"num_heads\": %d, \"head_dim\": %d, \"state_size\": %d, \"n_groups\": %d, \"conv_kernel\": %d, "
             "\"expand\": %.9g, \"layer_norm_epsilon\": %.9g, \"tie_word_embeddings\": %s, \"time_step_limit\": [%.9g, %s]}",
             c->V, c->d, c->n_layers, c->H, c->dv, c->dk, o.n_groups, c->conv, (double)mamba2_inner(c) / c->d,
             (double)c->norm_eps, o.tied ? "true" : "false", (double)o.dt_min, hi);
    st_writer_meta(w, "config", buf);
}

/* GS_DIM_OWN: the kept convolution inputs and the groups' B and C */
static int site_width(const gs_site *s, const gs_config *c) {
    if (s->point == M2_HOOK_CONV) return (c->conv - 1) * mamba2_conv_dim(c);
    if (s->point == M2_HOOK_B || s->point == M2_HOOK_C) return mamba2_opts_of(c).n_groups * c->dk;
    return 0;
}

/* In step order (docs/hooks.md, "Mamba-2"). Sites at a step are at the
 * position after reading x_t; logits and nll are the prediction of x_t made
 * at the step before (NaN at a window's first step). */
static const gs_site sites[] = {
    {"hook_embed", NULL, GS_HOOK_EMBED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "the embedding E[x_t], the first layer's input"},
    {"blocks.{i}.hook_resid_pre", NULL, GS_HOOK_RESID_PRE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the residual stream into layer i"},
    {"blocks.{i}.mixer.conv_state", NULL, M2_HOOK_CONV, GS_SITE_VECTOR, 1, GS_DIM_OWN, GS_ROLE_NONE, 0, 0,
     "the convolution's kept inputs after x_t's: conv-1 rows of in_proj's x | B | C, oldest first (edits are carried)"},
    {"blocks.{i}.mixer.x", NULL, M2_HOOK_X, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "per-head inputs x = silu(conv(xBC))[x part], head_dim each, before the update"},
    {"blocks.{i}.mixer.B", NULL, M2_HOOK_B, GS_SITE_VECTOR, 1, GS_DIM_OWN, GS_ROLE_NONE, 0, 0,
     "the groups' input maps B (n_groups x d_state), before the update"},
    {"blocks.{i}.mixer.C", NULL, M2_HOOK_C, GS_SITE_VECTOR, 1, GS_DIM_OWN, GS_ROLE_NONE, 0, 0,
     "the groups' output maps C (n_groups x d_state), before the read"},
    {"blocks.{i}.mixer.dt", NULL, M2_HOOK_DT, GS_SITE_HEAD_SCALAR, 1, GS_DIM_HEADS, GS_ROLE_NONE, 0, 0,
     "per-head step dt = softplus(dt_proj + dt_bias), clamped to time_step_limit, before the decay"},
    {"blocks.{i}.mixer.decay", NULL, M2_HOOK_DECAY, GS_SITE_HEAD_SCALAR, 1, GS_DIM_HEADS, GS_ROLE_DECAY, 0, 0,
     "per-head decay a = exp(-exp(A_log) dt) in (0, 1), before the update"},
    /* a per-head vector of head_dim * d_state: a kind GS_SITE_HEAD_MATRIX needs a case in cli/cmd_record.c's shape_name */
    {"blocks.{i}.mixer.ssm_state", NULL, M2_HOOK_STATE, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_KEY_VAL, GS_ROLE_NONE, 0, 0,
     "per-head SSM state h = a h + dt x B^T (head_dim x d_state, row-major) after the update, before the read (edits "
     "are carried)"},
    {"blocks.{i}.mixer.y", NULL, M2_HOOK_Y, GS_SITE_HEAD_VECTOR, 1, GS_DIM_HEADS_VAL, GS_ROLE_NONE, 0, 0,
     "per-head reads y = h C + D x before the gated norm (zero a head's slice to ablate it)"},
    {"blocks.{i}.hook_mixer_out", NULL, M2_HOOK_MIXER_OUT, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the mixer's contribution out_proj(rms_g(y silu(z)) norm.weight)"},
    {"blocks.{i}.hook_resid_post", NULL, GS_HOOK_RESID_POST, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_STATE, 0, 0,
     "the residual stream out of layer i (the state: record takes the last layer's)"},
    {"ln_final.hook_normalized", NULL, GS_HOOK_FINAL_NORM, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "norm_f of the last residual stream: lm_head of it predicts x_{t+1}"},
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1,
     "lm_head of the previous step's final norm: the distribution for x_t (NaN at t = 0)"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t) (NaN at t = 0)"},
};

/* patching's whole state: the SSM state and the convolution's inputs of every layer */
static const char *const carried[] = {"blocks.{i}.mixer.ssm_state", "blocks.{i}.mixer.conv_state", NULL};

static const float *output_head(const gs_model *m) {
    return gs_table_tensor(m, &mamba2_tensors, mamba2_opts_of(&m->cfg).tied ? M2_T_EMBED : M2_T_HEAD, 0);
}

/* the logit lens: rms(s, norm_f, eps) lm_head^T (the embedding when tied) */
static int decode(const gs_model *m, const float *s, float *logits) {
    return gs_decode_rms_head(s, gs_table_tensor(m, &mamba2_tensors, M2_T_NORM_F, 0), m->cfg.norm_eps, m->cfg.d,
                              output_head(m), m->cfg.V, logits);
}

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &mamba2_tensors, M2_T_EMBED, 0);
}

const gs_family gs_family_mamba2 = {
    "mamba2", "mamba2", "Mamba-2 (SSD, Hugging Face layout)", MAMBA2_ARCH, 0, sites, (int)(sizeof sites / sizeof *sites),
    recognise, "tensors '" EMBED "' and 'backbone.layers.0.mixer.A_log'", infer, check_metadata, validate, tensor_specs,
    NULL, write_metadata, mamba2_cpu_new, NULL, decode, embedding, describe, NULL, NULL, site_width, carried,
    0, 0, NULL, /* no matrix memory; not attributable; no delta-rule memory */
};
