/* Analyses over the shards of an MPI recording without merging them
 * (docs/scale.md): `mpirun -n K gpnscope analyze --shards SHARD...`. Rank r
 * reads the shards at positions r, r + K, ... of the list (sorted by the rank
 * that recorded them), streams their states through the analyses' own
 * accumulation (gs_geometry_accumulate), and the sums are added up over the
 * ranks with MPI; rank 0 finishes (gs_geometry_finish). The states are those
 * a merged store's analysis reads: the first max_states in (window,
 * position) order after skip_positions, split over the shards by counting
 * each shard's first.
 *
 * The horizons go the same way: the global largest lag (a max over the
 * ranks), then per-lag sums of cosines and pair counts (gs_horizons_accumulate),
 * added up and finished on rank 0. The default direction, retention and the
 * probe (analyses/state/probe_shards.h) reduce their own sums; docs/scale.md says
 * what each needs. */
#ifndef GS_ANALYSES_SHARDS_H
#define GS_ANALYSES_SHARDS_H

#include <stdint.h>

#include "analyses/analyze.h"
#include "parallel/job.h"

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
