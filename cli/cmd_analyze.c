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
#include "analyses/registry.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/lock.h"

static const char *help =
    "usage: gpnscope analyze FILE [--run N] [--only LIST]\n"
    "                        [--max-states N] [--skip-positions K] [--seed S] [--model MODEL]\n"
    "                        [--max-lag K] [--probe-max-lag K] [--probe-splits K] [--site NAME]\n"
    "                        [--decay-site NAME] [--kind pred|ground]\n"
    "                        [--train-corpus PATH] [--json]\n\n"
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
    "  --json              print one JSON object instead of the table\n\n"
    "mpirun -n K gpnscope analyze --shards SHARD... analyses an MPI recording's shards\n"
    "without merging them (gpnscope analyze --shards --help; docs/scale.md).\n";

/* the help, with one line per analysis of the registry (analyses/registry.c) */
static void print_help(FILE *f) {
    char rows[2048] = "";
    size_t len = 0;
    for (int i = 0; i < gs_n_analysis_rows && len < sizeof rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        if (!r->run) continue;
        char name[40];
        snprintf(name, sizeof name, "%s%s%s", r->name, r->alias ? "|" : "", r->alias ? r->alias : "");
        len += (size_t)snprintf(rows + len, sizeof rows - len, "                        %-17s %s\n", name, r->summary);
    }
    fputs(help, f);
    fputs(rows, f);
    fputs(help_rest, f);
}

static int parse_i64(const char *s, long long lo, long long *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo) return -1;
    *out = v;
    return 0;
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
    cli_options_start();
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
        case 'Z': o.site = optarg; break;
        case 'Y': o.decay_site = optarg; break;
        case 'T': o.train_corpus = optarg; break;
        case 'j': json = 1; break;
        case 'h': print_help(stdout); return 0;
        default: return cli_bad_option("analyze", opts, argv);
        }
    }
    if (optind != argc - 1) { print_help(stderr); return 2; }
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
        cJSON *j = gs_analysis_json(&a);
        if (have_findings) {
            cJSON *f = cJSON_AddObjectToObject(j, gs_analysis_stored_name(GS_AN_FINDINGS));
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
    fprintf(stderr, "gpnscope analyze: bad value '%s' for --%s\n", optarg, li >= 0 ? opts[li].name : "?");
    print_help(stderr);
    return 2;
}
