/* "{i}" layer patterns (layer_pattern.h). */
#include "engine/arch/layer_pattern.h"

#include <stdio.h>
#include <string.h>

int gs_pattern_per_layer(const char *pattern) { return pattern && strstr(pattern, "{i}") != NULL; }

void gs_pattern_format(const char *pattern, int layer, char *out, size_t size) {
    const char *at = strstr(pattern, "{i}");
    if (!at) snprintf(out, size, "%s", pattern);
    else snprintf(out, size, "%.*s%d%s", (int)(at - pattern), pattern, layer, at + 3);
}
