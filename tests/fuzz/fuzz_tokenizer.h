/* Shared by the tokenizer fuzz targets: drive a loaded tokenizer with
 * arbitrary text and ids through the public API. */
#ifndef GS_TESTS_FUZZ_TOKENIZER_H
#define GS_TESTS_FUZZ_TOKENIZER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/tokenizer/tokenizer.h"
#include "io/tokenizer/utf8.h"
#include "fuzz.h"

/* What decode(encode(text)) must give for a byte-fallback tokenizer with
 * SentencePiece's normalization and no user-defined surprises: the text with
 * U+2581 read back as a space and, in REPLACE mode, each byte that does not
 * start valid UTF-8 as U+FFFD. Returns the length written to out (room: 3n). */
static inline size_t fuzz_expected_roundtrip(const uint8_t *s, size_t n, int replace, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k == 0) {
            if (replace) { memcpy(out + o, "\xEF\xBF\xBD", 3); o += 3; }
            else out[o++] = (char)s[i];
            i++;
        } else if (cp == 0x2581) {
            out[o++] = ' ';
            i += 3;
        } else {
            memcpy(out + o, s + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        }
    }
    return o;
}

/* Encode text in both invalid-UTF-8 modes: every id must be a piece, and
 * decoding the ids must succeed. With check_roundtrip, decode(encode(text))
 * must also equal fuzz_expected_roundtrip. Leaves the default mode set. */
static inline void fuzz_encode_decode(gs_tokenizer *t, const uint8_t *text, size_t n, int check_roundtrip) {
    for (int mode = 0; mode < 2; mode++) {
        tokenizer_set_invalid_utf8(t, mode ? TOKENIZER_INVALID_BYTES : TOKENIZER_INVALID_REPLACE);
        int32_t *ids = NULL;
        size_t m = 0;
        if (tokenizer_encode(t, (const char *)text, n, &ids, &m) != 0) {
            FUZZ_ASSERT(ids == NULL, "a failed encode returned ids");
            continue;
        }
        FUZZ_ASSERT(ids != NULL, "encode returned no id array");
        for (size_t i = 0; i < m; i++)
            FUZZ_ASSERT(ids[i] >= 0 && ids[i] < tokenizer_vocab_size(t), "id %d at %zu is not a piece", ids[i], i);
        size_t len = 0;
        char *back = tokenizer_decode(t, ids, m, &len);
        FUZZ_ASSERT(back != NULL, "decoding the ids encode produced failed: %s", gs_error());
        FUZZ_ASSERT(strlen(back) <= len && back[len] == 0, "decode's length and terminator disagree");
        if (check_roundtrip) {
            char *want = malloc(3 * n + 1);
            if (!want) abort();
            size_t wl = fuzz_expected_roundtrip(text, n, mode == 0, want);
            FUZZ_ASSERT(wl == len && !memcmp(want, back, len), "decode(encode(text)) differs from the text (mode %s, %zu vs %zu bytes)",
                        mode ? "bytes" : "replace", len, wl);
            free(want);
        }
        free(back);
        free(ids);
    }
    tokenizer_set_invalid_utf8(t, TOKENIZER_INVALID_REPLACE);
}

/* Decode ids read from the bytes: as they are (mostly out of range: a
 * one-line error), then folded into the vocabulary (must succeed). */
static inline void fuzz_decode_bytes(const gs_tokenizer *t, const uint8_t *data, size_t size) {
    size_t n = size / 4;
    if (n == 0) return;
    int32_t *ids = malloc(n * sizeof *ids);
    if (!ids) abort();
    memcpy(ids, data, n * sizeof *ids);
    size_t len;
    free(tokenizer_decode(t, ids, n, &len));
    int32_t v = tokenizer_vocab_size(t);
    for (size_t i = 0; i < n; i++) ids[i] = (int32_t)((uint32_t)ids[i] % (uint32_t)v);
    char *s = tokenizer_decode(t, ids, n, &len);
    FUZZ_ASSERT(s != NULL, "decoding in-range ids failed: %s", gs_error());
    for (size_t i = 0; i < n; i++) {
        const char *p = tokenizer_piece(t, ids[i]);
        FUZZ_ASSERT(p != NULL, "id %d has no piece", ids[i]);
        int32_t back = tokenizer_piece_id(t, p);
        FUZZ_ASSERT(back >= 0 && !strcmp(tokenizer_piece(t, back), p), "piece \"%s\" does not look up", p);
    }
    free(s);
    free(ids);
}

/* What both tokenizer readers' targets do with a tokenizer that loaded: encode
 * fixed samples and the input itself, decode the input's bytes as ids, free. */
static inline void fuzz_exercise_tokenizer(gs_tokenizer *t, const uint8_t *data, size_t size) {
    static const char *const samples[] = {"", "hello world", "  a  b\tc\n", "\xC3\xA9\xFF\xE2\x96\x81<sep><s>ab",
                                          "\xF0\x9F\x98\x80 \x80\xC0"};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        fuzz_encode_decode(t, (const uint8_t *)samples[i], strlen(samples[i]), 0);
    fuzz_encode_decode(t, data, size < 512 ? size : 512, 0);
    fuzz_decode_bytes(t, data, size < 256 ? size : 256);
    tokenizer_free(t);
}

#endif
