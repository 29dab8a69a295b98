/* A head selector on a per-head site in `record --sites` (docs/hooks.md):
 *
 *   SITE[heads=LIST]   LIST = ITEM(,ITEM)*, ITEM = H | A-B (inclusive)
 *
 * e.g. blocks.0.attn.hook_pattern[heads=0,3] or blocks.*.attn.state[heads=1-2].
 * The stored row is the selected heads' slices of the site's row, in
 * ascending head order (each slice width / H floats), under the site's name
 * with the canonical selector: heads ascending, runs of three or more as
 * A-B ("[heads=0-2,5]"). The commas inside the brackets do not separate
 * sites. */
#ifndef GS_PROBES_HEAD_SELECT_H
#define GS_PROBES_HEAD_SELECT_H

#include <stddef.h>

/* heads in one selector, at most (leave the selector off for every head) */
#define GS_HEAD_SELECT_MAX 64

typedef struct {
    int n; /* 0: no selector (every head) */
    int head[GS_HEAD_SELECT_MAX]; /* ascending */
} gs_head_select;

/* The next site of a --sites list from *cursor (commas inside [...] belong
 * to the site): copies it to out and advances *cursor; 0 at the list's end,
 * 1 for a site, -1 with gs_error() for one too long or an unclosed '['. */
int gs_sites_next(const char **cursor, char *out, size_t size);

/* Split spec into the site's name (out) and its selector (sel->n = 0 when
 * there is none), checking the heads against n_heads; -1 with a one-line
 * gs_error() naming what is wrong. */
int gs_head_select_parse(const char *spec, int n_heads, char *out, size_t size, gs_head_select *sel);

/* "[heads=...]" in canonical form (empty for no selector); -1 if it does not fit. */
int gs_head_select_format(const gs_head_select *sel, char *out, size_t size);

/* out = the selected heads' slices of row (each per_head floats). */
void gs_head_select_gather(const gs_head_select *sel, const float *row, int per_head, float *out);

#endif
