/* The skeleton of the commands that re-run a model or read a store and write
 * what they find (attention, attribute, recurrence-depth, ablate, patch,
 * steer, lens, automaton, compare): each is a row saying its name, help,
 * options, what its operands are and its hooks; run_command_main parses,
 * opens the store or the model, opens the results store, draws the progress,
 * reports the errors, prints text or --json, draws and cleans up, once for
 * all of them. */
#ifndef GS_CLI_RUN_COMMAND_H
#define GS_CLI_RUN_COMMAND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cli/options.h"
#include "cli/progress.h"
#include "engine/model.h"
#include "store/store.h"

/* The most option rows a command adds (its table's end row included). */
#define RUN_COMMAND_MAX_OPTIONS 24
/* An options hook's table (an array ended by {0}) copied into its rows; a
 * table too long for them does not compile. */
#define RUN_COMMAND_SET_ROWS(rows, table)                                                                             \
    do {                                                                                                               \
        _Static_assert(sizeof(table) <= RUN_COMMAND_MAX_OPTIONS * sizeof(cli_opt), "too many options");            \
        memcpy((rows), (table), sizeof(table));                                                                        \
    } while (0)

/* What the operands (the arguments after the options) are. */
typedef enum {
    RUN_ON_STORE, /* FILE: a store opened for writing, its run picked (--run) */
    RUN_ON_MODEL, /* MODEL [ARG...]: a language model's checkpoint, loaded */
    RUN_ON_ARGS,  /* as given: the prepare hook opens what they name */
} run_input;

struct run_command;

/* What every hook sees: the command's own state (options and result, zeroed
 * before `options`) and what the skeleton opened for it. */
typedef struct {
    const struct run_command *cmd;
    void *state;
    char **args; /* the operands */
    int n_args;
    store *st;          /* RUN_ON_STORE: the store FILE */
    long long run;      /* --run, 0 until the run is picked */
    gs_model *model;   /* RUN_ON_MODEL: the loaded MODEL */
    const char *out_path; /* the results store (--store, --db), opened as out before the run; NULL: none */
    store *out;
    int json;     /* --json */
    progress bar; /* over progress_unit; off when the row has none */
} run_call;

typedef struct run_command {
    const char *name, *help;
    size_t state_size;
    run_input input;
    /* Defaults into call->state, then the option rows (ended by a row with a
     * NULL name) into rows; they may point at call->run, call->json and
     * call->out_path. */
    void (*options)(run_call *call, cli_opt *rows);
    /* RUN_ON_STORE: 1: a wrong number of FILE arguments prints the help on
     * stderr; 0: one line naming what is wrong. */
    int usage_prints_help;
    /* The options and operands checked before anything is opened (the
     * operand count too, unless RUN_ON_STORE): 0, or the exit status after
     * one line (run_usage, run_error). NULL: nothing to check. */
    int (*check)(run_call *call);
    /* The inputs read once the store or model is open, before the results
     * store and the run: 0, or the exit status after one line. NULL: none. */
    int (*prepare)(run_call *call);
    /* 1: the results store gets the causal experiments' tables */
    int causal_tables;
    /* the progress line's unit ("windows") and its total; NULL: no line */
    const char *progress_unit;
    int64_t (*planned)(const run_call *call);
    /* the work: 0, or -1 with gs_error (printed as "gpnscope NAME: FILE: ERROR"
     * for RUN_ON_STORE, else "gpnscope NAME: ERROR"); done: the units done,
     * for the end of the progress line */
    int (*run)(run_call *call);
    int64_t (*done)(const run_call *call);
    /* the results into the store, when run does not write them: 0, or -1 with
     * gs_error ("gpnscope NAME: writing results to FILE: ERROR" for
     * RUN_ON_STORE, else "gpnscope NAME: ERROR"); NULL: none */
    int (*write)(run_call *call);
    /* NULL print_text: run printed as it went */
    void (*print_json)(const run_call *call);
    void (*print_text)(const run_call *call);
    /* figures and files drawn from the results once printed (--plot, --out):
     * 0, or -1 with gs_error ("gpnscope NAME: ERROR"); NULL: none */
    int (*draw)(run_call *call);
    /* what the hooks allocated in state, also after a failure; NULL: nothing */
    void (*release)(run_call *call);
} run_command;

/* The command of row c on argv: its exit status (0, 1: the store, model, run
 * or analysis failed, 2: usage). */
int run_command_main(const run_command *c, int argc, char **argv);
/* Row c on a call whose state (and args, json) the caller set, as when
 * another command runs it in-process: from check on, the exit status. */
int run_command_call(const run_command *c, run_call *call);

/* "gpnscope NAME: WHAT (see gpnscope NAME --help)" on stderr: 2 */
int run_usage(const run_call *call, const char *what);
/* "gpnscope NAME: ERROR" (gs_error) on stderr: status */
int run_error(const run_call *call, int status);

#endif
