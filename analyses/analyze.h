/* The analyses of a recorded (or imported) run in a store: read what each
 * part needs from the store, run it, write every result back keyed by run,
 * analysis and settings, and print the summary table. `gpnscope analyze` is
 * a thin layer over this.
 *
 * States are streamed from the store (float16 widened on read) through a
 * gs_state_source: the first max_states states of kind "pred" in (window,
 * position) order, after leaving out positions < skip_positions. The analyses
 * use the engine's convention (the state at t has read tokens 0..t-1), which
 * is the store's for "pred" states; a "ground" state at store position p has
 * also read token p, so it is analysis position p + 1. Retention reads every window's
 * decays at every position read. By default (max_positions GS_POSITIONS_TRAINING) the states and
 * decays are read below the model's training length when the windows are longer. */
#ifndef GS_ANALYSES_ANALYZE_H
#define GS_ANALYSES_ANALYZE_H

#include <stdint.h>
#include <stdio.h>

#include "analyses/state/decay_init.h"
#include "analyses/state/default_dir.h"
#include "analyses/state/geometry.h"
#include "analyses/state/horizons.h"
#include "analyses/state/probe.h"
#include "analyses/state/retention.h"
#include "engine/model.h"
#include "store/store.h"

/* One bit per row of the analysis registry (analyses/registry.h, where each
 * analysis' name, needs and functions are). */
enum {
    GS_AN_GEOMETRY = 1,
    GS_AN_DEFAULT = 2,
    GS_AN_HORIZON = 4,
    GS_AN_RETENTION = 8,
    GS_AN_PROBE = 16,
    GS_AN_ALL = 31,         /* the rows analyze runs (gs_analysis_runnable(); a unit test keeps them equal) */
    GS_AN_ABLATION = 32,    /* stored by `gpnscope ablate` */
    GS_AN_FINDINGS = 64,    /* stored by `gpnscope analyze` from the rows' stored results */
    GS_AN_ATTENTION = 128,  /* stored by `gpnscope attention` */
    GS_AN_ATTRIBUTION = 256, /* stored by `gpnscope attribute` */
};

/* gs_analyze_opts.max_positions: the model's training length (config.json's data.seq_len beside it) */
#define GS_POSITIONS_TRAINING (-1)

typedef struct {
    unsigned parts;         /* GS_AN_*; 0 = all that apply to the run */
    int explicit_parts;     /* 1: parts were asked for by name, so a part that cannot run is an error */
    int64_t max_states;     /* 16384; <= 0: all */
    int skip_positions;     /* leave out store positions < K */
    int max_positions;      /* read store positions < K only, states and decays; 0: all; GS_POSITIONS_TRAINING
                             * (the default): below the model's training length when the run's windows are
                             * longer (gs_positions_choose) */
    uint64_t seed;          /* 1 */
    int boot;               /* resamples of the bootstrap over windows behind the findings' intervals (200); 0: none */
    const char *model_path; /* NULL: the run's model file */
    const char *site;       /* --site: a site the run recorded, read by every analysis that reads its kind: a
                             * per-head scalar site is retention's decay site (unless decay_site is given),
                             * any other the state analyses' vector site (as kind); NULL: the defaults below */
    const char *kind;       /* the states.kind the state analyses read; NULL: the run's state site (run_sites
                             * role 'state'), else "pred" */
    const char *decay_site; /* the per-head decay site retention reads; NULL: the run's (role 'decay'), else
                             * mem.alpha; its write strengths are the site named with "beta" for "alpha" */
    int horizon_max_lag;    /* 0: longest window */
    int probe_max_lag;      /* 256 */
    int probe_splits;       /* 5: document splits (seeds seed .. seed + K - 1) behind the probe's spread */
    const char *train_corpus; /* the model's training corpus (shards, or JSONL/text with the run's
                               * tokenizer): the like-for-like Spearman; NULL: not measured */
    /* gs_analyze_store calls it before each analysis it runs: analysis k (from 0) of the n it will run, by
     * its registry name, then once with k == n and name NULL when all are done (a progress line; NULL: none) */
    void (*on_part)(void *ctx, int k, int n, const char *name);
    void *on_part_ctx;
} gs_analyze_opts;

void gs_analyze_opts_default(gs_analyze_opts *o);
/* Parse a comma-separated list of the registry's names ("all": every row analyze runs) into GS_AN_* bits. */
int gs_analyze_parse_parts(const char *list, unsigned *parts);
/* The bits of the rows analyze runs. */
unsigned gs_analysis_runnable(void);
/* o with --site resolved on the run: a per-head scalar site becomes the decay
 * site (unless decay_site is given), any other the state kind it is stored as;
 * the store's and the shards' one rule. 0, or -1 with gs_error(). */
int gs_analyze_resolve_site(store *st, int64_t run, const gs_analyze_opts *o, gs_analyze_opts *eff);
/* The rows to run: o->parts (0: every runnable row) and the rows they read. */
unsigned gs_analyze_parts(const gs_analyze_opts *o);

typedef struct {
    int64_t run_id;
    unsigned done;          /* parts computed */
    gs_model *model;       /* owned; NULL when none could be loaded */
    gs_geometry geometry;
    gs_default_dir default_dir;
    gs_horizons horizons;
    gs_retention retention;
    gs_retention_opts retention_opts; /* what retention ran with */
    gs_decay_init decay_init; /* the decays against their initialisation (has_decay_init) */
    int has_decay_init;
    gs_probe probe;
    char recorded_corpus[512]; /* the path of the run's corpus (its unigram counts), "" when unknown */
    char kind[64];          /* the states.kind the state analyses read */
    char decay_site[64];    /* the site retention read */
    /* the positions read: store positions < max_positions (0: all recorded_len of them), and why */
    int max_positions, recorded_len, trained_seq_len; /* trained_seq_len 0: unknown */
    char positions_note[256];
    char notes[1024];       /* what was skipped and why, one line per note */
} gs_analysis;

/* Which store positions windows of `recorded` positions are read at, for a
 * model trained on `trained` (0: unknown; issue 39.7: past its training
 * length a model extrapolates, which says nothing of its state's structure):
 * below it when the windows are longer, unless all; every one otherwise.
 * *max_positions gets the bound (0: all), note the words ("positions 0-511
 * of 1024: the model was trained on 512 (--positions all reads every one)"). */
void gs_positions_choose(int recorded, int trained, int all, int *max_positions, char *note, size_t size);
/* o->max_positions resolved on the run (its model's, or o->model_path's,
 * training length) into a's max_positions, recorded_len, trained_seq_len
 * and positions_note: the store's and the shards' one rule. */
void gs_analysis_positions(const store_run_info *info, const gs_analyze_opts *o, gs_analysis *a);

/* Run the analyses. 0, or -1 with gs_error() (a run without states, a part
 * asked for by name that cannot run, a failure inside a part). */
int gs_analyze_store(store *st, int64_t run_id, const gs_analyze_opts *o, gs_analysis *a);
/* Write every computed result to the store: one analysis row per part,
 * under its registry row's stored name, with the settings that produced it
 * (same settings replace, others add). */
int gs_analysis_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *code_version);
/* Analyze run's control of kind k (STORE_CONTROL_*; record/controls.h) with o's settings, less the
 * probe (no verdict reads it) and less --model (a control runs its own), and write its results: what
 * the findings read beside the run's. 1 analyzed, 0 when the run has no such control (or o asks for
 * none of the rows the verdicts read), -1 with gs_error(). */
int gs_analyze_control(store *st, int64_t run, int k, const gs_analyze_opts *o, const char *code_version);
/* The summary table, with token text from the run's vocabulary. */
void gs_analysis_print(FILE *f, store *st, const gs_analysis *a);
/* The results as one JSON object: {"run": N, one member per computed row (its stored name), "notes"}; each
 * member holds, besides the row's own JSON, the scalars its write stores with o's settings (read from a, not
 * from a store: one document for a store and for its shards). */
struct cJSON *gs_analysis_json(const gs_analysis *a, const gs_analyze_opts *o);
void gs_analysis_free(gs_analysis *a);
/* The run's model: the file given, else the one the store registered with the run; refused (NULL with
 * gs_error()) when its sha256 is not the one the run was recorded with. */
gs_model *gs_analysis_load_model(const store_run_info *info, const char *given);

/* A state source over a store run (the analyze command's, exposed for the
 * benchmark and tests). Free with gs_store_source_close. */
gs_state_source *gs_store_source_open(store *st, int64_t run_id, const char *kind, int skip_positions,
                                      int64_t max_states);
void gs_store_source_close(gs_state_source *src);
/* From now on deliver only store positions < max_positions (0: all). */
void gs_store_source_limit(gs_state_source *src, int max_positions);

#endif
