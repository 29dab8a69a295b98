/* Content hashes (SHA-256, hex) so a store can say exactly which model,
 * tokenizer and corpus produced a run; `sha256sum FILE` gives the same value. */
#ifndef GS_BASE_HASH_H
#define GS_BASE_HASH_H

#include <stddef.h>

#define GS_HASH_HEX 65 /* 64 hex digits + NUL */

typedef struct gs_hasher gs_hasher;

gs_hasher *gs_hasher_new(void);
void gs_hasher_update(gs_hasher *h, const void *data, size_t n);
void gs_hasher_finish(gs_hasher *h, char out[GS_HASH_HEX]); /* also frees h */

void gs_hash_bytes(const void *data, size_t n, char out[GS_HASH_HEX]);
/* Hash a whole file; returns 0, or -1 with gs_error() set. */
int gs_hash_file(const char *path, char out[GS_HASH_HEX]);

#endif
