/* The analysis registry: one row per analysis (registry.h). The order is the
 * order they run, print and appear in JSON. */
#include "analyses/registry.h"

#include <stdio.h>
#include <string.h>

#include "analyses/rows.h"

#define ROW(fn) .run_shards = gs_##fn##_row_run_shards, .run = gs_##fn##_row_run, .write = gs_##fn##_row_write, .print = gs_##fn##_row_print, \
                .json = gs_##fn##_row_json

const gs_analysis_row gs_analysis_rows[] = {
    {GS_AN_GEOMETRY, "geometry", NULL, "geometry", "norms, spread, correlations, spectrum of the state",
     GS_NEEDS_STATES, 0, ROW(geometry), NULL},
    {GS_AN_DEFAULT, "default", NULL, "default_direction",
     "the mean direction, its emergence and default tokens", GS_NEEDS_STATES | GS_WANTS_MODEL,
     GS_AN_GEOMETRY, ROW(default), NULL},
    {GS_AN_HORIZON, "horizon", "horizons", "horizons", "raw and centered lag cosines, content horizons",
     GS_NEEDS_STATES, 0, ROW(horizons), NULL},
    {GS_AN_RETENTION, "retention", NULL, "retention",
     "per-head 1/e times of a decay site, the two pools", GS_NEEDS_HEAD_SITE | GS_WANTS_MODEL, 0,
     ROW(retention), NULL},
    {GS_AN_PROBE, "probe", NULL, "probe", "ridge probes for the token k back: the probe horizon",
     GS_NEEDS_STATES | GS_NEEDS_MODEL | GS_NEEDS_TOKENS, 0, ROW(probe), NULL},
    /* stored by other commands; rows so that figures and readers find them by bit */
    {GS_AN_ABLATION, "ablation", NULL, "ablation", "interventions and their effect on the loss", 0, 0, NULL, NULL,
     NULL, NULL, "gpnscope ablate", NULL},
    {GS_AN_FINDINGS, "findings", NULL, "findings", "the verdicts on the paper's three structures", 0, 0, NULL, NULL,
     NULL, NULL, "gpnscope analyze (after the rows above)", NULL},
    {GS_AN_ATTENTION, "attention", NULL, "attention", "exact effective attention of delta-rule heads", 0, 0, NULL,
     NULL, NULL, NULL, "gpnscope attention", NULL},
    {GS_AN_ATTRIBUTION, "logit_attribution", NULL, "logit_attribution",
     "direct logit attribution of the predicted state by part and head", 0, 0, NULL, NULL, NULL, NULL,
     "gpnscope attribute", NULL},
};

const int gs_n_analysis_rows = (int)(sizeof gs_analysis_rows / sizeof *gs_analysis_rows);

const gs_analysis_row *gs_analysis_row_of(unsigned bit) {
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if (gs_analysis_rows[i].bit == bit) return &gs_analysis_rows[i];
    return NULL;
}

const gs_analysis_row *gs_analysis_row_stored(const char *stored) {
    for (int i = 0; i < gs_n_analysis_rows && stored; i++)
        if (!strcmp(gs_analysis_rows[i].stored, stored)) return &gs_analysis_rows[i];
    return NULL;
}

const char *gs_analysis_stored_name(unsigned bit) {
    const gs_analysis_row *r = gs_analysis_row_of(bit);
    return r ? r->stored : "";
}

const char *gs_analysis_names(char *buf, size_t size) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < gs_n_analysis_rows && len < size; i++)
        if (gs_analysis_rows[i].run)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", gs_analysis_rows[i].name);
    return buf;
}
