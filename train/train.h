/* The trainer behind `gpnscope train`: a JSON config (docs/training.md),
 * corpora through io/corpora/corpus.h (token shards, or text / JSONL with a
 * tokenizer), the companion's recipe (train_init.h, adamw.h), BPTT over
 * windows of batch x seq_len tokens (train_window.h, float32), a held-out
 * evaluation, a CSV loss log and resumable checkpoints.
 *
 * Outputs in the config's output directory:
 *   model.safetensors       the weights (F32; gs_model_save), for every other command
 *   model.bf16.safetensors  the same in BF16 (when output.export_bf16)
 *   optimizer.safetensors   the complete training state: weights, AdamW m and v,
 *                           step, data position, tokens, RNG state, elapsed time.
 *                           It alone is what --resume reads, so a crash between
 *                           writing the two files never pairs weights and moments
 *                           from different steps.
 *   loss.csv                step,tokens,train_loss,lr,grad_norm,eval_loss,elapsed_s
 *   config.json             the configuration as run
 * Every file is written to a temporary name and renamed into place.
 *
 * Determinism: a run is a function of the config (seed included) and the
 * thread count; resuming from a checkpoint at step k reproduces the
 * uninterrupted run's weights bit for bit. */
#ifndef GS_TRAIN_H
#define GS_TRAIN_H

#include <stdint.h>

#include "train/adamw.h"
#include "engine/model.h"

#define TRAIN_PATH_MAX 4096

typedef struct {
    gs_config model;
    /* corpora (io/corpora/corpus.h): a directory of token shards, or text / JSONL
     * when a tokenizer is given; windows of seq_len tokens as the companion cuts them */
    char train_dir[TRAIN_PATH_MAX], eval_dir[TRAIN_PATH_MAX], tokenizer[TRAIN_PATH_MAX], out_dir[TRAIN_PATH_MAX];
    int seq_len, batch;
    long steps;        /* total optimizer steps; the schedule's length */
    int bptt;          /* 0: full BPTT over the window; K: gradient stopped every K steps */
    int threads;       /* OpenBLAS threads; 0: its default (all cores) */
    uint64_t seed;
    int shuffle;       /* visit windows in a seeded random order, a new one each epoch */
    adamw_config opt;  /* opt.total_steps mirrors steps */
    long eval_every;   /* 0: only at the end */
    int eval_windows;  /* held-out windows per evaluation; 0: all */
    long checkpoint_every; /* 0: only at the end (and on interrupt) */
    int export_bf16;
} train_config;

void train_config_defaults(train_config *c);
/* Read a JSON config over the defaults; relative paths are resolved against
 * the config file's directory. Unknown keys are errors (typos). */
int train_config_load(const char *path, train_config *c);
int train_config_validate(const train_config *c);
/* The config as a JSON document (caller frees). */
char *train_config_to_json(const train_config *c);

typedef struct {
    long step, steps;   /* steps done (all runs), total */
    int64_t tokens;     /* tokens trained (all runs) */
    double loss, lr, grad_norm;
    double eval_loss;   /* NAN unless evaluated after this step */
    double elapsed;     /* training seconds, all runs */
    int checkpointed;   /* a checkpoint was written after this step */
} train_report;

typedef struct gs_trainer gs_trainer;

/* A trainer from a config: a freshly initialised model, or the state in
 * resume (a checkpoint directory or its optimizer.safetensors), whose model
 * sizes must match the config's. Opens the data and the output directory. */
gs_trainer *gs_trainer_new(const train_config *c, const char *resume);
void gs_trainer_free(gs_trainer *t);
/* One optimizer step, then the evaluation / checkpoint when due. */
int gs_trainer_step(gs_trainer *t, train_report *r);
int gs_trainer_done(const gs_trainer *t);
/* Write the checkpoint (model, optimizer state, BF16 export) now. */
int gs_trainer_checkpoint(gs_trainer *t);
/* Mean NLL per token over the held-out windows (error if there is no eval data). */
int gs_trainer_evaluate(gs_trainer *t, double *loss);
const gs_model *gs_trainer_model(const gs_trainer *t);
const train_config *gs_trainer_config(const gs_trainer *t);
long gs_trainer_step_count(const gs_trainer *t);
int64_t gs_trainer_train_tokens(const gs_trainer *t); /* tokens in the training shards */
size_t gs_trainer_memory(const gs_trainer *t);        /* bytes of activations held */

#endif
