/* The instrumented inference engine: B sequences advance in lockstep, one
 * token each per step, as the model's family computes its step. The family
 * table (engine/arch/family.h) gives each model a backend per device behind
 * one function table (engine/backend.h). For GPN / GPN+M (docs/gpn-model.md)
 * the CPU backend runs every projection as one SGEMM over the batch and the
 * memory write and read as per-sequence loops over heads; the CUDA backend
 * (engine/cuda_*.cu, docs/cuda.md) runs cuBLAS GEMMs and custom kernels, with
 * the same hook points and outputs. State and memory are float32. */
#ifndef GS_ENGINE_ENGINE_H
#define GS_ENGINE_ENGINE_H

#include <stdint.h>

#include "engine/hooks.h"
#include "engine/model.h"

typedef struct gs_engine gs_engine;

/* Outputs of the last step, B rows each (pointers stay valid until the next step). */
typedef struct {
    const float *nll, *entropy;   /* B */
    const int32_t *top1;          /* B */
    const float *s_pred, *s_ground; /* B x d */
    const float *logits;          /* B x V */
    const float *alpha, *beta, *mem_norm; /* B x H (NULL for GPN) */
} gs_step_out;

/* Where the engine runs and, on CUDA, in which precision its GEMMs run. */
typedef enum { GS_DEVICE_CPU = 0, GS_DEVICE_CUDA = 1 } gs_device_kind;
typedef enum {
    GS_PREC_AUTO = 0, /* bf16 for a BF16/F16 checkpoint, else f32 (the CPU is always f32) */
    GS_PREC_F32,
    GS_PREC_TF32,     /* CUDA: float32 data, TF32 tensor-core GEMMs */
    GS_PREC_BF16      /* CUDA: BF16 weights and GEMM inputs, float32 accumulation and state */
} gs_precision;
typedef struct {
    gs_device_kind kind;
    int index;           /* CUDA device number */
    gs_precision precision;
} gs_device;

/* Parse "cpu", "cuda" or "cuda:N", and "auto", "f32", "tf32", "bf16" (precision
 * may be NULL: auto). Returns 0, or -1 with a message naming the bad value. */
int gs_device_parse(const char *device, const char *precision, gs_device *out);

/* A CPU engine. */
gs_engine *gs_engine_new(const gs_model *m, int max_batch);
/* An engine on the given device; NULL with gs_error() when it cannot run there
 * (no CUDA in this build, no device, not enough device memory). */
gs_engine *gs_engine_new_on(const gs_model *m, int max_batch, const gs_device *dev);
/* "cpu" or e.g. "cuda:0 NVIDIA H200 (bf16)" */
const char *gs_engine_device_name(const gs_engine *e);
void gs_engine_free(gs_engine *e);
/* Reset every sequence / sequence b to the zero state: s = prev = 0, M = 0
 * (the next write's keys become those of a zero prev, docs/engine.md). */
void gs_engine_reset(gs_engine *e);
void gs_engine_reset_seq(gs_engine *e, int b);
/* Advance the first B sequences by one token each. Returns 0, or -1 with
 * gs_error() set (token id out of range, B too large). */
int gs_engine_step(gs_engine *e, const int32_t *tokens, int B);
/* Advance the first B sequences by T tokens each, tokens[b * T + t] the t-th
 * of sequence b, and write nll[b * T + t], the NLL of that token as step
 * would report it (NaN where the family predicts no token: a sequence's
 * first from the zero state). Every carried state ends as T steps would
 * leave it (up to rounding: the window's products sum in another order), so
 * steps and windows may follow one another; gs_engine_out and the sites
 * are not updated. For a backend with a window path (gs_engine_has_window:
 * the CPU engines of GDN and the Transformer++, docs/engine.md), which runs
 * whole windows as products of B x T rows. Returns 0, or -1 with gs_error() (no window path, a hook set,
 * B out of range, T < 1, a token outside the vocabulary). */
int gs_engine_window(gs_engine *e, const int32_t *tokens, int B, int T, float *nll);
int gs_engine_has_window(const gs_engine *e);
gs_step_out gs_engine_out(const gs_engine *e);
/* The B rows of a site (engine/arch/family.h: not per layer) after the last
 * step, or NULL where the backend did not keep it: read those through a hook
 * (probes/). On CUDA only what gs_engine_set_outputs asked for is kept. */
const float *gs_engine_site(const gs_engine *e, gs_hook_point p);
/* What gs_engine_out must hold after each step beyond nll, entropy, top1,
 * alpha, beta and mem_norm (always there). The CPU engine always has
 * everything; the CUDA engine copies only what is asked to the host, and only
 * the rows b with rows[b] != 0 of the states (rows NULL: every row; the array
 * is read at each step, so the caller may change it between steps). */
#define GS_OUT_STATES 1 /* s_pred, s_ground */
#define GS_OUT_LOGITS 2
#define GS_OUT_ALL (GS_OUT_STATES | GS_OUT_LOGITS)
void gs_engine_set_outputs(gs_engine *e, int what, const unsigned char *rows);
void gs_engine_set_hook(gs_engine *e, gs_hook_point p, gs_hook_fn fn, void *ctx);
const gs_model *gs_engine_model(const gs_engine *e);
/* The (k, n) of every GEMM of one step, in the engine's order (M is the
 * batch): what benchmarks measure a GEMM-only ceiling on. Returns the count. */
typedef struct { int k, n; } gs_gemm_shape;
#define GS_MAX_STEP_GEMMS (8 + 6 * GS_MAX_LAYERS)
int gs_step_gemms(const gs_config *c, gs_gemm_shape *s);
int gs_engine_max_batch(const gs_engine *e);

#endif
