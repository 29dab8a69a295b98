/* cli/run_command.h */
#include "cli/run_command.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"

/* The one store FILE opened for writing and its run picked: 0, or the exit
 * status after one line (or the help) on stderr. */
static int open_store(const run_command *c, run_call *call, int argc, char **argv, store_lock **lock) {
    const char *usage = cli_one_store_file(argc, optind);
    if (usage && c->usage_prints_help) {
        fputs(c->help, stderr);
        return 2;
    }
    if (usage) {
        fprintf(stderr, "gpnscope %s: %s (see gpnscope %s --help)\n", c->name, usage, c->name);
        return 2;
    }
    if (!(call->st = store_open(argv[optind], STORE_WRITE))) {
        fprintf(stderr, "gpnscope %s: %s\n", c->name, gs_error());
        return 1;
    }
    if (cli_pick_run(c->name, call->st, &call->run, lock) != 0) return 1;
    return 0;
}

/* run, write and print, once the store is open: the exit status */
static int run_and_print(const run_command *c, run_call *call) {
    if (c->progress_unit) progress_start(&call->bar, c->name, c->progress_unit, c->planned(call));
    int rc = c->run(call);
    if (c->progress_unit) progress_end(&call->bar, c->done(call));
    if (rc) {
        fprintf(stderr, "gpnscope %s: %s: %s\n", c->name, store_path(call->st), gs_error());
        return 1;
    }
    if (c->write && c->write(call)) {
        fprintf(stderr, "gpnscope %s: writing results to %s: %s\n", c->name, store_path(call->st), gs_error());
        return 1;
    }
    if (call->json) c->print_json(call);
    else c->print_text(call);
    return 0;
}

int run_command_main(const run_command *c, int argc, char **argv) {
    run_call call = {.state = calloc(1, c->state_size)};
    if (!call.state) {
        fprintf(stderr, "gpnscope %s: out of memory\n", c->name);
        return 1;
    }
    cli_opt rows[RUN_COMMAND_MAX_OPTIONS] = {{0}};
    c->options(&call, rows);
    store_lock *lock = NULL;
    int status = cli_parse_options(&(cli_command_opts){c->name, c->help, NULL}, rows, argc, argv);
    if (status == CLI_GO_ON) {
        status = open_store(c, &call, argc, argv, &lock);
        if (status == 0) status = run_and_print(c, &call);
    }
    if (c->release) c->release(&call);
    store_close(call.st);
    store_lock_release(lock);
    free(call.state);
    return status;
}
