/* Training MLP-LDRU on a regular-language task (engine/tasks/, docs/ldru.md):
 * `gpnscope train --config FILE` where FILE has a top-level "task" key.
 * Each step draws one length uniformly in 1..max_length (odd only where the
 * task has only odd lengths), generates a batch of strings of that length
 * from the task (seeded by the run's seed and the step), and takes one
 * AdamW step (train/adamw.h) on the mean cross-entropy of the
 * classifier on the roots, backward through the tree
 * (engine/arch/ldru/ldru_backward.c). The evaluation draws fresh strings
 * (another seed) at every in-distribution length 1..max_length and at
 * ood_lengths lengths spread evenly over max_length+1..ood_max, and reports
 * accuracy per length and per bucket.
 *
 * Outputs in the output directory: model.safetensors (the weights, the task
 * in its metadata), loss.csv (step,length,loss,accuracy,lr,grad_norm,elapsed_s)
 * and eval.json (accuracy per length and per bucket). A run is a function of
 * its config: the same config gives the same weights. */
#ifndef GS_TRAIN_TASK_TRAIN_H
#define GS_TRAIN_TASK_TRAIN_H

#include <stdint.h>

#include "engine/model.h"
#include "train/adamw.h"

#define TASK_TRAIN_PATH_MAX 4096
#define TASK_EVAL_MAX_LENGTHS 1100

typedef struct {
    char task[64];
    int d, f;               /* model.d_model, model.d_ffn */
    long steps;
    int batch, max_length;  /* training lengths 1..max_length */
    uint64_t seed;
    int threads;            /* OpenBLAS threads; 0: its default */
    adamw_config opt;
    int eval_count;         /* strings per evaluated length */
    int ood_max, ood_lengths;
    long log_every;         /* loss.csv rows (and progress) every this many steps */
    char out_dir[TASK_TRAIN_PATH_MAX];
} task_train_config;

/* 1 when the JSON file at path has a top-level "task" key (0 otherwise,
 * also when it cannot be read: the ordinary trainer reports that). */
int task_train_is_task_config(const char *path);
void task_train_defaults(task_train_config *c);
/* Read over the defaults; unknown keys are errors; output.dir relative to
 * the config file's directory. 0, or -1 with gs_error(). */
int task_train_load(const char *path, task_train_config *c);

typedef struct {
    int length, n, correct;
} task_eval_row;

typedef struct {
    int n_rows;
    task_eval_row rows[TASK_EVAL_MAX_LENGTHS];
    /* buckets: in distribution (1..max_length), out of distribution
     * (max_length+1..ood_max), and the OOD sub-buckets up to 100, 200, ood_max */
    double in_acc, ood_acc, ood_100, ood_200, ood_rest;
} task_eval;

typedef struct {
    long step;
    int length;
    double loss, accuracy, lr, grad_norm, elapsed;
} task_train_report;

/* Accuracy of a model on fresh strings of the task (seed): count strings at
 * each length 1..max_length and at ood_lengths lengths spread over
 * max_length+1..ood_max (lengths the task lacks are skipped). 0, or -1. */
int task_train_evaluate(const gs_model *m, const char *task, int max_length, int ood_max, int ood_lengths, int count,
                        uint64_t seed, task_eval *ev);

/* Train to c->steps (progress(ctx, report) after each logged step; it may
 * return nonzero to stop early, e.g. on SIGINT, with the model still saved),
 * evaluate, write the outputs. 0, or -1 with gs_error(). */
int task_train_run(const task_train_config *c, int (*progress)(void *ctx, const task_train_report *r), void *ctx,
                   task_eval *ev);

#endif
