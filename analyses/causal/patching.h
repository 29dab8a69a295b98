/* State patching that carries through the recurrence (docs/causal.md).
 *
 * A prompt pair is a clean and a corrupted prompt of the same length T, an
 * answer token and a foil. The clean and the corrupted prompt each run from
 * the zero state; then, for every component and position p, the corrupted
 * prompt runs again with that component of its state after reading x_p
 * replaced by the clean run's, and the recurrence continues from there. What
 * is measured is the logit difference LD = logit(answer) - logit(foil) of the
 * prediction that follows the prompt, as the score
 *     (LD_patched - LD_corrupted) / (LD_clean - LD_corrupted),
 * 0 for the corrupted run and 1 for the clean one (NaN where the two agree).
 *
 * Every replacement is an edit by a hook on a site (probes/): capturing and
 * patching are one mechanism. Components:
 *   state        the whole carried state (GPN: state.ground after x_p; GPN+M
 *                also the memory M and the next write's keys, as carried
 *                into step p + 1: mem.state and mem.k there)
 *   head:H       memory head H's matrix M_H (GPN+M)
 *   dir:NAME     the carried state's component along a unit direction u:
 *                s <- s + (u.s_clean - u.s) u (s_bar, a principal direction,
 *                a .npy such as a probe's weights; analyses/causal/direction.h)
 *   site:NAME    the whole of one site at step p (e.g. a layer's residual,
 *                blocks.1.hook_resid_post, in a layered family)
 * Positions 0..T-1, and "all" (-1): the component patched at every position.
 *
 * The prediction that follows the prompt is read at step T (the engine is
 * stepped once more, with the answer as x_T, which neither family lets reach
 * the logits of that step). Every run of a pair set uses the same batches,
 * the same rows and the same hooks (a hook that is not the patch's passes the
 * tensor on unchanged), so a patch of the whole state at the last position
 * gives the clean run's logits bit for bit. */
#ifndef GS_ANALYSES_PATCHING_H
#define GS_ANALYSES_PATCHING_H

#include <stdint.h>

#include "engine/model.h"
#include "io/tokenizer/tokenizer.h"

/* ---------- prompt pairs (JSONL, docs/causal.md) ---------- */
typedef struct {
    int n, T;              /* pairs, prompt tokens (every pair the same) */
    int32_t *clean, *corrupted; /* n x T */
    int32_t *answer, *foil;     /* n */
} gs_patch_pairs;

/* Read PATH: one JSON object per line (blank lines and lines starting with
 * '#' skipped) {"clean": TEXT or [ids], "corrupted": ..., "answer": TEXT or
 * id, "foil": ...}. Text is tokenized with tok (NULL: only ids are taken);
 * an answer or foil text must be one token (a piece of the vocabulary, or a
 * text that tokenizes to one). Every id must be below V. Errors are one line,
 * "PATH:LINE: what is wrong". */
int gs_patch_pairs_load(const char *path, const gs_tokenizer *tok, int V, gs_patch_pairs *out);
void gs_patch_pairs_free(gs_patch_pairs *p);

/* ---------- components ---------- */
typedef enum { GS_PATCH_STATE, GS_PATCH_HEAD, GS_PATCH_DIRECTION, GS_PATCH_SITE } gs_patch_kind;
typedef struct {
    char name[96];  /* "state", "head:3", "dir:s_bar", "site:blocks.0.hook_resid_post" */
    gs_patch_kind kind;
    int head;
    char site[80];  /* GS_PATCH_SITE */
    float *u;       /* GS_PATCH_DIRECTION: a unit vector of the state's width (owned) */
} gs_patch_component;

/* The components a model patches by default: the whole state, each memory
 * head, and (when u is given) the direction u; for a layered family every
 * layer's residual (blocks.{i}.hook_resid_post) and u, after GDN's whole
 * state (each layer's attn.state and attn.conv_state, docs/causal.md). Returns the count
 * (*out malloc'd), -1 with gs_error(). */
int gs_patch_default_components(const gs_model *m, const float *u, const char *u_name, gs_patch_component **out);
/* One component from its name (a direction needs u; NULL: dir: is refused). */
int gs_patch_parse_component(const gs_model *m, const char *name, const float *u, gs_patch_component *out);
void gs_patch_components_free(gs_patch_component *c, int n);

/* ---------- the sweep ---------- */
typedef struct {
    int batch;  /* pairs per batch (<= 0: 64) */
    /* after each patched run: runs done and the total (may stop: non-zero) */
    int (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
} gs_patch_opts;

typedef struct {
    int n_pairs, T, n_components;
    int n_positions;        /* T + 1: positions 0..T-1, then "all" */
    double *ld_clean, *ld_corrupted; /* n_pairs */
    double *ld;             /* [component][position][pair], position T = "all" */
    double *score;          /* the same, normalised */
    double *mean_score;     /* [component][position]: the mean over pairs with LD_clean != LD_corrupted */
} gs_patch_result;

/* The mean of the clean runs' carried state over pairs and positions (the
 * computed s_bar when no store gives one): d floats into mean. */
int gs_patch_mean_state(const gs_model *m, const gs_patch_pairs *p, const gs_patch_opts *o, float *mean);
/* Run the sweep; 0, 1 when stopped by progress (the result incomplete), -1. */
int gs_patch_run(const gs_model *m, const gs_patch_pairs *p, const gs_patch_component *c, int n_components,
                 const gs_patch_opts *o, gs_patch_result *r);
void gs_patch_result_free(gs_patch_result *r);

#endif
