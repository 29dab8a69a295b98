/* A GPN / GPN+M model: configuration, parameters in one contiguous float32
 * block with named pointers into it (llm.c's ParameterTensors), and loading
 * from safetensors with the configuration inferred from tensor shapes.
 * Checkpoints stored as BF16/F16/F64 are widened to float32 once at load, so
 * the engine always computes in float32 (memory: 4 bytes per parameter, e.g.
 * ~0.5 GB for the paper's 130M model; the BF16 file itself is only mapped). */
#ifndef GS_ENGINE_MODEL_H
#define GS_ENGINE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "engine/arch/arch.h" /* gs_arch: the family ids */

#define GS_MAX_LAYERS 64

/* The bytes of gs_config.own: a family's own options (GS_FAMILY_OPTIONS) */
#define GS_CONFIG_OWN_BYTES 32

typedef struct {
    gs_arch arch;
    int n_layers; /* N: FFN/gate(/read) layers; 1 for GPN */
    int d;        /* d_state (Transformer++: hidden_dim, the residual width; e = d) */
    int e;        /* d_emb */
    int f;        /* d_ffn (Transformer++: ffn_dim, the SwiGLU's hidden width) */
    int H, dk, dv; /* memory heads and sizes (0 for GPN); Transformer++: attention heads, dk = dv = d / H */
    int V;        /* vocabulary */
    int decoder_bias;
    /* Gated DeltaNet (engine/arch/gdn/; 0 elsewhere): d is the residual width,
     * f the MLP's, H heads of dk (head_dim) and dv (head_dim * expand_v) */
    int conv;       /* short causal convolution's kernel size (4) */
    float norm_eps; /* every RMSNorm's eps (fla's config norm_eps, 1e-6) */
    /* Recurrent Transformer (engine/arch/rt/; 0 elsewhere): OLMo's model
     * config values that no shape shows; norm_eps is its layer_norm_eps */
    int activation;       /* rt.h's rt_activation (activation_type) */
    int qk_norm;          /* attention_layer_norm: q_norm and k_norm present */
    float clip_qkv;       /* 0: none */
    float alibi_bias_max; /* ALiBi slopes 2^-(h * alibi_bias_max / n_heads), h = 1..n_heads */
    /* MLP-LDRU (engine/arch/ldru/; 0 elsewhere): the classifier's labels; V is the task's alphabet */
    int n_classes;
    /* A family's own options, which no shape shows and no other family has:
     * the bytes of a struct its folder declares, copied in and out with
     * memcpy (engine/arch/family.h, gs_own_get / gs_own_set), so that a new
     * family adds no field here; zero for the families that have none */
    unsigned char own[GS_CONFIG_OWN_BYTES];
} gs_config;

typedef struct {
    float *ffn_norm_w, *ffn_w1, *ffn_w2;
    float *pg_norm_w, *pg_gate_k, *pg_gate_b;
    float *read_norm_w, *read_W_q_k, *read_W_q_b, *read_W_gate_k, *read_out_norm_w, *read_W_o_k;
} gpn_layer_params;

typedef struct {
    float *embedding, *decode_norm_w, *decode_proj_k, *decode_bias;
    float *fuse_norm_w, *fuse_proj_k, *fg_norm_w, *fg_gate_k, *fg_gate_b;
    float *write_norm_w, *write_W_k_k, *write_W_k_b, *write_W_v_k, *write_W_beta_k;
    float *write_A_log, *write_dt_bias, *write_W_a_k;
    gpn_layer_params layers[GS_MAX_LAYERS];
} gpn_params;

/* Role of a tensor, for the optimizer (weight decay only on matrices) and
 * for initialisation. */
typedef enum { GS_TENSOR_MATRIX, GS_TENSOR_NORM, GS_TENSOR_BIAS, GS_TENSOR_A_LOG, GS_TENSOR_DT_BIAS } gs_tensor_role;

typedef struct {
    char name[48];   /* checkpoint name, e.g. "L0_ffn_w1_k" */
    int ndim;
    int64_t shape[3]; /* up to 3-D (GDN's depthwise conv weights are [C, 1, K]) */
    size_t numel;
    size_t offset;   /* in floats, into the contiguous block */
    gs_tensor_role role;
    const char *group; /* "embedding", "decode", "fuse", "memory write", "layer 0", ... */
} gs_tensor_spec;

#define GS_MAX_TENSORS (16 + 12 * GS_MAX_LAYERS)

/* Append a tensor spec (1-D when c == 0) at offset *off, for a family's tensor_specs. */
void gs_spec_add(gs_tensor_spec *s, int *n, size_t *off, const char *name, const char *group, gs_tensor_role role,
                 int64_t r, int64_t c);
/* The same for a 3-D tensor [r, c, k]. */
void gs_spec_add3(gs_tensor_spec *s, int *n, size_t *off, const char *name, const char *group, gs_tensor_role role,
                  int64_t r, int64_t c, int64_t k);

/* A per-layer spec's group, "layer L" (0 <= L < GS_MAX_LAYERS), in static
 * storage that the specs may point at. */
const char *gs_layer_group(int layer);

/* Every tensor the architecture needs, in a fixed order; returns the count. */
int gs_tensor_specs(const gs_config *c, gs_tensor_spec *specs);
size_t gs_param_count(const gs_config *c);
/* Point the named pointers of `p` into `block` laid out per gs_tensor_specs. */
void gpn_params_bind(const gs_config *c, float *block, gpn_params *p);
/* Check a configuration for sizes the engine supports; 0 or -1 with message. */
int gs_config_validate(const gs_config *c);
const char *gs_arch_name(gs_arch a);

typedef struct {
    gs_config cfg;
    gpn_params p;
    float *block;        /* all parameters, float32 */
    size_t n_params;
    char source_dtype[8]; /* dtype of the checkpoint's matrices: F32, BF16, F16 */
    char hash[GS_HASH_HEX]; /* SHA-256 of the checkpoint file */
    char *path;
    char **extra_tensors; /* tensors in the file that the architecture does not use */
    int n_extra;
} gs_model;

/* From a safetensors file, or a model folder holding model.safetensors (m->path is then the file). */
gs_model *gs_model_load(const char *path);
/* The file a model argument names: PATH itself, or PATH/model.safetensors
 * when PATH is a folder (written into buf); NULL with gs_error() for a folder
 * without one. What every command that takes a model reads. */
const char *gs_model_file(const char *path, char *buf, size_t size);
/* A model with the given config and zeroed parameters (tests, trainer). */
gs_model *gs_model_new(const gs_config *c);
/* A model with random weights on a trained model's scale (benchmarks, device
 * parity); the same seed gives the same weights. */
gs_model *gs_model_random(const gs_config *c, uint64_t seed);
void gs_model_free(gs_model *m);
/* A model's tensor by its checkpoint name (NULL if the family has none). */
const float *gs_model_tensor(const gs_model *m, const char *name);
/* Save as safetensors (F32 or BF16) with the config in __metadata__. */
int gs_model_save(const gs_model *m, const char *path, int as_bf16);
/* The same with more __metadata__: key, value, key, value, ..., NULL. */
int gs_model_save_meta(const gs_model *m, const char *path, int as_bf16, const char *const *extra_meta);

#endif
