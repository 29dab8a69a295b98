/* The skeleton of the commands that read a recorded run from a store FILE
 * and write one analysis of it back (attention, attribute, recurrence-depth):
 * each is a row saying its name, help, options and hooks; run_command_main
 * parses, opens the store, picks the run, draws the progress, reports the
 * errors, prints text or --json and cleans up, once for all of them. */
#ifndef GS_CLI_RUN_COMMAND_H
#define GS_CLI_RUN_COMMAND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cli/options.h"

/* The most option rows a command adds (its table's end row included). */
#define RUN_COMMAND_MAX_OPTIONS 16
/* An options hook's table (an array ended by {0}) copied into its rows; a
 * table too long for them does not compile. */
#define RUN_COMMAND_SET_ROWS(rows, table)                                                                             \
    do {                                                                                                               \
        _Static_assert(sizeof(table) <= RUN_COMMAND_MAX_OPTIONS * sizeof(cli_opt), "too many options");            \
        memcpy((rows), (table), sizeof(table));                                                                        \
    } while (0)

/* What every hook sees: the command's own state (options and result, zeroed
 * before `options`) and what the skeleton opened for it. */
typedef struct {
    void *state;
    store *st;
    long long run; /* --run, 0 until the run is picked */
    int json;      /* --json */
    progress bar;  /* over progress_unit; off when the row has none */
} run_call;

typedef struct {
    const char *name, *help;
    size_t state_size;
    /* Defaults into call->state, then the option rows (ended by a row with a
     * NULL name) into rows; they may point at call->run and call->json. */
    void (*options)(run_call *call, cli_opt *rows);
    /* 1: a wrong number of FILE arguments prints the help on stderr; 0: one
     * line naming what is wrong. */
    int usage_prints_help;
    /* the progress line's unit ("windows") and its total; NULL: no line */
    const char *progress_unit;
    int64_t (*planned)(const run_call *call);
    /* the work: 0, or -1 with gs_error (printed as "gpnscope NAME: FILE: ERROR");
     * done: the units done, for the end of the progress line */
    int (*run)(run_call *call);
    int64_t (*done)(const run_call *call);
    /* the results into the store, when run does not write them: 0, or -1 with
     * gs_error ("gpnscope NAME: writing results to FILE: ERROR"); NULL: none */
    int (*write)(run_call *call);
    void (*print_json)(const run_call *call);
    void (*print_text)(const run_call *call);
    /* what run allocated in state, also after a failure; NULL: nothing */
    void (*release)(run_call *call);
} run_command;

/* The command of row c on argv: its exit status (0, 1: the store, run or
 * analysis failed, 2: usage). */
int run_command_main(const run_command *c, int argc, char **argv);

#endif
