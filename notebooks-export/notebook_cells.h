/* The cells of the study notebook, in order (notebook_cells.c). */
#ifndef GS_NOTEBOOKS_NOTEBOOK_CELLS_H
#define GS_NOTEBOOKS_NOTEBOOK_CELLS_H

typedef struct {
    const char *id;           /* the cell id (nbformat 4.5), stable across exports */
    int code;                 /* 1: a Python code cell, 0: markdown */
    const char *const *lines; /* NULL-terminated, without newlines */
} gs_nb_cell;

extern const gs_nb_cell gs_nb_cells[];
extern const int gs_nb_n_cells;

#endif
