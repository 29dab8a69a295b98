/* The store and run of a command that re-runs a recorded run and writes its
 * results (attention, attribute): cli/options.h, cli_run_begin. */
#include <stdio.h>

#include "base/error.h"
#include "cli/options.h"

static store *open_run(const char *cmd, int argc, char **argv, int file_arg, long long *run, store_lock **lock, int *status) {
    const char *usage = cli_one_store_file(argc, file_arg);
    if (usage) {
        fprintf(stderr, "gpnscope %s: %s (see gpnscope %s --help)\n", cmd, usage, cmd);
        *status = 2;
        return NULL;
    }
    *status = 1;
    store *st = store_open(argv[file_arg], STORE_WRITE);
    if (!st) {
        fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
        return NULL;
    }
    if (cli_pick_run(cmd, st, run, lock) != 0) {
        store_close(st);
        return NULL;
    }
    *status = 0;
    return st;
}

int cli_run_begin(cli_run_session *s, const char *cmd, int argc, char **argv, int file_arg, long long *run,
                  int64_t windows) {
    int status;
    s->lock = NULL;
    if (!(s->st = open_run(cmd, argc, argv, file_arg, run, &s->lock, &status))) return status;
    progress_start(&s->bar, cmd, "windows", windows);
    return 0;
}

void cli_run_end(cli_run_session *s) {
    store_close(s->st);
    store_lock_release(s->lock);
}
