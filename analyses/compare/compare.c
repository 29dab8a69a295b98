#include "analyses/compare/compare.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
#include "base/error.h"
#include "train/config_json.h"

#define MAX_SITES 512

void gs_compare_opts_default(gs_compare_opts *o) {
    memset(o, 0, sizeof *o);
    o->boot = 200;
    o->seed = 1;
    o->max_states = 16384;
}

static int all_digits(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

int gs_compare_parse_operand(const char *text, gs_compare_operand *out) {
    memset(out, 0, sizeof *out);
    if (!text || !*text) return gs_fail("an empty operand (want STORE[:RUN[:SITE]])");
    /* STORE:RUN:SITE, STORE::SITE, STORE:RUN or STORE: the fields after the store are a run id (or
     * nothing) and a site name, which has no colon of its own */
    const char *last = strrchr(text, ':'), *store_end = text + strlen(text);
    const char *run_text = NULL, *site_text = NULL;
    size_t run_len = 0;
    if (last) {
        const char *prev = NULL; /* the colon before the last one */
        for (const char *q = text; q < last; q++)
            if (*q == ':') prev = q;
        if (all_digits(last + 1, strlen(last + 1))) { /* STORE:RUN */
            run_text = last + 1;
            run_len = strlen(last + 1);
            store_end = last;
        } else if (prev && (last == prev + 1 || all_digits(prev + 1, (size_t)(last - prev - 1)))) {
            run_text = prev + 1; /* STORE:RUN:SITE or STORE::SITE */
            run_len = (size_t)(last - prev - 1);
            site_text = last + 1;
            store_end = prev;
        } else { /* STORE:SITE */
            site_text = last + 1;
            store_end = last;
        }
    }
    if (store_end == text) return gs_fail("'%s' names no store before the ':'", text);
    if ((size_t)(store_end - text) >= sizeof out->store_path) return gs_fail("'%.60s...': store path too long", text);
    memcpy(out->store_path, text, (size_t)(store_end - text));
    if (run_len) {
        char *end;
        long long v = strtoll(run_text, &end, 10);
        if (v < 1) return gs_fail("'%s': run ids start at 1", text);
        out->run = v;
    }
    if (site_text) {
        if (!*site_text) return gs_fail("'%s': an empty site after the last ':'", text);
        if (strlen(site_text) >= sizeof out->site) return gs_fail("'%s': site name too long", text);
        snprintf(out->site, sizeof out->site, "%s", site_text);
    }
    return 0;
}

void gs_compare_free(gs_compare *c) {
    for (int i = 0; i < c->n_rows; i++) {
        gs_analysis_free(&c->rows[i].an);
        gs_horizons_free(&c->rows[i].hz);
    }
    free(c->rows);
    memset(c, 0, sizeof *c);
}

/* ---------- operands to rows ---------- */

static gs_compare_row *new_row(gs_compare *c) {
    gs_compare_row *r = realloc(c->rows, (size_t)(c->n_rows + 1) * sizeof *r);
    if (!r) { gs_fail("out of memory"); return NULL; }
    c->rows = r;
    r = &c->rows[c->n_rows++];
    memset(r, 0, sizeof *r);
    return r;
}

static int by_layer_then_name(const void *a, const void *b) {
    const store_site *x = a, *y = b;
    if (x->layer != y->layer) return x->layer < y->layer ? -1 : 1;
    return strcmp(x->site, y->site);
}

/* the per-head decay site of the row's layer (GPN's mem.alpha beside its unlayered state) */
static void pair_decay(const store_site *sites, int n, gs_compare_row *r) {
    for (int i = 0; i < n; i++)
        if (!strcmp(sites[i].role, "decay") && sites[i].layer == r->layer) {
            snprintf(r->decay_site, sizeof r->decay_site, "%s", sites[i].site);
            return;
        }
}

/* a family's store name must fit whole ("recurrent-transformer" was cut to 15 characters) */
_Static_assert(sizeof ((gs_compare_row *)0)->arch >= sizeof ((store_run_info *)0)->model_arch,
               "a compare row's arch is narrower than the store's");
static void run_model(store *st, int64_t run, gs_compare_row *r) {
    r->arch[0] = r->model[0] = 0;
    store_run_info info;
    if (store_run_get(st, run, &info) != 0) return;
    snprintf(r->arch, sizeof r->arch, "%s", info.model_arch);
    r->recorded_len = (int)info.seq_len;
    r->trained_seq_len = info.model_path[0] ? train_config_seq_len(info.model_path) : 0;
    /* the shipped layout names a model by its folder; a loose file by its own name */
    char path[sizeof info.model_path];
    snprintf(path, sizeof path, "%s", info.model_path);
    char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    if (!strcmp(name, "model.safetensors") && slash) {
        *slash = 0;
        char *up = strrchr(path, '/');
        name = up ? up + 1 : path;
    } else {
        size_t n = strlen(name);
        if (n > 12 && !strcmp(name + n - 12, ".safetensors")) name[n - 12] = 0;
    }
    snprintf(r->model, sizeof r->model, "%s", name);
}

static int add_rows(const gs_compare_operand *op, const gs_compare_opts *o, gs_compare *c) {
    store *st = store_open(op->store_path, STORE_READ);
    if (!st) return -1;
    int rc = -1;
    store_site *sites = calloc(MAX_SITES, sizeof *sites);
    if (!sites) { gs_fail("out of memory"); goto done; }
    int64_t run = op->run ? op->run : store_last_run(st, STORE_RUN_COMPLETE);
    if (run == 0) { gs_fail("%s has no complete run to compare", op->store_path); goto done; }
    store_run_info info;
    if (run < 0 || store_run_get(st, run, &info) != 0) goto done;
    int n = store_run_sites(st, run, sites, MAX_SITES);
    if (n < 0) goto done;
    if (n > MAX_SITES) n = MAX_SITES;
    qsort(sites, (size_t)n, sizeof *sites, by_layer_then_name);
    /* the patterns this operand asks for: its own SITE, else --sites, else the run's state site */
    char patterns[1024];
    snprintf(patterns, sizeof patterns, "%s", op->site[0] ? op->site : o->sites ? o->sites : "");
    /* --sites asks every operand: a run without a match (GPN+M beside layered models) gives its state site */
    const int from_option = !op->site[0] && o->sites;
    int want_state = !patterns[0], found = 0;
again:;
    char *save = NULL;
    char state_only[] = "";
    for (char *p = want_state ? state_only : strtok_r(patterns, ",", &save); p;
         p = want_state ? NULL : strtok_r(NULL, ",", &save)) {
        int matched = 0;
        for (int i = 0; i < n; i++) {
            const store_site *x = &sites[i];
            if (strcmp(x->stored_in, "states") || strcmp(x->shape, "vector")) continue;
            if (want_state ? strcmp(x->role, "state") != 0 : fnmatch(p, x->site, 0) != 0) continue;
            gs_compare_row *r = new_row(c);
            if (!r) goto done;
            snprintf(r->store_path, sizeof r->store_path, "%s", op->store_path);
            r->run = run;
            snprintf(r->site, sizeof r->site, "%s", x->site);
            snprintf(r->kind, sizeof r->kind, "%s", x->stored_as);
            r->layer = x->layer;
            snprintf(r->label, sizeof r->label, "%s:%lld:%s", op->store_path, (long long)run, x->site);
            run_model(st, run, r);
            pair_decay(sites, n, r);
            matched++;
        }
        if (want_state && !matched && n == 0 && store_count_states(st, run, "pred") > 0) {
            /* a store from before run_sites: its state is 'pred', its decays head_steps' alpha */
            gs_compare_row *r = new_row(c);
            if (!r) goto done;
            snprintf(r->store_path, sizeof r->store_path, "%s", op->store_path);
            r->run = run;
            snprintf(r->site, sizeof r->site, "state.pred");
            snprintf(r->kind, sizeof r->kind, "pred");
            r->layer = -1;
            snprintf(r->label, sizeof r->label, "%s:%lld:state.pred", op->store_path, (long long)run);
            if (info.n_heads > 0) snprintf(r->decay_site, sizeof r->decay_site, "mem.alpha");
            run_model(st, run, r);
            matched++;
        }
        if (!matched && from_option && !want_state) continue;
        if (!matched) {
            char list[1024] = "";
            for (int i = 0; i < n; i++)
                if (!strcmp(sites[i].stored_in, "states") && !strcmp(sites[i].shape, "vector"))
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", sites[i].site);
            gs_fail("%s run %lld has no recorded vector site %s%s%s (it has: %s)", op->store_path, (long long)run,
                    want_state ? "with the role 'state'" : "matching '", want_state ? "" : p, want_state ? "" : "'",
                    list[0] ? list : "none");
            goto done;
        }
        found += matched;
    }
    if (!found && from_option && !want_state) {
        want_state = 1;
        goto again;
    }
    rc = found > 0 ? 0 : -1;
done:
    free(sites);
    store_close(st);
    return rc;
}

/* ---------- the same windows? ---------- */

typedef struct {
    int64_t n_windows, n_positions;
    int32_t *window_ids, *token_id;
    char corpus_sha[65];
    int64_t *offsets; /* n_windows x 2: corpus_offset, n_tokens (from the windows table) */
    int64_t n_offsets;
} window_sig;

static int read_sig(const char *path, int64_t run, window_sig *w) {
    memset(w, 0, sizeof *w);
    store *st = store_open(path, STORE_READ);
    if (!st) return -1;
    store_token_array T = {0};
    store_run_info info;
    int rc = store_run_get(st, run, &info);
    if (rc == 0) rc = store_read_tokens(st, run, &T);
    if (rc == 0) {
        w->n_windows = T.n_windows;
        w->n_positions = T.n_positions;
        w->window_ids = T.window_ids;
        w->token_id = T.token_id;
        T.window_ids = T.token_id = NULL;
        snprintf(w->corpus_sha, sizeof w->corpus_sha, "%s", info.corpus_sha256);
        int64_t n = store_window_offsets(st, run, &w->offsets);
        if (n < 0) rc = -1;
        else w->n_offsets = n;
    }
    store_token_array_free(&T);
    store_close(st);
    return rc;
}

static void free_sig(window_sig *w) {
    free(w->window_ids);
    free(w->token_id);
    free(w->offsets);
}

/* "" when a and b are the same windows, else how they differ */
static void sig_diff(const window_sig *a, const window_sig *b, char *out, size_t size) {
    out[0] = 0;
    if (a->n_windows && b->n_windows) {
        if (a->n_windows != b->n_windows || a->n_positions != b->n_positions) {
            snprintf(out, size, "%lld windows of %lld positions against %lld of %lld", (long long)b->n_windows,
                     (long long)b->n_positions, (long long)a->n_windows, (long long)a->n_positions);
            return;
        }
        for (int64_t w = 0; w < a->n_windows; w++) {
            if (a->window_ids[w] != b->window_ids[w]) {
                snprintf(out, size, "window %d where the other has window %d", b->window_ids[w], a->window_ids[w]);
                return;
            }
            for (int64_t p = 0; p < a->n_positions; p++) {
                int32_t x = a->token_id[w * a->n_positions + p], y = b->token_id[w * b->n_positions + p];
                if (x != y) {
                    snprintf(out, size, "window %d position %lld holds token %d against %d", a->window_ids[w], (long long)p,
                             y, x);
                    return;
                }
            }
        }
        return;
    }
    /* without token rows: the corpus and where each window starts */
    if (strcmp(a->corpus_sha, b->corpus_sha) || !a->corpus_sha[0]) {
        snprintf(out, size, "no token rows to compare, and %s", !a->corpus_sha[0] || !b->corpus_sha[0]
                                                                   ? "a corpus that is not known"
                                                                   : "another corpus (sha256 differs)");
        return;
    }
    if (a->n_offsets != b->n_offsets) {
        snprintf(out, size, "%lld windows against %lld", (long long)b->n_offsets, (long long)a->n_offsets);
        return;
    }
    for (int64_t w = 0; w < a->n_offsets; w++)
        if (a->offsets[2 * w] != b->offsets[2 * w] || a->offsets[2 * w + 1] != b->offsets[2 * w + 1]) {
            snprintf(out, size, "window %lld starts at corpus offset %lld (%lld tokens) against %lld (%lld)",
                     (long long)w, (long long)b->offsets[2 * w], (long long)b->offsets[2 * w + 1],
                     (long long)a->offsets[2 * w], (long long)a->offsets[2 * w + 1]);
            return;
        }
}

static int check_windows(gs_compare *c, int allow) {
    c->windows_same = 1;
    snprintf(c->windows_note, sizeof c->windows_note, "one run: nothing to compare");
    window_sig first;
    if (read_sig(c->rows[0].store_path, c->rows[0].run, &first) != 0) return -1;
    const char *how = first.n_windows ? "the token ids of every window" : "the corpus and its window offsets";
    int runs = 1, rc = 0;
    for (int i = 1; i < c->n_rows && rc == 0; i++) {
        const gs_compare_row *r = &c->rows[i];
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = c->rows[j].run == r->run && !strcmp(c->rows[j].store_path, r->store_path);
        if (seen) continue;
        runs++;
        window_sig other;
        if (read_sig(r->store_path, r->run, &other) != 0) { rc = -1; break; }
        char diff[512];
        sig_diff(&first, &other, diff, sizeof diff);
        free_sig(&other);
        if (!diff[0]) continue;
        c->windows_same = 0;
        snprintf(c->windows_note, sizeof c->windows_note, "%s:%lld and %s:%lld were recorded on different token windows "
                 "(%s:%lld: %s)", c->rows[0].store_path, (long long)c->rows[0].run, r->store_path, (long long)r->run,
                 r->store_path, (long long)r->run, diff);
        if (!allow) rc = gs_fail("%s: compare them anyway with --allow-different-windows", c->windows_note);
        break;
    }
    if (rc == 0 && c->windows_same && runs > 1)
        snprintf(c->windows_note, sizeof c->windows_note, "%d runs on the same windows (checked: %s)", runs, how);
    free_sig(&first);
    return rc;
}

/* ---------- one row ---------- */

/* a curve at grid index i from weighted per-window sums (NaN without pairs) */
static double weighted(const double *sum, const int64_t *cnt, const double *wt, int64_t W, int L, int i) {
    double s = 0, n = 0;
    for (int64_t w = 0; w < W; w++) {
        if (!wt[w]) continue;
        s += wt[w] * sum[w * L + i];
        n += wt[w] * (double)cnt[w * L + i];
    }
    return n > 0 ? s / n : NAN;
}

/* Resample the windows B times: the raw lag cosines at the row's lags and the
 * centered one near 256 (c_1 and h_0.02: gs_horizons_intervals, the same
 * resamples). */
static int bootstrap(gs_compare_row *r, int B, uint64_t seed) {
    gs_horizons *h = &r->hz;
    const int L = h->n_lags;
    const int ir1 = gs_horizons_nearest_enough(h, h->n_raw, h->c1_lag), irf = gs_horizons_nearest_enough(h, h->n_raw, 1500);
    const int i256 = gs_horizons_nearest_enough(h, h->n_centered, 256);
    const int64_t W = h->n_windows;
    if (W != r->n_windows) return gs_fail("%s: %lld windows of states but %lld of lag sums", r->label,
                                          (long long)r->n_windows, (long long)W);
    if (gs_horizons_intervals(h, B, seed) != 0) return -1;
    r->centered_c1.lo = h->c1_lo;
    r->centered_c1.hi = h->c1_hi;
    r->h_002.lo = h->h_002_lo;
    r->h_002.hi = h->h_002_hi;
    double *wt = calloc((size_t)(W > 0 ? W : 1), sizeof *wt), *vals = malloc((size_t)B * 3 * sizeof *vals);
    if (!wt || !vals) { free(wt); free(vals); return gs_fail("out of memory for the bootstrap"); }
    gs_rng rng = {gs_hash2(seed, 0xC0A1)};
    for (int b = 0; b < B; b++) {
        gs_resample_counts(&rng, wt, W);
        double *v = vals + 3 * b;
        v[0] = ir1 >= 0 ? weighted(h->win_raw, h->win_n_raw, wt, W, L, ir1) : NAN;
        v[1] = irf >= 0 ? weighted(h->win_raw, h->win_n_raw, wt, W, L, irf) : NAN;
        v[2] = i256 >= 0 ? weighted(h->win_centered, h->win_n_centered, wt, W, L, i256) : NAN;
    }
    gs_cmp_num *out[3] = {&r->raw_c1, &r->raw_far, &r->centered_256};
    double *col = malloc((size_t)B * sizeof *col);
    if (!col) { free(wt); free(vals); return gs_fail("out of memory"); }
    for (int k = 0; k < 3; k++) {
        for (int b = 0; b < B; b++) col[b] = vals[3 * b + k];
        gs_percentile_interval(col, B, &out[k]->lo, &out[k]->hi);
    }
    free(col); free(wt); free(vals);
    return 0;
}

void gs_compare_row_judge(gs_compare_row *r) {
    r->default_verdict = gs_finding_default_rule_ctl(r->norm_ratio, r->batch_cos, r->batch_by_document, r->top_sv_cos,
                                                     &r->default_ctl, r->default_why, sizeof r->default_why);
    r->horizon_verdict = gs_finding_horizon_rule_ctl(r->centered_c1, !r->h_002_censored, r->h_002, &r->horizon_ctl,
                                                     r->horizon_why, sizeof r->horizon_why);
    /* pools in the untrained control leave the row's inconclusive (the findings' rule) */
    const gs_finding_controls *pc = &r->pools_ctl;
    if (r->pools_verdict == FINDING_PRESENT && pc->measured[STORE_CONTROL_UNTRAINED] &&
        pc->verdict[STORE_CONTROL_UNTRAINED] != FINDING_ABSENT)
        r->pools_verdict = FINDING_INCONCLUSIVE;
}

static void no_interval(gs_cmp_num *n, double v) { n->value = v; n->lo = n->hi = NAN; }

/* Which positions the row reads (issue 39.7): past its training length a
 * model extrapolates (the shipped Transformer++'s perplexity triples there),
 * which says nothing of the state's structure, so by default a row stops there. */
static void choose_positions(gs_compare_row *r, const gs_compare_opts *o) {
    gs_positions_choose(r->recorded_len, r->trained_seq_len, o->all_positions, &r->max_positions, r->positions_note,
                        sizeof r->positions_note);
}

/* The run's perplexity by position from its tokens' NLL: bins of 64, 128,
 * 256, ... positions, and below / from the training length (none for a run
 * without token rows). */
static int position_perplexity(store *st, gs_compare_row *r) {
    store_token_array tk;
    r->n_bins = 0;
    r->ppl_below_training = r->ppl_from_training = NAN;
    if (store_read_tokens(st, r->run, &tk) != 0) { /* a run without token rows: no curve, the rest stands */
        gs_clear_error();
        return 0;
    }
    const int64_t P = tk.n_positions;
    int edge[GS_CMP_MAX_BINS + 1], nb = 0;
    edge[0] = 0;
    for (int64_t e = 64; nb < GS_CMP_MAX_BINS; e *= 2) {
        edge[++nb] = (int)(e < P ? e : P);
        if (e >= P) break;
    }
    double sum[GS_CMP_MAX_BINS] = {0}, below = 0, from = 0;
    int64_t cnt[GS_CMP_MAX_BINS] = {0}, n_below = 0, n_from = 0;
    const int T = r->trained_seq_len;
    for (int64_t w = 0; w < tk.n_windows; w++)
        for (int64_t p = 0, b = 0; p < P; p++) {
            const float x = tk.nll[w * P + p];
            while (b < nb - 1 && p >= edge[b + 1]) b++;
            if (isnan(x)) continue;
            sum[b] += x;
            cnt[b]++;
            if (T > 0 && p >= T) { from += x; n_from++; }
            else if (T > 0) { below += x; n_below++; }
        }
    store_token_array_free(&tk);
    for (int b = 0; b < nb; b++) {
        r->bin_from[b] = edge[b];
        r->bin_to[b] = edge[b + 1];
        r->bin_tokens[b] = cnt[b];
        r->bin_ppl[b] = cnt[b] ? exp(sum[b] / (double)cnt[b]) : NAN;
    }
    r->n_bins = P > 0 ? nb : 0;
    if (n_below) r->ppl_below_training = exp(below / (double)n_below);
    if (n_from) r->ppl_from_training = exp(from / (double)n_from);
    return 0;
}

static int measure_row(gs_compare_row *r, const gs_compare_opts *o);

/* The row's controls: each control run of its run measured as the row is, without intervals, into the
 * rows' control numbers; the judging is then the findings' rules with them. */
static int measure_controls(gs_compare_row *r, const gs_compare_opts *o) {
    store *st = store_open(r->store_path, STORE_READ);
    if (!st) return -1;
    int64_t runs[STORE_N_CONTROLS];
    for (int k = 0; k < STORE_N_CONTROLS; k++) runs[k] = store_control_run(st, r->run, store_control_names[k]);
    store_close(st);
    gs_compare_opts co = *o;
    co.boot = 0;
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (runs[k] < 0) return -1;
        if (!runs[k]) continue;
        gs_compare_row *c = malloc(sizeof *c);
        if (!c) return gs_fail("out of memory");
        *c = *r;
        memset(&c->an, 0, sizeof c->an);
        memset(&c->hz, 0, sizeof c->hz);
        c->run = runs[k];
        int rc = measure_row(c, &co);
        if (rc == 0) {
            gs_finding_controls *d = &r->default_ctl, *h = &r->horizon_ctl, *p = &r->pools_ctl;
            d->measured[k] = h->measured[k] = 1;
            d->run[k] = h->run[k] = p->run[k] = runs[k];
            d->x[k][0] = c->norm_ratio.value;
            d->x[k][1] = (r->batch_by_document ? c->batch_cos_documents : c->batch_cos_consecutive).value;
            d->x[k][2] = c->top_sv_cos.value;
            h->x[k][0] = c->centered_c1.value;
            h->x[k][1] = h->x[k][2] = c->h_002.value;
            h->inside[k] = !c->h_002_censored;
            if (c->pools_verdict != FINDING_NOT_MEASURED) {
                p->measured[k] = 1;
                p->verdict[k] = c->pools_verdict;
                p->x[k][0] = c->an.retention.est[GS_RET_FROM_START].pools.lr; /* the rule's statistic, as analyze's */
                p->x[k][1] = p->x[k][2] = c->an.retention.est[GS_RET_ALL_STARTS].pools.lr;
            }
        } else {
            gs_fail_context("its %s control (run %lld): ", store_control_names[k], (long long)runs[k]);
        }
        gs_analysis_free(&c->an);
        gs_horizons_free(&c->hz);
        free(c);
        if (rc) return -1;
    }
    gs_compare_row_judge(r);
    return 0;
}

static int measure(gs_compare_row *r, const gs_compare_opts *o) {
    return measure_row(r, o) || measure_controls(r, o) ? -1 : 0;
}

static int measure_row(gs_compare_row *r, const gs_compare_opts *o) {
    store *st = store_open(r->store_path, STORE_READ);
    if (!st) return -1;
    gs_analyze_opts ao;
    gs_analyze_opts_default(&ao);
    ao.parts = GS_AN_GEOMETRY | GS_AN_DEFAULT | (r->decay_site[0] ? GS_AN_RETENTION : 0);
    ao.kind = r->kind;
    ao.decay_site = r->decay_site[0] ? r->decay_site : NULL;
    ao.max_states = o->max_states;
    ao.seed = o->seed;
    ao.boot = o->boot;
    choose_positions(r, o);
    ao.max_positions = r->max_positions;
    int rc = position_perplexity(st, r);
    if (rc == 0) rc = gs_analyze_store(st, r->run, &ao, &r->an);
    if (rc == 0) { /* the table needs the decode's results, not the model: one row per layer would hold a copy each */
        gs_model_free(r->an.model);
        r->an.model = NULL;
    }
    gs_state_source *src = NULL;
    if (rc == 0) {
        src = gs_store_source_open(st, r->run, r->kind, 0, o->max_states);
        rc = src ? 0 : -1;
        if (src) gs_store_source_limit(src, r->max_positions);
    }
    if (rc == 0) {
        gs_horizon_opts ho;
        gs_horizon_opts_default(&ho);
        ho.per_window = 1;
        rc = gs_horizons_run(src, &ho, &r->hz);
        if (rc != 0) gs_fail_context("horizons: ");
    }
    gs_store_source_close(src);
    store_close(st);
    if (rc != 0) {
        gs_fail_context("%s: ", r->label);
        return -1;
    }
    const gs_default_dir *dd = &r->an.default_dir;
    const gs_horizons *h = &r->hz;
    r->n_states = r->an.geometry.n;
    r->n_windows = r->an.geometry.n_windows;
    r->d = r->an.geometry.d;
    /* the point values are the analyses' own; the bootstrap only adds the intervals */
    int ir1 = gs_horizons_nearest_enough(h, h->n_raw, h->c1_lag), irf = gs_horizons_nearest_enough(h, h->n_raw, 1500);
    int i256 = gs_horizons_nearest_enough(h, h->n_centered, 256);
    r->c1_lag = h->c1_lag;
    r->raw_far_lag = irf >= 0 ? h->lags[irf] : 0;
    r->centered_256_lag = i256 >= 0 ? h->lags[i256] : 0;
    r->norm_ratio = (gs_cmp_num){dd->norm_ratio, dd->norm_ratio_lo, dd->norm_ratio_hi};
    r->batch_cos_consecutive = (gs_cmp_num){dd->stability_valid ? dd->stab_mean : NAN, dd->stab_lo, dd->stab_hi};
    r->batch_cos_documents = (gs_cmp_num){dd->doc_valid ? dd->doc_mean : NAN, dd->doc_lo, dd->doc_hi};
    r->batch_by_document = dd->doc_valid;
    snprintf(r->batch_grouping_note, sizeof r->batch_grouping_note, "%s", dd->doc_note);
    r->batch_cos = r->batch_by_document ? r->batch_cos_documents : r->batch_cos_consecutive;
    no_interval(&r->raw_c1, ir1 >= 0 ? h->raw[ir1] : NAN);
    no_interval(&r->raw_far, irf >= 0 ? h->raw[irf] : NAN);
    no_interval(&r->centered_c1, h->c1);
    no_interval(&r->centered_256, i256 >= 0 ? h->centered[i256] : NAN);
    no_interval(&r->h_002, h->h_002);
    r->h_002_censored = h->h_002_censored;
    if (o->boot > 0 && bootstrap(r, o->boot, o->seed) != 0) return -1;
    r->top_sv_cos = (gs_cmp_num){fabs(dd->top_sv_cos), dd->top_sv_lo, dd->top_sv_hi}; /* the interval is of |cos| */
    gs_compare_row_judge(r);
    r->pools_verdict = FINDING_NOT_MEASURED;
    if (!r->decay_site[0]) {
        snprintf(r->pools_note, sizeof r->pools_note, "no decay site recorded for this %s", r->layer >= 0 ? "layer" : "run");
    } else if (!(r->an.done & GS_AN_RETENTION)) {
        snprintf(r->pools_note, sizeof r->pools_note, "%s", r->an.notes[0] ? r->an.notes : "retention did not run");
        char *nl = strchr(r->pools_note, '\n');
        if (nl) *nl = 0;
    } else {
        const gs_pools *ps = &r->an.retention.est[GS_RET_FROM_START].pools, *pa = &r->an.retention.est[GS_RET_ALL_STARTS].pools;
        r->has_pools = 1;
        if (ps->score_valid && pa->score_valid) r->pools_verdict = gs_finding_pools_rule(ps->verdict, pa->verdict);
        else snprintf(r->pools_note, sizeof r->pools_note, "too few heads for a pool split (%d; 3 needed)", r->an.retention.H);
    }
    return 0;
}

int gs_compare_run(const gs_compare_operand *ops, int n_ops, const gs_compare_opts *o, gs_compare *out) {
    memset(out, 0, sizeof *out);
    gs_compare_opts dflt;
    if (!o) { gs_compare_opts_default(&dflt); o = &dflt; }
    if (n_ops < 1) return gs_fail("no run to compare");
    if (o->boot < 0 || o->boot == 1) return gs_fail("--boot wants 0 (no intervals) or at least 2 resamples, got %d", o->boot);
    out->boot = o->boot;
    out->seed = o->seed;
    out->max_states = o->max_states;
    for (int i = 0; i < n_ops; i++)
        if (add_rows(&ops[i], o, out) != 0) goto fail;
    if (check_windows(out, o->allow_different_windows) != 0) goto fail;
    for (int i = 0; i < out->n_rows; i++) {
        if (o->progress) o->progress(o->progress_ctx, i, out->n_rows, out->rows[i].label);
        if (measure(&out->rows[i], o) != 0) goto fail;
    }
    return 0;
fail:
    gs_compare_free(out);
    return -1;
}
