/* The input of analyze over the shards of an MPI recording without merging
 * them (docs/scale.md): `mpirun -n K gpnscope analyze --shards SHARD...`.
 * Rank r reads the shards at positions r, r + K, ... of the list (sorted by
 * the rank that recorded them) as one chained state source; the states are
 * those a merged store's analysis reads: the first max_states in (window,
 * position) order after skip_positions, split over the shards by counting
 * each shard's first. The driver (gs_analysis_run_rows) then runs each
 * registry row's run_shards (analyses/state/run_*.c): accumulate over this
 * rank's part, add the sums up over the ranks with MPI, finish on rank 0. */
#ifndef GS_ANALYSES_SHARDS_H
#define GS_ANALYSES_SHARDS_H

#include <stdint.h>

#include "analyses/analyze.h"
#include "parallel/job.h"
#include "store/merge.h"

/* What a row's run_shards reads besides the chained source (gs_analysis_ctx.shards). */
typedef struct gs_shard_input {
    gs_job *job;
    const store_shard *shards; /* the job's shards, in rank order */
    int n;
    const int64_t *take;       /* states this rank reads from shard i (0: another rank's, or none) */
    const int64_t *all_take;   /* states the job reads from shard i */
    const char *kind;          /* stored state kind */
    int skip, limit;           /* store positions skip <= p < limit (limit 0: no end) */
    int d;                     /* the states' width */
} gs_shard_input;

/* `gpnscope analyze --shards`: analyze's options (the same --only, --site,
 * settings and defaults) over the shards. Every rank calls it with the same
 * list; rank 0 gets *a filled as gs_analyze_store fills it (the same result
 * structs, rows in a->done, notes), so the registry rows print it and put it
 * in JSON alike; nothing is written to the shards. 0, or -1 with gs_error()
 * on every rank (a failure on one fails all alike, so the ranks never wait in
 * different reductions). Free a with gs_analysis_free on every rank. */
int gs_analyze_shards(gs_job *job, const char *const *paths, int n, const gs_analyze_opts *o, gs_analysis *a);

/* One failure anywhere fails every rank (agreed before any reduction): 0
 * when every rank's ok is true, else -1 on every rank (gs_error(): this
 * rank's message, or "another rank failed"). */
int gs_shards_agree(gs_job *job, int ok);

#endif
