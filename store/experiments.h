/* Tables of the causal tools (docs/causal.md, docs/schema.md "Causal
 * experiments"): patching sweeps, steering curves and the logit lens. They
 * are experiments on a model and prompts rather than analyses of a recorded
 * run, so they key on their own experiment rows. The tables are additive:
 * created (IF NOT EXISTS) by the first write, so the schema version stays
 * and an older gpnscope reads the file as before. Each writer runs in one
 * transaction: an interrupted command leaves no partial experiment. */
#ifndef GS_STORE_EXPERIMENTS_H
#define GS_STORE_EXPERIMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Creates the tables if the file lacks them. */
int store_causal_tables(store *st);

/* One experiment row of kind "patch", "steer" or "lens"; settings a JSON
 * object. Opens a transaction (store_causal_commit ends it). Returns the id. */
int64_t store_causal_begin(store *st, const char *kind, const char *model_path, const char *model_sha256,
                           const char *input_path, const char *settings_json, const char *code_version);
int store_causal_commit(store *st);
void store_causal_rollback(store *st);

/* patch_results: one row per (component, position, pair), components numbered
 * in the sweep's order; position -1: every position. */
int store_put_patch_baseline(store *st, int64_t exp, int pair, double ld_clean, double ld_corrupted);
int store_put_patch(store *st, int64_t exp, int component_index, const char *component, int position, int pair,
                    double logit_diff, double score);
/* steer_results: one row per coefficient c. top_tokens: a JSON array (may be NULL). */
int store_put_steer(store *st, int64_t exp, double c, int64_t n_tokens, double nll, double delta_nll,
                    double top1_changed, const char *top_tokens);
/* lens_tokens: rank 0 is the top token of the site's decode at the position. */
int store_put_lens(store *st, int64_t exp, const char *site, int position, int rank, int32_t token_id, double logit,
                   const char *piece);


/* ---------- reading, for the figures (store/experiments_read.c) ---------- */
/* The newest experiment of a kind ("patch", "steer", "lens"): its id, 0 when there is none, -1 on error. */
int64_t store_newest_experiment(store *st, const char *kind);
/* The experiment's model path into buf ("" when NULL): 0, 1 when there is no such experiment, -1 on error. */
int store_experiment_model_path(store *st, int64_t experiment, char *buf, size_t size);
/* patch_summary's cells in sweep order (component, then position with -1, "every position", last);
 * *out malloc'd; the count, or -1. mean_score NaN where NULL. */
typedef struct {
    char component[256];
    int position;
    double mean_score;
} store_patch_cell;
int64_t store_patch_summary(store *st, int64_t experiment, store_patch_cell **out);
/* steer_results by c (*out malloc'd; NULLs read as NaN); the count, or -1. */
typedef struct {
    double c, delta_nll, top1_changed;
} store_steer_point;
int store_steer_points(store *st, int64_t experiment, store_steer_point **out);

/* The first pair's clean prompt as a patch experiment stored it (its settings'
 * clean_tokens): n pieces malloc'd into *out (free each and the array); 0 for an
 * experiment without them (a figure then shows position numbers). */
int store_patch_clean_tokens(store *st, int64_t experiment, char ***out);

/* The top-1 token of every site and position of a lens experiment, by site then position (*out malloc'd;
 * piece "" when the lens had no tokenizer); the count, or -1. */
typedef struct {
    char site[128], piece[64];
    int position;
    int32_t token_id;
    double logit;
    int tie;            /* 1: the second token's logit equals the first's (GPN's zero state): no ranking */
} store_lens_cell;
int store_lens_top1(store *st, int64_t experiment, store_lens_cell **out);

#endif
