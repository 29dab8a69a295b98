/* The head selector of record --sites (probes/head_select.h). */
#include "probes/head_select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int gs_sites_next(const char **cursor, char *out, size_t size) {
    const char *p = *cursor;
    while (*p == ',') p++; /* empty items ("a,,b", a trailing comma) name nothing, as strtok skipped them */
    if (!*p) return *cursor = p, 0;
    const char *start = p;
    int depth = 0;
    for (; *p && (depth > 0 || *p != ','); p++) depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
    size_t n = (size_t)(p - start);
    if (depth > 0) return gs_fail("'%.*s': a '[' without its ']' (e.g. blocks.0.attn.hook_pattern[heads=0,3])", (int)n, start);
    if (n >= size) return gs_fail("'%.40s...': a site name of more than %zu characters", start, size - 1);
    memcpy(out, start, n);
    out[n] = 0;
    *cursor = p;
    return 1;
}

/* a non-negative decimal number spanning [s, e) */
static int number(const char *s, const char *e, long *v) {
    if (s == e || *s < '0' || *s > '9') return 0;
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return end == e && errno == 0;
}

int gs_head_select_parse(const char *spec, int n_heads, char *out, size_t size, gs_head_select *sel) {
    memset(sel, 0, sizeof *sel);
    const char *open = strchr(spec, '[');
    size_t name_len = open ? (size_t)(open - spec) : strlen(spec);
    if (name_len >= size) return gs_fail("'%s': the site name is too long", spec);
    memcpy(out, spec, name_len);
    out[name_len] = 0;
    if (!open) return 0;
    size_t len = strlen(open);
    if (open[len - 1] != ']' || memchr(open + 1, '[', len - 1) || memchr(open, ']', len - 1))
        return gs_fail("'%s': a selector is one [heads=LIST] at the end of the name (e.g. %s[heads=0,3])", spec, out);
    if (strncmp(open + 1, "heads=", 6))
        return gs_fail("'%s': the one selector is [heads=LIST] (e.g. %s[heads=0,3] or %s[heads=0-2])", spec, out, out);
    if (n_heads < 1) return gs_fail("'%s': this model has no heads to select", spec);
    unsigned char *seen = calloc((size_t)n_heads, 1);
    if (!seen) return gs_fail("out of memory");
    const char *p = open + 7, *end = open + len - 1;
    int rc = 0;
    if (p == end) rc = gs_fail("'%s': no heads selected (e.g. [heads=0,3])", spec);
    while (!rc && p < end) {
        const char *item_end = memchr(p, ',', (size_t)(end - p));
        if (!item_end) item_end = end;
        const char *dash = memchr(p, '-', (size_t)(item_end - p));
        long a, b;
        if (!(dash ? number(p, dash, &a) && number(dash + 1, item_end, &b) : number(p, item_end, &a) && (b = a, 1))) {
            rc = gs_fail("'%s': '%.*s' is not a head number or a range A-B", spec, (int)(item_end - p), p);
            break;
        }
        if (b < a) rc = gs_fail("'%s': the range %ld-%ld runs backwards", spec, a, b);
        else if (b >= n_heads)
            rc = gs_fail("'%s': head %ld is out of range: the model has %d head%s (0-%d)", spec, b, n_heads,
                         n_heads == 1 ? "" : "s", n_heads - 1);
        for (long h = a; !rc && h <= b; h++) {
            if (seen[h]) rc = gs_fail("'%s': head %ld is named twice", spec, h);
            else if (sel->n == GS_HEAD_SELECT_MAX)
                rc = gs_fail("'%s': more than %d heads selected: leave the selector off to record every head", spec,
                             GS_HEAD_SELECT_MAX);
            else seen[h] = 1, sel->n++;
        }
        p = item_end + (item_end < end);
        if (!rc && item_end < end && p == end) rc = gs_fail("'%s': the head list ends with a comma", spec);
    }
    sel->n = 0;
    for (int h = 0; !rc && h < n_heads; h++)
        if (seen[h]) sel->head[sel->n++] = h;
    free(seen);
    if (rc) sel->n = 0;
    return rc;
}

int gs_head_select_format(const gs_head_select *sel, char *out, size_t size) {
    size_t used = 0;
    out[0] = 0;
    if (!sel->n) return 0;
    int w = snprintf(out, size, "[heads=");
    for (int i = 0; w >= 0 && (size_t)w < size - used && i < sel->n;) {
        used += (size_t)w;
        int j = i;
        while (j + 1 < sel->n && sel->head[j + 1] == sel->head[j] + 1) j++;
        const char *sep = i ? "," : "";
        if (j - i >= 2) w = snprintf(out + used, size - used, "%s%d-%d", sep, sel->head[i], sel->head[j]), i = j + 1;
        else w = snprintf(out + used, size - used, "%s%d", sep, sel->head[i]), i++;
    }
    if (w < 0 || (size_t)w >= size - used) return -1;
    used += (size_t)w;
    w = snprintf(out + used, size - used, "]");
    return w == 1 ? 0 : -1;
}

void gs_head_select_gather(const gs_head_select *sel, const float *row, int per_head, float *out) {
    for (int i = 0; i < sel->n; i++)
        memcpy(out + (size_t)i * per_head, row + (size_t)sel->head[i] * per_head, (size_t)per_head * sizeof *out);
}
