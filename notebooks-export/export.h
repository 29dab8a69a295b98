/* gpnscope export: a run's data as files for other tools (docs/notebooks.md).
 *
 * CSV (RFC 4180, notebooks-export/csv.h): runs.csv, tokens.csv (with the
 * token text), heads.csv, states_KIND.csv (window, position, s0..s{d-1}),
 * analyses.csv, analysis_scalars.csv, analysis_series.csv and
 * analysis_vectors.csv (one row per element).
 * NPY: the arrays as .npy files numpy.load reads: states_KIND.npy (n_states,
 * d) '<f4' with states_KIND_window.npy and states_KIND_position.npy ('<i4');
 * alpha.npy, beta.npy, mem_norm.npy (n_windows, T, H) '<f4' with
 * heads_window.npy; tokens_*.npy (n_windows, T) with tokens_window.npy; an
 * analysis's vectors as analysis_ID_NAME_KEY.npy; the tables that are not
 * arrays (runs, analyses, scalars, series, vocabulary) as CSV beside them.
 * Both formats end with manifest.json, which lists every file with its
 * shape or row count and what it holds.
 *
 * Everything is read inside one read transaction (a consistent snapshot
 * even while a recording writes), states are streamed in blocks, and every
 * file is written under a temporary name and renamed when complete. */
#ifndef GS_NOTEBOOKS_EXPORT_H
#define GS_NOTEBOOKS_EXPORT_H

#include <stdint.h>

#include "store/store.h"

enum {
    GS_EXPORT_TOKENS = 1,
    GS_EXPORT_HEADS = 2,
    GS_EXPORT_STATES = 4,
    GS_EXPORT_ANALYSES = 8,
    GS_EXPORT_ALL = 15,
};

typedef enum { GS_EXPORT_CSV = 0, GS_EXPORT_NPY = 1 } gs_export_format;

typedef struct {
    gs_export_format format;
    unsigned what;      /* GS_EXPORT_* bits; 0: all */
    int strict;         /* a part the run lacks is an error (else a note) */
    int64_t block_rows; /* states read at a time (0: 256) */
} gs_export_opts;

typedef struct {
    char name[160]; /* inside the folder */
    char size[64];  /* "(6144, 40) <f4" or "6144 rows" */
} gs_export_file;

typedef struct {
    int n_files;
    gs_export_file *files;
    char notes[2048]; /* one line per part that was skipped, and why */
} gs_export_result;

/* "tokens,heads,states,analyses" (any subset, or "all") into GS_EXPORT_* bits. */
int gs_export_parse_what(const char *list, unsigned *what);
/* "csv" | "npy" */
int gs_export_parse_format(const char *name, gs_export_format *out);

/* Export run_id (> 0) of st into the folder dir (created, with its
 * parents, when missing). 0 or -1 with gs_error() set; res lists the files
 * written either way (free it with gs_export_result_free). */
int gs_export_run(store *st, int64_t run_id, const char *dir, const gs_export_opts *o, gs_export_result *res);
void gs_export_result_free(gs_export_result *res);

#endif
