/* Did training move the decays? (issue 18.5; docs/analyses.md, "Decays and
 * their initialisation"). A head's decay is alpha = exp(-A softplus(a.x + dt_bias))
 * with A = exp(A_log); its data-free time constant tau = 1 / (A softplus(dt_bias))
 * is what its parameters say before any input. The trainer keeps each head's
 * initial A_log and dt_bias in the checkpoint's metadata (init_write_A_log,
 * init_write_dt_bias); with them, the trained tau is compared with the
 * initial one head by head; without them, with the initialisation's
 * distribution (A ~ U(0, 16), softplus(dt_bias) = dt log-uniform in
 * [0.001, 0.1]: tau = 1 / (A dt)).
 *
 * Rule: training **moved** the decays when some head's tau changed by a factor
 * of 2 or more (|ln tau_trained - ln tau_init| >= ln 2) and the heads' order
 * changed (Spearman of tau_init and tau_trained < 0.9); otherwise it **barely
 * moved** them. The pool split was **already in the initialisation** when the
 * slow pool is exactly the heads with the largest initial tau. */
#ifndef GS_ANALYSES_DECAY_INIT_H
#define GS_ANALYSES_DECAY_INIT_H

#include "analyses/state/retention.h"
#include "engine/model.h"
#include "store/store.h"

#define GS_DECAY_INIT_MAX_HEADS 1024

typedef struct {
    int H;
    int has_init;              /* the checkpoint carried its initial values */
    double tau_trained[GS_DECAY_INIT_MAX_HEADS], tau_init[GS_DECAY_INIT_MAX_HEADS];
    double init_percentile[GS_DECAY_INIT_MAX_HEADS]; /* of tau_trained under the init distribution */
    double spearman, max_abs_dlog, median_abs_dlog; /* NaN without init values */
    int moved;                 /* the rule above; -1 without init values */
    char init_keys[80];        /* where the initial values came from, for the stored note */
} gs_decay_init;

/* From the model's decay tensors (roles GS_TENSOR_A_LOG, GS_TENSOR_DT_BIAS, in
 * spec order) and its checkpoint file's metadata: LAYER < 0 every decaying
 * head (GPN+M's one memory write), else only the heads of the tensors in group
 * "layer LAYER" (GDN: the layer whose decay site retention read). 1 when the
 * model has no decay tensors (nothing to say), 0 done, -1 error. */
int gs_decay_init_run(const gs_model *m, int layer, gs_decay_init *out);
/* The layer of a site named "blocks.L.…" (TransformerLens names), else -1. */
int gs_decay_init_site_layer(const char *site);
/* With a pool split of the same heads (pool[h] = 1 for the slow pool): 1 when
 * the slow pool is exactly the |slow| heads of largest tau_init, 0 when not,
 * -1 without init values. */
int gs_decay_init_split_in_init(const gs_decay_init *d, const int *pool);

struct gs_result_writer;
/* Through the retention analysis' begun writer (analyses/result_writer.h): scalars decays_init_known,
 * decays_init_spearman, decays_max_abs_dlog_tau, decays_median_abs_dlog_tau,
 * decays_moved, slow_pool_in_init (and _from_start), series tau_param,
 * tau_param_init, tau_param_init_percentile. */
void gs_decay_init_write(struct gs_result_writer *w, const gs_decay_init *d, const gs_retention *r);

#endif
