/* Internals shared by the pickle VM (pickle.c) and its table of recognised
 * globals (pickle_globals.c). Not for other modules. */
#ifndef GS_IO_CHECKPOINT_PICKLE_IMPL_H
#define GS_IO_CHECKPOINT_PICKLE_IMPL_H

#include <stdarg.h>

#include "io/checkpoint/pickle.h"

typedef struct pk_block pk_block;

struct pk_doc {
    const unsigned char *p;
    size_t n, pos, op_pos;
    unsigned char op;
    pk_limits lim;
    pk_value **stack;
    size_t sp, scap;
    size_t *marks;
    size_t nmarks, mcap;
    uint32_t *memo_keys; /* open addressing; memo_vals[i] NULL = empty slot */
    pk_value **memo_vals;
    size_t memo_cap, memo_count;
    pk_block *blocks;    /* every value */
    void **bufs;         /* every decoded string buffer */
    size_t nbufs, bcap;
    pk_value *root;
};

/* Record "byte N (OPNAME): message" and return -1. */
int pk_fail(pk_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
pk_value *pk_new(pk_doc *d, pk_kind kind);
void *pk_buf(pk_doc *d, size_t n);
/* child becomes part of parent: sealed, its sizes added, bounds checked. */
int pk_adopt(pk_doc *d, pk_value *parent, pk_value *child);

/* Append item to a list/tuple/set/dict's sequence and adopt it. */
int pk_adopt_item(pk_doc *d, pk_value *container, pk_value *item);
/* A PK_STR (checked to be UTF-8) or PK_BYTES value over p[0..n). */
pk_value *pk_new_bytes(pk_doc *d, pk_kind kind, const unsigned char *p, size_t n);
/* pickle_text.c: protocol 0's text forms */
int pk_utf8_ok(const unsigned char *s, size_t n);
int pk_parse_decimal(pk_doc *d, const char *s, size_t len, int64_t *out, int *big);
pk_value *pk_text_string(pk_doc *d, const char *s, size_t len);
pk_value *pk_text_unicode(pk_doc *d, const char *s, size_t len);
/* Resolve module.name; -1 (refused, with the message) when not recognised. */
int pk_resolve_global(pk_doc *d, const char *module, size_t ml, const char *name, size_t nl, pk_value **out);
/* REDUCE / NEWOBJ of a recognised global: the resulting value in *out. */
int pk_apply_global(pk_doc *d, pk_value *callable, pk_value *args, int newobj, pk_value **out);
/* BUILD: apply state to target (which stays on the stack). */
int pk_build(pk_doc *d, pk_value *target, pk_value *state);

#endif
