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

/* What a family does with a "model.*" key of a training config. A key no
 * family's table names is an error; one that some other family's table names
 * is ignored, as GPN ignores "n_heads". */
typedef enum {
    GS_KEY_REQUIRED = 1, /* read, and missing is an error; written back */
    GS_KEY_OPTIONAL,     /* read if present; written back */
    GS_KEY_REFUSED,      /* present is an error: "\"model.KEY\" WHY" */
} gs_key_use;

typedef struct {
    const char *key; /* "d_state" */
    gs_key_use use;
    const char *why; /* GS_KEY_REFUSED: the rest of the error ("belongs to \"gdn\" only") */
    size_t field;    /* the int it sets: its byte offset in gs_config (own options: in gs_config.own) */
    int lo, hi;      /* its bounds; hi 0: a bool */
    const char *tag; /* non-NULL: a training state's "model" identity names it (" conv=4") where nonzero */
} gs_train_key;

/* The keys several families read, with the bounds every family gives them
 * (gs_config's fields); USE is GS_KEY_REQUIRED or GS_KEY_OPTIONAL */
#define TRAIN_KEY_INT(KEY, FIELD, LO, HI, USE) {KEY, USE, NULL, offsetof(gs_config, FIELD), LO, HI, NULL}
#define TRAIN_KEY_VOCAB_SIZE(USE) TRAIN_KEY_INT("vocab_size", V, 1, 1 << 24, USE)
#define TRAIN_KEY_D_STATE(USE) TRAIN_KEY_INT("d_state", d, 1, 1 << 16, USE)
#define TRAIN_KEY_D_EMB(USE) TRAIN_KEY_INT("d_emb", e, 1, 1 << 16, USE)
#define TRAIN_KEY_D_FFN(USE) TRAIN_KEY_INT("d_ffn", f, 1, 1 << 18, USE)
#define TRAIN_KEY_N_HEADS(USE) TRAIN_KEY_INT("n_heads", H, 1, 4096, USE)
#define TRAIN_KEY_D_KEY(USE) TRAIN_KEY_INT("d_key", dk, 1, 4096, USE)
#define TRAIN_KEY_D_VAL(USE) TRAIN_KEY_INT("d_val", dv, 1, 4096, USE)
#define TRAIN_KEY_N_LAYERS(USE) TRAIN_KEY_INT("n_layers", n_layers, 1, GS_MAX_LAYERS, USE)
#define TRAIN_KEY_DECODER_BIAS(USE) TRAIN_KEY_INT("use_decoder_bias", decoder_bias, 0, 0, USE)
/* a key the family refuses: "\"model.KEY\" WHY" */
#define TRAIN_KEY_REFUSED(KEY, WHY) {KEY, GS_KEY_REFUSED, WHY, 0, 0, 0, NULL}
/* ends a table */
#define TRAIN_KEYS_END {NULL, 0, NULL, 0, 0, 0, NULL}

typedef struct gs_train_i {
    /* a float32 tape of B windows of T tokens (NULL with gs_error()) */
    void *(*tape_new)(const gs_config *c, int B, int T);
    void (*tape_free)(void *tape);
    /* mean NLL of the window from a zero state; with grads, the head's gradient and the tape for backward */
    int (*forward)(void *tape, const float *params, const int32_t *tokens, float *grads, double *loss);
    /* accumulate the gradient into grads; bptt > 0 only where truncated_bptt */
    void (*backward)(void *tape, const float *params, float *grads, int bptt);
    size_t (*tape_bytes)(const gs_config *c, int B, int T);
    /* the seeded initialisation (train_init.h) */
    void (*init)(const gs_config *c, float *block, train_rng *r);
    int truncated_bptt; /* training.bptt > 0 is meaningful (a recurrence the tape can cut) */
    int min_seq_len;    /* 2 where the first token is not predicted */
    /* the config's "model" keys (ended by TRAIN_KEYS_END): read and written
     * in this order, then the refused ones checked in this order */
    const gs_train_key *keys;
    /* the model config before its keys are read (defaults they may change)
     * and after (what follows from them); NULL: nothing */
    void (*config_defaults)(gs_config *c);
    void (*config_derive)(gs_config *c);
    /* the checkpoint metadata keys of the initial A_log and dt_bias (train.c) */
    const char *init_decay_keys[2];
} gs_train_i;

/* Key rules several families' tables share (a key a family refuses) */
#define TRAIN_KEY_NO_CONV TRAIN_KEY_REFUSED("conv_size", "belongs to \"gdn\" only")
/* the baselines: e = d_state and no decoder bias, so GPN's keys for them are errors, not ignored */
#define TRAIN_KEYS_NO_GPN(FAM)                                                                                       \
    TRAIN_KEY_REFUSED("d_emb", "has no meaning for \"" FAM "\""),                                                \
        TRAIN_KEY_REFUSED("use_decoder_bias", "has no meaning for \"" FAM "\"")
/* the attention baselines (Transformer++, the Recurrent Transformer): heads of d / H, so no head sizes */
#define TRAIN_KEYS_ATTENTION(FAM)                                                                                    \
    TRAIN_KEY_VOCAB_SIZE(GS_KEY_REQUIRED), TRAIN_KEY_D_STATE(GS_KEY_REQUIRED), TRAIN_KEY_D_FFN(GS_KEY_REQUIRED),      \
        TRAIN_KEY_N_HEADS(GS_KEY_REQUIRED), TRAIN_KEY_N_LAYERS(GS_KEY_OPTIONAL), TRAIN_KEYS_NO_GPN(FAM),              \
        TRAIN_KEY_REFUSED("d_key", "has no meaning for \"" FAM "\" (its head size is d_state / n_heads)"),            \
        TRAIN_KEY_REFUSED("d_val", "has no meaning for \"" FAM "\" (its head size is d_state / n_heads)"),            \
        TRAIN_KEY_NO_CONV, TRAIN_KEYS_END
/* the checkpoint metadata keys of the initial decay: per layer (GDN) or GPN's one decay */
#define TRAIN_INIT_DECAY {"init_A_log", "init_dt_bias"}

/* The baselines' config: the residual width is d_state, the tapes' RMSNorm eps (the sources' 1e-6) */
void train_baseline_derive(gs_config *c);

#endif
