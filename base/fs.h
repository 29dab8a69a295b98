/* Files and folders: mkdir -p, a file read whole, and a text file written whole or not at all
 * (a temporary file beside it, fsync'd, then renamed over it). */
#ifndef GS_BASE_FS_H
#define GS_BASE_FS_H

#include <stddef.h>

/* Create a folder and its parents; 0, or -1 with gs_error() naming the one that failed. */
int gs_mkdir_p(const char *path);
/* Replace path with text atomically; 0, or -1 with gs_error(). */
int gs_write_atomic(const char *path, const char *text);
/* A whole file in memory, NUL-terminated, its size in *len; NULL with
 * gs_error() ("cannot open WHATPATH: ...", "cannot read WHATPATH"; `what`
 * names the kind of file, "" or e.g. "tokenizer "). The buffer starts at
 * first_cap bytes and doubles; max_cap > 0 refuses a file that would need
 * more ("WHATPATH is larger than N GB", max_cap a multiple of 1 GB). */
char *gs_read_file(const char *path, const char *what, size_t first_cap, size_t max_cap, size_t *len);

#endif
