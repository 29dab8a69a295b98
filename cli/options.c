#include "cli/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/text.h"

int cli_pick_run(const char *cmd, store *st, long long *run, store_lock **lock) {
    const char *path = store_path(st);
    char q[4200];
    *lock = NULL;
    if (*run <= 0) {
        int64_t r = store_last_run(st, STORE_RUN_COMPLETE);
        if (r < 0) { fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error()); return -1; }
        if (r == 0) {
            int64_t any = store_last_run(st, STORE_RUN_ANY), of;
            char kind[32];
            if (any > 0 && store_run_control(st, any, kind, sizeof kind, &of) == 1)
                fprintf(stderr, "gpnscope %s: %s holds controls only (run %lld is run %lld's %s control): name a run with "
                        "--run N\n", cmd, path, (long long)any, (long long)of, kind);
            else if (any > 0)
                fprintf(stderr, "gpnscope %s: %s has no complete run (the newest, %lld, is unfinished): finish it with "
                        "`gpnscope record ... --db %s --resume`, or name it with --run %lld to use what it holds\n",
                        cmd, path, (long long)any, gs_shell_quote(path, q, sizeof q), (long long)any);
            else fprintf(stderr, "gpnscope %s: %s has no runs: record or import one first\n", cmd, path);
            return -1;
        }
        *run = r;
        return 0;
    }
    store_run_info ri;
    if (store_run_get(st, *run, &ri) != 0) { fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error()); return -1; }
    if (!strcmp(ri.status, "complete")) return 0;
    char who[64];
    snprintf(who, sizeof who, "gpnscope %s", cmd);
    if (!(*lock = store_lock_run(path, *run, who))) {
        fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
        return -1;
    }
    /* re-read under the lock: a recorder may have finished or advanced it */
    if (store_run_get(st, *run, &ri) != 0) {
        fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
        store_lock_release(*lock);
        *lock = NULL;
        return -1;
    }
    if (strcmp(ri.status, "complete"))
        fprintf(stderr, "note: run %lld is not complete (status %s, %lld of %lld windows recorded): using what it holds\n",
                *run, ri.status, (long long)ri.windows_done, (long long)ri.n_windows);
    return 0;
}

const char *cli_default_tokenizer(void) {
    const char *env = getenv("GPNSCOPE_TOKENIZER");
    if (env && *env) return env;
    static const char built[] = GPNSCOPE_SOURCE_DIR "/third_party/llama2-tokenizer.json";
    return access(built, R_OK) == 0 ? built : NULL;
}
