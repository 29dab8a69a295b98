/* The page's data (view/view.h), read from the store as one JSON document:
 *   {"store": name, "runs": [{"id", "model", "arch", "state_site",
 *     "windows": [{"window", "tokens": [{"pos", "id", "piece", "nll",
 *       "entropy", "top1", "norm", "proj"}]}],
 *     "verdicts": [{"key", "value", "note"}],
 *     "attention": {"layer", "heads", "matrices": [{"window", "head", "n",
 *       "exact": [n*n], "heuristic": [n*n]}]}}],
 *  "patch": {...} or null, "steer": {...} or null}
 * Numbers are written with 6 significant digits (the page shows 4); NaN and
 * missing values are null. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "store/causal.h"
#include "store/experiments.h"
#include "store/rows.h"
#include "view/view.h"

static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

/* a number rounded to 6 significant digits (smaller pages, the same reading) */
static cJSON *num6(double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    char b[32];
    snprintf(b, sizeof b, "%.6g", v);
    return cJSON_CreateNumber(strtod(b, NULL));
}

/* the stored kind of the run's state site ("pred" in stores before run_sites) */
static void state_kind(store *st, int64_t run, char *out, size_t size) {
    store_site site;
    snprintf(out, size, "%s", store_site_of_role(st, run, "state", &site) == 0 ? site.stored_as : "pred");
}

/* s_bar of the run's newest geometry analysis, as a unit vector of d floats (NULL if none) */
static float *unit_mean(store *st, int64_t run, int d) {
    int64_t g = store_analysis_find(st, run, "geometry", NULL);
    float *v = NULL;
    if (g <= 0 || store_analysis_get_vector(st, g, "mean", &v) != d) { free(v); return NULL; }
    double n = 0;
    for (int i = 0; i < d; i++) n += (double)v[i] * v[i];
    if (!(n > 0)) { free(v); return NULL; }
    for (int i = 0; i < d; i++) v[i] = (float)(v[i] / sqrt(n));
    return v;
}

/* the state's norm and projection on s_bar of each token of a window */
static void add_state_quantities(store *st, int64_t run, const char *kind, int32_t window, cJSON *tokens, int n) {
    store_states *r = store_states_open(st, run, kind, window, window);
    if (!r) return;
    int d = store_states_dim(r);
    float *u = d > 0 ? unit_mean(st, run, d) : NULL, *row = d > 0 ? malloc((size_t)d * sizeof *row) : NULL;
    int32_t pos;
    while (row && store_states_read(r, row, NULL, &pos, 1) == 1) {
        if (pos < 0 || pos >= n) continue;
        cJSON *t = cJSON_GetArrayItem(tokens, pos);
        cJSON *p = t ? cJSON_GetObjectItem(t, "pos") : NULL;
        if (!p || p->valueint != pos) continue;
        double norm = 0, proj = 0;
        for (int i = 0; i < d; i++) {
            norm += (double)row[i] * row[i];
            if (u) proj += (double)row[i] * u[i];
        }
        cJSON_AddItemToObject(t, "norm", num6(sqrt(norm)));
        if (u) cJSON_AddItemToObject(t, "proj", num6(proj));
    }
    free(row);
    free(u);
    store_states_close(r);
}

/* the column of tokens_text named name, -1 if none */
static int column(const store_rows *r, const char *name) {
    for (int c = 0; c < store_rows_columns(r); c++)
        if (!strcmp(store_rows_name(r, c), name)) return c;
    return -1;
}

static cJSON *row_num(store_rows *r, int c) {
    return c < 0 || store_rows_type(r, c) == STORE_VALUE_NULL ? cJSON_CreateNull() : num(store_rows_double(r, c));
}

/* the run's first n_windows windows (up to max_tokens positions each) as token objects, in windows[] */
static int read_windows(store *st, int64_t run, int n_windows, int max_tokens, cJSON *out, int32_t *windows) {
    store_rows *r = store_rows_open(st, run, STORE_ROWS_TOKENS_TEXT);
    if (!r) return -1;
    int cw = column(r, "window"), cp = column(r, "position"), ci = column(r, "token_id"), cpc = column(r, "piece"),
        cn = column(r, "nll"), ce = column(r, "entropy"), ct = column(r, "top1_piece");
    int nw = 0, rc;
    cJSON *tokens = NULL;
    while ((rc = store_rows_next(r)) == 1) {
        int32_t w = (int32_t)store_rows_int(r, cw);
        if (!nw || w != windows[nw - 1]) {
            if (nw == n_windows) break;
            windows[nw++] = w;
            cJSON *wo = cJSON_CreateObject();
            cJSON_AddNumberToObject(wo, "window", w);
            tokens = cJSON_AddArrayToObject(wo, "tokens");
            cJSON_AddItemToArray(out, wo);
        }
        int pos = (int)store_rows_int(r, cp);
        if (pos >= max_tokens) continue;
        const char *piece = store_rows_text(r, cpc), *top1 = ct >= 0 ? store_rows_text(r, ct) : NULL;
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "pos", pos);
        cJSON_AddNumberToObject(t, "id", (double)store_rows_int(r, ci));
        cJSON_AddStringToObject(t, "piece", piece ? piece : "");
        cJSON_AddItemToObject(t, "nll", row_num(r, cn));
        cJSON_AddItemToObject(t, "entropy", row_num(r, ce));
        cJSON_AddStringToObject(t, "top1", top1 ? top1 : "");
        cJSON_AddItemToArray(tokens, t);
    }
    store_rows_close(r);
    return rc < 0 ? -1 : nw;
}

static cJSON *verdicts(store *st, int64_t run) {
    cJSON *a = cJSON_CreateArray();
    int64_t f = store_analysis_find(st, run, "findings", NULL);
    store_scalar_row *rows = NULL;
    int n = f > 0 ? store_analysis_scalar_rows(st, f, &rows) : 0;
    static const char *const order[] = {"default_direction", "content_horizon", "memory_pools"};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n; i++) {
            if (strcmp(rows[i].key, order[k])) continue;
            cJSON *v = cJSON_CreateObject();
            cJSON_AddStringToObject(v, "key", rows[i].key);
            cJSON_AddItemToObject(v, "value", num(rows[i].value));
            cJSON_AddStringToObject(v, "note", rows[i].note);
            cJSON_AddItemToArray(a, v);
        }
    free(rows);
    return a;
}

static cJSON *floats(const float *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num6(v[i]));
    return a;
}

/* the exact (and heuristic) matrices of the run's newest attention analysis: the first layer it stored, its
 * heads there, the shown windows */
static cJSON *attention(store *st, int64_t run, const int32_t *windows, int n_windows, int *heads_out) {
    int64_t an = store_analysis_find(st, run, "attention", NULL);
    int heads[256];
    int32_t first_window, layer;
    int nh = an > 0 ? store_attention_first_panel(st, an, &first_window, &layer, heads, 256) : 0;
    if (nh <= 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *m = cJSON_CreateArray(), *hs = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "analysis_id", (double)an);
    cJSON_AddNumberToObject(o, "layer", layer);
    for (int h = 0; h < nh; h++) cJSON_AddItemToArray(hs, cJSON_CreateNumber(heads[h]));
    for (int w = 0; w < n_windows; w++)
        for (int h = 0; h < nh; h++) {
            cJSON *cur = NULL;
            static const char *const kinds[] = {"exact", "heuristic"};
            for (int k = 0; k < 2; k++) {
                float *v = NULL;
                int32_t n = 0;
                if (store_read_attention_matrix(st, an, windows[w], layer, heads[h], kinds[k], &v, &n) != 0) continue;
                if (!cur) {
                    cur = cJSON_CreateObject();
                    cJSON_AddNumberToObject(cur, "window", windows[w]);
                    cJSON_AddNumberToObject(cur, "head", heads[h]);
                    cJSON_AddNumberToObject(cur, "n", n);
                    cJSON_AddItemToArray(m, cur);
                }
                cJSON_AddItemToObject(cur, kinds[k], floats(v, n * n));
                free(v);
            }
        }
    *heads_out = nh;
    cJSON_AddItemToObject(o, "heads", hs);
    cJSON_AddItemToObject(o, "matrices", m);
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
static cJSON *patch(store *st) {
    int64_t id = store_newest_experiment(st, "patch");
    store_patch_cell *cells = NULL;
    int64_t n = id > 0 ? store_patch_summary(st, id, &cells) : 0;
    if (n <= 0) { free(cells); return cJSON_CreateNull(); }
    cJSON *o = experiment_head(st, id), *rows = cJSON_CreateArray(), *clean = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "component", cells[i].component);
        cJSON_AddNumberToObject(r, "position", cells[i].position);
        cJSON_AddItemToObject(r, "mean_score", num6(cells[i].mean_score));
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
static cJSON *steer(store *st) {
    int64_t id = store_newest_experiment(st, "steer");
    store_steer_point *pts = NULL;
    int n = id > 0 ? store_steer_points(st, id, &pts) : 0;
    if (n <= 0) { free(pts); return cJSON_CreateNull(); }
    cJSON *o = experiment_head(st, id), *rows = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "c", num6(pts[i].c));
        cJSON_AddItemToObject(r, "delta_nll", num6(pts[i].delta_nll));
        cJSON_AddItemToObject(r, "top1_changed", num6(pts[i].top1_changed));
        cJSON_AddItemToArray(rows, r);
    }
    free(pts);
    cJSON_AddItemToObject(o, "rows", rows);
    return o;
}

static cJSON *one_run(store *st, int64_t run, const gs_view_opts *o, gs_view_result *r) {
    store_run_info *info = malloc(sizeof *info);
    if (!info || store_run_get(st, run, info)) { free(info); return NULL; }
    cJSON *j = cJSON_CreateObject();
    char name[256], kind[80];
    gs_model_name(info->model_path, name, sizeof name);
    state_kind(st, run, kind, sizeof kind);
    cJSON_AddNumberToObject(j, "id", (double)run);
    cJSON_AddStringToObject(j, "model", name);
    cJSON_AddStringToObject(j, "arch", info->model_arch);
    cJSON_AddStringToObject(j, "state_site", kind);
    free(info);
    int32_t windows[64];
    cJSON *ws = cJSON_AddArrayToObject(j, "windows");
    int nw = read_windows(st, run, o->windows < 64 ? o->windows : 64, o->max_tokens, ws, windows);
    if (nw < 0) { cJSON_Delete(j); return NULL; }
    for (int w = 0; w < nw; w++) {
        cJSON *tokens = cJSON_GetObjectItem(cJSON_GetArrayItem(ws, w), "tokens");
        int n = cJSON_GetArraySize(tokens), dense = 1;
        for (int i = 0; i < n && dense; i++) dense = cJSON_GetObjectItem(cJSON_GetArrayItem(tokens, i), "pos")->valueint == i;
        if (dense) add_state_quantities(st, run, kind, windows[w], tokens, n);
        r->tokens += n;
    }
    r->windows += nw;
    cJSON_AddItemToObject(j, "verdicts", verdicts(st, run));
    int heads = 0;
    cJSON_AddItemToObject(j, "attention", attention(st, run, windows, nw, &heads));
    r->attention_heads += heads;
    return j;
}

char *gs_view_data(store *st, const gs_view_opts *o, gs_view_result *r) {
    memset(r, 0, sizeof *r);
    int64_t *ids = NULL, n = 0;
    if (o->runs) n = o->n_runs;
    else if ((n = store_list_runs(st, &ids)) < 0) return NULL;
    cJSON *doc = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(doc, "runs");
    char name[256];
    gs_model_name(store_path(st), name, sizeof name);
    cJSON_AddStringToObject(doc, "store", name);
    for (int64_t i = 0; i < n; i++) {
        int64_t run = o->runs ? o->runs[i] : ids[i];
        cJSON *j = one_run(st, run, o, r);
        if (!j) { free(ids); cJSON_Delete(doc); return NULL; }
        if (cJSON_GetArraySize(cJSON_GetObjectItem(j, "windows")) == 0 && !o->runs) { cJSON_Delete(j); continue; }
        cJSON_AddItemToArray(runs, j);
        r->runs++;
    }
    free(ids);
    cJSON_AddItemToObject(doc, "patch", patch(st));
    cJSON_AddItemToObject(doc, "steer", steer(st));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text) gs_fail("out of memory writing the page's data");
    return text;
}
