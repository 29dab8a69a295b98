/* gpnscope view STORE --out DIR: one interactive HTML page of a store (view/view.h, docs/view.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/store.h"
#include "view/view.h"

static const char *help =
    "usage: gpnscope view STORE --out DIR [--run N] [--windows K] [--tokens T] [--lens K]\n\n"
    "Write DIR/view.html: one self-contained page (scripts, style and data inline; no network)\n"
    "to look at a store in a browser. Each run's first windows as text, every token coloured by a\n"
    "quantity you choose: its NLL, the entropy of its prediction, the state's norm, its projection\n"
    "on the mean direction s_bar or its centered projection on PC1 (the newest geometry analysis),\n"
    "or any per-head scalar site the run recorded (mem.alpha, a layer's attn.alpha, ...), one head\n"
    "or their mean. Hover a token for those values and the top-k logit lens at every lens site\n"
    "(re-run with the run's model file, checked by its sha256); click it to colour the earlier\n"
    "tokens by its exact effective attention in the chosen layer and head (where gpnscope\n"
    "attention stored matrices), with the heuristic beside it, and to list its direct logit\n"
    "attribution by part (gpnscope attribute). Runs of several models are shown side by side or\n"
    "one at a time; the runs' verdicts and the store's newest patching and steering sweeps have\n"
    "panels of their own. docs/view.md.\n\n"
    "  --out DIR      the folder to write view.html into (created if missing)\n"
    "  --run N        the run to show (default: every run with tokens but the controls, side by side)\n"
    "  --windows K    windows per run, the first recorded (1 to 64; default 2)\n"
    "  --tokens T     positions per window, from the start (1 to 100000; default 512)\n"
    "  --lens K       the lens's top K per token and site (0: no lens, no model loaded; default 5)\n";

int cmd_view(int argc, char **argv) {
    const char *out = NULL;
    long long run = 0;
    int windows = 2, tokens = 512, lens = 5;
    const cli_opt opts[] = {{CLI_STRING("out", &out)},
                            {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (a positive integer)")},
                            {CLI_INTEGER("windows", &windows, 1, 64, "a number of windows between 1 and 64")},
                            {CLI_INTEGER("tokens", &tokens, 1, 100000, "a number of positions between 1 and 100000")},
                            {CLI_INTEGER("lens", &lens, 0, 20, "a top k between 0 (no lens) and 20")},
                            {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"view", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (argc - optind != 1) {
        fprintf(stderr, "gpnscope view: %s (see gpnscope view --help)\n", argc - optind ? "one STORE only" : "give a STORE");
        return 2;
    }
    if (!out) { fprintf(stderr, "gpnscope view: give --out DIR, the folder to write view.html into\n"); return 2; }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_READ);
    if (!st) { fprintf(stderr, "gpnscope view: %s\n", gs_error()); return 1; }
    int rc = 1;
    int64_t one = run;
    gs_view_opts o = {.runs = run ? &one : NULL, .n_runs = run ? 1 : 0, .windows = windows, .max_tokens = tokens,
                     .lens_k = lens};
    store_run_info *info = malloc(sizeof *info);
    if (run && (!info || store_run_get(st, run, info))) {
        fprintf(stderr, "gpnscope view: %s\n", info ? gs_error() : "out of memory");
        goto done;
    }
    char page[4200];
    snprintf(page, sizeof page, "%s/view.html", out);
    gs_view_result r;
    if (gs_mkdir_p(out) != 0 || gs_view_write(st, &o, page, &r) != 0) {
        fprintf(stderr, "gpnscope view: %s\n", gs_error());
        goto done;
    }
    printf("wrote %s (%.1f MB): %d run%s, %d window%s, %lld tokens, %d attention head%s%s; open it in a browser\n", page,
           (double)r.bytes / 1e6, r.runs, r.runs == 1 ? "" : "s", r.windows, r.windows == 1 ? "" : "s",
           (long long)r.tokens, r.attention_heads, r.attention_heads == 1 ? "" : "s",
           r.attention_left_out ? " (some matrices left out to keep the page small)" : "");
    if (r.lens_missing)
        printf("note: no lens for %d run%s (the page says why: %s)\n", r.lens_missing, r.lens_missing == 1 ? "" : "s",
               r.lens_why);
    rc = 0;
done:
    free(info);
    store_close(st);
    return rc;
}
