/* gpnscope export-notebook: a study as a Jupyter notebook (nbformat 4.5)
 * that explains each analysis, opens the store with Python's sqlite3 and
 * pandas (loading the gpnscope_vec extension when it is there), asks it
 * questions in SQL and redraws every figure with matplotlib from the stored
 * results. docs/notebooks.md describes the notebook.
 *
 * The notebook names the store relative to its own folder when the two
 * share a top-level folder, and by absolute path otherwise (both are
 * recorded: the notebook tries them in turn). */
#ifndef GS_NOTEBOOKS_NOTEBOOK_H
#define GS_NOTEBOOKS_NOTEBOOK_H

#include <stdint.h>

#include "store/store.h"

typedef struct {
    int64_t run_id;            /* the run (> 0) */
    const char *vec_extension; /* the gpnscope_vec library the notebook loads (NULL: none found) */
    const char *code_version;  /* recorded in the notebook (NULL: "unknown") */
} gs_notebook_opts;

/* The notebook's JSON text (malloc'd) for a notebook to be written at
 * out_path (its folder must exist); NULL with gs_error() set. */
char *gs_notebook_render(store *st, const char *out_path, const gs_notebook_opts *o);
/* Render and write out_path atomically, creating its folder when missing. */
int gs_notebook_write(store *st, const char *out_path, const gs_notebook_opts *o);

/* target (an existing file) as a path relative to the existing folder
 * from_dir, both resolved with realpath, into *out (malloc'd). 0 with *out
 * NULL when they share no top-level folder; -1 with gs_error() when either
 * cannot be resolved. */
int gs_relative_path(const char *from_dir, const char *target, char **out);

#endif
