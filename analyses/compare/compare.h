/* Runs side by side (docs/comparison.md): the paper's three structures, the
 * default-token direction, the content horizon and the fast/slow memory
 * pools, measured in one way on every selected (store, run, site) and judged
 * by the findings' rules (analyses/findings.h), each number with a bootstrap
 * interval over windows.
 *
 * A row is one state site of one run: GPN's state, or one layer's residual
 * stream of a layered model (one row per layer). Its numbers come from the
 * analyses' own code: geometry, the default direction and retention through
 * gs_analyze_store (nothing is written to the store), the horizons through
 * gs_horizons_run with per-window sums kept. Retention (the pools) runs where
 * the run recorded a decay site of the row's layer (GPN+M's mem.alpha beside
 * its state, GDN's blocks.L.attn.alpha beside blocks.L.hook_resid_*).
 *
 * The bootstrap resamples whole windows with replacement (seeded): the norm
 * ratio ||sum s|| / sum ||s|| and the 8-batch cosine are the default
 * direction's own intervals (analyses/state/default_dir.h), the lag cosines and
 * h_0.02 come from each window's lag sums (the pooled curve is sum of sums /
 * sum of counts, so a resample is a reweighting; c_1 and h_0.02 through
 * gs_horizons_intervals, as analyze). The verdicts are decided on these
 * intervals (analyses/findings.h): one that straddles its threshold makes
 * the verdict inconclusive. The pools' likelihood ratio carries retention's
 * own bootstrap (analyses/state/pools.h).
 *
 * A row reads the store positions below its model's training length when its
 * windows are longer (config.json's data.seq_len beside the checkpoint; past
 * it a model extrapolates), the states and the decays alike; all_positions
 * reads every one. Each row keeps which, and its run's perplexity by position.
 *
 * Runs are comparable when they were recorded on the same token windows:
 * the same window ids with the same token ids at every position (runs
 * without token rows: the same corpus sha256 and the same window offsets
 * and lengths). */
#ifndef GS_ANALYSES_COMPARE_H
#define GS_ANALYSES_COMPARE_H

#include <stdint.h>

#include "analyses/analyze.h"
#include "analyses/findings.h"
#include "analyses/state/horizons.h"

/* One operand: STORE[:RUN[:SITE]]. RUN: a run id, empty (or absent) for the
 * newest complete run; SITE: a state site name or a pattern with * and ?
 * (blocks.*.hook_resid_post), absent for `sites` of the options, else the
 * run's state site. */
typedef struct {
    char store_path[4096];
    int64_t run;        /* 0: newest complete */
    char site[256];     /* "": the default */
} gs_compare_operand;

/* Parse "STORE[:RUN[:SITE]]" from the right: a last field of digits is RUN;
 * else the last field is SITE, and the one before it RUN when it is digits
 * or empty (STORE::SITE: the newest run); STORE:SITE works too. Site names
 * have no colon. 0, or -1 with gs_error(). */
int gs_compare_parse_operand(const char *text, gs_compare_operand *out);

typedef struct {
    const char *sites;      /* a comma-separated list of site patterns for operands without SITE; NULL: the state site */
    int allow_different_windows;
    int boot;               /* bootstrap resamples over windows (200); 0: no intervals */
    uint64_t seed;          /* 1 */
    int64_t max_states;     /* 16384 per row, as analyze; <= 0: all */
    int all_positions;      /* 0: each row reads store positions below its model's training length (config.json's
                             * data.seq_len beside the checkpoint) when its windows are longer; 1: every position */
    /* progress: called before each row with its label (NULL: silent) */
    void (*progress)(void *ctx, int row, int n_rows, const char *label);
    void *progress_ctx;
} gs_compare_opts;

void gs_compare_opts_default(gs_compare_opts *o);

#define GS_CMP_MAX_BINS 24

/* a number with its 95% percentile bootstrap interval (lo, hi NaN without one) */
typedef gs_finding_num gs_cmp_num;

typedef struct {
    char label[400];        /* "STORE:RUN:SITE" as shown in the table */
    char store_path[4096];
    int64_t run;
    char site[64], kind[64]; /* the site and its states.kind */
    int layer;              /* -1: not per layer */
    char arch[32];          /* the run's model arch ("" unknown); as wide as store_run_info.model_arch */
    char model[128];        /* the model's name for figures: its folder (models/tpp-small/model.safetensors ->
                             * "tpp-small"), else its file name without .safetensors; "" unknown */
    char decay_site[64];    /* "" when the row has none */
    int64_t n_states, n_windows;
    int d;
    /* the positions read: store positions < max_positions (0: all of the recorded_len), and why */
    int trained_seq_len;    /* config.json's data.seq_len beside the run's model; 0: unknown */
    int recorded_len;       /* the run's window length */
    int max_positions;
    char positions_note[256];
    /* the run's perplexity by position (its tokens' NLL): bins [bin_from[i], bin_to[i]) of 64, 128, 256, ...
     * positions; and below / from the training length (NaN when unknown or no token there) */
    int n_bins;
    int bin_from[GS_CMP_MAX_BINS], bin_to[GS_CMP_MAX_BINS];
    double bin_ppl[GS_CMP_MAX_BINS];
    int64_t bin_tokens[GS_CMP_MAX_BINS];
    double ppl_below_training, ppl_from_training;
    /* 1. default-token direction: the findings' three tests (each with its interval over windows) */
    gs_cmp_num norm_ratio, batch_cos; /* batch_cos: the deciding grouping's, one of the two below */
    /* the 8-batch cosine over consecutive windows and over batches that share no document (value NaN: not
     * possible), which decides (batch_by_document) and why, in one line (issue 39.2) */
    gs_cmp_num batch_cos_consecutive, batch_cos_documents;
    int batch_by_document;
    char batch_grouping_note[200];
    gs_cmp_num top_sv_cos;
    finding_verdict default_verdict;
    char default_why[320], horizon_why[320]; /* the rules' reasons (gs_finding_default_rule, _horizon_rule) */
    /* 2. content horizon: raw and centered lag cosines at the lags analyze reports (the first lag, the
     * readable lag nearest 1500 for raw, nearest 256 for centered; 0: no lag with enough pairs) */
    int c1_lag, raw_far_lag, centered_256_lag;
    gs_cmp_num raw_c1, raw_far, centered_c1, centered_256, h_002;
    int h_002_censored;
    finding_verdict horizon_verdict;
    /* 3. memory pools (has_pools: retention ran) */
    int has_pools;
    finding_verdict pools_verdict;
    char pools_note[512];   /* why not measured */
    /* the run's controls (gpnscope controls; issue 39.3), each measured as this row is, without intervals:
     * the numbers and verdicts the rules read beside the row's (none measured: no controls) */
    gs_finding_controls default_ctl, horizon_ctl, pools_ctl;
    /* what the rows were computed from: analyze's results in memory and the horizons with per-window sums */
    gs_analysis an;
    gs_horizons hz;
} gs_compare_row;

typedef struct {
    int n_rows;
    gs_compare_row *rows;
    int windows_same;          /* 1: every run was recorded on the same windows */
    char windows_note[1024];   /* how they were compared, or how they differ */
    int boot;
    uint64_t seed;
    int64_t max_states;
} gs_compare;

/* Resolve the operands into rows, check the windows, measure every row.
 * 0, or -1 with gs_error() (a store or run that is not there, a site
 * pattern that matches nothing, runs on different windows without
 * allow_different_windows: one line naming the two runs and how they differ). */
int gs_compare_run(const gs_compare_operand *ops, int n_ops, const gs_compare_opts *o, gs_compare *out);
void gs_compare_free(gs_compare *c);
/* A row's default-direction and horizon verdicts and their reasons from its
 * numbers (norm_ratio, batch_cos, top_sv_cos; centered_c1, h_002,
 * h_002_censored), by the findings' rules. */
void gs_compare_row_judge(gs_compare_row *r);

/* The table as JSON text (malloc'd): "rows" with every number and verdict;
 * with_curves adds each row's curves (explained variance, raw and centered
 * lag cosines with their pair counts, emergence, per-head retention under
 * both estimators), which the figures, report and notebook read. */
char *gs_compare_json(const gs_compare *c, int with_curves);
/* The table as text, one line per row and structure. */
void gs_compare_print(FILE *f, const gs_compare *c);
/* "0-63 9.12, 64-127 8.80, ... (below 512: 8.85, from 512 on: 8.53)": a row's perplexity by position */
void gs_compare_perplexity_text(const gs_compare_row *r, char *out, size_t size);

#endif
