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
 * probe (analyses/probe_shards.h) reduce their own sums; docs/scale.md says
 * what each needs and what stays with the merged store. */
#ifndef GS_ANALYSES_SHARDS_H
#define GS_ANALYSES_SHARDS_H

#include <stdint.h>

#include "analyses/default_dir.h"
#include "analyses/geometry.h"
#include "analyses/horizons.h"
#include "analyses/probe.h"
#include "analyses/retention.h"
#include "parallel/job.h"

/* the analyses reduced over shards; the others need the merged store */
#define GS_SHARDS_PARTS (GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON | GS_AN_RETENTION | GS_AN_PROBE)
/* without --only: the parts that read the states (retention needs a model with memory) */
#define GS_SHARDS_STATE_PARTS (GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON)

typedef struct {
    const char *kind;   /* states.kind; NULL: the run's state site (run_sites role 'state'), else "pred" */
    int skip_positions; /* leave out store positions < K */
    int64_t max_states; /* <= 0: all */
    unsigned parts;     /* of GS_SHARDS_PARTS (analyses/analyze.h); 0: GS_SHARDS_STATE_PARTS */
    gs_geometry_opts geometry;
    gs_default_opts dflt;
    gs_retention_opts retention;
    const char *decay_site; /* NULL: the run's decay site (run_sites role 'decay'), else mem.alpha */
    gs_horizon_opts horizons;
    gs_probe_opts probe;    /* the probe (analyses/probe_shards.h) */
    const char *model_path; /* NULL: the run's model (the probe's embedding) */
} gs_shards_opts;

typedef struct {
    int n_shards, n_ranks;
    int64_t run_windows; /* the job's N */
    char kind[64];
    int64_t states_here; /* states this rank read */
    unsigned done;       /* the parts in geometry / horizons (rank 0) */
    gs_geometry geometry; /* rank 0's; another rank holds only the mean and counts */
    gs_default_dir default_dir;
    gs_horizons horizons;
    gs_retention retention;
    gs_probe probe;
} gs_shards_result;

/* Every rank calls it with the same list. Rank 0 gets the results; 0, or -1
 * with gs_error() on every rank (a failure on one fails all alike, so the
 * ranks never wait in different reductions). */
int gs_shards_analyze(gs_job *job, const char *const *paths, int n, const gs_shards_opts *o, gs_shards_result *r);
void gs_shards_result_free(gs_shards_result *r);

/* One failure anywhere fails every rank (agreed before any reduction): 0
 * when every rank's ok is true, else -1 on every rank (gs_error(): this
 * rank's message, or "another rank failed"). */
int gs_shards_agree(gs_job *job, int ok);

#endif
