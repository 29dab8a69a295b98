/* gpnscope analyze FILE: the paper's measurements (docs/analyses.md) on a
 * run in a store, written back to the store and summarised beside the
 * paper's figures. The work is in analyses/analyze.c. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h"
#include "analyses/findings.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/lock.h"

static const char *help =
    "usage: gpnscope analyze FILE [--run N] [--only geometry,default,horizon,retention,probe]\n"
    "                        [--max-states N] [--skip-positions K] [--seed S] [--model MODEL]\n"
    "                        [--max-lag K] [--probe-max-lag K] [--site NAME] [--decay-site NAME]\n"
    "                        [--train-corpus PATH] [--json]\n\n"
    "Measure a recorded (or imported) run: the geometry of the state, the mean direction and\n"
    "its default tokens, the raw and centered lag-cosine horizons, the memory heads' retention\n"
    "and pools (GPN+M), and the probe horizon. Every result is written to the store, keyed by\n"
    "run, analysis and settings (the same settings replace, other settings add); a summary\n"
    "table puts the paper's figure beside ours. Definitions: docs/analyses.md.\n\n"
    "  --run N             the run (default: the newest complete run; an unfinished run\n"
    "                      is analysed only when named, and not while it is being recorded)\n"
    "  --only LIST         analyses to run, comma-separated (default: all that apply;\n"
    "                      named ones that cannot run are errors)\n"
    "  --max-states N      the first N states in (window, position) order (16384; 0: all)\n"
    "  --skip-positions K  leave out the states at positions < K of each window (0)\n"
    "  --seed S            heatmap sample, probe split, random batches, pool null\n"
    "                      draws and window bootstrap (1)\n"
    "  --model MODEL       the model for the decode and the probe (default: the run's)\n"
    "  --max-lag K         largest lag of the horizon curves (default: longest window)\n"
    "  --probe-max-lag K   largest probe lag (256)\n"
    "  --probe-splits K    probe splits by document, 1 to 64 (5): the horizon's spread,\n"
    "                      and their variance in the rule's standard error\n"
    "  --site NAME         which recorded vector site the state analyses read: state.pred\n"
    "                      (default), state.ground, or any site recorded with record --sites\n"
    "                      (docs/hooks.md); default: the run's state site (run_sites);\n"
    "                      --kind pred|ground is the older spelling\n"
    "  --decay-site NAME   the per-head decay site retention reads (default: the run's, e.g.\n"
    "                      mem.alpha; its write strengths: the same name with beta for alpha)\n"
    "  --train-corpus PATH the model's training corpus (shards, or JSONL/text tokenized with\n"
    "                      the run's tokenizer): the Spearman of the default tokens against\n"
    "                      its unigram counts, the paper's comparison (default: not measured)\n"
    "  --json              print one JSON object instead of the table\n\n"
    "mpirun -n K gpnscope analyze --shards SHARD... analyses an MPI recording's shards\n"
    "without merging them (gpnscope analyze --shards --help; docs/scale.md).\n";

static int parse_i64(const char *s, long long lo, long long *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo) return -1;
    *out = v;
    return 0;
}

static cJSON *json_result(const gs_analysis *a) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", (double)a->run_id);
    if (a->done & GS_AN_GEOMETRY) {
        const gs_geometry *g = &a->geometry;
        cJSON *j = cJSON_AddObjectToObject(o, "geometry");
        cJSON_AddNumberToObject(j, "n_states", (double)g->n);
        cJSON_AddNumberToObject(j, "n_windows", (double)g->n_windows);
        cJSON_AddNumberToObject(j, "d", g->d);
        cJSON_AddNumberToObject(j, "norm_mean", g->norm_mean);
        cJSON_AddNumberToObject(j, "norm_std", g->norm_std);
        cJSON_AddNumberToObject(j, "dim_std_min", g->dim_std_sorted[g->d - 1]);
        cJSON_AddNumberToObject(j, "dim_std_max", g->dim_std_sorted[0]);
        cJSON_AddNumberToObject(j, "dead_dims", g->n_dead);
        cJSON_AddNumberToObject(j, "corr_mean_abs", g->corr_mean_abs);
        cJSON_AddNumberToObject(j, "corr_max_abs", g->corr_max_abs);
        if (g->has_spectrum) {
            cJSON_AddNumberToObject(j, "components_90", g->n90);
            cJSON_AddNumberToObject(j, "components_99", g->n99);
            cJSON_AddNumberToObject(j, "stable_rank", g->stable_rank);
        }
        cJSON_AddNumberToObject(j, "participation_ratio", g->participation_ratio);
    }
    if (a->done & GS_AN_DEFAULT) {
        const gs_default_dir *r = &a->default_dir;
        cJSON *j = cJSON_AddObjectToObject(o, "default_direction");
        cJSON_AddNumberToObject(j, "mean_norm", r->mean_norm);
        cJSON_AddNumberToObject(j, "norm_ratio", r->norm_ratio);
        if (r->stability_valid) {
            cJSON_AddNumberToObject(j, "batch_cos_mean", r->stab_mean);
            cJSON_AddNumberToObject(j, "batch_cos_std", r->stab_std);
        }
        if (r->has_decode) {
            cJSON_AddItemToObject(j, "default_tokens", cJSON_CreateIntArray(r->top, GS_TOPK));
            cJSON_AddItemToObject(j, "embedding_tokens", cJSON_CreateIntArray(r->top_emb, GS_TOPK));
            cJSON_AddNumberToObject(j, "embedding_overlap", r->emb_overlap);
            cJSON_AddNumberToObject(j, "embedding_cos", r->emb_cos);
            /* spearman_unigram: against the recorded corpus; _train: against the training corpus */
            if (r->has_unigram && r->spearman_defined) cJSON_AddNumberToObject(j, "spearman_unigram", r->spearman);
            if (r->has_train_unigram && r->spearman_train_defined)
                cJSON_AddNumberToObject(j, "spearman_unigram_train", r->spearman_train);
        }
        if (r->has_t10) cJSON_AddNumberToObject(j, "emergence_t10", r->emerg_t10);
        if (r->has_t100) cJSON_AddNumberToObject(j, "emergence_t100", r->emerg_t100);
        cJSON_AddNumberToObject(j, "top_sv_cos", r->top_sv_cos);
        if (r->pc1_cos == r->pc1_cos) cJSON_AddNumberToObject(j, "pc1_cos", r->pc1_cos);
        if (r->random_valid) cJSON_AddNumberToObject(j, "batch_cos_random_mean", r->rand_mean);
    }
    if (a->done & GS_AN_HORIZON) {
        const gs_horizons *h = &a->horizons;
        cJSON *j = cJSON_AddObjectToObject(o, "horizons");
        cJSON_AddItemToObject(j, "lags", cJSON_CreateIntArray(h->lags, h->n_lags));
        cJSON_AddItemToObject(j, "raw", cJSON_CreateDoubleArray(h->raw, h->n_lags));
        cJSON_AddItemToObject(j, "centered", cJSON_CreateDoubleArray(h->centered, h->n_lags));
        if (h->h_e_valid) {
            cJSON_AddNumberToObject(j, "content_horizon_e", h->h_e);
            cJSON_AddBoolToObject(j, "content_horizon_e_censored", h->h_e_censored);
        }
        cJSON_AddNumberToObject(j, "content_horizon_002", h->h_002);
        cJSON_AddBoolToObject(j, "content_horizon_002_censored", h->h_002_censored);
    }
    if (a->done & GS_AN_RETENTION) {
        const gs_retention *r = &a->retention;
        cJSON *j = cJSON_AddObjectToObject(o, "retention");
        for (int e = 0; e < GS_RET_COUNT; e++) {
            const gs_retention_est *es = &r->est[e];
            const gs_pools *p = &es->pools;
            /* the all-starts estimator at the top level (as before); the paper's in "from_start" */
            cJSON *k = e == GS_RET_ALL_STARTS ? j : cJSON_AddObjectToObject(j, "from_start");
            cJSON_AddStringToObject(k, "estimator", gs_ret_estimator_name((gs_ret_estimator)e));
            cJSON_AddItemToObject(k, "e_fold_time", cJSON_CreateDoubleArray(es->e_fold_time, r->H));
            /* "half_life": the old name of e_fold_time (the 1/e time, not a half-life); kept for one version */
            if (e == GS_RET_ALL_STARTS) cJSON_AddItemToObject(k, "half_life", cJSON_CreateDoubleArray(es->e_fold_time, r->H));
            cJSON_AddItemToObject(k, "censored", cJSON_CreateIntArray(es->censored, r->H));
            if (p->valid) {
                cJSON_AddItemToObject(k, "pool", cJSON_CreateIntArray(p->pool, r->H));
                cJSON_AddItemToObject(k, "pool_n", cJSON_CreateIntArray(p->pool_n, 2));
            }
            if (p->score_valid) {
                cJSON_AddNumberToObject(k, "separation", p->separation);
                if (p->null_draws > 0) {
                    cJSON_AddNumberToObject(k, "separation_null_p", p->null_p[GS_NULL_NORMAL]);
                    cJSON *np = cJSON_AddObjectToObject(k, "null_p"), *se = cJSON_AddObjectToObject(k, "null_p_se");
                    for (int f = 0; f < GS_NULL_COUNT; f++) {
                        cJSON_AddNumberToObject(np, gs_null_family_name((gs_null_family)f), p->null_p[f]);
                        cJSON_AddNumberToObject(se, gs_null_family_name((gs_null_family)f), p->null_se[f]);
                    }
                    cJSON_AddNumberToObject(k, "null_draws", p->null_draws);
                    cJSON_AddStringToObject(k, "pool_verdict", gs_pool_verdict_name(p->verdict));
                }
                if (p->boot_n > 0) {
                    double ci[3] = {p->boot_lo, p->boot_median, p->boot_hi};
                    cJSON_AddItemToObject(k, "separation_bootstrap", cJSON_CreateDoubleArray(ci, 3));
                    cJSON_AddNumberToObject(k, "split_stability", p->boot_same_split);
                }
            }
        }
        cJSON_AddItemToObject(j, "mean_beta", cJSON_CreateDoubleArray(r->mean_beta, r->H));
    }
    if (a->done & GS_AN_PROBE) {
        const gs_probe *p = &a->probe;
        cJSON *j = cJSON_AddObjectToObject(o, "probe");
        cJSON *lags = cJSON_AddArrayToObject(j, "lags"), *acc = cJSON_AddArrayToObject(j, "accuracy");
        cJSON *base = cJSON_AddArrayToObject(j, "baseline");
        for (int i = 0; i < p->n_lags; i++) {
            if (!p->measured[i]) continue;
            cJSON_AddItemToArray(lags, cJSON_CreateNumber(p->lags[i]));
            cJSON_AddItemToArray(acc, cJSON_CreateNumber(p->acc[i]));
            cJSON_AddItemToArray(base, cJSON_CreateNumber(p->baseline[i]));
        }
        cJSON_AddNumberToObject(j, "probe_horizon", p->horizon);
        cJSON_AddBoolToObject(j, "censored", p->censored);
        cJSON_AddNumberToObject(j, "splits", p->n_splits);
        cJSON_AddItemToObject(j, "horizon_by_split", cJSON_CreateIntArray(p->split_horizon, p->n_splits));
        cJSON_AddNumberToObject(j, "horizon_min", p->horizon_min);
        cJSON_AddNumberToObject(j, "horizon_median", p->horizon_median);
        cJSON_AddNumberToObject(j, "horizon_max", p->horizon_max);
        cJSON_AddStringToObject(j, "split", p->by_document ? "documents" : "windows");
        cJSON_AddNumberToObject(j, "test_documents", (double)p->n_test_docs);
        cJSON_AddNumberToObject(j, "train_documents", (double)p->n_train_docs);
        cJSON_AddStringToObject(j, "rule", p->rule);
    }
    if (a->notes[0]) cJSON_AddStringToObject(o, "notes", a->notes);
    return o;
}

int cmd_analyze(int argc, char **argv) {
    for (int i = 1; i < argc; i++) /* an MPI recording's shards: cli/cmd_analyze_shards.c */
        if (!strcmp(argv[i], "--shards")) return cmd_analyze_shards(argc, argv);
    gs_analyze_opts o;
    gs_analyze_opts_default(&o);
    long long run = 0, v;
    int json = 0;
    static const struct option opts[] = {
        {"run", required_argument, 0, 'r'},        {"only", required_argument, 0, 'o'},
        {"max-states", required_argument, 0, 'n'}, {"skip-positions", required_argument, 0, 'k'},
        {"seed", required_argument, 0, 's'},       {"model", required_argument, 0, 'm'},
        {"max-lag", required_argument, 0, 'L'},    {"probe-max-lag", required_argument, 0, 'P'},
        {"probe-splits", required_argument, 0, 'Q'},
        {"kind", required_argument, 0, 'K'},       {"site", required_argument, 0, 'Z'}, {"decay-site", required_argument, 0, 'Y'},       {"json", no_argument, 0, 'j'},
        {"train-corpus", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
    int ch, li = -1;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, &li)) != -1) {
        switch (ch) {
        case 'r': if (parse_i64(optarg, 1, &run)) goto bad; break;
        case 'o':
            if (gs_analyze_parse_parts(optarg, &o.parts) != 0) {
                fprintf(stderr, "gpnscope analyze: %s\n", gs_error());
                return 2;
            }
            o.explicit_parts = 1;
            break;
        case 'n': if (parse_i64(optarg, 0, &v)) goto bad; o.max_states = v; break;
        case 'k': if (parse_i64(optarg, 0, &v) || v > 1 << 30) goto bad; o.skip_positions = (int)v; break;
        case 's': if (parse_i64(optarg, 0, &v)) goto bad; o.seed = (uint64_t)v; break;
        case 'm': o.model_path = optarg; break;
        case 'L': if (parse_i64(optarg, 1, &v) || v > 1 << 30) goto bad; o.horizon_max_lag = (int)v; break;
        case 'P': if (parse_i64(optarg, 1, &v) || v > 1 << 30) goto bad; o.probe_max_lag = (int)v; break;
        case 'Q': if (parse_i64(optarg, 1, &v) || v > 64) goto bad; o.probe_splits = (int)v; break;
        case 'K': o.kind = optarg; break;
        case 'Z': o.kind = store_kind_of_site(optarg); break;
        case 'Y': o.decay_site = optarg; break;
        case 'T': o.train_corpus = optarg; break;
        case 'j': json = 1; break;
        case 'h': fputs(help, stdout); return 0;
        default: return cli_bad_option("analyze", opts, argv);
        }
    }
    if (optind != argc - 1) { fputs(help, stderr); return 2; }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_WRITE);
    if (!st) { fprintf(stderr, "gpnscope analyze: %s\n", gs_error()); return 1; }
    store_lock *lock = NULL;
    if (cli_pick_run("analyze", st, &run, &lock) != 0) {
        store_close(st);
        return 1;
    }
    gs_analysis a;
    if (gs_analyze_store(st, run, &o, &a) != 0) {
        fprintf(stderr, "gpnscope analyze: %s: run %lld: %s\n", path, run, gs_error());
        store_close(st);
        store_lock_release(lock);
        return 1;
    }
    if (gs_analysis_write(st, &a, &o, GPNSCOPE_VERSION) != 0) {
        fprintf(stderr, "gpnscope analyze: writing results to %s: %s\n", path, gs_error());
        gs_analysis_free(&a);
        store_close(st);
        store_lock_release(lock);
        return 1;
    }
    /* the verdicts on the paper's three structures, from what is now stored */
    gs_findings fd;
    int have_findings = gs_findings_compute(st, run, &fd) == 0;
    if (have_findings && gs_findings_write(st, run, &fd, GPNSCOPE_VERSION) != 0) {
        fprintf(stderr, "gpnscope analyze: writing findings to %s: %s\n", path, gs_error());
        gs_analysis_free(&a);
        store_close(st);
        store_lock_release(lock);
        return 1;
    }
    if (json) {
        cJSON *j = json_result(&a);
        if (have_findings) {
            cJSON *f = cJSON_AddObjectToObject(j, "findings");
            const finding *all[] = {&fd.default_direction, &fd.content_horizon, &fd.memory_pools};
            const char *names[] = {"default_direction", "content_horizon", "memory_pools"};
            for (int i = 0; i < 3; i++) {
                cJSON *x = cJSON_AddObjectToObject(f, names[i]);
                cJSON_AddStringToObject(x, "verdict", gs_finding_word(all[i]->verdict));
                cJSON_AddStringToObject(x, "text", all[i]->text);
            }
        }
        char *s = cJSON_PrintUnformatted(j);
        puts(s);
        free(s);
        cJSON_Delete(j);
    } else {
        gs_analysis_print(stdout, st, &a);
        if (have_findings) {
            fputc('\n', stdout);
            gs_findings_print(stdout, &fd);
        }
    }
    gs_analysis_free(&a);
    store_close(st);
    store_lock_release(lock);
    return 0;
bad:
    fprintf(stderr, "gpnscope analyze: bad value '%s' for --%s\n%s", optarg, li >= 0 ? opts[li].name : "?", help);
    return 2;
}
