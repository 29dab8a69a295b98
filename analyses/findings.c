#include "analyses/findings.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/registry.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"
#include "analyses/state/horizons_keys.h"

static double scalar(store *st, int64_t an, const char *key) {
    double v = NAN;
    if (an > 0 && store_analysis_get_scalar(st, an, key, &v) != 0) v = NAN;
    return v;
}

const char *gs_finding_word(finding_verdict v) {
    switch (v) {
    case FINDING_PRESENT: return "present";
    case FINDING_ABSENT: return "absent";
    case FINDING_INCONCLUSIVE: return "inconclusive";
    default: return "not measured";
    }
}

const char *gs_finding_pools_word(finding_verdict v) {
    return v == FINDING_ABSENT ? "not demonstrated" : gs_finding_word(v);
}

double gs_finding_scalar(finding_verdict v) {
    return v == FINDING_PRESENT ? 1.0 : v == FINDING_INCONCLUSIVE ? 0.25 : v == FINDING_ABSENT ? 0.0 : NAN;
}

/* One test of a rule: x >= rule (above) or x < rule (!above), with x's unit and digits for the reason. */
typedef struct {
    const char *what;
    gs_finding_num x;
    double rule;
    int above, digits;
    const char *unit;
    const char *miss; /* the reason's words for a failed test ("shorter than the rule's 10 tokens"); NULL: "< 10" */
    const char *by;   /* the control whose value the threshold was raised to; NULL: the rule's own */
} rule_test;

enum { TEST_FAILED = 0, TEST_PASSED = 1, TEST_STRADDLES = 2 };

/* decided on the interval when there is one: wholly on one side, or straddling the threshold */
static int test_outcome(const rule_test *t) {
    const gs_finding_num *x = &t->x;
    if (isnan(x->value)) return TEST_FAILED;
    if (isnan(x->lo) || isnan(x->hi)) return (x->value >= t->rule) == t->above ? TEST_PASSED : TEST_FAILED;
    const int lo_passes = (x->lo >= t->rule) == t->above, hi_passes = (x->hi >= t->rule) == t->above;
    return lo_passes && hi_passes ? TEST_PASSED : !lo_passes && !hi_passes ? TEST_FAILED : TEST_STRADDLES;
}

/* "8-batch cosine 0.898 [0.871, 0.921] straddles 0.9" after buf's first o characters; the new length */
static size_t put_test(char *buf, size_t size, size_t o, const rule_test *t, int outcome) {
    const gs_finding_num *x = &t->x;
    const char *rel = outcome == TEST_STRADDLES ? "straddles" : (outcome == TEST_PASSED) == t->above ? ">=" : "<";
    char iv[96] = "", cmp[96];
    if (!isnan(x->lo) && !isnan(x->hi)) snprintf(iv, sizeof iv, " [%.*f, %.*f]", t->digits, x->lo, t->digits, x->hi);
    if (t->by) snprintf(cmp, sizeof cmp, " %s %.*f (%s)", rel, t->digits, t->rule, t->by);
    else if (outcome == TEST_FAILED && t->miss) snprintf(cmp, sizeof cmp, ", %s", t->miss);
    else snprintf(cmp, sizeof cmp, " %s %g", rel, t->rule);
    return o + (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s %.*f%s%s%s", o ? ", " : "", t->what, t->digits,
                                x->value, iv, t->unit, cmp);
}

/* Every test when present, the straddling ones when inconclusive, else the failed ones, into why. */
static finding_verdict judge_tests(const rule_test *t, int n, char *why, size_t size) {
    int outcome[8], failed = 0, straddles = 0;
    for (int i = 0; i < n; i++) {
        outcome[i] = test_outcome(&t[i]);
        failed += outcome[i] == TEST_FAILED;
        straddles += outcome[i] == TEST_STRADDLES;
    }
    const finding_verdict v = failed ? FINDING_ABSENT : straddles ? FINDING_INCONCLUSIVE : FINDING_PRESENT;
    const int show = failed ? TEST_FAILED : straddles ? TEST_STRADDLES : TEST_PASSED;
    size_t o = 0;
    if (why && size) why[0] = 0;
    for (int i = 0; why && i < n; i++)
        if (outcome[i] == show) o = put_test(why, size, o, &t[i], outcome[i]);
    return v;
}

/* An untrained control that passes the rule (present or inconclusive) raises each lower bound to its
 * own value (issue 39.3): the run must clear it as well as the threshold. The shuffled control is read
 * beside, not required to fail: shuffling keeps the unigram counts a default direction tracks and the
 * memory a horizon measures, so passing there says the structure needs no word order, not that it is
 * an artefact (docs/controls.md). */
static void raise_to_controls(rule_test *t, int n, const gs_finding_controls *ctl) {
    for (int k = 0; ctl && k < 2; k++) {
        if (k != STORE_CONTROL_UNTRAINED || !ctl->measured[k] ||
            (ctl->verdict[k] != FINDING_PRESENT && ctl->verdict[k] != FINDING_INCONCLUSIVE))
            continue;
        for (int i = 0; i < n; i++)
            if (t[i].above && !isnan(ctl->x[k][i]) && ctl->x[k][i] > t[i].rule)
                t[i].rule = ctl->x[k][i], t[i].by = store_control_names[k];
    }
}

finding_verdict gs_finding_default_rule(gs_finding_num norm_ratio, gs_finding_num batch_cos, gs_finding_num top_sv_abs_cos,
                                        char *why, size_t size) {
    return gs_finding_default_rule_by(norm_ratio, batch_cos, 0, top_sv_abs_cos, why, size);
}

finding_verdict gs_finding_default_rule_by(gs_finding_num norm_ratio, gs_finding_num batch_cos, int by_document,
                                           gs_finding_num top_sv_abs_cos, char *why, size_t size) {
    return gs_finding_default_rule_ctl(norm_ratio, batch_cos, by_document, top_sv_abs_cos, NULL, why, size);
}

finding_verdict gs_finding_default_rule_ctl(gs_finding_num norm_ratio, gs_finding_num batch_cos, int by_document,
                                            gs_finding_num top_sv_abs_cos, gs_finding_controls *ctl, char *why,
                                            size_t size) {
    rule_test t[] = {{"||s_bar|| / mean ||s||", norm_ratio, 0.25, 1, 3, "", NULL, NULL},
                     {by_document ? "8-batch cosine over documents" : "8-batch cosine", batch_cos, 0.9, 1, 3, "", NULL, NULL},
                     {"|cos| top SV", top_sv_abs_cos, 0.9, 1, 3, "", NULL, NULL}};
    for (int k = 0; ctl && k < 2; k++)
        if (ctl->measured[k])
            ctl->verdict[k] = gs_finding_default_rule_ctl((gs_finding_num){ctl->x[k][0], NAN, NAN},
                                                          (gs_finding_num){ctl->x[k][1], NAN, NAN}, by_document,
                                                          (gs_finding_num){ctl->x[k][2], NAN, NAN}, NULL, NULL, 0);
    raise_to_controls(t, 3, ctl);
    return judge_tests(t, 3, why, size);
}

finding_verdict gs_finding_horizon_rule(gs_finding_num c1, int h002_inside, gs_finding_num h002, char *why, size_t size) {
    return gs_finding_horizon_rule_ctl(c1, h002_inside, h002, NULL, why, size);
}

finding_verdict gs_finding_horizon_rule_ctl(gs_finding_num c1, int h002_inside, gs_finding_num h002,
                                            gs_finding_controls *ctl, char *why, size_t size) {
    rule_test t[] = {{"c_1", c1, 0.05, 1, 3, "", "no content at lag 1", NULL},
                     {"h_0.02", h002, 10, 1, 1, " tokens", "shorter than the rule's 10 tokens", NULL},
                     {"h_0.02", h002, 1000, 0, 1, " tokens", "beyond the rule's 1000 tokens", NULL}};
    for (int k = 0; ctl && k < 2; k++)
        if (ctl->measured[k])
            ctl->verdict[k] = gs_finding_horizon_rule_ctl((gs_finding_num){ctl->x[k][0], NAN, NAN}, ctl->inside[k],
                                                          (gs_finding_num){ctl->x[k][1], NAN, NAN}, NULL, NULL, 0);
    raise_to_controls(t, 3, ctl);
    if (h002_inside || test_outcome(&t[0]) == TEST_FAILED) return judge_tests(t, 3, why, size);
    if (why) snprintf(why, size, "no decay below 0.02 inside the window: h_0.02 > %.1f tokens", h002.value);
    return FINDING_ABSENT;
}

finding_verdict gs_finding_pools_rule(gs_pool_verdict from_start, gs_pool_verdict all_starts) {
    /* ranks 0 not demonstrated, 1 inconclusive, 2 present: both present; one present, or both inconclusive */
    const int sum = (int)from_start + (int)all_starts;
    return sum == 4 ? FINDING_PRESENT : sum >= 2 ? FINDING_INCONCLUSIVE : FINDING_ABSENT;
}

/* The run's analysis `which`, or 0 with the finding marked not measured:
 * "not measured (no WHY)". */
static int64_t measured_by(store *st, int64_t run, unsigned which, const char *why, finding *f) {
    int64_t id = store_analysis_find(st, run, gs_analysis_stored_name(which), NULL);
    if (id > 0) return id;
    f->verdict = FINDING_NOT_MEASURED;
    snprintf(f->text, sizeof f->text, "not measured (no %s)", why);
    snprintf(f->brief, sizeof f->brief, "%s", f->text);
    return 0;
}

/* "; no interval: N windows (16 needed)" for an analysis stored without its statistic's interval */
static void no_iv_note(store *st, int64_t an, char *out, size_t size) {
    double w = scalar(st, an, GS_KEY_WINDOWS);
    if (isnan(w)) snprintf(out, size, "; no interval stored (analyze again)");
    else snprintf(out, size, "; no interval: %.0f windows (%d needed)", w, GS_FINDING_MIN_WINDOWS);
}

const char *gs_finding_few_windows(int64_t windows, char *out, size_t size) {
    out[0] = 0;
    if (windows < GS_FINDING_MIN_WINDOWS)
        snprintf(out, size, "%lld windows (%d needed)", (long long)windows, GS_FINDING_MIN_WINDOWS);
    return out;
}

/* "; N windows (16 needed)" when analysis an read fewer
 * windows than GS_FINDING_MIN_WINDOWS, else "" */
static void few_windows_note(store *st, int64_t an, char *out, size_t size) {
    double w = scalar(st, an, GS_KEY_WINDOWS);
    char few[96];
    out[0] = 0;
    if (!isnan(w) && gs_finding_few_windows((int64_t)w, few, sizeof few)[0]) snprintf(out, size, "; %s", few);
}

/* The newest analysis `which` of each of the run's controls (0: none) into ids; the count found. */
static int control_analyses(store *st, int64_t run, unsigned which, gs_finding_controls *ctl, int64_t ids[2]) {
    int n = 0;
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        ids[k] = 0;
        int64_t c = store_control_run(st, run, store_control_names[k]);
        if (c <= 0) { gs_clear_error(); continue; }
        ids[k] = store_analysis_find(st, c, gs_analysis_stored_name(which), NULL);
        if (ids[k] <= 0) { ids[k] = 0; continue; }
        ctl->measured[k] = 1;
        ctl->run[k] = c;
        n++;
    }
    return n;
}

/* " Controls (docs/controls.md): untrained (run 5) reads 0.41, 0.99, 0.99: present; ..." after a rule's tests
 * named by what[]; "" when none was measured */
static void controls_text(const gs_finding_controls *ctl, const char *const *what, int n,
                          const char *(*word)(finding_verdict), const char *tail, char *out, size_t size) {
    size_t o = 0;
    out[0] = 0;
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (!ctl->measured[k]) continue;
        const char *lead = o ? "; the " : " Its controls (docs/controls.md): the ";
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s (run %lld) reads", lead, store_control_names[k],
                              (long long)ctl->run[k]);
        for (int i = 0; i < n; i++)
            o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s %s %.3g", i ? "," : "", what[i], ctl->x[k][i]);
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, ": %s", word(ctl->verdict[k]));
    }
    if (o) snprintf(out + o, o < size ? size - o : 0, " (%s).", tail);
}

/* how the default direction's and the horizon's controls were read, at the end of their sentence */
#define RAISED_BOUNDS                                                                                           \
    "the untrained one decides: where it passes the rule, its values are the bounds the run must clear; the " \
    "shuffled one says whether the structure needs the text's order"

/* the default direction's three deciding numbers of analysis dd (the batch cosine over documents when by_doc) */
static void default_numbers(store *st, int64_t dd, int by_doc, gs_finding_num out[3]) {
    out[0] = (gs_finding_num){scalar(st, dd, GS_KEY_NORM_RATIO), scalar(st, dd, GS_KEY_NORM_RATIO_LO), scalar(st, dd, GS_KEY_NORM_RATIO_HI)};
    out[1] = by_doc ? (gs_finding_num){scalar(st, dd, GS_KEY_BATCH_COS_DOC_MEAN), scalar(st, dd, GS_KEY_BATCH_COS_DOC_LO),
                                       scalar(st, dd, GS_KEY_BATCH_COS_DOC_HI)}
                    : (gs_finding_num){scalar(st, dd, GS_KEY_BATCH_COS_MEAN), scalar(st, dd, GS_KEY_BATCH_COS_LO),
                                       scalar(st, dd, GS_KEY_BATCH_COS_HI)};
    out[2] = (gs_finding_num){fabs(scalar(st, dd, GS_KEY_TOP_SV_COS)), scalar(st, dd, GS_KEY_TOP_SV_COS_LO),
                              scalar(st, dd, GS_KEY_TOP_SV_COS_HI)};
}

static void judge_default(store *st, int64_t run, finding *f) {
    int64_t dd = measured_by(st, run, GS_AN_DEFAULT, "default-direction analysis", f);
    if (!dd) return;
    double ratio = scalar(st, dd, GS_KEY_NORM_RATIO), cos8 = scalar(st, dd, GS_KEY_BATCH_COS_MEAN);
    /* the batches that share no document decide when there are enough documents (issue 39.2) */
    const int by_doc = scalar(st, dd, GS_KEY_BATCH_COS_BY_DOCUMENT) == 1;
    char doc_note[240] = "";
    store_analysis_get_note(st, dd, GS_KEY_BATCH_COS_BY_DOCUMENT, doc_note, sizeof doc_note);
    double cos8r = scalar(st, dd, GS_KEY_BATCH_COS_RANDOM_MEAN);
    double top = fabs(scalar(st, dd, GS_KEY_TOP_SV_COS)), pc1 = scalar(st, dd, GS_KEY_PC1_COS);
    double m2 = scalar(st, dd, GS_KEY_MEAN_NORM2_OVER_LAMBDA1);
    double rho_t = scalar(st, dd, GS_KEY_SPEARMAN_UNIGRAM_TRAIN), rho_r = scalar(st, dd, GS_KEY_SPEARMAN_UNIGRAM);
    const gs_finding_num ratio_n = {ratio, scalar(st, dd, GS_KEY_NORM_RATIO_LO), scalar(st, dd, GS_KEY_NORM_RATIO_HI)},
                         cos8_n = {cos8, scalar(st, dd, GS_KEY_BATCH_COS_LO), scalar(st, dd, GS_KEY_BATCH_COS_HI)},
                         top_n = {top, scalar(st, dd, GS_KEY_TOP_SV_COS_LO), scalar(st, dd, GS_KEY_TOP_SV_COS_HI)},
                         doc_n = {scalar(st, dd, GS_KEY_BATCH_COS_DOC_MEAN), scalar(st, dd, GS_KEY_BATCH_COS_DOC_LO),
                                  scalar(st, dd, GS_KEY_BATCH_COS_DOC_HI)};
    int64_t cid[2];
    gs_finding_controls *ctl = &f->controls;
    control_analyses(st, run, GS_AN_DEFAULT, ctl, cid);
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        gs_finding_num c[3];
        if (!ctl->measured[k]) continue;
        default_numbers(st, cid[k], by_doc, c);
        for (int i = 0; i < 3; i++) ctl->x[k][i] = c[i].value;
    }
    char why[320]; /* three tests, each with a control's raised bound */
    f->verdict = gs_finding_default_rule_ctl(ratio_n, by_doc ? doc_n : cos8_n, by_doc, top_n, ctl, why, sizeof why);
    /* like for like: the paper's +0.46 is against its training corpus */
    char unigram[256], random_b[64] = "", pc[200] = "";
    if (!isnan(rho_t))
        snprintf(unigram, sizeof unigram, "its decoded distribution %s the training corpus's unigram frequency "
                 "(Spearman %+.2f; paper +0.46, also against its training corpus)",
                 rho_t >= 0.2 ? "tracks" : "does not track", rho_t);
    else if (!isnan(rho_r))
        snprintf(unigram, sizeof unigram, "against the recorded text's unigram counts its Spearman is %+.2f (the "
                 "training corpus was not given, so there is no like-for-like number for the paper's +0.46)", rho_r);
    else snprintf(unigram, sizeof unigram, "its agreement with unigram counts was not measured");
    if (!isnan(cos8r)) snprintf(random_b, sizeof random_b, "; %.3f over random batches of rows", cos8r);
    if (!isnan(pc1))
        snprintf(pc, sizeof pc, "; the centered PC1 gives |cos| %.2f%s", pc1,
                 !isnan(m2) && m2 > 1 ? ", and the uncentered test passes almost by construction when ||s_bar||^2 "
                                        "exceeds the top centered eigenvalue, as it does here" : "");
    char no_iv[96] = "", cos8_iv[64] = "", top_iv[64] = "";
    if (isnan(by_doc ? doc_n.lo : cos8_n.lo)) no_iv_note(st, dd, no_iv, sizeof no_iv);
    else {
        if (!isnan(cos8_n.lo)) snprintf(cos8_iv, sizeof cos8_iv, " [%.3f, %.3f]", cos8_n.lo, cos8_n.hi);
        few_windows_note(st, dd, no_iv, sizeof no_iv);
    }
    if (!isnan(top_n.lo)) snprintf(top_iv, sizeof top_iv, " [%.3f, %.3f]", top_n.lo, top_n.hi);
    /* the other grouping beside the deciding one, and why this one decides */
    char grouping[400] = "";
    if (by_doc) {
        char iv[64] = "";
        if (!isnan(doc_n.lo)) snprintf(iv, sizeof iv, " [%.3f, %.3f]", doc_n.lo, doc_n.hi);
        snprintf(grouping, sizeof grouping, ", over batches that share no document %.3f%s (%s)", doc_n.value, iv, doc_note);
    } else if (doc_note[0]) {
        snprintf(grouping, sizeof grouping, " (%s)", doc_note);
    }
    static const char *const what[3] = {"ratio", "8-batch cosine", "|cos| top SV"};
    char ctl_text[600];
    controls_text(ctl, what, 3, gs_finding_word, RAISED_BOUNDS, ctl_text, sizeof ctl_text);
    /* a control that decided is in why already ("straddles 0.940 (untrained)"); the text has both */
    snprintf(f->brief, sizeof f->brief, "%s (%s%s)", gs_finding_word(f->verdict), why, no_iv);
    snprintf(f->text, sizeof f->text,
             "%s: ||s_bar|| is %.2f of the mean state norm (rule >= 0.25; paper 107/132 = 0.81 by its own figures, "
             "\"58%%\" in its text), the 8-batch cosine over consecutive windows is %.3f%s%s (>= 0.9%s) and |cos| with "
             "the top singular vector of the uncentered states %.3f%s (>= 0.9%s); %s.%s",
             gs_finding_word(f->verdict), ratio, cos8, cos8_iv, grouping, random_b, top, top_iv, pc, unigram, ctl_text);
}

static void judge_horizon(store *st, int64_t run, finding *f) {
    int64_t h = measured_by(st, run, GS_AN_HORIZON, "horizons analysis", f);
    if (!h) return;
    double c1 = scalar(st, h, GS_KEY_C1), h002 = scalar(st, h, GS_KEY_CONTENT_HORIZON_002), he = scalar(st, h, GS_KEY_CONTENT_HORIZON_E);
    double censored = scalar(st, h, GS_KEY_CONTENT_HORIZON_002_CENSORED);
    /* the raw curve's far end, at the largest lag still averaged over
     * min_pairs pairs (the last lags of a window have only a handful) */
    double *x = NULL, *y = NULL, *px = NULL, *pn = NULL;
    int64_t n = store_analysis_get_series(st, h, GS_KEY_RAW, &x, &y);
    int64_t np = store_analysis_get_series(st, h, GS_KEY_RAW_PAIRS, &px, &pn);
    double plateau = NAN, last_lag = NAN, mp = scalar(st, h, GS_KEY_MIN_PAIRS);
    if (isnan(mp)) mp = 100; /* stores written before min_pairs was stored */
    for (int64_t i = 0; i < n; i++)
        if ((np != n || pn[i] >= mp) && !isnan(y[i])) { plateau = y[i]; last_lag = x[i]; }
    free(x);
    free(y);
    free(px);
    free(pn);
    const gs_finding_num c1_n = {c1, scalar(st, h, GS_KEY_C1_LO), scalar(st, h, GS_KEY_C1_HI)},
                         h002_n = {h002, scalar(st, h, GS_KEY_CONTENT_HORIZON_002_LO), scalar(st, h, GS_KEY_CONTENT_HORIZON_002_HI)};
    int64_t cid[2];
    gs_finding_controls *ctl = &f->controls;
    control_analyses(st, run, GS_AN_HORIZON, ctl, cid);
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (!ctl->measured[k]) continue;
        ctl->x[k][0] = scalar(st, cid[k], GS_KEY_C1);
        ctl->x[k][1] = ctl->x[k][2] = scalar(st, cid[k], GS_KEY_CONTENT_HORIZON_002);
        ctl->inside[k] = scalar(st, cid[k], GS_KEY_CONTENT_HORIZON_002_CENSORED) == 0;
    }
    char why[320], no_iv[96] = "", h_iv[64] = "";
    f->verdict = gs_finding_horizon_rule_ctl(c1_n, censored == 0, h002_n, ctl, why, sizeof why);
    if (isnan(h002_n.lo)) no_iv_note(st, h, no_iv, sizeof no_iv);
    else {
        snprintf(h_iv, sizeof h_iv, " [%.1f, %.1f]", h002_n.lo, h002_n.hi);
        few_windows_note(st, h, no_iv, sizeof no_iv);
    }
    static const char *const what[2] = {"c_1", "h_0.02"};
    char ctl_text[600];
    controls_text(ctl, what, 2, gs_finding_word, RAISED_BOUNDS, ctl_text, sizeof ctl_text);
    /* a control that decided is in why already ("straddles 0.940 (untrained)"); the text has both */
    snprintf(f->brief, sizeof f->brief, "%s (%s%s)", gs_finding_word(f->verdict), why, no_iv);
    char e_text[64];
    if (isnan(he)) snprintf(e_text, sizeof e_text, "n/a");
    else snprintf(e_text, sizeof e_text, "%.1f", he);
    snprintf(f->text, sizeof f->text,
             "%s: centered lag cosine %.3f at k = 1 (rule >= 0.05; paper 0.31), falling to c_1/e by k = %s and below "
             "0.02 %s%.1f%s (rule: inside the window, between 10 and 1000 tokens); the raw cosine stays at %.2f at k = %.0f "
             "(paper: plateau near 0.65).%s",
             gs_finding_word(f->verdict), c1, e_text, censored == 0 ? "by k = " : "not within the window; k > ", h002,
             censored == 0 ? h_iv : "", plateau, last_lag, ctl_text);
}

/* a stored pool verdict (1 present, 0.5 inconclusive, 0 not demonstrated) as the pools' enum */
static gs_pool_verdict pool_verdict_of(double v) {
    return v >= 1 ? GS_POOLS_PRESENT : v > 0 ? GS_POOLS_INCONCLUSIVE : GS_POOLS_NOT_DEMONSTRATED;
}

/* one estimator's pools as text; returns its pool verdict (-1: not measured, -2: the rule before the LR) */
static int pools_text(store *st, int64_t r, const char *sfx, char *buf, size_t size) {
    char k[96];
#define S(name) (snprintf(k, sizeof k, "%s%s", name, sfx), scalar(st, r, k))
    double v = S("pool_verdict");
    if (isnan(v)) return -1;
    double lr = S("pool_lr");
    if (isnan(lr)) return -2; /* analyzed under the 2-means rule, whose verdict had no power (issue 39.5) */
    double fn = S("fast_n"), fmin = S("fast_min"), fmax = S("fast_max");
    double sn = S("slow_n"), smin = S("slow_min"), smax = S("slow_max"), sep = S("separation");
    double lo = S("pool_lr_boot_lo"), hi = S("pool_lr_boot_hi");
    double pn = S("pool_lr_null_p_normal"), pu = S("pool_lr_null_p_uniform"), pl = S("pool_lr_null_p_laplace");
    double pt = S("pool_lr_null_p_t3"), pi = S("pool_lr_null_p_init");
    double pw_paper = S("pools_power_paper"), pw_fit = S("pools_power_fitted");
#undef S
    char power[160] = "";
    if (!isnan(pw_paper))
        snprintf(power, sizeof power, " (the rule's power: %.2f on the paper's pools, %.2f on these fitted ones)",
                 pw_paper, pw_fit);
    const gs_pool_verdict verdict = pool_verdict_of(v);
    char boot[64] = "";
    if (!isnan(lo)) snprintf(boot, sizeof boot, " (bootstrap 95%% %.2f-%.2f)", lo, hi);
    snprintf(buf, size,
             "fast pool %.0f heads at %.1f-%.1f tokens, slow pool %.0f heads at %.1f-%.1f, likelihood ratio %.2f%s "
             "(separation %.2f), null p %.3f normal / %.3f uniform / %.3f Laplace / %.3f t3 / %.3f init: %s%s",
             fn, fmin, fmax, sn, smin, smax, lr, boot, sep, pn, pu, pl, pt, pi, gs_pool_verdict_name(verdict), power);
    return (int)verdict;
}

/* Did training move the decays (analyses/state/decay_init.h)? "" when not measured. */
static void init_text(store *st, int64_t r, char *out, size_t size) {
    out[0] = 0;
    double known = scalar(st, r, "decays_init_known");
    if (isnan(known)) return;
    if (known == 0) {
        snprintf(out, size, " The checkpoint keeps no initial decay values, so whether training moved them is not "
                            "known (only the initialisation's distribution can be compared: series "
                            "tau_param_init_percentile).");
        return;
    }
    double moved = scalar(st, r, "decays_moved"), mx = scalar(st, r, "decays_max_abs_dlog_tau"),
           rho = scalar(st, r, "decays_init_spearman"), in_p = scalar(st, r, "slow_pool_in_init_from_start"),
           in_o = scalar(st, r, "slow_pool_in_init");
    snprintf(out, size,
             " Against their initialisation (kept in the checkpoint), training %s the decays: the largest change of a "
             "head's time constant is %.2fx, the Spearman of initial and trained time constants %+.4f (rule: moved "
             "when some head changed 2x or more and the order changed, Spearman < 0.9)%s.",
             moved == 1 ? "moved" : "barely moved", exp(mx), rho,
             in_p == 1 || in_o == 1 ? "; the slow pool is exactly the heads that were slowest at initialisation, so the "
                                      "split was already in it"
             : in_p == 0 || in_o == 0 ? "; the slow pool is not the initialisation's slowest heads"
                                      : "");
}

/* why the pools are inconclusive, from the two estimators' verdicts (from the start, all starts) */
static const char *pools_why(int vp, int vo) {
    if (vp == GS_POOLS_PRESENT && vo != GS_POOLS_PRESENT) return "present only from the start; ";
    if (vo == GS_POOLS_PRESENT && vp != GS_POOLS_PRESENT) return "present only over all starts; ";
    return "a p within 4 SE of 0.05; ";
}

/* The controls' pools (issue 39.3): each control's verdict by the run's rule (its two estimators);
 * pools present or inconclusive in the untrained control leave the run's inconclusive: a split the
 * initialisation already has is not the training's. */
static void pools_controls(store *st, int64_t run, finding *f, char *text, size_t size, char *brief, size_t bsize) {
    int64_t cid[2];
    gs_finding_controls *ctl = &f->controls;
    control_analyses(st, run, GS_AN_RETENTION, ctl, cid);
    int passes = -1;
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (!ctl->measured[k]) continue;
        double a = scalar(st, cid[k], "pool_verdict_from_start"), b = scalar(st, cid[k], "pool_verdict");
        ctl->x[k][0] = scalar(st, cid[k], "pool_lr_from_start");
        ctl->x[k][1] = ctl->x[k][2] = scalar(st, cid[k], "pool_lr");
        if (isnan(a) || isnan(b) || isnan(ctl->x[k][0])) { ctl->measured[k] = 0; continue; }
        ctl->verdict[k] = gs_finding_pools_rule(pool_verdict_of(a), pool_verdict_of(b));
        if (k == STORE_CONTROL_UNTRAINED && ctl->verdict[k] != FINDING_ABSENT) passes = k;
    }
    const int downgraded = f->verdict == FINDING_PRESENT && passes >= 0;
    if (downgraded) f->verdict = FINDING_INCONCLUSIVE;
    static const char *const what[2] = {"LR from the start", "over every start"};
    controls_text(ctl, what, 2, gs_finding_pools_word,
                  "pools in the untrained one leave the run's inconclusive; the shuffled one says whether the split "
                  "needs the text's order",
                  text, size);
    brief[0] = 0;
    if (downgraded) snprintf(brief, bsize, "; the untrained control has pools too");
}

static void judge_pools(store *st, int64_t run, finding *f) {
    int64_t r = measured_by(st, run, GS_AN_RETENTION, "retention analysis: a GPN without memory, or not analyzed", f);
    if (!r) return;
    char paper[480], ours[480];
    int vp = pools_text(st, r, "_from_start", paper, sizeof paper), vo = pools_text(st, r, "", ours, sizeof ours);
    if (vp < 0 || vo < 0) {
        f->verdict = FINDING_NOT_MEASURED;
        if (isnan(scalar(st, r, "separation")))
            snprintf(f->text, sizeof f->text, "not measured: too few heads for a pool split (%.0f)", scalar(st, r, "heads"));
        else if (vp == -2 || vo == -2)
            snprintf(f->text, sizeof f->text, "not measured: this retention analysis was judged by the 2-means rule, "
                     "which had no power (issue 39.5): run gpnscope analyze again");
        else
            snprintf(f->text, sizeof f->text, "not measured: this retention analysis has no pool verdict (it predates "
                     "it, or ran without null draws): run gpnscope analyze again");
        snprintf(f->brief, sizeof f->brief, "%s", f->text);
        return;
    }
    f->verdict = gs_finding_pools_rule((gs_pool_verdict)vp, (gs_pool_verdict)vo);
    const finding_verdict own = f->verdict; /* before the controls: the reason of an inconclusive is its own */
    char ctl_text[400], ctl_brief[80];
    pools_controls(st, run, f, ctl_text, sizeof ctl_text, ctl_brief, sizeof ctl_brief);
    const char *ps[] = {"_from_start", ""};
    double lr[2], lo[2], hi[2], pmax[2];
    for (int e = 0; e < 2; e++) {
        char k[96];
#define S(name) (snprintf(k, sizeof k, "%s%s", name, ps[e]), scalar(st, r, k))
        lr[e] = S("pool_lr");
        lo[e] = S("pool_lr_boot_lo");
        hi[e] = S("pool_lr_boot_hi");
        pmax[e] = fmax(fmax(fmax(S("pool_lr_null_p_normal"), S("pool_lr_null_p_uniform")),
                            fmax(S("pool_lr_null_p_laplace"), S("pool_lr_null_p_t3"))),
                       S("pool_lr_null_p_init"));
#undef S
    }
    /* "not demonstrated" is read beside the power to find the paper's pools at this head count (issue 39.5) */
    const double power = scalar(st, r, "pools_power_paper_from_start");
    char lead[96] = "";
    if (f->verdict == FINDING_ABSENT && !isnan(power)) snprintf(lead, sizeof lead, "power %.2f; ", power);
    else if (own == FINDING_INCONCLUSIVE) snprintf(lead, sizeof lead, "%s", pools_why(vp, vo));
    /* the bootstrap resamples the same windows as the horizons' (retention stores no count of its own) */
    char few[80] = "", iv[64] = "";
    const int64_t h = store_analysis_find(st, run, gs_analysis_stored_name(GS_AN_HORIZON), NULL);
    if (isnan(lo[0])) { /* one window: nothing to resample (it printed "[nan, nan]") */
        if (h > 0) no_iv_note(st, h, few, sizeof few);
    } else {
        snprintf(iv, sizeof iv, " [%.2f, %.2f]", lo[0], hi[0]);
        if (h > 0) few_windows_note(st, h, few, sizeof few);
    }
    /* the brief stays under 200 characters with its label: the paper's pools are named in the text and the docs */
    snprintf(f->brief, sizeof f->brief,
             "%s (%sfrom the start: LR %.2f%s, max null p %.3f; all starts: %.2f, p %.3f; rule: every p < 0.05%s%s)",
             gs_finding_pools_word(f->verdict), lead, lr[0], iv, pmax[0], lr[1], pmax[1], few, ctl_brief);
    char init[400];
    init_text(st, r, init, sizeof init);
    /* a store without the head count (NaN, never cast to int) reads the rule's own minimum */
    const double stored_heads = scalar(st, r, "heads");
    const int heads = isnan(stored_heads) || stored_heads < 0 || stored_heads > 1e6 ? 1000 : (int)stored_heads;
    snprintf(f->text, sizeof f->text,
             "%s: two normal pools of log 1/e times against one (likelihood ratio, at least %d heads a pool); with "
             "retention from the start of the window (the paper's estimator): %s; averaged over every start "
             "(gpnscope's): %s (rule: present when, under both, every null family's p + 4 SE < 0.05; inconclusive "
             "when present under one only, or when under both no p - 4 SE >= 0.05 but some p is within 4 SE of "
             "0.05; not demonstrated otherwise; the power is the share of simulated sets of as many heads with the "
             "paper's two pools, 40%% at 1-3 tokens and the rest at 5-322, that the rule calls present; paper: 6 "
             "heads at 1-3, 9 heads at 5-322).%s%s",
             gs_finding_pools_word(f->verdict), gs_pool_min_heads(heads), paper, ours, init, ctl_text);
}

cJSON *gs_finding_controls_json(const gs_finding_controls *ctl, int which) {
    static const char *const keys[3][3] = {{GS_KEY_NORM_RATIO, "batch_cos", "top_sv_abs_cos"},
                                           {GS_KEY_C1, GS_KEY_CONTENT_HORIZON_002, NULL},
                                           {"pool_lr_from_start", "pool_lr", NULL}};
    if (!ctl->measured[0] && !ctl->measured[1]) return NULL;
    cJSON *j = cJSON_CreateObject();
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (!ctl->measured[k]) continue;
        cJSON *c = cJSON_AddObjectToObject(j, store_control_names[k]);
        cJSON_AddNumberToObject(c, "run", (double)ctl->run[k]);
        cJSON_AddStringToObject(c, "verdict", which == 2 ? gs_finding_pools_word(ctl->verdict[k])
                                                         : gs_finding_word(ctl->verdict[k]));
        cJSON_AddBoolToObject(c, "decides", k == STORE_CONTROL_UNTRAINED);
        for (int i = 0; i < 3 && keys[which][i]; i++)
            if (isnan(ctl->x[k][i])) cJSON_AddNullToObject(c, keys[which][i]);
            else cJSON_AddNumberToObject(c, keys[which][i], ctl->x[k][i]);
    }
    return j;
}

int gs_findings_compute(store *st, int64_t run_id, gs_findings *out) {
    memset(out, 0, sizeof *out);
    store_run_info *info = malloc(sizeof *info); /* three paths of 4096: not for the stack */
    if (info && store_run_get(st, run_id, info) == 0) {
        const gs_family *fam = gs_family_by_store_name(info->model_arch);
        if (fam) out->not_lm = fam->not_lm;
    }
    free(info);
    judge_default(st, run_id, &out->default_direction);
    judge_horizon(st, run_id, &out->content_horizon);
    judge_pools(st, run_id, &out->memory_pools);
    if (out->default_direction.verdict == FINDING_NOT_MEASURED && out->content_horizon.verdict == FINDING_NOT_MEASURED &&
        out->memory_pools.verdict == FINDING_NOT_MEASURED)
        return gs_fail("run %lld has no analyses: run gpnscope analyze first", (long long)run_id);
    return 0;
}

int gs_findings_write(store *st, int64_t run_id, const gs_findings *f, const char *code_version) {
    int64_t id = store_analysis_begin(st, run_id, gs_analysis_stored_name(GS_AN_FINDINGS), "{}", code_version);
    if (id < 0) return -1;
    const struct { const char *key; const finding *f; } all[] = {
        {"default_direction", &f->default_direction}, {"content_horizon", &f->content_horizon},
        {"memory_pools", &f->memory_pools}};
    for (int i = 0; i < 3; i++) {
        if (all[i].f->verdict == FINDING_NOT_MEASURED) continue;
        if (store_analysis_scalar(st, id, all[i].key, gs_finding_scalar(all[i].f->verdict), all[i].f->text)) {
            store_rollback(st);
            return -1;
        }
    }
    return store_commit(st);
}

/* text without its leading "VERDICT: ", in lines of at most width columns, each indented */
static void print_wrapped(FILE *out, const char *text, int indent, int width) {
    const char *colon = strstr(text, ": ");
    if (colon && colon - text < 20) text = colon + 2; /* the verdict ("not demonstrated") is on the brief line */
    while (*text) {
        int n = 0, cut = 0, cols = 0;
        for (; text[n] && cols < width - indent; n++) {
            if (text[n] == ' ') cut = n;
            cols += ((unsigned char)text[n] & 0xc0) != 0x80;
        }
        if (!text[n] || !cut) cut = n;
        fprintf(out, "%*s%.*s\n", indent, "", cut, text);
        text += cut;
        while (*text == ' ') text++;
    }
}

void gs_findings_print(FILE *out, const gs_findings *f) {
    fprintf(out, "The paper's three structures in this run:\n");
    const struct { const char *label; const finding *f; } rows[] = {
        {"1. default-token direction", &f->default_direction},
        {"2. content horizon", &f->content_horizon},
        {"3. fast and slow pools", &f->memory_pools}};
    for (int i = 0; i < 3; i++) {
        if (i == 0 && f->not_lm)
            fprintf(out, "  1. persistent mean direction (the default-token test; %s has no token to default to): %s\n",
                    f->not_lm, f->default_direction.brief);
        else fprintf(out, "  %s: %s\n", rows[i].label, rows[i].f->brief);
        if (strcmp(rows[i].f->text, rows[i].f->brief)) print_wrapped(out, rows[i].f->text, 7, 100);
    }
}
