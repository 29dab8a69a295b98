/* The functions behind the rows of the analysis registry (registry.c), one
 * analyses/run_NAME.c file per analysis; and what analyze.c offers them. */
#ifndef GS_ANALYSES_ROWS_H
#define GS_ANALYSES_ROWS_H

#include <cjson/cJSON.h>

#include "analyses/registry.h"

/* from analyze.c */
void gs_analysis_note(gs_analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the run's model (loaded once, kept in a->model), or NULL with gs_error() */
gpn_model *gs_analysis_ctx_model(gs_analysis_ctx *c);
/* the run's site of a role (run_sites: its stored kind when want_stored_as, else its name), or `fallback`
 * when the run records none (a store from before schema 2) */
const char *gs_analysis_site_of_role(store *st, int64_t run, const char *role, int want_stored_as,
                                     const char *fallback, char *buf, size_t size);

#define GS_ANALYSIS_ROW_FUNCTIONS(x)                                                                           \
    int gs_##x##_row_run(gs_analysis_ctx *c);                                                                  \
    int gs_##x##_row_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *code_version); \
    void gs_##x##_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens);                       \
    void gs_##x##_row_json(cJSON *object, const gs_analysis *a);

GS_ANALYSIS_ROW_FUNCTIONS(geometry)  /* run_geometry.c */
GS_ANALYSIS_ROW_FUNCTIONS(default)   /* run_default.c */
GS_ANALYSIS_ROW_FUNCTIONS(horizons)  /* run_horizons.c */
GS_ANALYSIS_ROW_FUNCTIONS(retention) /* run_retention.c */
GS_ANALYSIS_ROW_FUNCTIONS(probe)     /* run_probe.c */

#endif
