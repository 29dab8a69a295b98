/* Per-layer names are written with "{i}" for the layer ("blocks.{i}.mem.q",
 * "L{i}_ffn_w1_k"): the one place that expands and matches such patterns
 * (sites, tensor tables, the causal tools, record --sites). */
#ifndef GS_ENGINE_ARCH_LAYER_PATTERN_H
#define GS_ENGINE_ARCH_LAYER_PATTERN_H

#include <stddef.h>

/* Whether a name is a per-layer pattern (holds "{i}"). */
int gs_pattern_per_layer(const char *pattern);
/* The pattern with "{i}" replaced by `fill` ("*": every layer); a pattern
 * without "{i}" is copied as it is. */
void gs_pattern_fill(const char *pattern, const char *fill, char *out, size_t size);
/* The pattern's name for a layer ("blocks.{i}.X", 2 -> "blocks.2.X"). */
void gs_pattern_format(const char *pattern, int layer, char *out, size_t size);
/* Whether `name` is `pattern` with "{i}" a layer number (*layer) or "*"
 * (every layer, *layer = -1); a pattern without "{i}" matches itself
 * (*layer = 0). A NULL pattern matches nothing. */
int gs_pattern_match(const char *pattern, const char *name, int *layer);

#endif
