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

/* The tokenizer to use when none is given: $GPNSCOPE_TOKENIZER, else the one
 * scripts/fetch-tokenizer.sh built (third_party/llama2-tokenizer.json) when it is
 * readable; NULL when neither. */
const char *cli_default_tokenizer(void);

#endif
