/* Temporary files of atomic writes (".NAME.tmp.PID" and ".NAME.tmp.PID.N",
 * renamed into place when complete) that a killed writer left behind. */
#ifndef GS_BASE_TMPFILES_H
#define GS_BASE_TMPFILES_H

/* Remove, in dir, the hidden temporary files whose writer process no longer
 * runs on this host (a pid that is alive, or this process's, is left
 * alone). Returns how many were removed (0 when dir does not exist). */
int gs_remove_stale_tmp(const char *dir);

#endif
