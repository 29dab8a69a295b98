/* The cells of the study notebook, in order, read from notebooks-export/study.py
 * (embedded at build time): a marker line "# %% ID" starts a code cell,
 * "# %% [markdown] ID" a markdown cell whose lines are written as "# TEXT". */
#ifndef GS_NOTEBOOKS_NOTEBOOK_CELLS_H
#define GS_NOTEBOOKS_NOTEBOOK_CELLS_H

#include <stddef.h>

#define GS_NB_MAX_CELLS 96
#define GS_NB_MAX_ID 48

typedef struct {
    char id[GS_NB_MAX_ID]; /* the cell id (nbformat 4.5), stable across exports */
    int code;              /* 1: a Python code cell, 0: markdown */
    const char *body;      /* the cell's lines in study.py (markdown still with its "# "), not NUL-terminated */
    size_t len;            /* bytes of body, without the blank lines before the next marker */
} gs_nb_cell;

/* The cells into out[max]; returns their number, or -1 with gs_fail() when
 * study.py is not in the form above (a build of a broken edit: the unit test
 * catches it first). */
int gs_nb_cells(gs_nb_cell *out, int max);

/* The cell's lines one by one, as the notebook shows them (a markdown line
 * without its "# "): start with *pos = 0; returns 0 after the last line. */
int gs_nb_cell_line(const gs_nb_cell *c, size_t *pos, const char **line, size_t *n);

#endif
