/* Files and folders: mkdir -p, and a text file written whole or not at all
 * (a temporary file beside it, fsync'd, then renamed over it). */
#ifndef GS_BASE_FS_H
#define GS_BASE_FS_H

/* Create a folder and its parents; 0, or -1 with gs_error() naming the one that failed. */
int gs_mkdir_p(const char *path);
/* Replace path with text atomically; 0, or -1 with gs_error(). */
int gs_write_atomic(const char *path, const char *text);

#endif
