/* The gated delta rule of one head over T tokens in chunks of GDN_CHUNK, the
 * form fla runs for prefill (chunk_gated_delta_rule): within a chunk the
 * state S is read once and written once and the rest are matrix products,
 * where the recurrence (gdn_delta.h) sweeps S at every token. The window
 * path of the CPU engine (gdn_window.c) runs it per (sequence, head);
 * tests/unit/test_gdn_chunk.c holds it against the recurrence. */
#ifndef GS_ENGINE_ARCH_GDN_CHUNK_H
#define GS_ENGINE_ARCH_GDN_CHUNK_H

#include <stddef.h>

#define GDN_CHUNK 64

/* The inputs of token t are rows of strided arrays: q_t = q + t*ldq (d_k,
 * already L2-normed and scaled by 1/sqrt(d_k)), k_t = k + t*ldk (d_k,
 * L2-normed), v_t = v + t*ldv (d_v); the log decay g_t = log alpha_t (<= 0)
 * at g[t*ldg] and the write strength beta_t at beta[t*ldg]. S (d_k x d_v,
 * row-major) holds the state before token 0 and receives the state after
 * token T-1; o_t = S_t^T q_t goes to o + t*ldo (d_v). The same as T calls of
 * gdn_delta_step with alpha_t = exp(g_t), up to rounding. */
typedef struct {
    const float *q, *k, *v, *g, *beta;
    int ldq, ldk, ldv, ldg;
    float *o;
    int ldo;
} gdn_chunk_io;

/* floats of scratch gdn_chunk_run needs for heads of d_k x d_v */
size_t gdn_chunk_scratch_floats(int dk, int dv);
void gdn_chunk_run(float *S, const gdn_chunk_io *io, int T, int dk, int dv, float *scratch);

#endif
