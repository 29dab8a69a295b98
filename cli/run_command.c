/* cli/run_command.h */
#include "cli/run_command.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "store/experiments.h"

int run_usage(const run_call *call, const char *what) {
    fprintf(stderr, "gpnscope %s: %s (see gpnscope %s --help)\n", call->cmd->name, what, call->cmd->name);
    return 2;
}

int run_error(const run_call *call, int status) {
    fprintf(stderr, "gpnscope %s: %s\n", call->cmd->name, gs_error());
    return status;
}

/* The one store FILE counted: 0, or 2 after one line (or the help) on stderr. */
static int count_store_file(const run_command *c, run_call *call) {
    const char *usage = cli_one_store_file(call->n_args, 0);
    if (usage && c->usage_prints_help) {
        fputs(c->help, stderr);
        return 2;
    }
    return usage ? run_usage(call, usage) : 0;
}

/* The operands opened: the store FILE with its run picked, or the MODEL. */
static int open_operands(const run_command *c, run_call *call, store_lock **lock) {
    if (c->input == RUN_ON_STORE) {
        if (!(call->st = store_open(call->args[0], STORE_WRITE))) return run_error(call, 1);
        return cli_pick_run(c->name, call->st, &call->run, lock) != 0;
    }
    if (c->input == RUN_ON_MODEL) {
        call->model = gs_model_load(call->args[0]);
        if (call->model && gs_family_require_lm(&call->model->cfg, call->args[0], c->name)) {
            gs_model_free(call->model);
            call->model = NULL;
        }
        if (!call->model) return run_error(call, 1);
    }
    return 0;
}

/* The results store, created when missing. */
static int open_results(const run_command *c, run_call *call) {
    if (!call->out_path) return 0;
    call->out = store_open(call->out_path, STORE_WRITE | STORE_CREATE);
    if (!call->out || (c->causal_tables && store_causal_tables(call->out))) return run_error(call, 1);
    return 0;
}

/* A failure of run or write, on stderr: 1 */
static int failed(const run_command *c, const run_call *call, const char *doing) {
    if (c->input != RUN_ON_STORE) return run_error(call, 1);
    fprintf(stderr, "gpnscope %s: %s%s: %s\n", c->name, doing, store_path(call->st), gs_error());
    return 1;
}

/* run, write, print and draw, once everything is open: the exit status */
static int run_and_print(const run_command *c, run_call *call) {
    if (c->progress_unit) progress_start(&call->bar, c->name, c->progress_unit, c->planned(call));
    int rc = c->run(call);
    if (c->progress_unit) progress_end(&call->bar, c->done(call));
    if (rc) return failed(c, call, "");
    if (c->write && c->write(call)) return failed(c, call, "writing results to ");
    if (call->json) c->print_json(call);
    else if (c->print_text) c->print_text(call);
    if (c->draw && c->draw(call)) return run_error(call, 1);
    return 0;
}

int run_command_call(const run_command *c, run_call *call) {
    call->cmd = c;
    store_lock *lock = NULL;
    int status = c->input == RUN_ON_STORE ? count_store_file(c, call) : 0;
    if (status == 0 && c->check) status = c->check(call);
    if (status == 0) status = open_operands(c, call, &lock);
    if (status == 0 && c->prepare) status = c->prepare(call);
    if (status == 0) status = open_results(c, call);
    if (status == 0) status = run_and_print(c, call);
    if (c->release) c->release(call);
    store_close(call->out);
    store_close(call->st);
    gs_model_free(call->model);
    store_lock_release(lock);
    return status;
}

int run_command_main(const run_command *c, int argc, char **argv) {
    run_call call = {.cmd = c, .state = calloc(1, c->state_size)};
    if (!call.state) {
        fprintf(stderr, "gpnscope %s: out of memory\n", c->name);
        return 1;
    }
    cli_opt rows[RUN_COMMAND_MAX_OPTIONS] = {{0}};
    c->options(&call, rows);
    int status = cli_parse_options(&(cli_command_opts){c->name, c->help, NULL}, rows, argc, argv);
    if (status == CLI_GO_ON) {
        call.args = argv + optind;
        call.n_args = argc - optind;
        status = run_command_call(c, &call);
    }
    free(call.state);
    return status;
}
