/* UTF-8 decoding with SentencePiece's rules (string_util::DecodeUTF8):
 * a sequence is valid when it is the shortest form of a scalar value
 * (no overlong forms, no surrogates D800-DFFF, nothing above U+10FFFF) and
 * is complete within the input. The tokenizer consumes an invalid sequence
 * one byte at a time, as SentencePiece's normalizer does. */
#ifndef GS_IO_UTF8_H
#define GS_IO_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1-4) of the valid sequence starting at s (n > 0 bytes left), with
 * its code point in *cp; 0 when the byte at s does not start one. */
static inline int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
#define UTF8_TRAIL(x) (((x) & 0xC0) == 0x80)
    if ((c & 0xE0) == 0xC0) {
        if (n < 2 || !UTF8_TRAIL(s[1])) return 0;
        uint32_t v = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
        if (v < 0x80) return 0;
        *cp = v; return 2;
    }
    if ((c & 0xF0) == 0xE0) {
        if (n < 3 || !UTF8_TRAIL(s[1]) || !UTF8_TRAIL(s[2])) return 0;
        uint32_t v = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        if (v < 0x800 || (v >= 0xD800 && v < 0xE000)) return 0;
        *cp = v; return 3;
    }
    if ((c & 0xF8) == 0xF0) {
        if (n < 4 || !UTF8_TRAIL(s[1]) || !UTF8_TRAIL(s[2]) || !UTF8_TRAIL(s[3])) return 0;
        uint32_t v = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
        if (v < 0x10000 || v > 0x10FFFF) return 0;
        *cp = v; return 4;
    }
#undef UTF8_TRAIL
    return 0;
}

/* Write the UTF-8 form of a valid code point to out (4 bytes room); returns its length. */
int utf8_encode(uint32_t cp, unsigned char *out);

/* Whether s[0..n) is entirely valid UTF-8. */
int utf8_valid(const unsigned char *s, size_t n);

#endif
