/* The summary table: every measured quantity beside the paper's figure
 * (analyses.md). Writes to the FILE the caller gives (the library itself
 * never prints on its own). Any part may be NULL and is then left out. */
#ifndef GS_ANALYSES_REPORT_H
#define GS_ANALYSES_REPORT_H

#include <stdio.h>

#include "analyses/state/default_dir.h"
#include "analyses/state/geometry.h"
#include "analyses/state/horizons.h"
#include "analyses/state/probe.h"
#include "analyses/state/retention.h"

typedef struct {
    const gs_geometry *geometry;
    const gs_default_dir *default_dir;
    const gs_horizons *horizons;
    const gs_retention *retention;
    const gs_probe *probe;
    /* token id -> text for the default tokens (may be NULL: ids are printed) */
    const char *(*token_text)(void *ctx, int id);
    void *token_ctx;
} gs_report;

void gs_report_print(FILE *f, const gs_report *r);
/* One section each (what gs_report_print prints for a part; the analysis registry's print entries). */
void gs_report_geometry(FILE *f, const gs_geometry *g);
void gs_report_default_dir(FILE *f, const gs_default_dir *dd, const char *(*token_text)(void *ctx, int id),
                           void *token_ctx);
void gs_report_horizons(FILE *f, const gs_horizons *h);
void gs_report_retention(FILE *f, const gs_retention *rt);
void gs_report_probe(FILE *f, const gs_probe *p);

/* the grid lag nearest to k in log terms (index), or -1 for an empty grid */
int gs_nearest_lag(const int *lags, int n, double k);

#endif
