/* The functions behind the rows of the analysis registry (registry.c), one
 * analyses/run_NAME.c file per analysis; and what analyze.c offers them. */
#ifndef GS_ANALYSES_ROWS_H
#define GS_ANALYSES_ROWS_H

#include <cjson/cJSON.h>

#include "analyses/registry.h"
#include "analyses/result_writer.h"

/* from analyze.c */
void gs_analysis_note(gs_analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the run's model (loaded once, kept in a->model), or NULL with gs_error() */
gs_model *gs_analysis_ctx_model(gs_analysis_ctx *c);
/* the run's site of a role (run_sites: its stored kind when want_stored_as, else its name), or `fallback`
 * when the run records none (a store from before schema 2) */
const char *gs_analysis_site_of_role(store *st, int64_t run, const char *role, int want_stored_as,
                                     const char *fallback, char *buf, size_t size);

/* the note when the state analyses read max_states of the run's `have` states */
void gs_analysis_note_states(gs_analysis *a, int64_t have, int64_t max_states);
/* the rows of `parts` whose needs include any of `needs` (GS_NEEDS_* / GS_WANTS_*) */
unsigned gs_analysis_rows_needing(unsigned parts, unsigned needs);
/* a->model for the rows of *parts that need or want one: without it, those that need it leave *parts with a
 * note; -1 (gs_error()) when they were asked for by name (strict) or --model named it */
int gs_analysis_model_for(const store_run_info *info, const gs_analyze_opts *o, int strict, unsigned *parts,
                          gs_analysis *a);

/* Each row's settings from analyze's options, and what it reads besides the
 * states, shared by the store's pass (the rows' run) and the shards'
 * (the rows' run_shards), so that both measure alike. */
void gs_geometry_row_opts(const gs_analyze_opts *o, gs_geometry_opts *go);
void gs_horizons_row_opts(const gs_analyze_opts *o, gs_horizon_opts *ho);
void gs_retention_row_opts(const gs_analyze_opts *o, gs_retention_opts *ro);
void gs_probe_row_opts(const gs_analyze_opts *o, gs_probe_opts *po);
/* the default direction's decode inputs: the language model (NULL: none, or not a language model, noted),
 * the recorded corpus' unigram counts (NULL when missing, noted) and --train-corpus' counts in its options */
typedef struct {
    const gs_model *lm;
    double *unigram, *train;
    int64_t V;
    gs_doc_map docs;        /* the windows' documents, when the run has token rows (opts.docs points here) */
    gs_default_opts opts;
} gs_default_inputs;
int gs_default_row_inputs(store *st, int64_t run, const store_run_info *info, const gs_analyze_opts *o,
                          gs_analysis *a, gs_default_inputs *in);
void gs_default_inputs_free(gs_default_inputs *in);
/* retention's comparison of the decays with their initialisation (a->model's), or a note why not */
void gs_retention_row_decay_init(gs_analysis *a, const gs_model *m);

#define GS_ANALYSIS_ROW_FUNCTIONS(x)                                                                           \
    int gs_##x##_row_run(gs_analysis_ctx *c);                                                                  \
    int gs_##x##_row_run_shards(gs_analysis_ctx *c);                                                           \
    int gs_##x##_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o);               \
    void gs_##x##_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens);                       \
    void gs_##x##_row_json(cJSON *object, const gs_analysis *a);

GS_ANALYSIS_ROW_FUNCTIONS(geometry)  /* run_geometry.c */
GS_ANALYSIS_ROW_FUNCTIONS(default)   /* run_default.c */
GS_ANALYSIS_ROW_FUNCTIONS(horizons)  /* run_horizons.c */
GS_ANALYSIS_ROW_FUNCTIONS(retention) /* run_retention.c */
GS_ANALYSIS_ROW_FUNCTIONS(probe)     /* run_probe.c */

#endif
