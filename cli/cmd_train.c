/* gpnscope train --config FILE [--resume CKPT] [--bptt K] ...: train a GPN /
 * GPN+M with BPTT, or a Transformer++ / GDN baseline (train/train.h). SIGINT finishes the current step, writes
 * a checkpoint and exits with 130; a second SIGINT stops at once. */
#include <math.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/cmd_train_task.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "train/task_train.h"
#include "train/train.h"

static const char *help =
    "usage: gpnscope train --config FILE [--resume CKPT] [--bptt K] [options]\n\n"
    "Train a GPN or GPN+M on token shards (data_XXXX.bin, uint32 ids) with backpropagation\n"
    "through time and the companion's recipe (AdamW, linear warm-up then cosine decay to a\n"
    "fraction of the peak, global-norm clipping; its initialisation), or one of the paper's\n"
    "baselines with the same recipe: model.arch \"transformer++\" or \"gdn\" (full window,\n"
    "no truncation; GPT-2 / fla initialisation), or \"recurrent-transformer\" (BPTT through\n"
    "each layer's attention over its own earlier outputs). The config file (JSON,\n"
    "see docs/training.md) gives the model sizes, data, schedule and output directory;\n"
    "relative paths in it are relative to the config file. Writes model.safetensors,\n"
    "optimizer.safetensors (the resumable state), loss.csv and config.json there.\n\n"
    "A config with a top-level \"task\" key (e.g. configs/ldru-parity.json) trains MLP-LDRU on\n"
    "that regular-language task instead (docs/ldru.md): strings of lengths 1..max_length,\n"
    "cross-entropy on the tree's root, AdamW; then accuracy per length in distribution and\n"
    "out to eval.ood_max, written to eval.json and printed. --out, --steps, --threads and\n"
    "--quiet apply to it; --resume, --bptt and --run-steps do not.\n\n"
    "  --config FILE     the training config (required)\n"
    "  --resume CKPT     continue from a checkpoint directory (or its optimizer.safetensors);\n"
    "                    the run continues exactly as if it had not stopped\n"
    "  --bptt K          truncate backpropagation every K tokens (0: the whole window);\n"
    "                    overrides training.bptt (GPN / GPN+M only)\n"
    "  --out DIR         output directory (overrides output.dir)\n"
    "  --steps N         total optimizer steps, the schedule's length (overrides training.steps)\n"
    "  --run-steps N     stop (with a checkpoint) after N more steps; the schedule is unchanged\n"
    "  --threads N       OpenBLAS threads for the GEMMs (overrides training.threads)\n"
    "  --quiet           no progress line and no summary\n"
    "  --help            this text\n\n"
    "Ctrl-C finishes the current step, writes a checkpoint and exits with status 130;\n"
    "resume with --resume OUTDIR.\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C stops at once */
}

static void train_bad_integer(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: --%s needs %s, got '%s'\n", cmd, row->name, row->what, text);
}

int cmd_train(int argc, char **argv) {
    const char *config = NULL, *resume = NULL, *out = NULL;
    long bptt = -1, steps = -1, run_steps = -1, threads = -1;
    int quiet = 0;
    const cli_opt opts[] = {
        {CLI_STRING("config", &config)},
        {CLI_STRING("resume", &resume)},
        {CLI_INTEGER("bptt", &bptt, 0, LONG_MAX, "a non-negative integer")},
        {CLI_STRING("out", &out)},
        {CLI_INTEGER("steps", &steps, 1, LONG_MAX, "a non-negative integer")},
        {CLI_INTEGER("run-steps", &run_steps, 1, LONG_MAX, "a non-negative integer")},
        {CLI_INTEGER("threads", &threads, 0, LONG_MAX, "a non-negative integer")},
        {CLI_FLAG("quiet", &quiet)},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"train", help, train_bad_integer}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (!config || optind != argc) {
        fprintf(stderr, "gpnscope train: %s\n", config ? "unexpected argument" : "--config FILE is required");
        fputs(help, stderr);
        return 2;
    }
    if (task_train_is_task_config(config)) {
        if (resume || bptt >= 0 || run_steps > 0) {
            fprintf(stderr, "gpnscope train: --resume, --bptt and --run-steps do not apply to a task config (%s)\n", config);
            return 2;
        }
        return cmd_train_task(config, out, steps, threads, quiet);
    }
    train_config cfg;
    train_config_defaults(&cfg);
    if (train_config_load(config, &cfg) != 0) { fprintf(stderr, "gpnscope train: %s\n", gs_error()); return 1; }
    if (bptt >= 0) cfg.bptt = (int)bptt;
    if (steps > 0) cfg.steps = cfg.opt.total_steps = steps;
    if (threads >= 0) cfg.threads = (int)threads;
    if (out) snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s", out);

    gs_trainer *t = gs_trainer_new(&cfg, resume);
    if (!t) { fprintf(stderr, "gpnscope train: %s\n", gs_error()); return 1; }
    const gs_model *m = gs_trainer_model(t);
    long start = gs_trainer_step_count(t);
    if (!quiet)
        fprintf(stderr,
                "gpnscope train: %s, %zu parameters, %lld training tokens, %d x %d tokens per step, %s, %zu MB of "
                "activations; %s at step %ld of %ld -> %s\n",
                gs_arch_name(cfg.model.arch), m->n_params, (long long)gs_trainer_train_tokens(t), cfg.batch,
                cfg.seq_len, cfg.bptt ? "truncated BPTT" : "full BPTT", gs_trainer_memory(t) >> 20,
                resume ? "resuming" : "starting", start, cfg.steps, cfg.out_dir);
    if (gs_trainer_done(t)) {
        fprintf(stderr, "gpnscope train: the checkpoint has already run all %ld steps (raise --steps to continue)\n", cfg.steps);
        gs_trainer_free(t);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    long end = cfg.steps;
    if (run_steps > 0 && start + run_steps < end) end = start + run_steps;
    progress pg;
    double t_start = progress_now();
    progress_start(&pg, "train", "tok", (int64_t)(end - start) * cfg.batch * cfg.seq_len);
    if (quiet) pg.enabled = 0;
    train_report r = {0};
    double last_eval = NAN;
    int rc = 0, checkpointed = 0;
    while (gs_trainer_step_count(t) < end && !interrupted) {
        if (gs_trainer_step(t, &r) != 0) { rc = 1; break; }
        checkpointed = r.checkpointed;
        if (!isnan(r.eval_loss)) last_eval = r.eval_loss;
        char ev[32] = "";
        if (!isnan(last_eval)) snprintf(ev, sizeof ev, " held-out %.4f", last_eval);
        snprintf(pg.extra, sizeof pg.extra, "step %ld/%ld loss %.4f%s lr %.2e gn %.2f", r.step, r.steps, r.loss, ev,
                 r.lr, r.grad_norm);
        progress_update(&pg, (int64_t)(r.step - start) * cfg.batch * cfg.seq_len);
    }
    progress_end(&pg, (int64_t)(gs_trainer_step_count(t) - start) * cfg.batch * cfg.seq_len);
    signal(SIGINT, SIG_DFL);
    if (rc != 0) {
        fprintf(stderr, "gpnscope train: %s\n", gs_error());
        gs_trainer_free(t);
        return 1;
    }
    if (!checkpointed && gs_trainer_checkpoint(t) != 0) {
        fprintf(stderr, "gpnscope train: %s\n", gs_error());
        gs_trainer_free(t);
        return 1;
    }
    long done = gs_trainer_step_count(t);
    if (!quiet) {
        printf("trained %ld step%s in %.1f s (%lld tokens, %.1f s of training over all runs): train loss %.4f",
               done - start, done - start == 1 ? "" : "s", progress_now() - t_start, (long long)r.tokens, r.elapsed,
               r.loss);
        if (!isnan(last_eval)) printf(", held-out loss %.4f (perplexity %.2f)", last_eval, exp(last_eval));
        printf("\n%s %s/model.safetensors at step %ld of %ld\n", done < cfg.steps ? "checkpoint" : "model", cfg.out_dir,
               done, cfg.steps);
        if (interrupted) fprintf(stderr, "gpnscope train: interrupted; continue with --resume %s\n", cfg.out_dir);
    }
    gs_trainer_free(t);
    return interrupted ? 130 : 0;
}
