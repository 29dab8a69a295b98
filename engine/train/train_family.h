/* What `gpnscope train` needs of a family: the training entry of its row in
 * the family table (gs_family.train; NULL: the family is not trained here).
 * The trainer (train.c) sees a tape only through these pointers, so adding
 * a trainable family is a tape (forward, backward) and one entry. */
#ifndef GS_ENGINE_TRAIN_FAMILY_H
#define GS_ENGINE_TRAIN_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/train/train_init.h"

typedef struct gs_train_i {
    /* a float32 tape of B windows of T tokens (NULL with gs_error()) */
    void *(*tape_new)(const gpn_config *c, int B, int T);
    void (*tape_free)(void *tape);
    /* mean NLL of the window from a zero state; with grads, the head's gradient and the tape for backward */
    int (*forward)(void *tape, const float *params, const int32_t *tokens, float *grads, double *loss);
    /* accumulate the gradient into grads; bptt > 0 only where truncated_bptt */
    void (*backward)(void *tape, const float *params, float *grads, int bptt);
    size_t (*tape_bytes)(const gpn_config *c, int B, int T);
    /* the seeded initialisation (train_init.h) */
    void (*init)(const gpn_config *c, float *block, train_rng *r);
    int truncated_bptt; /* training.bptt > 0 is meaningful (a recurrence the tape can cut) */
    int min_seq_len;    /* 2 where the first token is not predicted */
} gs_train_i;

extern const gs_train_i gs_train_gpn, gs_train_tpp, gs_train_gdn, gs_train_rt;

#endif
