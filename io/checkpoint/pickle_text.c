/* The text forms of protocol 0 (decimal lines, quoted STRING reprs,
 * raw-unicode-escape UNICODE lines) and UTF-8 checks, for the VM in
 * pickle.c. Every output buffer is sized from the input line before it is
 * written, never grown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/pickle_impl.h"
#include "io/tokenizer/utf8.h"

/* A decimal integer line (protocol 0 INT/LONG/GET/PUT). */
int pk_parse_decimal(pk_doc *d, const char *s, size_t len, int64_t *out, int *big) {
    char buf[64];
    if (len && s[len - 1] == 'L') len--; /* LONG's Python 2 suffix */
    if (len == 0 || len >= sizeof buf) {
        size_t i = (len && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
        if (len == 0 || i == len) return pk_fail(d, "empty integer");
        for (; i < len; i++)
            if (s[i] < '0' || s[i] > '9') return pk_fail(d, "not a decimal integer");
        *big = 1;
        *out = 0;
        return 0;
    }
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (end == buf || *end) return pk_fail(d, "'%s' is not a decimal integer", buf);
    *big = errno == ERANGE;
    *out = *big ? 0 : (int64_t)v;
    return 0;
}

/* Python keeps lone surrogates in pickled strings (surrogatepass); UTF-8
 * otherwise. */
int pk_utf8_ok(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k == 0) {
            /* a surrogate D800-DFFF encoded as three bytes */
            if (n - i >= 3 && s[i] == 0xED && (s[i + 1] & 0xE0) == 0xA0 && (s[i + 2] & 0xC0) == 0x80) { i += 3; continue; }
            return 0;
        }
        i += (size_t)k;
    }
    return 1;
}

static void put_utf8(unsigned char *o, size_t *n, uint32_t cp) {
    if (cp < 0x80) o[(*n)++] = (unsigned char)cp;
    else if (cp < 0x800) { o[(*n)++] = (unsigned char)(0xC0 | cp >> 6); o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
        o[(*n)++] = (unsigned char)(0xE0 | cp >> 12); o[(*n)++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        o[(*n)++] = (unsigned char)(0xF0 | cp >> 18); o[(*n)++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        o[(*n)++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F));
    }
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* UNICODE (protocol 0): raw-unicode-escape, \uXXXX and \UXXXXXXXX only;
 * other bytes are Latin-1 code points. */
pk_value *pk_text_unicode(pk_doc *d, const char *s, size_t len) {
    unsigned char *o = pk_buf(d, 4 * len);
    if (!o) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == '\\' && i + 1 < len && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            int digits = s[i + 1] == 'u' ? 4 : 8;
            if (len - i - 2 < (size_t)digits) { pk_fail(d, "truncated \\%c escape", s[i + 1]); return NULL; }
            uint32_t cp = 0;
            for (int k = 0; k < digits; k++) {
                int h = hexval(s[i + 2 + k]);
                if (h < 0) { pk_fail(d, "bad \\%c escape", s[i + 1]); return NULL; }
                cp = cp << 4 | (uint32_t)h;
            }
            if (cp > 0x10FFFF) { pk_fail(d, "code point beyond U+10FFFF"); return NULL; }
            put_utf8(o, &n, cp);
            i += 2 + (size_t)digits;
        } else {
            put_utf8(o, &n, (unsigned char)s[i]);
            i++;
        }
    }
    return pk_new_bytes(d, PK_STR, o, n);
}

/* STRING (protocol 0): a quoted Python 2 repr. */
pk_value *pk_text_string(pk_doc *d, const char *s, size_t len) {
    if (len < 2 || (s[0] != '\'' && s[0] != '"') || s[len - 1] != s[0]) { pk_fail(d, "the string is not quoted"); return NULL; }
    s++;
    len -= 2;
    unsigned char *o = pk_buf(d, len);
    if (!o) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\' || i + 1 == len) { o[n++] = (unsigned char)s[i]; continue; }
        char c = s[++i];
        switch (c) {
        case 'n': o[n++] = '\n'; break;
        case 't': o[n++] = '\t'; break;
        case 'r': o[n++] = '\r'; break;
        case '\\': case '\'': case '"': o[n++] = (unsigned char)c; break;
        case 'x':
            if (i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
                o[n++] = (unsigned char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
                i += 2;
                break;
            }
            pk_fail(d, "bad \\x escape");
            return NULL;
        default: o[n++] = '\\'; o[n++] = (unsigned char)c; break;
        }
    }
    /* Python 3 decodes protocol 0 strings as ASCII */
    for (size_t i = 0; i < n; i++)
        if (o[i] >= 0x80) { pk_fail(d, "a protocol 0 string with non-ASCII bytes"); return NULL; }
    return pk_new_bytes(d, PK_STR, o, n);
}

