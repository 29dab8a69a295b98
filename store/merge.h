/* Folding the shards of an MPI recording (docs/scale.md) into one store.
 *
 * Each shard holds one run of rank r of K (its settings carry "shard":
 * {"rank": r, "of": K, "batch": B}) over its whole batches of windows
 * (store_shard_range) at their own window numbers. The merge checks that the shards are complete runs of one job
 * (the same model, tokenizer, corpus and settings, the same K, no rank
 * twice), then copies them in rank order into one run of the target whose
 * settings are the one-process run's (the shard key taken out): models,
 * tokenizers, corpora, vocabulary and unigram counts once, then per shard
 * its tokens, head_steps, states and windows in one transaction. Shards are
 * ATTACHed in groups (SQLite attaches at most 10 files by default).
 *
 * Resumable: a shard whose windows the target run already holds is skipped,
 * so an interrupted merge is continued by running it again, and shards may be
 * merged a few at a time. The target run is 'complete' once it holds every
 * window. Rows equal a one-process recording's (state ids too, when the
 * shards are merged into a store without other states: they are numbered in
 * the order a one-process recording writes them). */
#ifndef GS_STORE_MERGE_H
#define GS_STORE_MERGE_H

#include <stdint.h>

#include "store/store.h"

/* What a shard is: its run (the newest recorded as a shard; it must be
 * complete), its rank of K, its windows and the job's identity. */
typedef struct {
    const char *path;
    int64_t run;
    int rank, of;
    int64_t batch; /* the run's effective batch */
    int64_t begin, end, n_windows;
    char *settings; /* the run's settings without "shard": a one-process run's (malloc'd) */
    store_run_info info;
} store_shard;

/* The windows [*begin, *end) of rank r of K over n_windows windows run in
 * batches of `batch` (the effective batch: min(--batch, N)): the ceil(N/B)
 * batches are split as evenly as whole batches allow, so every batch of a
 * shard is a batch of a one-process recording (the engine's rounding depends
 * on which windows share a batch) and the merged rows equal its bit for bit. */
void store_shard_range(int64_t n_windows, int n_ranks, int rank, int64_t batch, int64_t *begin, int64_t *end);

/* 0, or -1 with gs_error() (not a store, no shard run, not complete). */
int store_shard_read(const char *path, store_shard *out);
void store_shard_free(store_shard *s);
/* The first way two shards are not of one job ("their settings differ"), or NULL. */
const char *store_shards_differ(const store_shard *a, const store_shard *b);

typedef struct {
    int64_t run;          /* the target's run */
    int n_ranks;          /* K */
    int merged, skipped;  /* shards copied now / already in the target */
    int64_t windows, n_windows; /* the target run's windows after the merge, of N */
} store_merge_result;

/* Called after each shard: its path and rank, whether it was copied (0:
 * already in the target), and its windows. */
typedef void (*store_merge_progress)(void *ctx, const char *shard, int rank, int copied, int64_t windows);

/* 0, or -1 with gs_error() (the message names the shard). */
int store_merge_shards(const char *target, const char *const *shards, int n_shards, store_merge_progress progress,
                       void *ctx, store_merge_result *out);

#endif
