/* The comparison table out: JSON (the --json output and, with the curves,
 * OUT/compare.json that the figures, the report and the notebook read) and
 * text. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/compare/compare.h"
#include "base/error.h"

/* NaN and infinities are JSON null */
static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *with_interval(const gs_cmp_num *n, int lag) {
    cJSON *o = cJSON_CreateObject();
    if (lag >= 0) cJSON_AddNumberToObject(o, "lag", lag);
    cJSON_AddItemToObject(o, "value", num(n->value));
    cJSON_AddItemToObject(o, "lo", num(n->lo));
    cJSON_AddItemToObject(o, "hi", num(n->hi));
    return o;
}

static cJSON *doubles(const double *v, int64_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) cJSON_AddItemToArray(a, num(v[i]));
    return a;
}
static cJSON *ints(const int *v, int64_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}
static cJSON *counts(const int64_t *v, int64_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static cJSON *pools_json(const gs_pools *p) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "verdict", p->score_valid ? gs_pool_verdict_name(p->verdict) : "not measured");
    /* the rule's likelihood ratio with its window bootstrap; the separation of the split beside it */
    gs_cmp_num lr = {p->score_valid ? p->lr : NAN, p->boot_n ? p->boot_lo : NAN, p->boot_n ? p->boot_hi : NAN};
    cJSON_AddItemToObject(o, "lr", with_interval(&lr, -1));
    cJSON_AddItemToObject(o, "separation", num(p->score_valid ? p->separation : NAN));
    if (p->valid) {
        cJSON_AddNumberToObject(o, "fast_heads", p->pool_n[0]);
        cJSON_AddNumberToObject(o, "slow_heads", p->pool_n[1]);
        cJSON_AddItemToObject(o, "fast_range", doubles(p->pool_min, 1));
        cJSON_AddItemToArray(cJSON_GetObjectItem(o, "fast_range"), num(p->pool_max[0]));
        cJSON_AddItemToObject(o, "slow_range", doubles(p->pool_min + 1, 1));
        cJSON_AddItemToArray(cJSON_GetObjectItem(o, "slow_range"), num(p->pool_max[1]));
    }
    if (p->score_valid) {
        cJSON *np = cJSON_AddObjectToObject(o, "null_p"), *se = cJSON_AddObjectToObject(o, "null_p_se");
        for (int f = 0; f < GS_NULL_COUNT; f++) {
            cJSON_AddItemToObject(np, gs_null_family_name((gs_null_family)f), num(p->null_p[f]));
            cJSON_AddItemToObject(se, gs_null_family_name((gs_null_family)f), num(p->null_se[f]));
        }
        cJSON_AddItemToObject(o, "power_paper", num(p->power_paper));
        cJSON_AddItemToObject(o, "power_fitted", num(p->power_fitted));
    }
    return o;
}

static void add_curves(cJSON *row, const gs_compare_row *r) {
    cJSON *c = cJSON_AddObjectToObject(row, "curves");
    const gs_geometry *g = &r->an.geometry;
    if (g->has_spectrum) cJSON_AddItemToObject(c, "explained", doubles(g->cum_explained, g->d));
    const gs_horizons *h = &r->hz;
    cJSON_AddItemToObject(c, "lags", ints(h->lags, h->n_lags));
    cJSON_AddItemToObject(c, "raw", doubles(h->raw, h->n_lags));
    cJSON_AddItemToObject(c, "raw_pairs", counts(h->n_raw, h->n_lags));
    cJSON_AddItemToObject(c, "centered", doubles(h->centered, h->n_lags));
    cJSON_AddItemToObject(c, "centered_pairs", counts(h->n_centered, h->n_lags));
    const gs_default_dir *dd = &r->an.default_dir;
    cJSON_AddItemToObject(c, "emergence", doubles(dd->emergence, dd->emerg_len));
    if (!r->has_pools) return;
    const gs_retention *rt = &r->an.retention;
    cJSON *ret = cJSON_AddObjectToObject(c, "retention");
    cJSON_AddNumberToObject(ret, "heads", rt->H);
    cJSON_AddItemToObject(ret, "lags", ints(rt->lags, rt->n_lags));
    for (int e = 0; e < GS_RET_COUNT; e++) {
        char key[32];
        snprintf(key, sizeof key, "R%s", gs_ret_estimator_suffix((gs_ret_estimator)e));
        cJSON *heads = cJSON_AddArrayToObject(ret, key); /* heads[h][lag] */
        for (int hh = 0; hh < rt->H; hh++) {
            cJSON *a = cJSON_CreateArray();
            for (int i = 0; i < rt->n_lags; i++) cJSON_AddItemToArray(a, num(rt->est[e].R[(int64_t)i * rt->H + hh]));
            cJSON_AddItemToArray(heads, a);
        }
        snprintf(key, sizeof key, "e_fold_time%s", gs_ret_estimator_suffix((gs_ret_estimator)e));
        cJSON_AddItemToObject(ret, key, doubles(rt->est[e].e_fold_time, rt->H));
    }
}

char *gs_compare_json(const gs_compare *c, int with_curves) {
    cJSON *root = cJSON_CreateObject();
    cJSON *win = cJSON_AddObjectToObject(root, "windows");
    cJSON_AddBoolToObject(win, "same", c->windows_same);
    cJSON_AddStringToObject(win, "note", c->windows_note);
    cJSON_AddNumberToObject(root, "boot", c->boot);
    cJSON_AddNumberToObject(root, "seed", (double)c->seed);
    cJSON_AddNumberToObject(root, "max_states", (double)c->max_states);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < c->n_rows; i++) {
        const gs_compare_row *r = &c->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, o);
        cJSON_AddStringToObject(o, "label", r->label);
        cJSON_AddStringToObject(o, "store", r->store_path);
        cJSON_AddNumberToObject(o, "run", (double)r->run);
        cJSON_AddStringToObject(o, "site", r->site);
        if (r->layer >= 0) cJSON_AddNumberToObject(o, "layer", r->layer);
        else cJSON_AddNullToObject(o, "layer");
        cJSON_AddStringToObject(o, "arch", r->arch);
        cJSON_AddStringToObject(o, "model", r->model);
        cJSON_AddNumberToObject(o, "states", (double)r->n_states);
        cJSON_AddNumberToObject(o, "windows", (double)r->n_windows);
        /* fewer windows than the findings' intervals need (analyses/findings.h): every interval and verdict of
         * the row rests on too few (issue 38.3); null when there are enough */
        char few[96];
        if (gs_finding_few_windows(r->n_windows, few, sizeof few)[0]) {
            cJSON *fw = cJSON_AddObjectToObject(o, "few_windows");
            cJSON_AddNumberToObject(fw, "windows", (double)r->n_windows);
            cJSON_AddNumberToObject(fw, "needed", GS_FINDING_MIN_WINDOWS);
            cJSON_AddStringToObject(fw, "note", few);
        } else cJSON_AddNullToObject(o, "few_windows");
        cJSON_AddNumberToObject(o, "d", r->d);
        cJSON *pos = cJSON_AddObjectToObject(o, "positions");
        if (r->max_positions > 0) cJSON_AddNumberToObject(pos, "below", r->max_positions);
        else cJSON_AddNullToObject(pos, "below");
        cJSON_AddNumberToObject(pos, "recorded", r->recorded_len);
        if (r->trained_seq_len > 0) cJSON_AddNumberToObject(pos, "trained_seq_len", r->trained_seq_len);
        else cJSON_AddNullToObject(pos, "trained_seq_len");
        cJSON_AddStringToObject(pos, "note", r->positions_note);
        cJSON *pp = cJSON_AddObjectToObject(o, "perplexity_by_position");
        cJSON_AddItemToObject(pp, "from", ints(r->bin_from, r->n_bins));
        cJSON_AddItemToObject(pp, "to", ints(r->bin_to, r->n_bins));
        cJSON_AddItemToObject(pp, "perplexity", doubles(r->bin_ppl, r->n_bins));
        cJSON_AddItemToObject(pp, "tokens", counts(r->bin_tokens, r->n_bins));
        cJSON_AddItemToObject(pp, "below_training", num(r->ppl_below_training));
        cJSON_AddItemToObject(pp, "from_training", num(r->ppl_from_training));
        cJSON *dd = cJSON_AddObjectToObject(o, "default_direction");
        cJSON_AddItemToObject(dd, "norm_ratio", with_interval(&r->norm_ratio, -1));
        cJSON_AddItemToObject(dd, "batch_cos", with_interval(&r->batch_cos, -1));
        cJSON_AddItemToObject(dd, "batch_cos_consecutive", with_interval(&r->batch_cos_consecutive, -1));
        if (isnan(r->batch_cos_documents.value)) cJSON_AddNullToObject(dd, "batch_cos_documents");
        else cJSON_AddItemToObject(dd, "batch_cos_documents", with_interval(&r->batch_cos_documents, -1));
        cJSON_AddStringToObject(dd, "batch_grouping", r->batch_by_document ? "documents" : "consecutive windows");
        cJSON_AddStringToObject(dd, "batch_grouping_note", r->batch_grouping_note);
        cJSON_AddItemToObject(dd, "top_sv_cos", with_interval(&r->top_sv_cos, -1));
        cJSON_AddStringToObject(dd, "verdict", gs_finding_word(r->default_verdict));
        cJSON_AddStringToObject(dd, "reason", r->default_why);
        cJSON *ctl = gs_finding_controls_json(&r->default_ctl, 0);
        if (ctl) cJSON_AddItemToObject(dd, "controls", ctl);
        cJSON *h = cJSON_AddObjectToObject(o, "content_horizon");
        cJSON_AddItemToObject(h, "raw_first", with_interval(&r->raw_c1, r->c1_lag));
        cJSON_AddItemToObject(h, "raw_far", with_interval(&r->raw_far, r->raw_far_lag));
        cJSON_AddItemToObject(h, "centered_first", with_interval(&r->centered_c1, r->c1_lag));
        cJSON_AddItemToObject(h, "centered_256", with_interval(&r->centered_256, r->centered_256_lag));
        cJSON_AddItemToObject(h, "h_002", with_interval(&r->h_002, -1));
        cJSON_AddBoolToObject(h, "h_002_censored", r->h_002_censored);
        cJSON_AddStringToObject(h, "verdict", gs_finding_word(r->horizon_verdict));
        cJSON_AddStringToObject(h, "reason", r->horizon_why);
        if ((ctl = gs_finding_controls_json(&r->horizon_ctl, 1))) cJSON_AddItemToObject(h, "controls", ctl);
        cJSON *p = cJSON_AddObjectToObject(o, "memory_pools");
        if (r->decay_site[0]) cJSON_AddStringToObject(p, "decay_site", r->decay_site);
        else cJSON_AddNullToObject(p, "decay_site");
        cJSON_AddStringToObject(p, "verdict", gs_finding_pools_word(r->pools_verdict));
        if (r->pools_note[0]) cJSON_AddStringToObject(p, "note", r->pools_note);
        if ((ctl = gs_finding_controls_json(&r->pools_ctl, 2))) cJSON_AddItemToObject(p, "controls", ctl);
        if (r->has_pools) {
            cJSON_AddNumberToObject(p, "heads", r->an.retention.H);
            cJSON_AddItemToObject(p, "from_start", pools_json(&r->an.retention.est[GS_RET_FROM_START].pools));
            cJSON_AddItemToObject(p, "all_starts", pools_json(&r->an.retention.est[GS_RET_ALL_STARTS].pools));
        }
        if (with_curves) add_curves(o, r);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) gs_fail("out of memory for the JSON");
    return text;
}

static const char *with_ci(char *buf, size_t size, const gs_cmp_num *n) {
    if (!isfinite(n->value)) snprintf(buf, size, "n/a");
    else if (isfinite(n->lo)) snprintf(buf, size, "%.3f [%.3f, %.3f]", n->value, n->lo, n->hi);
    else snprintf(buf, size, "%.3f", n->value);
    return buf;
}

void gs_compare_perplexity_text(const gs_compare_row *r, char *out, size_t size) {
    size_t at = 0;
    out[0] = 0;
    for (int b = 0; b < r->n_bins && at < size; b++)
        at += (size_t)snprintf(out + at, size - at, "%s%d-%d %.2f", b ? ", " : "", r->bin_from[b], r->bin_to[b] - 1,
                               r->bin_ppl[b]);
    if (at < size && isfinite(r->ppl_below_training) && isfinite(r->ppl_from_training))
        snprintf(out + at, size - at, " (below %d: %.2f, from %d on: %.2f)", r->trained_seq_len, r->ppl_below_training,
                 r->trained_seq_len, r->ppl_from_training);
}

/* "  controls: untrained (run 5): default absent, horizon absent, pools not shown; shuffled (run 6): ..." */
static void print_controls(FILE *f, const gs_compare_row *r) {
    int any = 0;
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (!r->default_ctl.measured[k]) continue;
        fprintf(f, "%s%s (run %lld): default %s, horizon %s, pools %s", any++ ? "; " : "  controls: ",
                store_control_names[k], (long long)r->default_ctl.run[k], gs_finding_word(r->default_ctl.verdict[k]),
                gs_finding_word(r->horizon_ctl.verdict[k]),
                r->pools_ctl.measured[k] ? gs_finding_pools_word(r->pools_ctl.verdict[k]) : "not measured");
    }
    if (any) fprintf(f, " (the untrained one decides; docs/controls.md)\n");
}

void gs_compare_print(FILE *f, const gs_compare *c) {
    fprintf(f, "windows: %s\n", c->windows_note);
    if (c->boot > 0) fprintf(f, "[lo, hi]: 95%% bootstrap interval over windows (%d resamples, seed %llu)\n", c->boot,
                             (unsigned long long)c->seed);
    for (int i = 0; i < c->n_rows; i++) {
        const gs_compare_row *r = &c->rows[i];
        char a[96], b[96], e[96], g[96], k[96];
        fprintf(f, "\n%s  (%s%s%lld states in %lld windows, d = %d)\n", r->label, r->arch, r->arch[0] ? ", " : "",
                (long long)r->n_states, (long long)r->n_windows, r->d);
        char few[96];
        if (gs_finding_few_windows(r->n_windows, few, sizeof few)[0]) fprintf(f, "  few windows: %s\n", few);
        fprintf(f, "  positions: %s\n", r->positions_note);
        if (r->n_bins) {
            char curve[600];
            gs_compare_perplexity_text(r, curve, sizeof curve);
            fprintf(f, "  perplexity by position: %s\n", curve);
        }
        print_controls(f, r);
        char cons[128] = "";
        if (r->batch_by_document) /* the consecutive reading beside the deciding one */
            snprintf(cons, sizeof cons, " (consecutive windows %s)", with_ci(g, sizeof g, &r->batch_cos_consecutive));
        fprintf(f, "  1. default-token direction  %-12s ||s_bar|| / mean ||s|| %s; 8-batch cos%s %s%s; |cos| top SV %s\n",
                gs_finding_word(r->default_verdict), with_ci(a, sizeof a, &r->norm_ratio),
                r->batch_by_document ? " over documents" : "", with_ci(b, sizeof b, &r->batch_cos), cons,
                with_ci(e, sizeof e, &r->top_sv_cos));
        fprintf(f, "     %s: %s\n", gs_finding_word(r->default_verdict), r->default_why);
        if (r->batch_grouping_note[0]) fprintf(f, "     %s\n", r->batch_grouping_note);
        fprintf(f, "  2. content horizon          %-12s centered k=%d %s, k=%d %s; raw k=%d %s, k=%d %s; h_0.02 %s%s\n",
                gs_finding_word(r->horizon_verdict), r->c1_lag, with_ci(a, sizeof a, &r->centered_c1), r->centered_256_lag,
                with_ci(b, sizeof b, &r->centered_256), r->c1_lag, with_ci(e, sizeof e, &r->raw_c1), r->raw_far_lag,
                with_ci(g, sizeof g, &r->raw_far), r->h_002_censored ? ">= " : "", with_ci(k, sizeof k, &r->h_002));
        fprintf(f, "     %s: %s\n", gs_finding_word(r->horizon_verdict), r->horizon_why);
        if (!r->has_pools || r->pools_verdict == FINDING_NOT_MEASURED) {
            fprintf(f, "  3. memory pools             %-12s %s\n", gs_finding_pools_word(r->pools_verdict), r->pools_note);
            continue;
        }
        for (int est = GS_RET_FROM_START; est >= GS_RET_ALL_STARTS; est--) {
            const gs_pools *p = &r->an.retention.est[est].pools;
            gs_cmp_num lr = {p->lr, p->boot_n ? p->boot_lo : NAN, p->boot_n ? p->boot_hi : NAN};
            double pmax = 0;
            for (int fam = 0; fam < GS_NULL_COUNT; fam++) pmax = fmax(pmax, p->null_p[fam]);
            /* "not demonstrated" is read beside the rule's power on the paper's pools (issue 39.5) */
            char pw[48] = "";
            if (p->power_sets > 0) snprintf(pw, sizeof pw, ", power %.2f", p->power_paper);
            fprintf(f, "  3. memory pools             %-12s %s: %d fast + %d slow heads (%s), LR %s, max null p %.3f%s\n",
                    est == GS_RET_FROM_START ? gs_finding_pools_word(r->pools_verdict) : "", gs_ret_estimator_name((gs_ret_estimator)est),
                    p->pool_n[0], p->pool_n[1], r->decay_site, with_ci(a, sizeof a, &lr),
                    pmax, pw);
        }
    }
}
