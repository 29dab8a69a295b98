/* The page's causal panels (view/view_internal.h): a run's effective
 * attention matrices and direct logit attribution, the store's newest
 * patching and steering sweeps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "store/causal.h"
#include "store/experiments.h"
#include "view/view_internal.h"

#define MAX_PANELS 1024

cJSON *gs_view_attention(store *st, int64_t run, const int32_t *windows, int n_windows, int64_t *budget,
                         gs_view_result *r) {
    int64_t an = store_analysis_find(st, run, "attention", NULL);
    int32_t layers[MAX_PANELS], heads[MAX_PANELS];
    int np = an > 0 ? store_attention_heads(st, an, layers, heads, MAX_PANELS) : 0;
    if (np <= 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *panels = cJSON_CreateArray(), *m = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "analysis_id", (double)an);
    int shown = 0, left_out = 0;
    for (int p = 0; p < np; p++) {
        int any = 0;
        for (int w = 0; w < n_windows; w++) {
            cJSON *cur = NULL;
            static const char *const kinds[] = {"exact", "heuristic"};
            for (int k = 0; k < 2; k++) {
                float *v = NULL;
                int32_t n = 0;
                if (store_read_attention_matrix(st, an, windows[w], layers[p], heads[p], kinds[k], &v, &n) != 0) continue;
                if ((int64_t)n * n > *budget) { free(v); left_out = 1; continue; }
                *budget -= (int64_t)n * n;
                if (!cur) {
                    cur = cJSON_CreateObject();
                    cJSON_AddNumberToObject(cur, "window", windows[w]);
                    cJSON_AddNumberToObject(cur, "layer", layers[p]);
                    cJSON_AddNumberToObject(cur, "head", heads[p]);
                    cJSON_AddNumberToObject(cur, "n", n);
                    cJSON_AddItemToArray(m, cur);
                }
                cJSON_AddItemToObject(cur, kinds[k], gs_view_floats(v, (int64_t)n * n));
                free(v);
                any = 1;
            }
        }
        if (!any) continue;
        cJSON *ph = cJSON_CreateObject();
        cJSON_AddNumberToObject(ph, "layer", layers[p]);
        cJSON_AddNumberToObject(ph, "head", heads[p]);
        cJSON_AddItemToArray(panels, ph);
        shown++;
    }
    r->attention_heads += shown;
    r->attention_left_out += left_out;
    cJSON_AddItemToObject(o, "panels", panels);
    cJSON_AddItemToObject(o, "matrices", m);
    if (left_out)
        cJSON_AddStringToObject(o, "note", "some matrices were left out to keep the page small: show fewer windows "
                                           "or --tokens, or pick a run with --run");
    return o;
}

cJSON *gs_view_attribution(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows) {
    int64_t an = store_analysis_find(st, run, "logit_attribution", NULL);
    if (an <= 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *ws = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "analysis_id", (double)an);
    int any = 0;
    for (int w = 0; w < n_windows; w++) {
        store_logit_row *rows = NULL;
        int64_t n = store_read_logit_parts(st, an, windows[w], lengths[w], &rows);
        if (n <= 0) { free(rows); continue; }
        /* rows of [position, part, layer, head, logit]: one array each keeps the page small */
        cJSON *wo = cJSON_CreateObject(), *a = cJSON_CreateArray();
        cJSON_AddNumberToObject(wo, "window", windows[w]);
        for (int64_t i = 0; i < n; i++) {
            cJSON *row = cJSON_CreateArray();
            cJSON_AddItemToArray(row, cJSON_CreateNumber(rows[i].position));
            cJSON_AddItemToArray(row, cJSON_CreateString(rows[i].part));
            cJSON_AddItemToArray(row, cJSON_CreateNumber(rows[i].layer));
            cJSON_AddItemToArray(row, cJSON_CreateNumber(rows[i].head));
            cJSON_AddItemToArray(row, gs_view_num6(rows[i].logit));
            cJSON_AddItemToArray(a, row);
        }
        free(rows);
        cJSON_AddItemToObject(wo, "rows", a);
        cJSON_AddItemToArray(ws, wo);
        any = 1;
    }
    if (!any) { cJSON_Delete(o); cJSON_Delete(ws); return cJSON_CreateNull(); }
    cJSON_AddItemToObject(o, "windows", ws);
    return o;
}

/* an experiment's object: its id and its model's name */
static cJSON *experiment_head(store *st, int64_t id) {
    cJSON *o = cJSON_CreateObject();
    char path[4096], name[256];
    if (store_experiment_model_path(st, id, path, sizeof path)) path[0] = 0;
    gs_model_name(path, name, sizeof name);
    cJSON_AddNumberToObject(o, "id", (double)id);
    cJSON_AddStringToObject(o, "model", name);
    return o;
}

/* the newest patching sweep: its model, first clean prompt and mean score per component and position */
cJSON *gs_view_patch(store *st) {
    int64_t id = store_newest_experiment(st, "patch");
    store_patch_cell *cells = NULL;
    int64_t n = id > 0 ? store_patch_summary(st, id, &cells) : 0;
    if (n <= 0) { free(cells); return cJSON_CreateNull(); }
    cJSON *o = experiment_head(st, id), *rows = cJSON_CreateArray(), *clean = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "component", cells[i].component);
        cJSON_AddNumberToObject(r, "position", cells[i].position);
        cJSON_AddItemToObject(r, "mean_score", gs_view_num6(cells[i].mean_score));
        cJSON_AddItemToArray(rows, r);
    }
    free(cells);
    char **tokens = NULL;
    int nt = store_patch_clean_tokens(st, id, &tokens);
    for (int i = 0; i < nt; i++) {
        cJSON_AddItemToArray(clean, cJSON_CreateString(tokens[i]));
        free(tokens[i]);
    }
    free(tokens);
    cJSON_AddItemToObject(o, "clean_tokens", clean);
    cJSON_AddItemToObject(o, "rows", rows);
    return o;
}

/* the newest steering sweep: NLL change and top-1 change against c */
cJSON *gs_view_steer(store *st) {
    int64_t id = store_newest_experiment(st, "steer");
    store_steer_point *pts = NULL;
    int n = id > 0 ? store_steer_points(st, id, &pts) : 0;
    if (n <= 0) { free(pts); return cJSON_CreateNull(); }
    cJSON *o = experiment_head(st, id), *rows = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "c", gs_view_num6(pts[i].c));
        cJSON_AddItemToObject(r, "delta_nll", gs_view_num6(pts[i].delta_nll));
        cJSON_AddItemToObject(r, "top1_changed", gs_view_num6(pts[i].top1_changed));
        cJSON_AddItemToArray(rows, r);
    }
    free(pts);
    cJSON_AddItemToObject(o, "rows", rows);
    return o;
}
