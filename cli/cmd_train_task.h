/* `gpnscope train --config FILE` for a config with a top-level "task" key:
 * MLP-LDRU on a regular-language task (train/task_train.h). */
#ifndef GS_CLI_CMD_TRAIN_TASK_H
#define GS_CLI_CMD_TRAIN_TASK_H

/* out, steps (> 0), threads (>= 0): the command line's overrides, or NULL / -1. */
int cmd_train_task(const char *config, const char *out, long steps, long threads, int quiet);

#endif
