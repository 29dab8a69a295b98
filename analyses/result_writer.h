/* Writing one analysis' results to the store (analyses, analysis_scalars,
 * analysis_series, analysis_vectors; docs/schema.md), shared by every row of
 * the analysis registry (analyses/registry.h) so that a row's write function
 * says only what it stores. A write is one transaction: begin, any number of
 * values (the first failure is kept and the rest are skipped), end. */
#ifndef GS_ANALYSES_RESULT_WRITER_H
#define GS_ANALYSES_RESULT_WRITER_H

#include <stdint.h>

#include "analyses/analyze.h"
#include "store/store.h"

typedef struct {
    store *st;
    int64_t id; /* the analysis row */
    int rc;     /* the first failure, 0 while none */
} gs_result_writer;

/* Open the analysis row `name` of the run, with the settings JSON every
 * analysis stores: kind, max_states, skip_positions, seed, then `extra`
 * (JSON members without braces, or NULL). */
int gs_result_begin(gs_result_writer *w, store *st, int64_t run, const char *name, const gs_analyze_opts *o,
                    const char *extra, const char *code_version);
/* Commit, or roll back when a value failed. */
int gs_result_end(gs_result_writer *w);

void gs_result_scalar(gs_result_writer *w, const char *key, double v, const char *note); /* non-finite: left out */
void gs_result_series(gs_result_writer *w, const char *name, const double *x, const double *y,
                      const char *const *labels, int64_t n); /* n <= 0: left out */
void gs_result_vector(gs_result_writer *w, const char *key, const double *v, int64_t n); /* stored as float32 */

/* x values for series: first, first + 1, ...; the ints widened. malloc'd (NULL: out of memory). */
double *gs_result_iota(int64_t n, double first);
double *gs_result_ints(const int *v, int64_t n);

#endif
