#include "cli/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/text.h"

int cli_bad_option(const char *cmd, const struct option *opts, char **argv) {
    /* getopt leaves the offending word at argv[optind - 1] (a value-less
     * option at the end too); optopt is its character, or a long option's
     * val when it lacks a value, or 0 for an unknown long option */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    if (optopt) {
        for (const struct option *o = opts; o && o->name; o++)
            if (o->val == optopt && o->has_arg == required_argument &&
                (!strncmp(word, "--", 2) ? !strncmp(word + 2, o->name, strlen(word + 2)) : 1)) {
                fprintf(stderr, "gpnscope %s: --%s needs a value (see gpnscope %s --help)\n", cmd, o->name, cmd);
                return 2;
            }
        if (strncmp(word, "--", 2)) {
            fprintf(stderr, "gpnscope %s: unknown option '-%c' (see gpnscope %s --help)\n", cmd, optopt, cmd);
            return 2;
        }
    }
    fprintf(stderr, "gpnscope %s: unknown option '%s' (see gpnscope %s --help)\n", cmd, word, cmd);
    return 2;
}

void cli_options_start(void) {
    optind = 1;
    opterr = 0;
}

int cli_other_option(int ch, const char *cmd, const char *help, const struct option *opts, char **argv) {
    if (ch == 'h') {
        fputs(help, stdout);
        return 0;
    }
    return cli_bad_option(cmd, opts, argv);
}

int cli_int_option(const char *cmd, const char *name, const char *text, long long lo, long long hi, const char *what,
                   long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "gpnscope %s: --%s wants %s, got '%s'\n", cmd, name, what, text);
        return 2;
    }
    *out = v;
    return 0;
}

int cli_pick_run(const char *cmd, store *st, long long *run, store_lock **lock) {
    const char *path = store_path(st);
    char q[4200];
    *lock = NULL;
    if (*run <= 0) {
        int64_t r = store_last_run(st, STORE_RUN_COMPLETE);
        if (r < 0) { fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error()); return -1; }
        if (r == 0) {
            int64_t any = store_last_run(st, STORE_RUN_ANY);
            if (any > 0)
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
