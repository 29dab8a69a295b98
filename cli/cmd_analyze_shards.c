/* gpnscope analyze --shards SHARD...: the analyses of an MPI recording's
 * shards without merging them, reduced over the ranks of `mpirun -n K`
 * (analyses/shards.h, docs/scale.md). Rank 0 prints one JSON object. */
#include <cjson/cJSON.h>
#include <getopt.h>
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
    "usage: mpirun -n K gpnscope analyze --shards SHARD... [--only geometry] [--max-states N]\n"
    "                                     [--skip-positions K] [--seed S] [--site NAME]\n\n"
    "Analyse the shards of an MPI recording (mpirun -n K gpnscope record; docs/scale.md)\n"
    "without merging them: rank r reads the shards at places r, r + K, ... of the list (in\n"
    "the order of the ranks that recorded them), streams their states through the\n"
    "analysis's accumulation, and the sums are added up over the ranks (MPI_Allreduce);\n"
    "rank 0 finishes and prints one JSON object. Its numbers equal `gpnscope analyze` on\n"
    "the merged store (gpnscope merge) to rounding: the same sums, added in another order\n"
    "(about 1e-12 relative; the test checks 1e-9). Without mpirun it is one rank.\n"
    "Nothing is written to the shards.\n\n"
    "  --only LIST         the analyses: geometry (the one reduced over shards so far; the\n"
    "                      others need the merged store)\n"
    "  --max-states N      the first N states in (window, position) order (16384; 0: all)\n"
    "  --skip-positions K  leave out the states at positions < K of each window (0)\n"
    "  --seed S            the correlation heatmap's sample of coordinates (1)\n"
    "  --site NAME         the recorded vector site to read (default: the run's state site);\n"
    "                      --kind pred|ground is the older spelling\n";

static cJSON *geometry_json(const gs_geometry *g) {
    cJSON *j = cJSON_CreateObject();
    /* the keys `gpnscope analyze` stores (analysis_scalars of "geometry") */
    cJSON_AddNumberToObject(j, "n_states", (double)g->n);
    cJSON_AddNumberToObject(j, "n_windows", (double)g->n_windows);
    cJSON_AddNumberToObject(j, "d", g->d);
    cJSON_AddNumberToObject(j, "norm_mean", g->norm_mean);
    cJSON_AddNumberToObject(j, "norm_std", g->norm_std);
    cJSON_AddNumberToObject(j, "mean_norm", g->mean_norm);
    cJSON_AddNumberToObject(j, "median_std", g->median_std);
    cJSON_AddNumberToObject(j, "dim_std_min", g->dim_std_sorted[g->d - 1]);
    cJSON_AddNumberToObject(j, "dim_std_max", g->dim_std_sorted[0]);
    cJSON_AddNumberToObject(j, "dead_dims", g->n_dead);
    cJSON_AddNumberToObject(j, "zero_variance_dims", g->n_zero_var);
    cJSON_AddNumberToObject(j, "corr_mean_abs", g->corr_mean_abs);
    cJSON_AddNumberToObject(j, "corr_max_abs", g->corr_max_abs);
    cJSON_AddNumberToObject(j, "participation_ratio", g->participation_ratio);
    cJSON_AddNumberToObject(j, "total_variance", g->total_var);
    if (g->has_spectrum) {
        cJSON_AddNumberToObject(j, "components_90", g->n90);
        cJSON_AddNumberToObject(j, "components_99", g->n99);
        cJSON_AddNumberToObject(j, "stable_rank", g->stable_rank);
        cJSON_AddItemToObject(j, "eigenvalues", cJSON_CreateDoubleArray(g->eigvals, g->d));
    }
    cJSON_AddItemToObject(j, "mean", cJSON_CreateDoubleArray(g->mean, g->d));
    return j;
}

int cmd_analyze_shards(int argc, char **argv) {
    gs_shards_opts o = {0};
    gs_geometry_opts_default(&o.geometry);
    o.max_states = 16384;
    static const struct option opts[] = {
        {"shards", no_argument, 0, 'S'},           {"only", required_argument, 0, 'o'},
        {"max-states", required_argument, 0, 'n'}, {"skip-positions", required_argument, 0, 'k'},
        {"seed", required_argument, 0, 's'},       {"site", required_argument, 0, 'x'},
        {"kind", required_argument, 0, 'K'},       {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch;
    optind = 1;
    opterr = 0;
    char why[256] = "";
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end = NULL;
        long long v = 0;
        if (strchr("nks", ch)) {
            v = strtoll(optarg, &end, 10);
            if (!*optarg || *end || v < 0) { snprintf(why, sizeof why, "'%s': expected a non-negative integer", optarg); break; }
        }
        switch (ch) {
        case 'S': break;
        case 'o':
            if (strcmp(optarg, "geometry"))
                snprintf(why, sizeof why, "--only %s: only geometry is reduced over shards so far: merge the shards "
                         "(gpnscope merge STORE SHARD...) and analyze the store for the others", optarg);
            break;
        case 'n': o.max_states = v; break;
        case 'k': o.skip_positions = (int)v; break;
        case 's': o.geometry.seed = (uint64_t)v; break;
        case 'x': case 'K': o.kind = optarg; break;
        case 'h': fputs(help, stdout); return 0;
        default: cli_bad_option("analyze", opts, argv); return 2;
        }
        if (why[0]) break;
    }
    if (!why[0] && optind >= argc) snprintf(why, sizeof why, "--shards: name at least one shard (see --help)");
    if (why[0]) { fprintf(stderr, "gpnscope analyze: %s\n", why); return 2; }
    char kind[64];
    if (o.kind && (!strncmp(o.kind, "state.", 6) || !strcmp(o.kind, "pred") || !strcmp(o.kind, "ground"))) {
        snprintf(kind, sizeof kind, "%s", !strncmp(o.kind, "state.", 6) ? o.kind + 6 : o.kind); /* the stored kind */
        o.kind = kind;
    }
    gs_job job;
    if (gs_job_start(&job)) { fprintf(stderr, "gpnscope analyze: %s\n", gs_error()); return 1; }
    gs_geometry g;
    gs_shards_info info;
    int rc = gs_shards_geometry(&job, (const char *const *)argv + optind, argc - optind, &o, &g, &info);
    if (rc && job.rank == 0) fprintf(stderr, "gpnscope analyze: %s\n", gs_error());
    if (!rc && job.rank == 0) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "shards", info.n_shards);
        cJSON_AddNumberToObject(j, "recorded_by_ranks", info.n_ranks);
        cJSON_AddNumberToObject(j, "analysed_by_ranks", job.size);
        cJSON_AddStringToObject(j, "kind", info.kind);
        cJSON_AddItemToObject(j, "geometry", geometry_json(&g));
        char *s = cJSON_Print(j);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(j);
    }
    gs_geometry_free(&g);
    gs_job_end(&job);
    return rc ? 1 : 0;
}
