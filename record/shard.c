#include "record/shard.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

int gs_shard_path(const char *db, int rank, int n_ranks, char *out, size_t size) {
    size_t n = strlen(db);
    int has_ext = n > 3 && !strcmp(db + n - 3, ".db");
    int len = snprintf(out, size, "%.*s.rank-%d-of-%d%s", (int)(has_ext ? n - 3 : n), db, rank, n_ranks,
                       has_ext ? ".db" : "");
    if (len < 0 || (size_t)len >= size) return gs_fail("--db %s: the shard's name is too long", db);
    return 0;
}
