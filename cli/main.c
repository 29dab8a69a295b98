/* gpnscope: the command line. Each command lives in cli/cmd_NAME.c and is
 * listed in the table below; errors are printed as one line and give exit 1
 * (2 for a usage error). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "cli/commands.h"

static const cli_command commands[] = {
    {"demo", "the whole pipeline on the shipped model: record, analyze, plot, notebook", cmd_demo},
    {"info", "describe a checkpoint: architecture, sizes, parameters, hash", cmd_info},
    {"convert", "convert a checkpoint (companion .pkl, PyTorch .pt) to safetensors, no Python", cmd_convert},
    {"record", "run a model over a corpus and record states, gates and decays into SQLite", cmd_record},
    {"tokenize", "text on stdin -> LLaMA-2 token ids (or pieces), one line per line", cmd_tokenize},
    {"shard", "tokenize a text/JSONL corpus into token shards (the companion's format)", cmd_shard},
    {"eval", "perplexity of a model on a corpus (text, JSONL or token shards)", cmd_eval},
    {"train", "train a GPN / GPN+M on token shards (BPTT, AdamW, resumable checkpoints)", cmd_train},
    {"sql", "run SQL on a store, with the vector functions loaded", cmd_sql},
    {"migrate", "bring a store to this gpnscope's schema (one transaction)", cmd_migrate},
    {"ablate", "causal interventions on a run: mean direction, heads, pools; perplexity change", cmd_ablate},
    {"patch", "state patching through the recurrence: prompt pairs, components x positions", cmd_patch},
    {"steer", "steering: add c times a direction to the state; NLL and top-1 change against c", cmd_steer},
    {"lens", "the logit lens over a window: top tokens of each site's decode per position", cmd_lens},
    {"attention", "exact effective attention of a run's delta-rule heads, beside the heuristic", cmd_attention},
    {"attribute", "direct logit attribution: each token's logit split over the step's parts and heads", cmd_attribute},
    {"import", "store .npy traces recorded elsewhere as a run", cmd_import},
    {"controls", "record a run's controls (its family untrained, its text shuffled) for the verdicts", cmd_controls},
    {"analyze", "measure a run: geometry, default direction, horizons, retention, probe horizon", cmd_analyze},
    {"recurrence-depth", "how far back each layer's attention reaches (attention-weighted lag per head)", cmd_recurrence_depth},
    {"plot", "draw a run's analyses as editable gnuplot figures, with report.md / report.html", cmd_plot},
    {"view", "one interactive HTML page of a store: tokens coloured by NLL, state, attention; verdicts", cmd_view},
    {"export-notebook", "write a Jupyter notebook that studies a run (SQL, pandas, matplotlib)", cmd_export_notebook},
    {"export", "write a run's tokens, heads, states and results as CSV or .npy files", cmd_export},
    {"compare", "runs, sites or layers side by side: the three structures with intervals and verdicts", cmd_compare},
    {"tasks", "the regular-language tasks of MLP-LDRU: their DFAs and seeded examples", cmd_tasks},
    {"automaton", "does an MLP-LDRU learn the automaton? node vectors clustered against the transition monoid", cmd_automaton},
    {"merge", "fold the shards of an MPI recording (mpirun ... record) into one store", cmd_merge},
};

static void usage(FILE *out) {
    fprintf(out,
            "gpnscope %s: measure the inside of single-state recurrent language models (GPN, GPN+M)\n\n"
            "usage: gpnscope COMMAND [options]   (gpnscope COMMAND --help for each)\n\ncommands:\n",
            GPNSCOPE_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fputs("\nenvironment:\n"
          "  GPNSCOPE_THREADS      threads of the CPU engine (default: the number of CPUs); above batch 1\n"
          "                        they do the GEMMs too, OpenBLAS set to one thread meanwhile\n"
          "  OPENBLAS_NUM_THREADS  OpenBLAS's threads: the engine's batch-1 GEMVs, the analyses, training\n"
          "  GPNSCOPE_TOKENIZER    tokenizer.json or tokenizer.model for text and JSONL corpora\n"
          "  GPNSCOPE_CUDA_PLUGIN  gpnscope_cuda.so for --device cuda (default: beside gpnscope)\n"
          "  GPNSCOPE_VEC          the vector SQL extension a notebook loads (export-notebook; empty: none)\n"
          "  GPNSCOPE_EVAL_STEP    1: eval steps token by token where the engine could run whole windows\n"
          "  GPNSCOPE_PROGRESS_SECONDS  seconds between record's and analyze's plain progress lines when\n"
          "                        stderr is not a terminal (default 10; 0: one at every update)\n",
          out);
    fprintf(out, "\nDocumentation: README.md and docs/ in the source tree.\n");
}

int main(int argc, char **argv) {
    /* past a file-size limit (ulimit -f) a write fails with EFBIG, which every writer reports in one line,
     * instead of the default SIGXFSZ killing the process without a word */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "--version")) { printf("gpnscope %s\n", GPNSCOPE_VERSION); return 0; }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    const char *near = gs_closest_word(argv[1], names, sizeof commands / sizeof *commands);
    if (near) fprintf(stderr, "gpnscope: unknown command '%s': did you mean '%s'? (see gpnscope --help)\n", argv[1], near);
    else fprintf(stderr, "gpnscope: unknown command '%s' (see gpnscope --help)\n", argv[1]);
    return 2;
}
