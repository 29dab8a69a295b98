/* The probe horizon (analyses/state/probe.h) over the shards of an MPI recording,
 * without merging them (docs/scale.md, `analyze --shards --only probe`).
 *
 * The in-memory probe fits, per lag k, a ridge regression from its normal
 * equations and scores held-out positions; both are sums over states, so
 * each rank streams its shards' states and adds, per lag: the Gram of the
 * training states about a centering point (d x d), their sum (d), the cross
 * products with the targets' embeddings (d x e) and the targets' sum (e);
 * then the held-out tallies: hits, the targets' counts (V) and the sums of
 * the standard error's blocks. The sums are added up with MPI, rank 0 fits
 * and sends W to every rank for the scoring, and every rank finishes the lag
 * alike (gs_probe_lag_result), so the numbers are the merged store's
 * gs_probe_run's up to the order of the double sums.
 *
 * The split is the merged store's: documents (or windows) ordered by a
 * seeded hash of their first window id, the first round(test_frac x units)
 * held out. A document may run across shards, so its first window id is
 * found by carrying the document boundary over the shards in rank order
 * (each shard's last window's tokens are shared); the units' ids are then
 * gathered (one int64 each) and every rank sorts the same list. What no
 * rank holds: states (streamed, one window at a time, re-read for every
 * pass: 1 + 2 per lag per split) or the tokens of more than the shard being
 * read. Memory per rank: about 3 d x d + 2 d x e doubles, a block of 256 rows,
 * V counts, the selected held-out positions' tallies (at most max_test per
 * lag) and the windows' per-lag row counts. */
#ifndef GS_ANALYSES_PROBE_SHARDS_H
#define GS_ANALYSES_PROBE_SHARDS_H

#include <stdint.h>

#include "analyses/state/probe.h"
#include "parallel/job.h"
#include "store/merge.h"

typedef struct {
    const store_shard *shards; /* the job's shards, in rank order */
    int n;
    const int64_t *take;     /* states this rank reads from shard i (0: another rank's, or none) */
    const int64_t *all_take; /* states the job reads from shard i */
    const char *kind;        /* stored state kind */
    int skip;                /* leave out store positions < skip */
    int limit;               /* and those >= limit (0: none), as the store's source (gs_store_source_limit) */
    int d;                   /* the states' width */
} gs_probe_shards_in;

/* Every rank calls it alike; every rank gets p (rank 0's is the one to
 * print). 0, or -1 with gs_error() on every rank. E: V x e embedding. */
int gs_probe_shards(gs_job *job, const gs_probe_shards_in *in, const float *E, int V, int e, const gs_probe_opts *o,
                    gs_probe *p);

#endif
