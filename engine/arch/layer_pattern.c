/* "{i}" layer patterns (layer_pattern.h). */
#include "engine/arch/layer_pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gs_pattern_per_layer(const char *pattern) { return pattern && strstr(pattern, "{i}") != NULL; }

void gs_pattern_fill(const char *pattern, const char *fill, char *out, size_t size) {
    const char *at = strstr(pattern, "{i}");
    if (!at) snprintf(out, size, "%s", pattern);
    else snprintf(out, size, "%.*s%s%s", (int)(at - pattern), pattern, fill, at + 3);
}

void gs_pattern_format(const char *pattern, int layer, char *out, size_t size) {
    char number[16];
    snprintf(number, sizeof number, "%d", layer);
    gs_pattern_fill(pattern, number, out, size);
}

int gs_pattern_match(const char *pattern, const char *name, int *layer) {
    const char *at = pattern ? strstr(pattern, "{i}") : NULL;
    if (!pattern) return 0;
    if (!at) return !strcmp(pattern, name) && (*layer = 0, 1);
    size_t pre = (size_t)(at - pattern);
    if (strncmp(pattern, name, pre)) return 0;
    const char *rest = name + pre;
    if (*rest == '*') {
        *layer = -1;
        rest++;
    } else {
        if (*rest < '0' || *rest > '9') return 0;
        char *end;
        long l = strtol(rest, &end, 10);
        if (l > 1000000) return 0;
        *layer = (int)l;
        rest = end;
    }
    return !strcmp(rest, at + 3);
}
