/* Causal ablations (what the paper could not measure): re-run a recorded
 * run's model over (a subset of) its windows with an intervention from
 * probes/, store the per-token NLL under it, and compare with the run's own
 * NLL on the same tokens.
 *
 * Interventions (`what`):
 *   none                     a hook that changes nothing (a control: NLL equals the baseline)
 *   mean-direction:subtract  s <- s - s_bar (s_bar: the run's geometry mean)
 *   mean-direction:project   remove the component of s along s_bar's direction
 *     scope decode: only the state that is decoded; scope carry: the state
 *     carried to the next step too (hook s_pred)
 *   heads:0,3,7              zero the memory read of these heads in every layer
 *   pool:fast | pool:slow    the heads of that pool (the run's retention analysis)
 *     heads_at before-norm: zeroed before the read's joint output RMSNorm,
 *     which then rescales the surviving heads up; after-norm: zeroed at the
 *     norm's output, the surviving heads exactly as in the unablated model
 * Reported: perplexity with and without, the change, and the NLL change
 * overall and by position bucket (position 1 alone, where the state is zero
 * and the prediction is the same for every intervention that keeps it zero;
 * then 2-16, 17-128, 129-512, 513+, counted from 1), each with a 95%
 * t-interval over documents (analyses/documents.h; windows when the
 * vocabulary has no BOS/EOS): windows of one document are not independent,
 * and at a handful of documents a bootstrap percentile interval is too
 * narrow (gs_cluster_t_interval in analyses/math/stats.h). */
#ifndef GS_ANALYSES_ABLATION_H
#define GS_ANALYSES_ABLATION_H

#include <stdint.h>

#include "engine/model.h"
#include "store/store.h"

#define ABLATION_BUCKETS 5

/* Matched random controls (same kind, same size, random content):
 * directions get both isotropic directions and directions drawn from the
 * recorded states' spread (a state minus s_bar), scaled to ||s_bar||; head
 * sets get random head sets of the same size. */
enum { GS_CONTROL_ISOTROPIC = 0, GS_CONTROL_STATES = 1, GS_CONTROL_HEADS = 2, GS_CONTROL_KINDS = 3 };
extern const char *const gs_control_names[GS_CONTROL_KINDS];
#define ABLATION_MAX_CONTROLS 64

typedef struct {
    int kind, n;                    /* draws run */
    double delta_nll[ABLATION_MAX_CONTROLS];
    double mean, sd, min, max;      /* of the draws' mean NLL change */
    double delta_ppl_mean;
    double excess, excess_lo, excess_hi; /* effect - mean control effect, 95% t over documents (paired) */
} gs_ablation_control;

typedef struct {
    const char *what;
    const char *scope;       /* "decode" | "carry" (mean-direction only) */
    const char *heads_at;    /* "before-norm" (default) | "after-norm" (heads and pools only) */
    int64_t windows;         /* first K windows of the run; <= 0: all */
    int batch;               /* <= 0: the run's recording batch and its batch layout: the first
                                K windows run in the recording's full batches, so `none` gives
                                the recorded NLL bit for bit */
    uint64_t seed;           /* the controls' random draws */
    int controls;            /* draws per control kind (default 3; 0: none; at most 64) */
    const char *model_path;  /* NULL: the run's model file (its sha256 must match) */
    const char *device;      /* NULL or "cpu": the CPU engine; "cuda", "cuda:N" */
    const char *precision;   /* CUDA GEMM precision (NULL: auto) */
    const char *code_version;
} gs_ablate_opts;

typedef struct {
    char what[128], scope[16], heads_at[16];
    int64_t n_windows, n_tokens;
    int64_t n_units;          /* independent units of the intervals: documents, or windows */
    int by_document;          /* 1: units are documents; 0: the vocabulary has no BOS/EOS */
    double ppl_base, ppl_ablated, delta_ppl, ci_low, ci_high; /* ci: of delta_ppl (delta method) */
    double delta_nll, delta_nll_lo, delta_nll_hi;               /* mean over tokens, its 95% interval */
    double bucket_delta_nll[ABLATION_BUCKETS], bucket_lo[ABLATION_BUCKETS], bucket_hi[ABLATION_BUCKETS];
    int64_t bucket_tokens[ABLATION_BUCKETS];
    int n_controls;           /* control kinds run (0, 1 heads, or 2 directions) */
    gs_ablation_control control[2];
    int64_t analysis_id;
} gs_ablation;

void gs_ablate_opts_default(gs_ablate_opts *o);
extern const char *const gs_ablation_bucket_names[ABLATION_BUCKETS];
/* Run one intervention and store it (analysis "ablation" with settings
 * {what, scope, windows, seed}; re-running the same replaces it). */
int gs_ablate(store *st, int64_t run_id, const gs_ablate_opts *o, gs_ablation *out);
/* The run's memory heads (for each-head loops); -1 with gs_error() when the
 * run's model has none. */
int gs_ablation_heads(store *st, int64_t run_id);

#endif
