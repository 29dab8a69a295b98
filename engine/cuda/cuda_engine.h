/* The CUDA step behind gs_engine (engine.c dispatches to it; nothing else
 * calls it). The step itself (engine/arch/gpn/gpn_cuda.cu, cuda_kernels.cu) is
 * built when nvcc is found as a plugin, gpnscope_cuda.so, which engine/cuda/cuda_loader.c
 * opens on first use: cuBLAS and the CUDA runtime (hundreds of MB) are slow to
 * load, and a CPU run should not pay that. Without the plugin every call
 * fails with a message that says why.
 *
 * The weights live on the device (float32, plus a BF16 copy in bf16 mode),
 * as do the state, the previous state and every sequence's memory. A step
 * runs on one stream; outputs land in pinned host buffers. A hook on a point
 * costs one round trip of that tensor (device -> host, the hook, host ->
 * device), so interventions work unchanged; capture for recording goes
 * through the outputs instead (gs_engine_set_outputs), where the row
 * selection is applied on the device. */
#ifndef GS_ENGINE_CUDA_ENGINE_H
#define GS_ENGINE_CUDA_ENGINE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/hooks.h"
#include "engine/model.h"

typedef struct gpn_cuda gpn_cuda;

/* The engine's hook call: the tensor of point p (layer) for B rows of width
 * floats, in host memory, which the hook may change. */
typedef void (*gpn_cuda_fire_fn)(void *ctx, gs_hook_point p, int layer, float *host, int B, int width);

/* 1 when this build has CUDA and a device is usable; else 0 with the reason
 * in why (for tests and --help to print). */
int gpn_cuda_usable(char *why, size_t why_size);

gpn_cuda *gpn_cuda_new(const gs_model *m, int max_batch, int device, gs_precision precision);
void gpn_cuda_free(gpn_cuda *g);
void gpn_cuda_reset_seq(gpn_cuda *g, int b);
/* One step for the first B sequences (tokens already checked). hook_mask has
 * bit p set for every point with a hook; fire is called for those. Fills out
 * with pinned host pointers holding what `outputs` asks for. */
int gpn_cuda_step(gpn_cuda *g, const int32_t *tokens, int B, unsigned hook_mask, gpn_cuda_fire_fn fire, void *ctx,
                  int outputs, const unsigned char *rows, gs_step_out *out);
const char *gpn_cuda_name(const gpn_cuda *g);

/* The plugin's table of the functions above; gpnscope_cuda.so exports
 * gpn_cuda_plugin() returning it. `abi` guards against a plugin from another
 * build: it must equal GPN_CUDA_ABI, made of a version bumped on every change
 * to the table's functions and of the sizes of everything that crosses. */
#define GPN_CUDA_API_VERSION 2
#define GPN_CUDA_ABI                                                                                               \
    ((long)GPN_CUDA_API_VERSION * 1000000007L +                                                                    \
     (long)(sizeof(gs_model) + 3 * sizeof(gs_step_out) + 5 * sizeof(gs_config) + 7 * sizeof(gs_tensor_spec) + \
            11 * sizeof(gs_hook_event)) * 1009L +                                                                 \
     (long)GS_MAX_TENSORS * 31L + (long)GS_HOOK_COUNT)
typedef struct {
    long abi;
    int (*usable)(char *why, size_t why_size);
    /* the model's tensor layout comes from the loader: the plugin links none of engine/ */
    gpn_cuda *(*create)(const gs_model *m, const gs_tensor_spec *specs, int n_specs, int max_batch, int device,
                        gs_precision precision);
    void (*destroy)(gpn_cuda *g);
    void (*reset_seq)(gpn_cuda *g, int b);
    int (*step)(gpn_cuda *g, const int32_t *tokens, int B, unsigned hook_mask, gpn_cuda_fire_fn fire, void *ctx,
                int outputs, const unsigned char *rows, gs_step_out *out);
    const char *(*name)(const gpn_cuda *g);
    const char *(*error)(void); /* the plugin's own last error message */
} gpn_cuda_api;
typedef const gpn_cuda_api *(*gpn_cuda_plugin_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
