/* The analyses as one table (registry.c), in the spirit of sqlite-vec's
 * aFunc[]: one row per analysis says its name, what it needs, and the
 * functions that run it, store it, print it and put it in JSON. analyze.c,
 * `gpnscope analyze` (--only, --json, --help), the figures (plots/figures.c)
 * and the readers of stored results loop over or look up these rows; no
 * other file spells an analysis' name.
 *
 * Adding an analysis (docs/architecture.md, "adding an analysis"): one file
 * analyses/run_NAME.c with its run/write/print/json functions, one row in
 * registry.c (and its declarations in analyses/rows.h), a bit GS_AN_* and a
 * result field in gs_analysis (analyze.h), its tests and docs/analyses.md. */
#ifndef GS_ANALYSES_REGISTRY_H
#define GS_ANALYSES_REGISTRY_H

#include <stdint.h>
#include <stdio.h>

#include "analyses/analyze.h"

struct cJSON;
struct gs_shard_input;

/* What a row needs before it runs (analyze.c provides it once for all rows). */
enum {
    GS_NEEDS_STATES = 1,     /* a state source over the run's vector site (--site) */
    GS_NEEDS_MODEL = 2,      /* the run's model: without one the row is skipped (an error when asked for by name) */
    GS_WANTS_MODEL = 4,      /* the model when there is one; the row runs without it */
    GS_NEEDS_TOKENS = 8,     /* the run's token ids (the row reads them itself) */
    GS_NEEDS_HEAD_SITE = 16, /* a per-head decay site (--decay-site; the row reads it itself) */
};

/* What a row's run function is handed. */
typedef struct {
    store *st;
    int64_t run;
    const store_run_info *info;
    const gs_analyze_opts *o;
    gs_analysis *a;          /* results go here; a->model is loaded when the row needs or wants it */
    gs_state_source *src;    /* when the row needs states: the store's, or this rank's shards' in a chain */
    int strict;              /* asked for by name: a row that cannot run fails instead of noting it */
    /* NULL: one store (rows' run); else this rank's shards of an MPI job (rows' run_shards), with st and run
     * the first shard's and the run as it holds it (analyses/shards.h) */
    const struct gs_shard_input *shards;
} gs_analysis_ctx;

/* Token id -> text for printed token lists (may be NULL: ids are printed). */
typedef struct {
    const char *(*text)(void *ctx, int id);
    void *ctx;
} gs_token_text;

typedef struct {
    unsigned bit;           /* GS_AN_*; 0 for results another command stores */
    const char *name;       /* the name --only takes */
    const char *alias;      /* another spelling --only takes, or NULL */
    const char *stored;     /* the analyses.name its results are stored under */
    const char *summary;    /* one line for --help */
    unsigned needs;         /* GS_NEEDS_* / GS_WANTS_* */
    unsigned requires;      /* GS_AN_* rows that must run first (their results are read) */
    /* 0: done; 1: skipped with a note in a->notes; -1: failed (gs_error() says why, naming the analysis).
     * NULL: another command stores these results (`written_by`). */
    int (*run)(gs_analysis_ctx *c);
    /* into the store, or the scalars it would store collected for --json (result_writer.h) */
    int (*write)(struct gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o);
    void (*print)(FILE *f, const gs_analysis *a, const gs_token_text *tokens);
    void (*json)(struct cJSON *object, const gs_analysis *a); /* fills the row's object (named `stored`) */
    const char *written_by; /* for rows without run: the command that stores them */
    /* The row over shards (c->shards): accumulate over this rank's part of the states, add the partial sums up
     * over the job's ranks, finish on rank 0 into c->a; returns as run, alike on every rank. NULL: the row
     * needs a merged store. */
    int (*run_shards)(gs_analysis_ctx *c);
} gs_analysis_row;

extern const gs_analysis_row gs_analysis_rows[];
extern const int gs_n_analysis_rows;

/* The driver of both inputs (analyze.c): every row of parts in the registry's order, run over one store
 * (c->shards NULL) or over the shards (run_shards); a->done gets the rows done. o->on_part hears each row
 * as step first_step + k of first_step + the rows (the steps before are the caller's). 0, or -1. */
int gs_analysis_run_rows(gs_analysis_ctx *c, unsigned parts, int first_step);

/* The row of a bit, or NULL. */
const gs_analysis_row *gs_analysis_row_of(unsigned bit);
/* The row whose stored name is `stored`, or NULL. */
const gs_analysis_row *gs_analysis_row_stored(const char *stored);
/* The stored name of a row (GS_AN_* or GS_AN_ABLATION / GS_AN_FINDINGS); "" for an unknown bit. */
const char *gs_analysis_stored_name(unsigned bit);
/* "geometry, default, ..." (the runnable rows' names) into buf. */
const char *gs_analysis_names(char *buf, size_t size);

#endif
