/* The retention results as stored (analysis "retention"; docs/analyses.md):
 * the all-starts estimator under the plain names, the paper's from-start
 * estimator under the same names with "_from_start". A value that is
 * undefined (a lag no pair reaches) is left out (NULL), never 0. */
#ifndef GS_ANALYSES_RETENTION_STORE_H
#define GS_ANALYSES_RETENTION_STORE_H

#include "analyses/state/retention.h"
#include "store/store.h"

/* The decays of a run's per-head site as gs_retention_run takes them: each
 * window's rows at consecutive positions, cut at its first position with a
 * missing value; beta from the site named with "beta" for "alpha" when it was
 * recorded alike (else NULL). max_positions > 0: positions below it only. */
int gs_retention_read_decays(store *st, int64_t run, const char *site, int max_positions, float **alpha, float **beta,
                             int64_t **ws, int *nw, int *H);

struct gs_result_writer;
/* Write r's series and scalars through the begun writer (analyses/result_writer.h); its rc keeps a failure. */
void gs_retention_write(struct gs_result_writer *w, const gs_retention *r, const gs_retention_opts *o);

#endif
