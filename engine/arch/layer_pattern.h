/* Per-layer names are written with "{i}" for the layer ("blocks.{i}.mem.q",
 * "L{i}_ffn_w1_k"): the one place that turns such a pattern into a name. */
#ifndef GS_ENGINE_ARCH_LAYER_PATTERN_H
#define GS_ENGINE_ARCH_LAYER_PATTERN_H

#include <stddef.h>

/* Whether a name is a per-layer pattern (holds "{i}"). */
int gs_pattern_per_layer(const char *pattern);
/* The pattern's name for a layer ("blocks.{i}.X", 2 -> "blocks.2.X"); a
 * pattern without "{i}" is copied as it is. */
void gs_pattern_format(const char *pattern, int layer, char *out, size_t size);

#endif
