/* An output file that appears whole or not at all: written under a
 * temporary name in the destination's folder, flushed and fsync'd, then
 * renamed over the destination. A crash, a full disk or an error midway
 * leaves any earlier file of that name untouched and no partial file.
 *
 *     gs_outfile o;
 *     if (gs_outfile_open(&o, "dir/x.csv") != 0) return -1;
 *     fprintf(o.f, ...);                       (any stdio writes)
 *     return gs_outfile_commit(&o);            (or gs_outfile_abort(&o))
 */
#ifndef GS_NOTEBOOKS_OUTFILE_H
#define GS_NOTEBOOKS_OUTFILE_H

#include <stdio.h>

typedef struct {
    FILE *f;
    char *path, *tmp;
} gs_outfile;

/* 0, or -1 with gs_error() naming the folder and the reason. */
int gs_outfile_open(gs_outfile *o, const char *path);
/* Flush, fsync, close and rename into place; on any failure the temporary
 * file is removed and -1 returned (a full disk is reported as such). */
int gs_outfile_commit(gs_outfile *o);
/* The message for a failed write to o (errno decides: a full disk is said
 * so); returns -1. */
int gs_outfile_write_failed(const gs_outfile *o);
/* Close and remove the temporary file (safe on a zeroed or finished o). */
void gs_outfile_abort(gs_outfile *o);

/* mkdir -p: create dir and its missing parents; 0 or -1 with gs_error(). */
int gs_make_dirs(const char *dir);

#endif
