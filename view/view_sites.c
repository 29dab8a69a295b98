/* A run's per-head scalar sites for the page (view/view_internal.h): GPN+M's
 * mem.alpha / mem.beta / mem.norm, a GDN layer's attn.alpha, whatever the run
 * recorded with shape "per-head scalar", so the text can be coloured by any
 * of them, one head at a time or their mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "view/view_internal.h"

#define MAX_SITES 256

/* one site's values over the shown windows: per window a flat T x heads array */
static cJSON *one_site(store *st, int64_t run, const store_site *s, const int32_t *windows, const int *lengths,
                       int n_windows) {
    store_head_array a;
    if (store_read_site_heads(st, run, s->site, &a) != 0) return NULL;
    cJSON *o = cJSON_CreateObject(), *values = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "site", s->site);
    cJSON_AddNumberToObject(o, "layer", s->layer);
    cJSON_AddNumberToObject(o, "heads", (double)a.n_heads);
    for (int w = 0; w < n_windows; w++) {
        int64_t at = -1;
        for (int64_t i = 0; i < a.n_windows; i++)
            if (a.window_ids[i] == windows[w]) at = i;
        int T = lengths[w] < a.n_positions ? lengths[w] : (int)a.n_positions;
        if (at < 0) T = 0;
        const float *v = at < 0 ? a.values : a.values + at * a.n_positions * a.n_heads;
        cJSON_AddItemToArray(values, gs_view_floats(v, (int64_t)T * a.n_heads));
    }
    cJSON_AddItemToObject(o, "values", values);
    store_head_array_free(&a);
    return o;
}

cJSON *gs_view_sites(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows) {
    store_site *sites = malloc(MAX_SITES * sizeof *sites);
    int n = sites ? store_run_sites(st, run, sites, MAX_SITES) : -1;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n && i < MAX_SITES; i++) {
        if (strcmp(sites[i].shape, "per-head scalar")) continue;
        cJSON *o = one_site(st, run, &sites[i], windows, lengths, n_windows);
        if (o) cJSON_AddItemToArray(a, o);
    }
    free(sites);
    return a;
}
