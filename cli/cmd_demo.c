/* gpnscope demo: the whole pipeline on the shipped model, in one folder:
 * record the held-out text -> analyze -> plot (+ report) -> notebook, then
 * print where everything is and the headline numbers. Each stage is this same
 * binary run as a subcommand, so the demo does exactly what a user would. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyses/findings.h"
#include "base/error.h"
#include "cli/cmd_compare.h"
#include "cli/commands.h"
#include "cli/demo_models.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "store/store.h"


#define SHIPPED_TOKENIZER GPNSCOPE_SOURCE_DIR "/third_party/llama2-tokenizer.json"
#define HELDOUT_CORPUS GPNSCOPE_SOURCE_DIR "/data/corpus/heldout.jsonl"
/* the shipped model's training text (docs/model.md): its shards when
 * train-shipped-model.sh made them, else the JSONL that setup.sh prepares */
#define TRAIN_SHARDS GPNSCOPE_SOURCE_DIR "/data/shards/train"
#define TRAIN_JSONL GPNSCOPE_SOURCE_DIR "/data/corpus/train.jsonl"

static const char *help =
    "usage: gpnscope demo [--out DIR] [--model M ...] [--tokenizer T] [--corpus C]\n"
    "                     [--windows N] [--seq-len L] [--batch B]\n\n"
    "Run the whole workbench on the shipped GPN+M (models/gpnm15-small: 15 memory\n"
    "heads, trained by gpnscope train; docs/model.md) over held-out text of the\n"
    "kind it was trained on (the Python documentation's sources and fortunes\n"
    "quotations) that training never saw: record states, gates and decays into DIR/study.db,\n"
    "run every analysis,\n"
    "write the figures and report to DIR/figures and a notebook to DIR/study.ipynb,\n"
    "then print the headline numbers and whether each of the paper's three\n"
    "structures appears. With the shipped model, analyze is given its training\n"
    "corpus (data/shards/train, else data/corpus/train.jsonl) for the Spearman\n"
    "that stands beside the paper's. scripts/demo.sh sets up the tokenizer and\n"
    "the held-out text first.\n\n"
    "Then the baselines trained on the same text, each that is shipped (its\n"
    "model.safetensors in the source tree), in this order: models/tpp-small,\n"
    "models/gdn-small, models/rt-small; the output names each one not shipped yet.\n"
    "Each is recorded into the same DIR/study.db as its own run over exactly the\n"
    "same windows (its state and decay sites of every layer, e.g.\n"
    "blocks.*.hook_resid_post and GDN's blocks.*.attn.alpha, as float16),\n"
    "analyzed on its last layer's state (with the training corpus), and the demo\n"
    "ends with gpnscope compare over every run: its table (one row per run, one\n"
    "per layer for a layered model) and DIR/compare/ (report.md / report.html,\n"
    "figures, compare.ipynb; docs/comparison.md). With one model the comparison\n"
    "is skipped, and the demo says so.\n\n"
    "  --out DIR        output folder (default gpnscope-demo; an old study.db there is replaced)\n"
    "  --model FILE     a model to run; give it several times to choose the list (the first is\n"
    "                   the main one, whose figures, notebook and verdicts are printed; the\n"
    "                   others are compared with it); default: the shipped models above\n"
    "  --tokenizer FILE default third_party/llama2-tokenizer.json (scripts/fetch-tokenizer.sh)\n"
    "  --corpus FILE    default data/corpus/heldout.jsonl (tools/prepare_corpus.py)\n"
    "  --windows N      windows recorded, for every model (default 16)\n"
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

/* The newest run of the store (the one a stage just recorded); 0 if none. */
static int64_t newest_run(const char *db) {
    store *st = store_open(db, STORE_READ);
    if (!st) return 0;
    int64_t run = store_last_run(st, 0);
    store_close(st);
    return run > 0 ? run : 0;
}

/* exp(mean NLL) over the run's predicted tokens (a transformer's first token has none: NaN) */
static int64_t mean_nll(store *st, int64_t run, double *mean) {
    store_token_array t;
    double sum = 0;
    int64_t n = 0;
    if (store_read_tokens(st, run, &t) == 0) {
        for (int64_t i = 0; i < t.n_windows * t.n_positions; i++)
            if (t.nll[i] == t.nll[i]) { sum += t.nll[i]; n++; }
        store_token_array_free(&t);
    }
    *mean = n ? sum / n : 0;
    return n;
}

static void print_summary(const char *db, const char *model, int64_t run) {
    store *st = store_open(db, STORE_READ);
    if (!st) return;
    double m;
    int64_t n = mean_nll(st, run, &m);
    printf("\ngpnscope demo: %s on held-out text\n", model);
    const char *domain = demo_shipped_domain(model);
    if (domain) printf("  trained on %s; the held-out text is of that kind\n", domain);
    if (n) printf("  held-out perplexity %.2f over %lld tokens (mean NLL %.4f nats)\n", exp(m), (long long)n, m);
    gs_findings f;
    if (gs_findings_compute(st, run, &f) == 0) {
        printf("\n");
        gs_findings_print(stdout, &f);
    }
    store_close(st);
}

/* The comparison's section: which baselines are missing, each model's
 * perplexity, then compare's table (buffered while it ran) */
static void print_comparison(const char *db, const demo_model *models, int n_models, const char *const *missing,
                             int n_missing, const char *table, int seq_len, int windows) {
    printf("\nThe comparison (gpnscope compare; docs/comparison.md):\n");
    for (int i = 0; i < n_missing; i++)
        printf("  %s not shipped yet: the comparison has %d model%s\n", missing[i], n_models, n_models == 1 ? "" : "s");
    if (n_models < 2) {
        printf("  skipped: one model only (give another with --model to compare it with %s)\n", models[0].name);
        return;
    }
    store *st = store_open(db, STORE_READ);
    for (int i = 0; st && i < n_models; i++) {
        double m;
        int64_t n = mean_nll(st, models[i].run, &m);
        printf("  run %lld  %s: held-out perplexity %.2f over %lld tokens\n", (long long)models[i].run, models[i].name,
               n ? exp(m) : NAN, (long long)n);
    }
    if (st) store_close(st);
    /* a transformer's positions past its training window are out of its
     * range (the shipped Transformer++'s perplexity nearly doubles there:
     * docs/model.md), so say which models these windows outrun */
    int shortest = 0;
    for (int i = 0; i < n_models; i++)
        if (models[i].trained_seq_len && models[i].trained_seq_len < seq_len) {
            if (!shortest || models[i].trained_seq_len < shortest) shortest = models[i].trained_seq_len;
            printf("  note: %s was trained on windows of %d tokens; these are %d\n", models[i].name,
                   models[i].trained_seq_len, seq_len);
        }
    if (shortest)
        printf("  positions past the training window are outside what a model learned (a Transformer++ does not "
               "extrapolate there):\n  the comparison below reads each model's positions below its training length "
               "(compare --positions all reads\n  every one); gpnscope demo --seq-len %d --windows %ld compares the "
               "same tokens in windows of the training length (docs/comparison.md)\n",
               shortest, (long)windows * seq_len / shortest);
    printf("\n%s", table);
}

static void print_files(const char *out, int compared) {
    printf("\nEverything is in %s/:\n", out);
    printf("  study.db        the recording and every analysis (gpnscope sql %s/study.db \"...\"; docs/sql.md)\n", out);
    printf("  figures/        gnuplot scripts, data and images; report.md / report.html\n");
    printf("  study.ipynb     the notebook (jupyter notebook %s/study.ipynb)\n", out);
    printf("  view.html       the interactive page: tokens coloured by NLL or the state, attention on click "
           "(open it in a browser; docs/view.md)\n");
    if (compared) printf("  compare/        the comparison: report.md / report.html, figures, compare.ipynb, compare.json\n");
}

/* A baseline over the main model's windows: its state and decay sites of
 * every layer (what compare reads), at f16 to bound time and disk; then
 * analyze on its last layer's state, as a single-state model's. */
static int record_baseline(demo_model *m, const char *db, const char *tok, const char *corpus, const char *seq_len,
                           const char *windows, const char *batch, const char *train) {
    char label[256];
    char *rec[] = {"record", "--model", m->path, "--tokenizer", (char *)tok, "--corpus", (char *)corpus,
                   "--db", (char *)db, "--seq-len", (char *)seq_len, "--windows", (char *)windows, "--batch", (char *)batch,
                   "--sites", m->sites, "--dtype", "f16", NULL};
    snprintf(label, sizeof label, "record %s on the same windows", m->name);
    if (run_stage(label, cmd_record, rec)) return -1;
    if (!(m->run = newest_run(db))) return gs_fail("%s: no run recorded for %s", db, m->name);
    char run[24];
    snprintf(run, sizeof run, "%lld", (long long)m->run);
    /* what compare reads, without the probe: the probe is ~98% of a baseline's
     * analyze (45 s against 0.9 s for GDN at 16 x 1024) and compare does not use it;
     * `gpnscope analyze STUDY --run N` adds it afterwards */
    char *an[18] = {"analyze", (char *)db, "--run", run, "--site", m->state, "--only",
                    m->decay[0] ? "geometry,default,horizon,retention" : "geometry,default,horizon"};
    int k = 8;
    if (m->decay[0]) { an[k++] = "--decay-site"; an[k++] = m->decay; }
    if (train && m->shipped) { an[k++] = "--train-corpus"; an[k++] = (char *)train; }
    an[k] = NULL;
    snprintf(label, sizeof label, "analyze %s", m->name);
    return run_stage(label, cmd_analyze, an);
}

/* compare, in-process, over every model's run: its table into *table, its
 * figures, report and notebook into OUT/compare */
static int compare_models(const char *out, const char *db, const demo_model *models, int n_models, char **table) {
    char ops[DEMO_MAX_MODELS][4200], dir[4200];
    const char *op_ptr[DEMO_MAX_MODELS];
    for (int i = 0; i < n_models; i++) {
        snprintf(ops[i], sizeof ops[i], "%s:%lld", db, (long long)models[i].run);
        op_ptr[i] = ops[i];
    }
    snprintf(dir, sizeof dir, "%s/compare", out);
    cli_compare_request q;
    cli_compare_request_default(&q);
    q.operands = op_ptr;
    q.n_operands = n_models;
    q.out_dir = dir;
    size_t size = 0;
    FILE *buf = open_memstream(table, &size);
    if (!buf) return gs_fail("out of memory");
    fflush(stdout);
    fprintf(stderr, "demo: compare the %d models\n", n_models);
    double t0 = progress_now();
    int rc = cli_compare_run(&q, buf);
    fclose(buf);
    if (rc != 0) return gs_fail("stage 'compare' failed (exit %d); its message is above", rc);
    fprintf(stderr, "demo: compare the %d models done in %.1f s\n", n_models, progress_now() - t0);
    return 0;
}

/* the models given by --model, in order */
typedef struct {
    demo_model *models;
    int *n;
} model_list;

static int model_option(const char *cmd, const char *value, void *list) {
    model_list *l = list;
    if (*l->n == DEMO_MAX_MODELS) {
        fprintf(stderr, "gpnscope %s: at most %d --model\n", cmd, DEMO_MAX_MODELS);
        return 2;
    }
    demo_model_from_path(&l->models[(*l->n)++], value);
    return 0;
}

int cmd_demo(int argc, char **argv) {
    const char *out = "gpnscope-demo", *tok = SHIPPED_TOKENIZER, *corpus = HELDOUT_CORPUS;
    const char *windows = "16", *seq_len = "1024", *batch = "16";
    demo_model models[DEMO_MAX_MODELS];
    const char *missing[DEMO_MAX_MODELS];
    int n_models = 0, n_missing = 0;
    model_list given = {models, &n_models};
    const cli_opt opts[] = {
        {CLI_STRING("out", &out)},         {CLI_CALL("model", model_option, &given)},
        {CLI_STRING("tokenizer", &tok)},   {CLI_STRING("corpus", &corpus)},
        {CLI_STRING("windows", &windows)}, {CLI_STRING("seq-len", &seq_len)},
        {CLI_STRING("batch", &batch)},     {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"demo", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc) { fprintf(stderr, "gpnscope demo: unexpected argument '%s'\n", argv[optind]); return 2; }
    if (n_models == 0) demo_shipped_models(models, DEMO_MAX_MODELS, &n_models, missing, &n_missing);
    const char *model = models[0].path;
    if (need_file(model, "model", "the shipped model is models/gpnm15-small/model.safetensors in the source tree") ||
        need_file(tok, "tokenizer", "run scripts/fetch-tokenizer.sh (scripts/demo.sh does)") ||
        need_file(corpus, "held-out corpus", "run /usr/bin/python3 tools/prepare_corpus.py data/corpus (scripts/demo.sh does)")) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    /* every baseline's file and sites before anything is recorded: a bad one stops the demo at once */
    for (int i = 1; i < n_models; i++)
        if (need_file(models[i].path, "model", "give a safetensors checkpoint (gpnscope info FILE)") ||
            demo_model_sites(&models[i])) {
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
    /* the paper's Spearman is against the training corpus: for the shipped models it is known */
    struct stat sb;
    const char *train = NULL;
    if (stat(TRAIN_SHARDS "/meta.json", &sb) == 0) train = TRAIN_SHARDS;
    else if (stat(TRAIN_JSONL, &sb) == 0) train = TRAIN_JSONL;
    const int main_train = train && models[0].shipped;
    char run1[24] = "1";
    char *an[] = {"analyze", db, "--run", run1, main_train ? "--train-corpus" : NULL, (char *)train, NULL};
    char *table = NULL;
    char *ctl[] = {"controls", db, "--run", run1, "--quiet", NULL};
    char *pl[] = {"plot", db, "--out", figs, "--run", run1, NULL};
    char *ex[] = {"export-notebook", db, "--out", nb, "--run", run1, NULL};
    /* the main model first, then the baselines on its windows, then the main model's controls (its family
     * untrained, its text shuffled: issue 39.3), which its analysis reads every verdict beside */
    if (run_stage("record the held-out text", cmd_record, rec) || !(models[0].run = newest_run(db))) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    snprintf(run1, sizeof run1, "%lld", (long long)models[0].run);
    for (int i = 1; i < n_models; i++)
        if (record_baseline(&models[i], db, tok, corpus, seq_len, windows, batch, train)) {
            fprintf(stderr, "gpnscope demo: %s\n", gs_error());
            return 1;
        }
    if (run_stage("record the controls", cmd_controls, ctl) || run_stage("analyze", cmd_analyze, an) ||
        run_stage("plot", cmd_plot, pl) || run_stage("export the notebook", cmd_export_notebook, ex)) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    /* the page before the comparison, so that compare's report can link it */
    char *vw[] = {"view", db, "--out", (char *)out, NULL};
    if (run_stage("write the interactive page", cmd_view, vw)) {
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    if (n_models > 1 && compare_models(out, db, models, n_models, &table)) {
        free(table);
        fprintf(stderr, "gpnscope demo: %s\n", gs_error());
        return 1;
    }
    print_summary(db, model, models[0].run);
    print_comparison(db, models, n_models, missing, n_missing, table ? table : "", atoi(seq_len), atoi(windows));
    free(table);
    print_files(out, n_models > 1);
    printf("  (the demo took %.0f s)\n", progress_now() - t0);
    return 0;
}
