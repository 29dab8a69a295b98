/* The task half of `gpnscope train` (cmd_train_task.h): reads the task
 * config, trains with a progress line, prints the accuracy table. SIGINT
 * stops after the current step; the model so far is saved and evaluated. */
#include "cli/cmd_train_task.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cli/progress.h"
#include "train/task_train.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
    signal(SIGINT, SIG_DFL);
}

static int on_step(void *ctx, const task_train_report *r) {
    progress *pg = ctx;
    snprintf(pg->extra, sizeof pg->extra, "length %d loss %.4f acc %.3f lr %.2e gn %.2f", r->length, r->loss,
             r->accuracy, r->lr, r->grad_norm);
    progress_update(pg, r->step);
    return interrupted;
}

static void print_acc(const char *label, double v) {
    if (isnan(v)) printf("  %-24s -\n", label);
    else printf("  %-24s %.4f\n", label, v);
}

int cmd_train_task(const char *config, const char *out, long steps, long threads, int quiet) {
    task_train_config c;
    task_train_defaults(&c);
    if (task_train_load(config, &c) != 0) { fprintf(stderr, "gpnscope train: %s\n", gs_error()); return 1; }
    if (out) snprintf(c.out_dir, sizeof c.out_dir, "%s", out);
    if (steps > 0) c.steps = c.opt.total_steps = steps;
    if (threads >= 0) c.threads = (int)threads;
    if (!quiet)
        fprintf(stderr, "gpnscope train: ldru on task %s, d_model %d, d_ffn %d, batch %d, lengths 1..%d, %ld steps -> %s\n",
                c.task, c.d, c.f, c.batch, c.max_length, c.steps, c.out_dir);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    progress pg;
    progress_start(&pg, "train", "step", c.steps);
    if (quiet) pg.enabled = 0;
    static task_eval ev;
    double t0 = progress_now();
    int rc = task_train_run(&c, on_step, &pg, &ev);
    progress_end(&pg, c.steps);
    signal(SIGINT, SIG_DFL);
    if (rc != 0) { fprintf(stderr, "gpnscope train: %s\n", gs_error()); return 1; }
    if (!quiet) {
        printf("task %s: trained and evaluated in %.1f s%s\n", c.task, progress_now() - t0,
               interrupted ? " (interrupted: the model so far)" : "");
        print_acc("in distribution", ev.in_acc);
        print_acc("out of distribution", ev.ood_acc);
        print_acc("  lengths 41..100", ev.ood_100);
        print_acc("  lengths 101..200", ev.ood_200);
        print_acc("  lengths 201..", ev.ood_rest);
        printf("model %s/model.safetensors, eval %s/eval.json, loss %s/loss.csv\n", c.out_dir, c.out_dir, c.out_dir);
    }
    return interrupted ? 130 : 0;
}
