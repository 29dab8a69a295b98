#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gs_append_linev(char *buf, size_t size, const char *fmt, va_list ap) {
    size_t len = strlen(buf);
    if (len + 2 >= size) return;
    vsnprintf(buf + len, size - len - 1, fmt, ap); /* keeps room for the newline */
    len = strlen(buf);
    buf[len] = '\n';
    buf[len + 1] = 0;
}

void gs_append_line(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(buf, size, fmt, ap);
    va_end(ap);
}

int gs_parse_flag_list(const char *list, const gs_flag_name *names, size_t n_names, int skip_empty, unsigned *bits,
                       const char **bad, int *bad_len) {
    *bits = 0;
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (size_t i = 0; i < n_names; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len)) {
                *bits |= names[i].bit;
                found = 1;
            }
        if (!found && !(skip_empty && len == 0)) {
            *bad = p;
            *bad_len = (int)len;
            return -1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

const char *gs_shell_quote(const char *s, char *buf, size_t size) {
    if (!size) return buf;
    if (!s) s = "";
    int plain = *s != 0;
    for (const char *p = s; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-", *p) != NULL;
    if (plain && strlen(s) < size) {
        memcpy(buf, s, strlen(s) + 1);
        return buf;
    }
    if (size < 3) { buf[0] = 0; return buf; }
    size_t o = 0;
    buf[o++] = '\'';
    for (const char *p = s; *p; p++) {
        const char *piece = *p == '\'' ? "'\\''" : NULL;
        size_t n = piece ? 4 : 1;
        if (o + n + 2 > size) break; /* room for the closing quote and the NUL */
        if (piece) memcpy(buf + o, piece, n);
        else buf[o] = *p;
        o += n;
    }
    buf[o++] = '\'';
    buf[o] = 0;
    return buf;
}

/* Damerau-Levenshtein (optimal string alignment) of two short words; words
 * longer than 63 bytes are never close to anything. */
static int edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 1 << 20;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *gs_closest_word(const char *word, const char *const *names, size_t n) {
    int limit = (int)strlen(word) / 3, best = 1 << 20;
    if (limit < 1) limit = 1;
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        int e = names[i] ? edit_distance(word, names[i]) : best;
        if (e < best) { best = e; found = names[i]; }
    }
    return best <= limit ? found : NULL;
}

const char *gs_model_name(const char *path, char *out, size_t size) {
    char p[4096];
    snprintf(p, sizeof p, "%s", path ? path : "");
    char *slash = strrchr(p, '/'), *name = slash ? slash + 1 : p;
    if (slash && !strcmp(name, "model.safetensors")) {
        *slash = 0;
        char *up = strrchr(p, '/');
        name = up ? up + 1 : p;
    }
    snprintf(out, size, "%s", name);
    return out;
}
