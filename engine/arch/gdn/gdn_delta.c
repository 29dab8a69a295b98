/* The delta rule in two passes over S where the recurrence takes four
 * (decay, S^T k, the rank-1 update, S^T q, each a sweep of d_k x d_v
 * floats): at the paper's shape a sequence's states are 7.8 MB, more than a
 * core's L2, so at batch >= 64 every sweep is a trip to memory.
 *
 * u needs all of (alpha S)^T k before any row may change, so pass 1 only
 * reads S. Pass 2 writes each row as alpha S_i + k_i u and, while the new
 * row is in registers, adds q_i times it to o: the read of the new state
 * costs no sweep of its own. Every value is rounded as the recurrence
 * rounds it (alpha S_ij is formed and rounded before k_i multiplies it, the
 * sums run over i in order), so the result equals the four-sweep
 * recurrence bit for bit (tests/unit/test_gdn_delta.c); the algebraic
 * shortcut o = alpha S^T q + u (k . q) would save nothing more (pass 2
 * sweeps S anyway) and would round differently. */
#include "engine/arch/gdn/gdn_delta.h"

#include "engine/cpu/target_clones.h"

GS_HOT void gdn_delta_step(float *restrict S, const float *restrict k, const float *restrict v,
                           const float *restrict q, float alpha, float beta, int dk, int dv, float *restrict u,
                           float *restrict o) {
    for (int j = 0; j < dv; j++) u[j] = 0.0f;
    for (int i = 0; i < dk; i++) {
        const float *Si = S + (size_t)i * dv;
        float ki = k[i];
        for (int j = 0; j < dv; j++) u[j] += ki * (alpha * Si[j]);
    }
    for (int j = 0; j < dv; j++) u[j] = beta * (v[j] - u[j]);
    if (!o) {
        for (int i = 0; i < dk; i++) {
            float *Si = S + (size_t)i * dv, ki = k[i];
            for (int j = 0; j < dv; j++) Si[j] = alpha * Si[j] + ki * u[j];
        }
        return;
    }
    for (int j = 0; j < dv; j++) o[j] = 0.0f;
    for (int i = 0; i < dk; i++) {
        float *Si = S + (size_t)i * dv, ki = k[i], qi = q[i];
        for (int j = 0; j < dv; j++) {
            float s = alpha * Si[j] + ki * u[j];
            Si[j] = s;
            o[j] += qi * s;
        }
    }
}
