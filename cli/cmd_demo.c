/* gpnscope demo: the whole pipeline on the shipped model, in one folder:
 * record the held-out text -> analyze -> plot (+ report) -> notebook, then
 * print where everything is and the headline numbers. Each stage is this same
 * binary run as a subcommand, so the demo does exactly what a user would. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyses/findings.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "store/store.h"


#define SHIPPED_MODEL GPNSCOPE_SOURCE_DIR "/models/gpnm15-small/model.safetensors"
#define SHIPPED_TOKENIZER GPNSCOPE_SOURCE_DIR "/third_party/llama2-tokenizer.json"
#define HELDOUT_CORPUS GPNSCOPE_SOURCE_DIR "/data/corpus/heldout.jsonl"
/* the shipped model's training text (docs/model.md): its shards when
 * train-shipped-model.sh made them, else the JSONL that setup.sh prepares */
#define TRAIN_SHARDS GPNSCOPE_SOURCE_DIR "/data/shards/train"
#define TRAIN_JSONL GPNSCOPE_SOURCE_DIR "/data/corpus/train.jsonl"

static const char *help =
    "usage: gpnscope demo [--out DIR] [--model M] [--tokenizer T] [--corpus C]\n"
    "                     [--windows N] [--seq-len L] [--batch B]\n\n"
    "Run the whole workbench on the shipped GPN+M (models/gpnm15-small: 15 memory\n"
    "heads, trained by gpnscope train; docs/model.md) over held-out English text\n"
    "that training never saw: record states, gates and decays into DIR/study.db,\n"
    "run every analysis,\n"
    "write the figures and report to DIR/figures and a notebook to DIR/study.ipynb,\n"
    "then print the headline numbers and whether each of the paper's three\n"
    "structures appears. With the shipped model, analyze is given its training\n"
    "corpus (data/shards/train, else data/corpus/train.jsonl) for the Spearman\n"
    "that stands beside the paper's. scripts/demo.sh sets up the tokenizer and\n"
    "the held-out text first.\n\n"
    "  --out DIR        output folder (default gpnscope-demo; an old study.db there is replaced)\n"
    "  --model FILE     default models/gpnm15-small/model.safetensors\n"
    "  --tokenizer FILE default third_party/llama2-tokenizer.json (scripts/fetch-tokenizer.sh)\n"
    "  --corpus FILE    default data/corpus/heldout.jsonl (tools/prepare_corpus.py)\n"
    "  --windows N      windows recorded (default 16)\n"
    "  --seq-len L      tokens per window (default 1024; 16 x 1024 = 16384 states)\n"
    "  --batch B        windows run in lockstep (default 16)\n";

/* One stage, in this process: a command of the table (cli/commands.h) with
 * its arguments, timed; its own messages are printed by it. */
static int run_stage(const char *label, int (*cmd)(int, char **), char *const args[]) {
    char *argv[32];
    int k = 0;
    for (int i = 0; args[i] && k < 31; i++) argv[k++] = args[i];
    argv[k] = NULL;
    fflush(stdout);
    fprintf(stderr, "demo: %s\n", label);
    double t0 = progress_now();
    int rc = cmd(k, argv);
    fflush(stdout); /* its output before the next stage's messages on stderr */
    if (rc != 0) return gs_fail("stage '%s' failed (exit %d); its message is above", label, rc);
    fprintf(stderr, "demo: %s done in %.1f s\n", label, progress_now() - t0);
    return 0;
}

static int need_file(const char *path, const char *what, const char *fix) {
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) return 0;
    return gs_fail("%s %s not found: %s", what, path, fix);
}

static void print_summary(const char *out, const char *db, const char *model) {
    store *st = store_open(db, STORE_READ);
    if (!st) return;
    int64_t run = store_last_run(st, 0);
    store_token_array t;
    double sum = 0;
    int64_t n = 0;
    if (store_read_tokens(st, run, &t) == 0) {
        for (int64_t i = 0; i < t.n_windows * t.n_positions; i++)
            if (t.nll[i] == t.nll[i]) { sum += t.nll[i]; n++; }
        store_token_array_free(&t);
    }
    printf("\ngpnscope demo: %s on held-out text\n", model);
    if (n) printf("  held-out perplexity %.2f over %lld tokens (mean NLL %.4f nats)\n", exp(sum / n), (long long)n, sum / n);
    gs_findings f;
    if (gs_findings_compute(st, run, &f) == 0) {
        printf("\n");
        gs_findings_print(stdout, &f);
    }
    printf("\nEverything is in %s/:\n", out);
    printf("  study.db        the recording and every analysis (gpnscope sql %s/study.db \"...\"; docs/sql.md)\n", out);
    printf("  figures/        gnuplot scripts, data and images; report.md / report.html\n");
    printf("  study.ipynb     the notebook (jupyter notebook %s/study.ipynb)\n", out);
    store_close(st);
}

int cmd_demo(int argc, char **argv) {
    const char *out = "gpnscope-demo", *model = SHIPPED_MODEL, *tok = SHIPPED_TOKENIZER, *corpus = HELDOUT_CORPUS;
    const char *windows = "16", *seq_len = "1024", *batch = "16";
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},     {"model", required_argument, 0, 'm'},
        {"tokenizer", required_argument, 0, 't'}, {"corpus", required_argument, 0, 'c'},
        {"windows", required_argument, 0, 'n'}, {"seq-len", required_argument, 0, 'L'},
        {"batch", required_argument, 0, 'b'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'm': model = optarg; break;
        case 't': tok = optarg; break;
        case 'c': corpus = optarg; break;
        case 'n': windows = optarg; break;
        case 'L': seq_len = optarg; break;
        case 'b': batch = optarg; break;
        case 'h': fputs(help, stdout); return 0;
        default: return cli_bad_option("demo", opts, argv);
        }
    }
    if (optind != argc) { fprintf(stderr, "gpnscope demo: unexpected argument '%s'\n", argv[optind]); return 2; }
    if (need_file(model, "model", "the shipped model is models/gpnm15-small/model.safetensors in the source tree") ||
        need_file(tok, "tokenizer", "run scripts/fetch-tokenizer.sh (scripts/demo.sh does)") ||
        need_file(corpus, "held-out corpus", "run /usr/bin/python3 tools/prepare_corpus.py data/corpus (scripts/demo.sh does)")) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpnscope demo: cannot create %s: %s\n", out, strerror(errno));
        return 1;
    }
    char db[4096], figs[4096], nb[4096], tmp[4200];
    snprintf(db, sizeof db, "%s/study.db", out);
    snprintf(figs, sizeof figs, "%s/figures", out);
    snprintf(nb, sizeof nb, "%s/study.ipynb", out);
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(tmp, sizeof tmp, "%s%s", db, suffixes[i]);
        unlink(tmp);
    }
    double t0 = progress_now();
    char *rec[] = {"record", "--model", (char *)model, "--tokenizer", (char *)tok, "--corpus", (char *)corpus,
                   "--db", db, "--seq-len", (char *)seq_len, "--windows", (char *)windows, "--batch", (char *)batch,
                   "--states", "pred", NULL};
    /* the paper's Spearman is against the training corpus: for the shipped model it is known */
    struct stat sb;
    const char *train = NULL;
    if (!strcmp(model, SHIPPED_MODEL)) {
        if (stat(TRAIN_SHARDS "/meta.json", &sb) == 0) train = TRAIN_SHARDS;
        else if (stat(TRAIN_JSONL, &sb) == 0) train = TRAIN_JSONL;
    }
    char *an[] = {"analyze", db, train ? "--train-corpus" : NULL, (char *)train, NULL};
    char *pl[] = {"plot", db, "--out", figs, NULL};
    char *ex[] = {"export-notebook", db, "--out", nb, NULL};
    if (run_stage("record the held-out text", cmd_record, rec) || run_stage("analyze", cmd_analyze, an) ||
        run_stage("plot", cmd_plot, pl) || run_stage("export the notebook", cmd_export_notebook, ex)) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    print_summary(out, db, model);
    printf("  (the demo took %.0f s)\n", progress_now() - t0);
    return 0;
}
