/* A family's checkpoint tensors as one table (llama.cpp's LLM_TENSOR_NAMES
 * is the model): the family's tensor ids index rows of name, group, role and
 * shape, and its specs, its bind, its infer and its backend all name a tensor
 * by its id, so each name is spelled once. A per-layer tensor's name holds
 * "{i}" for the layer (engine/arch/layer_pattern.h). */
#ifndef GS_ENGINE_ARCH_TENSOR_TABLE_H
#define GS_ENGINE_ARCH_TENSOR_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "io/checkpoint/safetensors.h"
#include "engine/model.h"

/* The symbol that ends a shape (families number their size symbols from 1). */
#define GS_SZ_END 0

typedef struct {
    const char *name;  /* "blocks.{i}.attn.W_q.weight"; NULL: the family has no tensor of this id */
    const char *group; /* the optimizer's group; NULL for a per-layer tensor ("layer i") */
    gs_tensor_role role;
    int dims[3]; /* the shape as the family's size symbols, GS_SZ_END after the last */
} gs_tensor_name;

typedef struct {
    const gs_tensor_name *tensors; /* indexed by the family's tensor ids, in checkpoint order */
    int n;
    /* a size symbol's value for a config; a tensor with a size of 0 is left
     * out (an option the model does not have) */
    int64_t (*size)(const gs_config *c, int symbol);
} gs_tensor_table;

/* The specs in table order, a run of per-layer rows repeated for each of the
 * config's layers (at most GS_MAX_LAYERS); returns the count. */
int gs_table_specs(const gs_tensor_table *t, const gs_config *c, gs_tensor_spec *specs);
/* Tensor id's name at a layer (ignored for a tensor that is not per layer). */
void gs_table_name(const gs_tensor_table *t, int id, int layer, char *out, size_t size);
/* Tensor id at a layer in a checkpoint file, and in a loaded model (NULL if absent). */
const st_tensor *gs_table_find(const st_file *f, const gs_tensor_table *t, int id, int layer);
const float *gs_table_tensor(const gs_model *m, const gs_tensor_table *t, int id, int layer);
/* The same in a parameter block laid out per gs_table_specs (for a family's bind). */
float *gs_table_in_block(const gs_tensor_table *t, const gs_config *c, float *block, int id, int layer);
/* describe()'s line for a size read off tensor id's shape at a layer
 * (gs_describe_shape, engine/arch/family.h). */
void gs_table_describe_shape(char *buf, size_t size, const char *key, long value, const st_file *f,
                             const gs_tensor_table *t, int id, int layer, const char *how);

#endif
