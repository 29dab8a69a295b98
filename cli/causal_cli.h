/* What the causal commands (patch, steer, lens) share: the tokenizer that
 * goes with a model, and the store their results go to. */
#ifndef GS_CLI_CAUSAL_CLI_H
#define GS_CLI_CAUSAL_CLI_H

#include "engine/model.h"
#include "io/tokenizer/tokenizer.h"
#include "store/store.h"

/* The tokenizer at path, else $GPNSCOPE_TOKENIZER, else the source tree's
 * third_party/llama2-tokenizer.json; NULL without an error when none is
 * there and required is 0, or when the default one has more pieces than the
 * model (it is not the model's); a given one must not have more. */
gs_tokenizer *causal_tokenizer(const char *cmd, const char *path, const gs_model *m, int required, int *failed);
/* "0.5,1,-2" -> up to max doubles; -1 after printing the error. */
int causal_numbers(const char *cmd, const char *option, const char *list, double *out, int max);

/* The store a causal sweep goes into when no --store is given: the --from
 * store (the study's), when this process may write it (a writable file with
 * one name); else NULL, with a note on stderr that the sweep is not stored. */
const char *causal_default_store(const char *cmd, const char *from);

/* A sweep's plan of steps, checked before any work: above max_steps, "gpnscope CMD: the sweep plans PLAN,
 * more than --max-steps N: raise --max-steps, or give FEWER" on stderr and -1; else "CMD: PLAN" and 0. */
int causal_plan_check(const char *cmd, const char *plan, long long steps, long long max_steps, const char *fewer);

#endif
