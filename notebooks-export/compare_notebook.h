/* The notebook of `gpnscope compare`: the matplotlib twins of the comparison
 * figures and the table, read from compare.json beside it (no store needed). */
#ifndef GS_NOTEBOOKS_COMPARE_NOTEBOOK_H
#define GS_NOTEBOOKS_COMPARE_NOTEBOOK_H

/* Write the notebook to path (atomically); json_name is compare.json's path
 * relative to the notebook. 0, or -1 with gs_error(). */
int gs_notebook_compare(const char *path, const char *json_name);

#endif
