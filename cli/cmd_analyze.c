/* gpnscope analyze FILE: the paper's measurements (docs/analyses.md) on a
 * run in a store, written back to the store and summarised beside the
 * paper's figures; with --shards, on an MPI recording's shards without
 * merging them (docs/scale.md). One option table and one output for both:
 * the work is in analyses/analyze.c (the row driver, for both) and
 * analyses/shards.c (the shards as its input). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyses/analyze.h"
#include "analyses/findings.h"
#include "analyses/registry.h"
#include "analyses/result_keys.h"
#include "analyses/shards.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "parallel/job.h"
#include "store/lock.h"

static const char *help =
    "usage: gpnscope analyze FILE [--run N] [--only LIST]\n"
    "                        [--max-states N] [--skip-positions K] [--seed S] [--model MODEL]\n"
    "                        [--max-lag K] [--probe-max-lag K] [--probe-splits K] [--site NAME]\n"
    "                        [--decay-site NAME] [--kind pred|ground] [--positions training|all]\n"
    "                        [--train-corpus PATH] [--json] [--quiet]\n"
    "       mpirun -n K gpnscope analyze --shards SHARD... [the options above but --run]\n"
    "       gpnscope analyze --keys\n\n"
    "Measure a recorded (or imported) run: the geometry of the state, the mean direction and\n"
    "its default tokens, the raw and centered lag-cosine horizons, the memory heads' retention\n"
    "and pools (GPN+M), and the probe horizon. Every result is written to the store, keyed by\n"
    "run, analysis and settings (the same settings replace, other settings add); a summary\n"
    "table puts the paper's figure beside ours. Definitions: docs/analyses.md.\n\n"
    "  --run N             the run (default: the newest complete run; an unfinished run\n"
    "                      is analysed only when named, and not while it is being recorded)\n"
    "  --only LIST         analyses to run, comma-separated (default: all that apply;\n"
    "                      named ones that cannot run are errors); the analyses:\n";
static const char *help_rest =
    "  --max-states N      the first N states in (window, position) order (16384; 0: all)\n"
    "  --skip-positions K  leave out the states at positions < K of each window (0)\n"
    "  --positions P       training (default): read the positions below the model's training\n"
    "                      length (data.seq_len of config.json beside the checkpoint) when the\n"
    "                      windows are longer, since past it a model extrapolates; all: every\n"
    "                      recorded position. The states and the decays alike; the output says\n"
    "                      which (as compare --positions)\n"
    "  --seed S            heatmap sample, probe split, random batches, pool null\n"
    "                      draws and window bootstrap (1)\n"
    "  --model MODEL       the model for the decode and the probe (default: the run's)\n"
    "  --max-lag K         largest lag of the horizon curves (default: longest window)\n"
    "  --probe-max-lag K   largest probe lag (256)\n"
    "  --probe-splits K    probe splits by document, 1 to 64 (5): the horizon's spread,\n"
    "                      and their variance in the rule's standard error\n"
    "  --site NAME         the recorded site the analyses read (docs/hooks.md): a vector site\n"
    "                      (state.pred, state.ground, any recorded with record --sites) for\n"
    "                      geometry, default, horizon and probe; a per-head decay site (e.g.\n"
    "                      mem.alpha) for retention, as --decay-site; default: the run's state\n"
    "                      and decay sites (run_sites); --kind pred|ground is the older spelling\n"
    "  --decay-site NAME   the per-head decay site retention reads (default: the run's, e.g.\n"
    "                      mem.alpha; its write strengths: the same name with beta for alpha)\n"
    "  --train-corpus PATH the model's training corpus (shards, or JSONL/text tokenized with\n"
    "                      the run's tokenizer): the Spearman of the default tokens against\n"
    "                      its unigram counts, the paper's comparison (default: not measured)\n"
    "  --json              print one JSON object instead of the table: the same document\n"
    "                      for a store and for its shards (but findings: a store's only)\n"
    "  --quiet             no progress on stderr (on a terminal: the analysis running and\n"
    "                      the time so far; elsewhere a plain line every 10 s or more and one\n"
    "                      at the end with each analysis' time)\n"
    "  --keys              list the result keys each analysis stores (analysis, key, unit,\n"
    "                      meaning; tab-separated) and exit\n"
    "  --shards SHARD...   analyse the shards of an MPI recording (mpirun -n K gpnscope\n"
    "                      record) without merging them: rank r reads the shards at places\n"
    "                      r, r + K, ... of the list, each analysis' sums are added over the\n"
    "                      ranks (MPI_Allreduce) and rank 0 finishes and prints (and draws\n"
    "                      the progress: reading the shards, then each analysis); the same\n"
    "                      options, analyses and numbers as on the merged store (to ~1e-12),\n"
    "                      nothing written to the shards, no findings; without mpirun one\n"
    "                      rank (docs/scale.md)\n";

/* the help, with one line per analysis of the registry (analyses/registry.c) */
static const char *help_text(void) {
    static char text[16384];
    if (text[0]) return text;
    size_t len = (size_t)snprintf(text, sizeof text, "%s", help);
    for (int i = 0; i < gs_n_analysis_rows && len < sizeof text; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        if (!r->run) continue;
        char name[40];
        snprintf(name, sizeof name, "%s%s%s", r->name, r->alias ? "|" : "", r->alias ? r->alias : "");
        len += (size_t)snprintf(text + len, sizeof text - len, "                        %-17s %s\n", name, r->summary);
    }
    if (len < sizeof text) snprintf(text + len, sizeof text - len, "%s", help_rest);
    return text;
}

static void bad_value(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: bad value '%s' for --%s\n%s", cmd, text, row->name, help_text());
}

/* the results on stdout: one JSON object (with the findings when there are any), or the table (st: the
 * store that names the tokens) */
static void print_results(store *st, gs_analysis *a, const gs_findings *fd, int json, const gs_analyze_opts *o) {
    if (json) {
        cJSON *j = gs_analysis_json(a, o);
        if (fd) {
            cJSON *f = cJSON_AddObjectToObject(j, gs_analysis_stored_name(GS_AN_FINDINGS));
            const finding *all[] = {&fd->default_direction, &fd->content_horizon, &fd->memory_pools};
            const char *names[] = {"default_direction", "content_horizon", "memory_pools"};
            for (int i = 0; i < 3; i++) {
                cJSON *x = cJSON_AddObjectToObject(f, names[i]);
                cJSON_AddStringToObject(x, "verdict", i == 2 ? gs_finding_pools_word(all[i]->verdict)
                                                             : gs_finding_word(all[i]->verdict));
                cJSON_AddStringToObject(x, "brief", all[i]->brief);
                cJSON_AddStringToObject(x, "text", all[i]->text);
                cJSON *ctl = gs_finding_controls_json(&all[i]->controls, i);
                if (ctl) cJSON_AddItemToObject(x, "controls", ctl);
            }
        }
        char *s = cJSON_PrintUnformatted(j);
        puts(s);
        free(s);
        cJSON_Delete(j);
    } else {
        gs_analysis_print(stdout, st, a);
        if (fd) {
            fputc('\n', stdout);
            gs_findings_print(stdout, fd);
        }
    }
}

/* gs_analyze_opts.on_part: the analysis running on the progress line */
static void on_part(void *ctx, int k, int n, const char *name) { progress_step(ctx, k, n, name); }

/* The analyses one by one on stderr (drawn in place on a terminal, plain lines elsewhere, as a log
 * wants), through o's on_part; --quiet (and ranks but 0 of a job) off. */
static void part_progress(progress *pg, gs_analyze_opts *o, int quiet) {
    progress_start(pg, "analyze", "", 0);
    progress_plain(pg, 10, 0, NULL, NULL);
    if (quiet) pg->enabled = PROGRESS_OFF;
    o->on_part = on_part;
    o->on_part_ctx = pg;
}

/* --shards: the analyses reduced over the ranks of the job (analyses/shards.h); rank 0 prints, with token text
 * from the first shard, and draws the progress of the parts */
static int analyze_shards(const gs_analyze_opts *opts, int json, int quiet, char **paths, int n) {
    if (n < 1) {
        fprintf(stderr, "gpnscope analyze: --shards: name at least one shard (see --help)\n");
        return 2;
    }
    gs_job job;
    if (gs_job_start(&job)) { fprintf(stderr, "gpnscope analyze: %s\n", gs_error()); return 1; }
    gs_analyze_opts eff = *opts, *o = &eff;
    progress pg;
    part_progress(&pg, o, quiet || job.rank != 0);
    gs_analysis a;
    int rc = gs_analyze_shards(&job, (const char *const *)paths, n, o, &a);
    if (rc) progress_clear(&pg);
    if (rc && job.rank == 0) fprintf(stderr, "gpnscope analyze: %s\n", gs_error());
    if (!rc && job.rank == 0) {
        store *st = json ? NULL : store_open(paths[0], STORE_READ);
        if (json || st) print_results(st, &a, NULL, json, o);
        else rc = -1, fprintf(stderr, "gpnscope analyze: %s\n", gs_error());
        store_close(st);
    }
    if (!rc) gs_analysis_free(&a);
    gs_job_end(&job);
    return rc ? 1 : 0;
}

int cmd_analyze(int argc, char **argv) {
    gs_analyze_opts o;
    gs_analyze_opts_default(&o);
    long long run = 0;
    int json = 0, shards = 0, run_given = 0, all_positions = 0, quiet = 0, keys = 0;
    static const char *const positions[] = {"training", "all", NULL};
    const cli_opt opts[] = {
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id"), .seen = &run_given},
        {CLI_LIST("only", &o.parts, gs_analyze_parse_parts, ""), .seen = &o.explicit_parts},
        {CLI_INTEGER("max-states", &o.max_states, 0, INT64_MAX, "a count")},
        {CLI_INTEGER("skip-positions", &o.skip_positions, 0, 1 << 30, "a count")},
        {CLI_CHOICE("positions", &all_positions, positions, "'training' or 'all'")},
        {CLI_INTEGER("seed", &o.seed, 0, INT64_MAX, "a seed")},
        {CLI_STRING("model", &o.model_path)},
        {CLI_INTEGER("max-lag", &o.horizon_max_lag, 1, 1 << 30, "a lag")},
        {CLI_INTEGER("probe-max-lag", &o.probe_max_lag, 1, 1 << 30, "a lag")},
        {CLI_INTEGER("probe-splits", &o.probe_splits, 1, 64, "a count")},
        {CLI_STRING("kind", &o.kind)},
        {CLI_STRING("site", &o.site)},
        {CLI_STRING("decay-site", &o.decay_site)},
        {CLI_FLAG("json", &json)},
        {CLI_FLAG("quiet", &quiet)},
        {CLI_STRING("train-corpus", &o.train_corpus)},
        {CLI_FLAG("shards", &shards)},
        {CLI_FLAG("keys", &keys)},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"analyze", help_text(), bad_value}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (keys) { gs_result_keys_print(stdout); return 0; }
    o.max_positions = all_positions ? 0 : GS_POSITIONS_TRAINING;
    if (shards && run_given) {
        fprintf(stderr, "gpnscope analyze: --run names a run of a store; shards hold one run each\n");
        return 2;
    }
    if (shards) return analyze_shards(&o, json, quiet, argv + optind, argc - optind);
    if (optind != argc - 1) { fputs(help_text(), stderr); return 2; }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_WRITE);
    if (!st) { fprintf(stderr, "gpnscope analyze: %s\n", gs_error()); return 1; }
    store_lock *lock = NULL;
    if (cli_pick_run("analyze", st, &run, &lock) != 0) {
        store_close(st);
        return 1;
    }
    progress pg;
    part_progress(&pg, &o, quiet);
    gs_analysis a;
    if (gs_analyze_store(st, run, &o, &a) != 0) {
        progress_clear(&pg);
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
    /* the run's controls (gpnscope controls), which every verdict is read beside */
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        char label[64];
        snprintf(label, sizeof label, "analyze: the %s control", store_control_names[k]);
        pg.label = label;
        int c = gs_analyze_control(st, run, k, &o, GPNSCOPE_VERSION);
        pg.label = "analyze";
        if (c < 0) {
            progress_clear(&pg);
            fprintf(stderr, "gpnscope analyze: %s: run %lld: %s\n", path, run, gs_error());
            gs_analysis_free(&a);
            store_close(st);
            store_lock_release(lock);
            return 1;
        }
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
    print_results(st, &a, have_findings ? &fd : NULL, json, &o);
    gs_analysis_free(&a);
    store_close(st);
    store_lock_release(lock);
    return 0;
}
