/* gpnscope analyze --shards SHARD...: the analyses of an MPI recording's
 * shards without merging them, reduced over the ranks of `mpirun -n K`
 * (analyses/shards.h, docs/scale.md). Rank 0 prints one JSON object. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h"
#include "analyses/shards.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "parallel/job.h"

static const char *help =
    "usage: mpirun -n K gpnscope analyze --shards SHARD... [--only LIST] [--max-states N] [--decay-site NAME]\n"
    "                                     [--skip-positions K] [--seed S] [--max-lag K] [--site NAME]\n"
    "                                     [--model MODEL] [--probe-max-lag K] [--probe-splits K]\n\n"
    "Analyse the shards of an MPI recording (mpirun -n K gpnscope record; docs/scale.md)\n"
    "without merging them: rank r reads the shards at places r, r + K, ... of the list (in\n"
    "the order of the ranks that recorded them), streams their states through the\n"
    "analyses' accumulation (geometry: norms, mean, covariance; default direction: batch\n"
    "and per-step emergence sums; horizons: per-lag sums of cosines and pair counts;\n"
    "retention: per-lag, per-head sums of decay products, once and per bootstrap resample;\n"
    "probe: per lag the ridge's Gram, X^T Y and the held-out tallies), and the sums are\n"
    "added up over the ranks (MPI_Allreduce);\n"
    "rank 0 finishes and prints one JSON object. Its numbers equal `gpnscope analyze` on\n"
    "the merged store (gpnscope merge) to rounding: the same sums, added in another order\n"
    "(about 1e-12 relative; the test checks 1e-9). Without mpirun it is one rank.\n"
    "Nothing is written to the shards.\n\n"
    "  --only LIST         of geometry, default, horizon, retention, probe (default: the first\n"
    "                      three; default reads the geometry; retention needs a model with\n"
    "                      memory; probe reads the model's embedding); the default tokens (a\n"
    "                      decode through the model) need the merged store\n"
    "  --seed S            the correlation heatmap's coordinates, the default direction's\n"
    "                      random batches, retention's bootstrap and null draws, the probe's\n"
    "                      split (1)\n"
    "  --model MODEL       the model whose embedding the probe decodes to (default: the run's)\n"
    "  --probe-max-lag K   largest probe lag (256)\n"
    "  --probe-splits K    probe splits by document, 1 to 64 (5), as analyze's\n"
    "  --decay-site NAME   retention's per-head decay site (default: the run's, else mem.alpha)\n"
    "  --max-states N      the first N states in (window, position) order (16384; 0: all)\n"
    "  --skip-positions K  leave out the states at positions < K of each window (0)\n"
    "  --max-lag K         largest lag of the horizon curves (default: longest window)\n"
    "  --site NAME         the recorded vector site to read (default: the run's state site);\n"
    "                      --kind pred|ground is the older spelling\n";

static cJSON *geometry_json(const gs_geometry *g) {
    cJSON *j = cJSON_CreateObject();
    /* the keys `gpnscope analyze` stores (analysis_scalars of "geometry") */
    gs_geometry_json(j, g, 1);
    return j;
}

static cJSON *default_json(const gs_default_dir *r) {
    cJSON *j = cJSON_CreateObject();
    /* the keys and series `gpnscope analyze` stores for "default_direction" (no decode: no model here) */
    cJSON_AddNumberToObject(j, "mean_norm", r->mean_norm);
    cJSON_AddNumberToObject(j, "norm_ratio", r->norm_ratio);
    if (r->stability_valid) {
        cJSON_AddNumberToObject(j, "batch_cos_mean", r->stab_mean);
        cJSON_AddNumberToObject(j, "batch_cos_std", r->stab_std);
        cJSON_AddItemToObject(j, "batch_cosines", cJSON_CreateDoubleArray(r->batch_cos, r->n_pairs));
    }
    if (r->random_valid) {
        cJSON_AddNumberToObject(j, "batch_cos_random_mean", r->rand_mean);
        cJSON_AddNumberToObject(j, "batch_cos_random_std", r->rand_std);
    }
    if (r->pc1_cos == r->pc1_cos) cJSON_AddNumberToObject(j, "pc1_cos", r->pc1_cos);
    if (r->mean_norm2_over_lambda1 == r->mean_norm2_over_lambda1)
        cJSON_AddNumberToObject(j, "mean_norm2_over_lambda1", r->mean_norm2_over_lambda1);
    if (r->has_t10) cJSON_AddNumberToObject(j, "emergence_t10", r->emerg_t10);
    if (r->has_t100) cJSON_AddNumberToObject(j, "emergence_t100", r->emerg_t100);
    cJSON_AddNumberToObject(j, "top_sv_cos", r->top_sv_cos);
    cJSON_AddItemToObject(j, "emergence", cJSON_CreateDoubleArray(r->emergence, (int)r->emerg_len));
    return j;
}

static void add_doubles(cJSON *j, const char *key, const double *x, int n) {
    cJSON_AddItemToObject(j, key, cJSON_CreateDoubleArray(x, n)); /* NaN prints as null */
}

static cJSON *retention_json(const gs_retention *r) {
    cJSON *j = cJSON_CreateObject();
    /* the series and scalars `gpnscope analyze` stores for "retention" (retention_store.c), by the same names */
    cJSON_AddNumberToObject(j, "heads", r->H);
    cJSON_AddItemToObject(j, "lags", cJSON_CreateIntArray(r->lags, r->n_lags));
    double *y = malloc(sizeof(double) * (size_t)(r->n_lags + r->H + 1));
    if (!y) return j;
    for (int i = 0; i < r->n_lags; i++) y[i] = (double)r->n_pairs[i];
    add_doubles(j, "retention_pairs", y, r->n_lags);
    for (int i = 0; i < r->n_lags; i++) y[i] = (double)r->n_starts[i];
    add_doubles(j, "retention_starts", y, r->n_lags);
    add_doubles(j, "extrapolated", r->extrapolated, r->H);
    add_doubles(j, "mean_alpha", r->mean_alpha, r->H);
    if (r->has_beta) add_doubles(j, "mean_beta", r->mean_beta, r->H);
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_retention_est *es = &r->est[e];
        const gs_pools *p = &es->pools;
        const char *sfx = gs_ret_estimator_suffix((gs_ret_estimator)e);
        char k[96];
        snprintf(k, sizeof k, "e_fold_time%s", sfx);
        add_doubles(j, k, es->e_fold_time, r->H);
        for (int h = 0; h < r->H; h++) y[h] = es->censored[h];
        snprintf(k, sizeof k, "censored%s", sfx);
        add_doubles(j, k, y, r->H);
        for (int h = 0; h < r->H; h++) {
            snprintf(k, sizeof k, e == GS_RET_FROM_START ? "R_from_start_head%d" : "R_head%d", h);
            for (int i = 0; i < r->n_lags; i++) y[i] = es->R[(int64_t)i * r->H + h];
            add_doubles(j, k, y, r->n_lags);
        }
        const struct { const char *key; double v; int valid; } sc[] = {
            {"gap_log", p->gap, p->valid},
            {"separation", p->separation, p->score_valid},
            {"separation_boot_lo", p->boot_lo, p->score_valid && p->boot_n > 0},
            {"separation_boot_median", p->boot_median, p->score_valid && p->boot_n > 0},
            {"separation_boot_hi", p->boot_hi, p->score_valid && p->boot_n > 0},
            {"split_stability", p->boot_same_split, p->score_valid && p->boot_n > 0},
        };
        for (size_t i = 0; i < sizeof sc / sizeof *sc; i++) {
            snprintf(k, sizeof k, "%s%s", sc[i].key, sfx);
            if (sc[i].valid && isfinite(sc[i].v)) cJSON_AddNumberToObject(j, k, sc[i].v);
        }
    }
    free(y);
    return j;
}

static cJSON *horizons_json(const gs_horizons *h) {
    cJSON *j = cJSON_CreateObject();
    /* the keys and series `gpnscope analyze` stores for "horizons" */
    cJSON_AddNumberToObject(j, "c1", h->c1);
    if (h->h_e_valid) {
        cJSON_AddNumberToObject(j, "content_horizon_e", h->h_e);
        cJSON_AddNumberToObject(j, "content_horizon_e_censored", h->h_e_censored);
    }
    cJSON_AddNumberToObject(j, "content_horizon_002", h->h_002);
    cJSON_AddNumberToObject(j, "content_horizon_002_censored", h->h_002_censored);
    cJSON_AddNumberToObject(j, "zero_states", (double)h->n_zero_states);
    cJSON_AddItemToObject(j, "lags", cJSON_CreateIntArray(h->lags, h->n_lags));
    cJSON_AddItemToObject(j, "raw", cJSON_CreateDoubleArray(h->raw, h->n_lags)); /* NaN prints as null */
    cJSON_AddItemToObject(j, "centered", cJSON_CreateDoubleArray(h->centered, h->n_lags));
    cJSON *nr = cJSON_AddArrayToObject(j, "raw_pairs"), *nc = cJSON_AddArrayToObject(j, "centered_pairs");
    for (int i = 0; i < h->n_lags; i++) {
        cJSON_AddItemToArray(nr, cJSON_CreateNumber((double)h->n_raw[i]));
        cJSON_AddItemToArray(nc, cJSON_CreateNumber((double)h->n_centered[i]));
    }
    return j;
}

static cJSON *probe_json(const gs_probe *p, uint64_t seed) {
    cJSON *j = cJSON_CreateObject();
    /* the series (at the measured lags) and scalars `gpnscope analyze` stores for "probe" (run_probe.c) */
    cJSON *lags = cJSON_AddArrayToObject(j, "lags");
    static const char *const names[] = {"accuracy", "baseline", "pass", "n_test", "se", "se_block", "se_binomial",
                                        "sd_over_splits"};
    cJSON *ser[8];
    for (int k = 0; k < 8; k++) ser[k] = cJSON_AddArrayToObject(j, names[k]);
    for (int i = 0; i < p->n_lags; i++) {
        if (!p->measured[i]) continue;
        const double y[8] = {p->acc[i], p->baseline[i], p->pass[i], (double)p->n_test[i], p->se[i],
                             p->se_block[i], p->se_binomial[i], p->sd_splits[i]};
        cJSON_AddItemToArray(lags, cJSON_CreateNumber(p->lags[i]));
        for (int k = 0; k < 8; k++) cJSON_AddItemToArray(ser[k], isfinite(y[k]) ? cJSON_CreateNumber(y[k]) : cJSON_CreateNull());
    }
    cJSON *hs = cJSON_AddArrayToObject(j, "horizon_by_split"), *hx = cJSON_AddArrayToObject(j, "horizon_by_split_seed");
    for (int k = 0; k < p->n_splits; k++) {
        cJSON_AddItemToArray(hs, cJSON_CreateNumber(p->split_horizon[k]));
        cJSON_AddItemToArray(hx, cJSON_CreateNumber((double)(seed + (uint64_t)k)));
    }
    const struct { const char *key; double v; } sc[] = {
        {"probe_horizon", p->horizon}, {"probe_horizon_censored", p->censored},
        {"probe_horizon_min", p->horizon_min}, {"probe_horizon_median", p->horizon_median},
        {"probe_horizon_max", p->horizon_max}, {"splits", p->n_splits},
        {"split_by_document", p->by_document}, {"train_documents", (double)p->n_train_docs},
        {"test_documents", (double)p->n_test_docs}, {"train_windows", (double)p->n_train_windows},
        {"test_windows", (double)p->n_test_windows},
    };
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++) cJSON_AddNumberToObject(j, sc[i].key, sc[i].v);
    cJSON_AddStringToObject(j, "rule", p->rule);
    return j;
}

/* "'TEXT': expected a non-negative integer", or the row's range for one out of it */
static void bad_integer(const char *cmd, const cli_opt *row, const char *text) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < 0) fprintf(stderr, "gpnscope %s: '%s': expected a non-negative integer\n", cmd, text);
    else fprintf(stderr, "gpnscope %s: --%s %s: expected %lld to %lld\n", cmd, row->name, text, row->lo, row->hi);
}

/* --only: the parts to run, those reduced over shards */
static int only_option(const char *cmd, const char *value, void *parts) {
    if (gs_analyze_parse_parts(value, parts)) {
        fprintf(stderr, "gpnscope %s: --only: %s\n", cmd, gs_error());
        return 2;
    }
    if (*(unsigned *)parts & ~(unsigned)GS_SHARDS_PARTS) { /* a part added to analyze but not here */
        fprintf(stderr, "gpnscope %s: --only %s: only geometry, default, horizon, retention and probe are reduced "
                "over shards so far: merge the shards (gpnscope merge STORE SHARD...) and analyze the store for the "
                "others\n", cmd, value);
        return 2;
    }
    return 0;
}

int cmd_analyze_shards(int argc, char **argv) {
    gs_shards_opts o = {0};
    gs_geometry_opts_default(&o.geometry);
    gs_horizon_opts_default(&o.horizons);
    gs_default_opts_default(&o.dflt);
    gs_retention_opts_default(&o.retention);
    gs_probe_opts_default(&o.probe);
    o.max_states = 16384;
    int shards = 0, seed_given = 0;
    long long seed = 0;
    const cli_opt opts[] = {
        {CLI_FLAG("shards", &shards)},
        {CLI_CALL("only", only_option, &o.parts)},
        {CLI_INTEGER("max-states", &o.max_states, 0, INT64_MAX, "")},
        {CLI_INTEGER("skip-positions", &o.skip_positions, 0, INT_MAX, "")},
        {CLI_INTEGER("seed", &seed, 0, INT64_MAX, ""), .seen = &seed_given},
        {CLI_STRING("site", &o.kind)},
        {CLI_STRING("kind", &o.kind)},
        {CLI_INTEGER("max-lag", &o.horizons.max_lag, 0, INT_MAX, "")},
        {CLI_STRING("decay-site", &o.decay_site)},
        {CLI_STRING("model", &o.model_path)},
        {CLI_INTEGER("probe-max-lag", &o.probe.max_lag, 1, 1 << 30, "")},
        {CLI_INTEGER("probe-splits", &o.probe.splits, 1, 64, "")},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"analyze", help, bad_integer}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (seed_given) o.geometry.seed = o.dflt.seed = o.retention.seed = o.probe.seed = (uint64_t)seed;
    if (optind >= argc) {
        fprintf(stderr, "gpnscope analyze: --shards: name at least one shard (see --help)\n");
        return 2;
    }
    char kind[64];
    if (o.kind && (!strncmp(o.kind, "state.", 6) || !strcmp(o.kind, "pred") || !strcmp(o.kind, "ground"))) {
        snprintf(kind, sizeof kind, "%s", !strncmp(o.kind, "state.", 6) ? o.kind + 6 : o.kind); /* the stored kind */
        o.kind = kind;
    }
    gs_job job;
    if (gs_job_start(&job)) { fprintf(stderr, "gpnscope analyze: %s\n", gs_error()); return 1; }
    gs_shards_result r;
    int rc = gs_shards_analyze(&job, (const char *const *)argv + optind, argc - optind, &o, &r);
    if (rc && job.rank == 0) fprintf(stderr, "gpnscope analyze: %s\n", gs_error());
    if (!rc && job.rank == 0) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "shards", r.n_shards);
        cJSON_AddNumberToObject(j, "recorded_by_ranks", r.n_ranks);
        cJSON_AddNumberToObject(j, "analysed_by_ranks", job.size);
        cJSON_AddStringToObject(j, "kind", r.kind);
        if (r.done & GS_AN_GEOMETRY) cJSON_AddItemToObject(j, "geometry", geometry_json(&r.geometry));
        if (r.done & GS_AN_DEFAULT) cJSON_AddItemToObject(j, "default", default_json(&r.default_dir));
        if (r.done & GS_AN_RETENTION) cJSON_AddItemToObject(j, "retention", retention_json(&r.retention));
        if (r.done & GS_AN_HORIZON) cJSON_AddItemToObject(j, "horizons", horizons_json(&r.horizons));
        if (r.done & GS_AN_PROBE) cJSON_AddItemToObject(j, "probe", probe_json(&r.probe, o.probe.seed));
        char *txt = cJSON_Print(j);
        printf("%s\n", txt);
        free(txt);
        cJSON_Delete(j);
    }
    if (!rc) gs_shards_result_free(&r);
    gs_job_end(&job);
    return rc ? 1 : 0;
}
