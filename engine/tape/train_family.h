/* What `gpnscope train` needs of a family: the training entry of its row in
 * the family table (gs_family.train; NULL: the family is not trained here).
 * The trainer (train.c) sees a tape only through these pointers, so adding
 * a trainable family is a tape (forward, backward) and one entry. */
#ifndef GS_ENGINE_TRAIN_FAMILY_H
#define GS_ENGINE_TRAIN_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/tape/train_init.h"

/* What a family does with a "model.*" key of a training config; the keys,
 * their gpn_config fields and bounds are the trainer's (train.c). A key the
 * family's table does not name is ignored, as GPN ignores "n_heads". */
typedef enum {
    GS_KEY_REQUIRED = 1, /* read, and missing is an error; written back */
    GS_KEY_OPTIONAL,     /* read if present; written back */
    GS_KEY_REFUSED,      /* present is an error: "\"model.KEY\" WHY" */
} gs_key_use;

typedef struct {
    const char *key; /* "d_state" */
    gs_key_use use;
    const char *why; /* GS_KEY_REFUSED: the rest of the error ("belongs to \"gdn\" only") */
} gs_train_key;

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
    /* the config's "model" keys (terminated by a NULL key): read and written
     * in the trainer's order, refused ones checked in this table's order */
    const gs_train_key *keys;
    /* the model config before its keys are read (defaults they may change)
     * and after (what follows from them); NULL: nothing */
    void (*config_defaults)(gpn_config *c);
    void (*config_derive)(gpn_config *c);
    /* the checkpoint metadata keys of the initial A_log and dt_bias (train.c) */
    const char *init_decay_keys[2];
} gs_train_i;

/* Key rules several families' tables share (a key a family refuses) */
#define TRAIN_KEY_NO_CONV {"conv_size", GS_KEY_REFUSED, "belongs to \"gdn\" only"}
/* the baselines: e = d_state and no decoder bias, so GPN's keys for them are errors, not ignored */
#define TRAIN_KEYS_NO_GPN(FAM)                                                                                       \
    {"d_emb", GS_KEY_REFUSED, "has no meaning for \"" FAM "\""},                                                    \
        {"use_decoder_bias", GS_KEY_REFUSED, "has no meaning for \"" FAM "\""}
/* the checkpoint metadata keys of the initial decay: per layer (GDN) or GPN's one decay */
#define TRAIN_INIT_DECAY {"init_A_log", "init_dt_bias"}

/* The baselines' config: the residual width is d_state, the tapes' RMSNorm eps (the sources' 1e-6) */
void train_baseline_derive(gpn_config *c);

#endif
