/* Findings: does a run show each of the paper's three structures? Each
 * verdict is a fixed rule over stored results (the newest analyses of the
 * run), stated with its numbers, so a report never claims more than the
 * numbers show. The rules (docs/analyses.md, "Findings"):
 *
 * 1. default-token direction: the mean state is large (||s_bar|| >= 0.25 of
 *    the mean norm), persistent (8-batch cosine >= 0.9, over batches that
 *    share no document when there are 16 documents, else over consecutive
 *    windows) and the top principal
 *    direction (|cos| with the top singular vector >= 0.9); its decoded
 *    distribution tracking unigram frequency (Spearman >= 0.2) is reported
 *    beside it.
 * 2. content horizon: centered content at lag 1 (c_1 >= 0.05) that decays to
 *    below 0.02 inside the window, at a lag of tens to hundreds of tokens
 *    (10 <= k < 1000): the paper's "tens of tokens".
 * Each test is decided on its statistic's 95% bootstrap interval over
 * windows where it has one (the default direction's three all have one,
 * from 16 windows on): passed when the interval clears the threshold,
 * failed when it lies below, and an interval that straddles the threshold
 * makes the finding inconclusive ("8-batch cosine 0.898 [0.871, 0.921]
 * straddles 0.9"), unless another test fails outright (then absent). A test
 * without an interval is decided on its value (two-way).
 * 3. fast and slow memory pools (GPN+M): the three-way pool verdict of
 *    analyses/state/pools.h (the likelihood ratio of two normal pools of log
 *    1/e times against one, against five one-pool null families, with the
 *    Monte Carlo error), under both retention estimators: present when present
 *    under both, inconclusive when present under one only or inconclusive
 *    under both, else not demonstrated, read beside the rule's power on the
 *    paper's pools (issue 39.5). */
#ifndef GS_ANALYSES_FINDINGS_H
#define GS_ANALYSES_FINDINGS_H

#include <stdio.h>

#include "analyses/state/pools.h"
#include "store/store.h"

typedef enum {
    FINDING_NOT_MEASURED = -1,
    FINDING_ABSENT = 0,
    FINDING_PRESENT = 1,
    FINDING_INCONCLUSIVE = 3, /* a deciding statistic's interval straddles its threshold; the pools' middle verdict */
} finding_verdict;

/* a statistic with its 95% bootstrap interval over windows (lo, hi NaN: none) */
typedef struct { double value, lo, hi; } gs_finding_num;

/* Controls (issue 39.3; docs/controls.md): the same statistics of a run's
 * controls (store_control_names: untrained, shuffled), in the rule's test
 * order (default: norm ratio, 8-batch cosine, |cos| top SV; horizon: c_1,
 * h_0.02, h_0.02), point values. Each control is judged by the rule itself
 * (its verdict returned in verdict[]); an untrained control that passes it
 * (present or inconclusive) raises each of the rule's lower bounds to its own
 * value, so the run is present only when it clears what an untrained model
 * reads as well as the threshold. The shuffled control is read beside it:
 * it keeps the unigram counts and the memory, so it says whether a
 * structure needs the text's order (docs/controls.md). */
typedef struct {
    int measured[2];  /* control k was recorded and analyzed */
    int64_t run[2];
    double x[2][3];
    int inside[2];    /* the horizon: the control's h_0.02 was reached inside its window */
    finding_verdict verdict[2];
} gs_finding_controls;
typedef struct {
    finding_verdict verdict;
    gs_finding_controls controls; /* what the run's controls read (none measured: no controls) */
    char text[2048]; /* one sentence with the numbers (the pools' reaches ~1100 characters with 15 heads) */
    char brief[400]; /* the verdict and the numbers it rests on against the rule's thresholds: one short line */
} finding;

/* The fewest windows a verdict's window-bootstrap interval is read from
 * (issue 38.3): with W windows a 95% percentile interval covers less than
 * 95% (the t quantile with W - 1 degrees of freedom, which a percentile
 * bootstrap's ignores, is 2.13 at W = 16 against 1.96, 2.36 at 8, 12.7 at
 * 2), and the default direction's 8 batches need 2 windows each. A verdict
 * from fewer carries "; N windows (16 needed)". */
#define GS_FINDING_MIN_WINDOWS 16
/* "N windows (16 needed)" when windows < GS_FINDING_MIN_WINDOWS, else "": the
 * words analyze's verdicts and compare's rows both use; returns out */
const char *gs_finding_few_windows(int64_t windows, char *out, size_t size);

/* "present", "absent", "inconclusive", "not measured" */
const char *gs_finding_word(finding_verdict v);
/* the pools' words, which are the pool verdict's (analyses/state/pools.h): "not demonstrated" where others say
 * "absent" */
const char *gs_finding_pools_word(finding_verdict v);
/* The stored scalar of a verdict: 1 present, 0.25 inconclusive, 0 absent (not demonstrated); NaN not measured. */
double gs_finding_scalar(finding_verdict v);

typedef struct {
    finding default_direction, content_horizon, memory_pools;
    /* NULL for a language model; else what the run's model is instead (the
     * family's not_lm, "an MLP-LDRU sequence classifier"): a classifier has
     * no token to default to, so the first finding is printed as the
     * persistent mean direction it measures */
    const char *not_lm;
} gs_findings;

/* The rules above on their numbers, for callers that hold the results in
 * memory (compare): the default direction from ||s_bar|| / mean ||s||, the
 * 8-batch cosine and |cos| with the top singular vector; the content horizon
 * from c_1, whether h_0.02 was reached inside the window, and h_0.02; the
 * pools from the two estimators' three-way verdicts (above). A NaN value
 * fails its test. why (may be NULL) gets the reason, one short line: every
 * test when present, the straddling ones when inconclusive, else the failed
 * ones ("8-batch cosine 0.898 [0.871, 0.921] straddles 0.9"; for the horizon
 * "h_0.02 3.5 [3.1, 3.9] tokens, shorter than the rule's 10 tokens", "no
 * decay below 0.02 inside the window: h_0.02 > 511.0 tokens"). */
finding_verdict gs_finding_default_rule(gs_finding_num norm_ratio, gs_finding_num batch_cos, gs_finding_num top_sv_abs_cos,
                                        char *why, size_t size);
/* The same with the 8-batch cosine over batches that share no document
 * when by_document (its reason then says "8-batch cosine over documents"). */
finding_verdict gs_finding_default_rule_by(gs_finding_num norm_ratio, gs_finding_num batch_cos, int by_document,
                                           gs_finding_num top_sv_abs_cos, char *why, size_t size);
finding_verdict gs_finding_horizon_rule(gs_finding_num c1, int h002_inside, gs_finding_num h002, char *why, size_t size);

finding_verdict gs_finding_default_rule_ctl(gs_finding_num norm_ratio, gs_finding_num batch_cos, int by_document,
                                            gs_finding_num top_sv_abs_cos, gs_finding_controls *ctl, char *why,
                                            size_t size);
finding_verdict gs_finding_horizon_rule_ctl(gs_finding_num c1, int h002_inside, gs_finding_num h002,
                                            gs_finding_controls *ctl, char *why, size_t size);
finding_verdict gs_finding_pools_rule(gs_pool_verdict from_start, gs_pool_verdict all_starts);

/* A rule's controls as JSON: {"untrained": {"run", "verdict", "decides", one number per test}, ...};
 * which: 0 default direction, 1 content horizon, 2 pools. NULL when no control was measured. */
struct cJSON *gs_finding_controls_json(const gs_finding_controls *ctl, int which);

/* Judge a run from its stored analyses (gpnscope analyze first). */
int gs_findings_compute(store *st, int64_t run_id, gs_findings *out);
/* Store them as analysis "findings": scalars default_direction,
 * content_horizon and memory_pools (gs_finding_scalar: 1 present, 0.25
 * inconclusive, 0 absent; not measured ones are left out)
 * with the sentence as the scalar's note. */
int gs_findings_write(store *st, int64_t run_id, const gs_findings *f, const char *code_version);
/* Each finding as its brief line, the whole sentence wrapped under it. */
void gs_findings_print(FILE *out, const gs_findings *f);

#endif
