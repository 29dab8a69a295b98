/* Architecture knowledge as data (llama.cpp's src/llama-arch.h is the model):
 * one row per model family, holding its name, how its tensors are laid out,
 * and its sites: the public names of what a step computes (TransformerLens
 * names where one exists, plain names elsewhere; docs/hooks.md). Everything
 * outside engine/arch/ asks this table instead of testing the architecture.
 *
 * A site names one tensor of a step: B rows of `width` floats. Per-layer
 * sites are written "blocks.{i}.NAME"; a site may also answer to an older
 * name (its alias, e.g. "s_pred" or "L{i}.mem_read"). */
#ifndef GS_ENGINE_ARCH_FAMILY_H
#define GS_ENGINE_ARCH_FAMILY_H

#include <string.h>

#include "engine/backend.h"
#include "engine/hooks.h"
#include "engine/model.h"
#include "io/checkpoint/safetensors.h"

typedef enum {
    GS_SITE_VECTOR,      /* one vector per token (a state, a residual stream) */
    GS_SITE_HEAD_SCALAR, /* one number per head (a decay rate, a write strength) */
    GS_SITE_HEAD_VECTOR, /* one vector per head, concatenated (keys, queries, per-head reads) */
    GS_SITE_SCALAR,      /* one number per token (the NLL) */
} gs_site_kind;

/* What an analysis may take a site for by default. */
typedef enum {
    GS_ROLE_NONE = 0,
    GS_ROLE_STATE,  /* "the state" of the family: geometry, default direction, horizons */
    GS_ROLE_DECAY,  /* per-head decay rates in (0, 1): retention, pools */
    GS_ROLE_LOGITS,
    GS_ROLE_NLL,
} gs_site_role;

/* How a site's width follows from the config. */
typedef enum { GS_DIM_ONE, GS_DIM_STATE, GS_DIM_VOCAB, GS_DIM_HEADS, GS_DIM_HEADS_KEY, GS_DIM_HEADS_VAL,
               GS_DIM_HEADS_KEY_VAL, /* H*dk*dv: a dk x dv matrix per head, row-major (GDN's S) */
               GS_DIM_HEADS_PATTERN, /* H*GS_PATTERN_KEYS: attention weights per head on the most recent keys */
               GS_DIM_CLASSES,       /* n_classes: a sequence classifier's labels (MLP-LDRU) */
               GS_DIM_OWN            /* the family's site_width() says: a width only the family knows (GDN's conv inputs) */
} gs_dim;

/* The key positions an attention pattern site keeps per head: the most
 * recent GS_PATTERN_KEYS (the sites have fixed widths, a window does not;
 * docs/hooks.md). */
#define GS_PATTERN_KEYS 64

typedef struct {
    const char *name;  /* "state.pred", "blocks.{i}.hook_mlp_out" */
    const char *alias; /* an older name ("s_pred", "L{i}.ffn_out"), or NULL */
    gs_hook_point point;
    gs_site_kind kind;
    int per_layer;
    gs_dim width;
    gs_site_role role;
    int needs_memory;  /* only where the model has memory heads */
    int kept;          /* every backend keeps it after a step (gs_engine_site); else capture it by hook */
    const char *what;  /* one line for `gpnscope info` and docs/hooks.md */
} gs_site;

/* A delta-rule memory (GPN+M's heads, Gated DeltaNet's attention), for
 * exact effective attention (analyses/causal/effective_attention.h): the
 * sites its write and read are made of, layers at "{i}". */
typedef struct {
    const char *q, *k, *v, *alpha, *beta, *read;
    int write_per_layer; /* 1: each layer writes its own memory (GDN); 0: one write per step, read by every layer (GPN+M) */
    int decay_first;     /* 1: A = alpha (I - beta k k^T) (GDN); 0: A = alpha I - beta k k^T (GPN+M) */
} gs_delta_memory;

typedef struct {
    const char *name;       /* "gpn_m": the checkpoint's arch metadata */
    const char *store_name; /* "gpn+m": the store's models.arch */
    const char *title;      /* "GPN+M, shared matrix memory" */
    gs_arch arch;
    /* 1: the step at position 0 predicts x_0 (GPN decodes its zero state);
     * 0: there is no prediction of the first token (a transformer's first
     * logits follow x_0): its NLL is NaN and evaluations count T - 1 tokens */
    int predicts_first_token;
    const gs_site *sites;
    int n_sites;
    /* checkpoints: whether a file's tensors are this family's (by their
     * names), the config from their shapes, metadata that may confirm and
     * never contradict it, its checks, the tensors it needs, the named
     * pointers (GPN's gpn_params; NULL: the backend finds its own), and the
     * metadata a saved model carries */
    int (*recognise)(const st_file *f);
    const char *signature; /* what recognise looks for, for the error that no family matched */
    int (*infer)(const st_file *f, gs_config *c);
    int (*check_metadata)(const st_file *f, const gs_config *c);
    int (*validate)(const gs_config *c);
    int (*tensor_specs)(const gs_config *c, gs_tensor_spec *specs);
    void (*bind)(const gs_config *c, float *block, gpn_params *p);
    void (*write_metadata)(const gs_config *c, st_writer *w);
    /* a backend for a model (0, or -1 with gs_error()); new_cuda NULL: no CUDA engine */
    int (*new_cpu)(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);
    int (*new_cuda)(const gs_model *m, int max_batch, const gs_device *dev, const gs_engine_host *host,
                    gs_backend *out);
    /* what analyses decode with: logits (V) of a vector of the state site's
     * width through the family's output path (GPN's decode; the final norm and
     * the output head of a transformer: the logit lens), and the token
     * embedding matrix (V rows of *width) for the embedding control and the
     * probe; NULL: the family has none (those analyses are skipped) */
    int (*decode)(const gs_model *m, const float *s, float *logits);
    const float *(*embedding)(const gs_model *m, int *width);
    /* `gpnscope info`'s account of where each size came from: lines
     * "NAME VALUE (SOURCE)\n" appended to buf (a tensor's shape, a metadata
     * key, a fixed bound), for the file f whose config c infer() gave; NULL:
     * the family says nothing. It reads the file, not the model, because only
     * the file still holds the metadata. (Entries are added at the end only:
     * the rows use positional initializers and name every field.) */
    void (*describe)(const st_file *f, const gs_config *c, char *buf, size_t size);
    /* `gpnscope train`'s entry (engine/tape/train_family.h): the family's
     * training tape and initialisation; NULL: the trainer does not train it */
    const struct gs_train_i *train;
    /* NULL: a language model (its logits are over a vocabulary of tokens, a
     * step predicts the next token). Else what the family's models are
     * instead ("an MLP-LDRU sequence classifier"): the commands that read
     * logits as a vocabulary, decode through a tokenizer or compute NLL over
     * a corpus refuse them with it (gs_family_require_lm). */
    const char *not_lm;
    /* the width of a site whose width is GS_DIM_OWN (0: the model lacks it),
     * so that a family's own sizes need no gs_dim of their own; NULL where
     * the family has no such site */
    int (*site_width)(const gs_site *s, const gs_config *c);
    /* What the family carries from one token to the next, for patching's
     * `state` component (analyses/causal/patching.c): NULL when it carries no state
     * at one position (an attention family's cache holds every earlier one);
     * else a NULL-terminated list of the sites, beyond its state site, whose
     * values at step p are carried into p + 1 (per-layer names with {i}, each
     * layer taken; a site of width 0 is skipped), empty where the state site
     * is all (GPN's memory, mem.state, is found by its name) */
    const char *const *carried;
    /* 1: the step writes and reads a matrix memory (GPN+M's heads): the
     * trainer's layout, the CUDA step and logit attribution ask this */
    int has_memory;
    /* 1: logit attribution (analyses/causal/logit_attribution.c) can split
     * the family's step into its parts (GPN's and GPN+M's) */
    int attributable;
    /* the family's delta-rule memory, whose effective attention `gpnscope
     * attention` computes; NULL: it has none */
    const gs_delta_memory *delta_memory;
} gs_family;

/* A family's own options in gs_config.own (engine/model.h): its struct T
 * copied out of (gs_own_get) or into (gs_own_set) the config's bytes; a
 * struct that does not fit fails to compile. */
#define gs_own_get(T, c, out)                                                                       \
    do {                                                                                            \
        _Static_assert(sizeof(T) <= GS_CONFIG_OWN_BYTES, #T " does not fit gs_config.own");        \
        memcpy((out), (c)->own, sizeof(T));                                                         \
    } while (0)
#define gs_own_set(T, c, in)                                                                        \
    do {                                                                                            \
        _Static_assert(sizeof(T) <= GS_CONFIG_OWN_BYTES, #T " does not fit gs_config.own");        \
        memcpy((c)->own, (in), sizeof(T));                                                          \
    } while (0)

/* The family of a config, and by name ("gpn", "gpn_m"; NULL if unknown). */
const gs_family *gs_family_of(const gs_config *c);
const gs_family *gs_family_by_name(const char *name);
/* Whether a config is of the family named name ("gdn"), and whether its
 * family has a matrix memory (gs_family.has_memory; 0 for an unknown id). */
int gs_family_is(const gs_config *c, const char *name);
int gs_family_has_memory(const gs_config *c);
/* Set c->arch to the named family's id, for code that builds a config by
 * hand (benchmarks, the task trainer); 0, or -1 with gs_error() if unknown. */
int gs_family_config(const char *name, gs_config *c);
/* The family whose store_name a run registered ("gpn+m", "ldru"); NULL if none. */
const gs_family *gs_family_by_store_name(const char *store_name);
/* The family whose tensors a checkpoint holds; NULL with gs_error() naming
 * the families tried. */
const gs_family *gs_family_of_file(const st_file *f);

/* 0 when the config's family is a language model; else -1 with gs_error()
 * "PATH is an MLP-LDRU sequence classifier, not a language model: NEEDS
 * needs a language model (...)", naming the commands that do take it. The
 * one check every language-model-only command makes (cli/lm_model.h). */
int gs_family_require_lm(const gs_config *c, const char *path, const char *needs);

/* A site's width in floats for a config; 0 where the model lacks it. */
int gs_site_width(const gs_site *s, const gs_config *c);
/* Whether the model has the site (memory sites need memory heads). */
int gs_site_present(const gs_site *s, const gs_config *c);
/* The site of a hook point in a family (NULL if none). */
const gs_site *gs_site_of_point(const gs_family *f, gs_hook_point p);
/* The first present site of a role (NULL if none): e.g. the state site. */
const gs_site *gs_site_of_role(const gs_family *f, const gs_config *c, gs_site_role role);
/* A site's name for layer i ("blocks.{i}.X" -> "blocks.0.X"); layer is
 * ignored for sites that are not per layer. */
void gs_site_format(const gs_site *s, int layer, char *out, size_t size);
const char *gs_site_kind_name(gs_site_kind k);

/* For describe(): append "NAME VALUE (SOURCE)\n" to buf, SOURCE formatted;
 * and the same with SOURCE the tensor's name and shape ("embedding [89, 32]")
 * followed by `how` (e.g. " / n_heads"; may be ""). */
void gs_describe(char *buf, size_t size, const char *name, long value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void gs_describe_shape(char *buf, size_t size, const char *name, long value, const st_file *f, const char *tensor,
                       const char *how);

#endif
