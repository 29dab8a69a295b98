/* One head's gated delta rule for one token, the CPU engine's inner loop
 * (engine/arch/gdn/gdn_cpu.c), apart so that tests/unit/test_gdn_delta.c can
 * hold it against the recurrence written out step by step. */
#ifndef GS_ENGINE_ARCH_GDN_DELTA_H
#define GS_ENGINE_ARCH_GDN_DELTA_H

/* fla's naive_recurrent_gated_delta_rule for one token of one head, S being
 * d_k x d_v row-major (row i is key dimension i):
 *   S <- alpha S;  u = beta (v - S^T k);  S <- S + k u^T;  o = S^T q.
 * u (d_v floats) is scratch and holds beta (v - (alpha S)^T k) after; o
 * (d_v) receives the read of the new state, or is skipped when o is NULL
 * (a hook on the state reads S after the write instead). k, v and q must
 * not alias S, u or o. */
void gdn_delta_step(float *S, const float *k, const float *v, const float *q, float alpha, float beta, int dk, int dv,
                    float *u, float *o);

#endif
