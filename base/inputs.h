/* The files a command reads, which none of its outputs may replace
 * (`export-notebook study.db --out study.db` must not turn the store into a
 * notebook). Files are compared by device and inode, not by name, so any
 * other name of an input (a hard or symbolic link, ./x, ../dir/x) is caught.
 *
 *     gs_input_add("study.db");              (store_open does this for the store)
 *     if (gs_output_check(path)) return -1;  (before replacing path)
 *
 * A process-wide list: commands register their inputs before they write. */
#ifndef GS_BASE_INPUTS_H
#define GS_BASE_INPUTS_H

/* Remember the file at path as an input (a path that does not exist is
 * skipped: there is nothing to protect). 0, or -1 when out of memory. */
int gs_input_add(const char *path);
/* 0 when writing path cannot replace an input (it does not exist, or is
 * another file); -1 with gs_error() naming both when it is an input. */
int gs_output_check(const char *path);
/* Forget every input (tests; frees the list). */
void gs_inputs_clear(void);

#endif
