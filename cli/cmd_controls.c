/* gpnscope controls: record a run's two controls (record/controls.h): its
 * family untrained, and the trained model over shuffled tokens; then
 * `gpnscope analyze` reads every rule beside them. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "record/controls.h"
#include "store/store.h"

static const char help[] =
    "usage: gpnscope controls STORE [--run N] [--only untrained|shuffled] [--seed S] [--quiet]\n\n"
    "Record the controls that calibrate every verdict of run N (default: the newest\n"
    "complete run that is not a control), each as a new run of the same store with N's\n"
    "own settings (windows, sites, positions, batch):\n"
    "  untrained  the same family and sizes at the trainer's initialisation (seed S),\n"
    "             over the same text: what the rules read before any learning (saved as\n"
    "             STORE.controls/run-N-untrained-seedS/model.safetensors)\n"
    "  shuffled   the trained model over the same windows with each window's tokens after\n"
    "             the first permuted (seed S): what they read without the text's order\n"
    "A control already recorded is kept; an interrupted one is resumed. Afterwards\n"
    "`gpnscope analyze STORE --run N` analyzes the controls too and calls a structure\n"
    "present only when its statistic clears the rule's threshold and the controls'\n"
    "values (docs/controls.md). A family without an initialiser here (Mamba-2, Elman,\n"
    "MLP-LDRU) gets the shuffled control only.\n\n"
    "  --run N        the run to control\n"
    "  --only KIND    one control: untrained or shuffled (default both)\n"
    "  --seed S       the initialisation's and the shuffle's seed (default 1)\n"
    "  --quiet        no progress line, no hint of what to run next\n";

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

typedef struct {
    progress pg[STORE_N_CONTROLS];
    int started[STORE_N_CONTROLS], quiet;
} bars;

static void on_progress(void *ctx, int k, int64_t done, int64_t total) {
    bars *b = ctx;
    if (!b->started[k]) {
        static const char *const label[] = {"controls: untrained", "controls: shuffled"};
        progress_start(&b->pg[k], label[k], "tok", total);
        progress_plain(&b->pg[k], 10, 0, NULL, "tokens");
        if (b->quiet) b->pg[k].enabled = PROGRESS_OFF;
        b->started[k] = 1;
    }
    b->pg[k].total = total;
    progress_update(&b->pg[k], done);
}

int cmd_controls(int argc, char **argv) {
    long long run = 0, seed = 1;
    int quiet = 0, only = -1;
    static const char *const kinds[] = {"untrained", "shuffled", NULL};
    const cli_opt opts[] = {{CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id")},
                            {CLI_CHOICE("only", &only, kinds, "'untrained' or 'shuffled'")},
                            {CLI_INTEGER("seed", &seed, 0, INT64_MAX, "a seed")},
                            {CLI_FLAG("quiet", &quiet)},
                            {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"controls", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc - 1) {
        fprintf(stderr, "gpnscope controls: name one store (see --help)\n");
        return 2;
    }
    const char *db = argv[optind];
    gs_controls_opts o = {.run = run, .kinds = only >= 0 ? 1u << only : 0, .seed = (uint64_t)seed,
                          .code_version = GPNSCOPE_VERSION};
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bars b = {.quiet = quiet};
    gs_controls_result res;
    int rc = gs_record_controls(db, &o, on_progress, &b, &stop_requested, &res);
    for (int k = 0; k < STORE_N_CONTROLS; k++)
        if (b.started[k]) progress_end(&b.pg[k], b.pg[k].total);
    if (rc == 130) {
        fprintf(stderr, "gpnscope controls: stopped; run the same command again to continue\n");
        return 130;
    }
    if (rc) {
        fprintf(stderr, "gpnscope controls: %s: %s\n", db, gs_error());
        return 1;
    }
    for (int k = 0; k < STORE_N_CONTROLS; k++) {
        if (only >= 0 && k != only) continue;
        if (res.skipped[k][0]) printf("no %s control of run %lld: %s\n", store_control_names[k], (long long)res.of,
                                      res.skipped[k]);
        else if (res.recorded[k]) printf("recorded run %lld: the %s control of run %lld\n", (long long)res.run[k],
                                         store_control_names[k], (long long)res.of);
        else printf("run %lld is already the %s control of run %lld\n", (long long)res.run[k], store_control_names[k],
                    (long long)res.of);
    }
    if (!quiet) printf("next: gpnscope analyze %s --run %lld reads each rule beside its controls\n", db, (long long)res.of);
    return 0;
}
