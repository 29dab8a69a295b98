/* What the commands share about their options and the run they work on:
 * the option table (cli/option_table.h), the choice of run, the default
 * tokenizer. */
#ifndef GS_CLI_OPTIONS_H
#define GS_CLI_OPTIONS_H

#include "cli/option_table.h"
#include "cli/progress.h"
#include "store/lock.h"
#include "store/store.h"

/* The run a command that changes the store works on (analyze, ablate):
 * *run > 0 names it; 0 picks the newest complete run. An unfinished run
 * (running, interrupted, failed) is taken only when named, and then it is
 * locked (*lock; store_lock_release it at the end) so that no recorder
 * resumes it meanwhile; one being recorded is refused. Prints one line and
 * returns -1 on failure, with a note on stderr when the run is unfinished. */
int cli_pick_run(const char *cmd, store *st, long long *run, store_lock **lock);
/* What a command that runs one analysis over a recorded run holds while it
 * runs (attention, attribute): the store and lock of cli_open_run and a
 * progress line over the windows, for the analysis' progress callback
 * (progress_callback with ctx &bar). */
typedef struct {
    store *st;
    store_lock *lock;
    progress bar;
} cli_run_session;
/* The one store FILE (argv[file_arg], the last argument) opened for
 * writing, its run by cli_pick_run, then the progress line over `windows`
 * windows: 0, or the exit status (2: usage, 1: the store or run) after one
 * line on stderr. */
int cli_run_begin(cli_run_session *s, const char *cmd, int argc, char **argv, int file_arg, long long *run,
                  int64_t windows);
/* the store closed and the lock released (end the progress line before
 * printing the results: progress_end(&s->bar, done)) */
void cli_run_end(cli_run_session *s);

/* The tokenizer to use when none is given: $GPNSCOPE_TOKENIZER, else the one
 * scripts/fetch-tokenizer.sh built (third_party/llama2-tokenizer.json) when it is
 * readable; NULL when neither. */
const char *cli_default_tokenizer(void);

#endif
