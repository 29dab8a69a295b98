/* Writing one analysis' results to the store (analyses, analysis_scalars,
 * analysis_series, analysis_vectors; docs/schema.md), shared by every row of
 * the analysis registry (analyses/registry.h) so that a row's write function
 * says only what it stores. A write is one transaction: begin, any number of
 * values (the first failure is kept and the rest are skipped), end.
 *
 * The same write can instead collect the scalars it would store, in memory:
 * analyze --json adds them to each analysis' object, for a store and for its
 * shards alike, without reading them back from a store. */
#ifndef GS_ANALYSES_RESULT_WRITER_H
#define GS_ANALYSES_RESULT_WRITER_H

#include <stdint.h>

#include "analyses/analyze.h"
#include "store/store.h"

/* The scalars a write would store: finite values by key, a later value of a
 * key replacing the earlier (as the store's INSERT OR REPLACE does). */
typedef struct {
    char **key;
    double *value;
    int64_t n, cap;
} gs_result_scalars;
void gs_result_scalars_free(gs_result_scalars *s);
/* in the order the store lists them (ORDER BY key: byte order) */
void gs_result_scalars_sort(gs_result_scalars *s);

typedef struct gs_result_writer {
    store *st;                  /* the store written, or NULL: */
    gs_result_scalars *scalars; /* the scalars collected instead (series and vectors are left out) */
    int64_t run;                /* the store's run, and the code version its analysis rows name */
    const char *code_version;
    int64_t id; /* the analysis row */
    int rc;     /* the first failure, 0 while none */
} gs_result_writer;

/* A writer into the store's run, or one that collects the scalars. */
gs_result_writer gs_result_to_store(store *st, int64_t run, const char *code_version);
gs_result_writer gs_result_to_scalars(gs_result_scalars *s);

/* Open the analysis row `name` of the run, with the settings JSON every
 * analysis stores: kind, max_states, skip_positions, seed, then `extra`
 * (JSON members without braces, or NULL). */
int gs_result_begin(gs_result_writer *w, const char *name, const gs_analyze_opts *o, const char *extra);
/* Commit, or roll back when a value failed. */
int gs_result_end(gs_result_writer *w);

void gs_result_scalar(gs_result_writer *w, const char *key, double v, const char *note); /* non-finite: left out */
/* a scalar stored even when not finite (the store keeps NULL and the note; collected: left out) */
void gs_result_scalar_kept(gs_result_writer *w, const char *key, double v, const char *note);
void gs_result_series(gs_result_writer *w, const char *name, const double *x, const double *y,
                      const char *const *labels, int64_t n); /* n <= 0: left out */
void gs_result_vector(gs_result_writer *w, const char *key, const double *v, int64_t n); /* stored as float32 */

/* x values for series: first, first + 1, ...; the ints widened. malloc'd (NULL: out of memory). */
double *gs_result_iota(int64_t n, double first);
double *gs_result_ints(const int *v, int64_t n);

#endif
