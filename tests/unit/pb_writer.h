/* A minimal protobuf writer for building SentencePiece tokenizer.model files
 * in tests (test_tokenizer) and fuzz seeds (tests/fuzz/make_seeds.c). */
#ifndef GS_TESTS_PB_WRITER_H
#define GS_TESTS_PB_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned char *p; size_t n, cap; } pbw;
static inline void pb_raw(pbw *w, const void *s, size_t n) {
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        if (!w->p) exit(1);
    }
    memcpy(w->p + w->n, s, n);
    w->n += n;
}
static inline void pb_varint(pbw *w, uint64_t v) {
    do { unsigned char c = (unsigned char)(v & 0x7F); v >>= 7; if (v) c |= 0x80; pb_raw(w, &c, 1); } while (v);
}
static inline void pb_int(pbw *w, int field, int64_t v) { pb_varint(w, (uint64_t)field << 3); pb_varint(w, (uint64_t)v); }
static inline void pb_bytes(pbw *w, int field, const void *s, size_t n) { pb_varint(w, (uint64_t)field << 3 | 2); pb_varint(w, n); pb_raw(w, s, n); }
static inline void pb_float(pbw *w, int field, float x) { pb_varint(w, (uint64_t)field << 3 | 5); pb_raw(w, &x, 4); }

#endif
