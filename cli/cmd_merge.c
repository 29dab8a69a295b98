/* gpnscope merge STUDY SHARD...: fold the shards of an MPI recording into one
 * store (store/merge.h, docs/scale.md). */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/merge.h"

static const char *help =
    "usage: gpnscope merge STORE SHARD... [--quiet]\n\n"
    "Fold the shards of an MPI recording (mpirun -n K gpnscope record --db STORE\n"
    "writes STORE.rank-r-of-K.db per rank; docs/scale.md) into one run of STORE\n"
    "(created if missing) whose rows equal a one-process recording of the same\n"
    "windows. The shards must be complete runs of one job: the same model,\n"
    "tokenizer, corpus and settings, the same K, no rank twice; anything else is\n"
    "refused. Each shard is copied in one transaction, so an interrupted merge is\n"
    "continued by running it again: shards already in STORE are skipped. Shards may\n"
    "be merged a few at a time; the run is complete once it holds every window.\n\n"
    "  --quiet   no line per shard\n";

static void on_shard(void *ctx, const char *path, int rank, int copied, int64_t windows) {
    if (*(const int *)ctx) return;
    if (!windows) fprintf(stderr, "merge: %s (rank %d): no windows (more ranks than batches)\n", path, rank);
    else fprintf(stderr, "merge: %s (rank %d): %s %lld windows\n", path, rank, copied ? "copied" : "already merged,",
                 (long long)windows);
}

int cmd_merge(int argc, char **argv) {
    int quiet = 0;
    const cli_opt opts[] = {{CLI_FLAG("quiet", &quiet), .short_name = 'q'}, {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"merge", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (argc - optind < 2) {
        fprintf(stderr, "gpnscope merge: expected STORE and at least one SHARD (see --help)\n");
        return 2;
    }
    const char *target = argv[optind];
    for (int i = optind + 1; i < argc; i++)
        if (!strcmp(argv[i], target)) {
            fprintf(stderr, "gpnscope merge: %s is both the store and a shard\n", target);
            return 2;
        }
    store_merge_result r;
    if (store_merge_shards(target, (const char *const *)argv + optind + 1, argc - optind - 1, on_shard, &quiet, &r)) {
        fprintf(stderr, "gpnscope merge: %s\n", gs_error());
        return 1;
    }
    printf("merged %d shards (%d already in it) of a %d-rank job into run %lld of %s: %lld of %lld windows%s\n",
           r.merged, r.skipped, r.n_ranks, (long long)r.run, target, (long long)r.windows, (long long)r.n_windows,
           r.windows == r.n_windows ? ", complete" : "; merge the other shards to complete it");
    return 0;
}
