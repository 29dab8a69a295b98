/* gpnscope convert: a checkpoint (the companion's JAX checkpoint.pkl, or a
 * PyTorch .pt zip) to safetensors, with no Python.
 *
 * The format is sniffed from the first bytes (zip magic or a pickle
 * opcode), not the extension. The output is written to a temporary file
 * next to it, checked to load, and renamed into place: never over the input
 * (compared by device and inode), and over an existing file only with force.
 *
 * checkpoint.pkl: {step, data_position, params, opt_state} (or flax's
 * {"params": {"params": ...}}): params flattened with "_" into names like
 * L0_ffn_w1_k, sorted; metadata = the config inferred from the shapes (as
 * engine/model.c infers it), source_step, source_data_position, source
 * (exactly what tools/convert_checkpoint.py wrote). dtype: keep writes F32
 * and F16 as stored and F64 as F32; f32/bf16 cast every array.
 *
 * checkpoint.pt: every tensor of the state dict by name, in its stored dtype
 * (keep) or with floating tensors cast to F32/BF16; metadata format=pytorch,
 * source, source_sha256, source_step when the companion layout has one.
 *
 * Either way a floating tensor holding NaN or Inf (a diverged run) is refused
 * unless allow_nonfinite; a tensor named __metadata__ (safetensors' key for
 * metadata) and the legacy non-zip torch.save format are refused, saying so. */
#ifndef GS_IO_CHECKPOINT_CONVERT_H
#define GS_IO_CHECKPOINT_CONVERT_H

#include <stddef.h>

#include "io/checkpoint/pickle.h"
#include "io/checkpoint/tensor.h"
#include "io/checkpoint/safetensors.h"

typedef enum { CK_KEEP, CK_F32, CK_BF16 } ck_dtype_mode;

typedef struct {
    ck_dtype_mode dtype;
    int force;              /* replace an existing output */
    int allow_nonfinite;    /* write tensors holding NaN or Inf (else refused) */
    const char *const *meta; /* "KEY=VALUE" pairs added to __metadata__ last (they win) */
    int n_meta;
    /* the check that a companion model's output loads as a model (the
     * engine's loader, given by the caller so that the checkpoint readers
     * know no model); NULL: it is checked as safetensors, like any other */
    int (*load_model)(const char *path);
} ck_convert_opts;

/* Convert in to out; summary gets one line for the user. -1 with
 * gs_error() ("IN: problem") on failure; nothing is left at out then. */
int ck_convert(const char *in, const char *out, const ck_convert_opts *o, char *summary, size_t cap);

/* The companion's parameters in a decoded checkpoint.pkl (companion.c):
 * names (sorted), arrays (pointing into the pickle's bytes, or owned) and
 * the metadata pairs, all owned by *c. source_bytes, the pickle's size,
 * bounds the arrays' total (an array shared under many names). */
typedef struct {
    char **names;
    ck_array *arrays;
    int n;
    char *meta_keys[24], *meta_values[24];
    int n_meta;
    const char *arch;
    int optimizer_skipped;
} ck_companion;

int ck_companion_read(const pk_value *root, const char *source_name, size_t source_bytes, ck_companion *c);
void ck_companion_free(ck_companion *c);

#endif
