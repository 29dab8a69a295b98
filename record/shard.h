/* A rank's shard store (docs/scale.md): under `mpirun -n K gpnscope record
 * --db study.db`, rank r records into study.rank-r-of-K.db beside the named
 * store (a name without .db gets .rank-r-of-K appended). */
#ifndef GS_RECORD_SHARD_H
#define GS_RECORD_SHARD_H

#include <stddef.h>

/* 0, or -1 with gs_error() when the name does not fit in size. */
int gs_shard_path(const char *db, int rank, int n_ranks, char *out, size_t size);

#endif
