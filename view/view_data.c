/* The page's data (view/view.h), read from the store as one JSON document:
 *   {"store": name, "runs": [{"id", "model", "arch", "state_site",
 *     "windows": [{"window", "tokens": [{"pos", "id", "piece", "nll",
 *       "entropy", "top1", "norm", "proj", "pc1"}]}],
 *     "sites": [{"site", "layer", "heads", "values": [per window]}],
 *     "lens": {"sites", "k", "shift", "windows": [{"window", "ids", "logits"}], "pieces"} or {"note"},
 *     "verdicts": [{"key", "value", "note"}],
 *     "attention": {"panels": [{"layer", "head"}], "matrices": [{"window", "layer", "head", "n",
 *       "exact": [n*n], "heuristic": [n*n]}]} or null,
 *     "attribution": {"windows": [{"window", "rows": [[pos, part, layer, head, logit]]}]} or null}],
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
#include "store/rows.h"
#include "view/view_internal.h"
#include "analyses/state/geometry_keys.h"

/* the page's attention matrices at most: 1.5M weights (about 10 MB of page) */
#define ATTENTION_BUDGET 1500000

cJSON *gs_view_num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

cJSON *gs_view_num6(double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    char b[32];
    snprintf(b, sizeof b, "%.6g", v);
    return cJSON_CreateNumber(strtod(b, NULL));
}

cJSON *gs_view_floats(const float *v, int64_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++) cJSON_AddItemToArray(a, gs_view_num6(v[i]));
    return a;
}

/* the stored kind of the run's state site ("pred" in stores before run_sites) */
static void state_kind(store *st, int64_t run, char *out, size_t size) {
    store_site site;
    snprintf(out, size, "%s", store_site_of_role(st, run, "state", &site) == 0 ? site.stored_as : "pred");
}

/* a vector (s_bar "mean", the centered "pc1") of the run's newest geometry analysis, as a unit vector of d
 * floats (NULL if none); *length its norm before */
static float *unit_vector(store *st, int64_t run, const char *key, int d, double *length) {
    int64_t g = store_analysis_find(st, run, "geometry", NULL);
    float *v = NULL;
    if (g <= 0 || store_analysis_get_vector(st, g, key, &v) != d) { free(v); return NULL; }
    double n = 0;
    for (int i = 0; i < d; i++) n += (double)v[i] * v[i];
    if (!(n > 0)) { free(v); return NULL; }
    for (int i = 0; i < d; i++) v[i] = (float)(v[i] / sqrt(n));
    if (length) *length = sqrt(n);
    return v;
}

/* the state's norm, its projection on s_bar and its centered state's projection on PC1 (the score
 * (s - mean) . pc1) of each token of a window */
static void add_state_quantities(store *st, int64_t run, const char *kind, int32_t window, cJSON *tokens, int n) {
    store_states *r = store_states_open(st, run, kind, window, window);
    if (!r) return;
    int d = store_states_dim(r);
    double mean_norm = 0;
    float *u = d > 0 ? unit_vector(st, run, GS_KEY_MEAN, d, &mean_norm) : NULL, *pc = d > 0 ? unit_vector(st, run, GS_KEY_PC1, d, NULL) : NULL;
    float *row = d > 0 ? malloc((size_t)d * sizeof *row) : NULL;
    /* mean . pc1, so that (s - mean) . pc1 = s . pc1 - offset */
    double offset = 0;
    for (int i = 0; u && pc && i < d; i++) offset += mean_norm * (double)u[i] * pc[i];
    int32_t pos;
    while (row && store_states_read(r, row, NULL, &pos, 1) == 1) {
        if (pos < 0 || pos >= n) continue;
        cJSON *t = cJSON_GetArrayItem(tokens, pos);
        cJSON *p = t ? cJSON_GetObjectItem(t, "pos") : NULL;
        if (!p || p->valueint != pos) continue;
        double norm = 0, proj = 0, score = 0;
        for (int i = 0; i < d; i++) {
            norm += (double)row[i] * row[i];
            if (u) proj += (double)row[i] * u[i];
            if (pc) score += (double)row[i] * pc[i];
        }
        cJSON_AddItemToObject(t, "norm", gs_view_num6(sqrt(norm)));
        if (u) cJSON_AddItemToObject(t, "proj", gs_view_num6(proj));
        if (u && pc) cJSON_AddItemToObject(t, "pc1", gs_view_num6(score - offset));
    }
    free(row);
    free(u);
    free(pc);
    store_states_close(r);
}

/* the column of tokens_text named name, -1 if none */
static int column(const store_rows *r, const char *name) {
    for (int c = 0; c < store_rows_columns(r); c++)
        if (!strcmp(store_rows_name(r, c), name)) return c;
    return -1;
}

static cJSON *row_num(store_rows *r, int c) {
    return c < 0 || store_rows_type(r, c) == STORE_VALUE_NULL ? cJSON_CreateNull() : gs_view_num(store_rows_double(r, c));
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
            cJSON_AddItemToObject(v, "value", gs_view_num(rows[i].value));
            cJSON_AddStringToObject(v, "note", rows[i].note);
            cJSON_AddItemToArray(a, v);
        }
    free(rows);
    return a;
}

static cJSON *one_run(store *st, int64_t run, const gs_view_opts *o, int64_t *budget, gs_view_result *r) {
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
    int lengths[64];
    cJSON *ws = cJSON_AddArrayToObject(j, "windows");
    int nw = read_windows(st, run, o->windows < 64 ? o->windows : 64, o->max_tokens, ws, windows);
    if (nw < 0) { cJSON_Delete(j); return NULL; }
    for (int w = 0; w < nw; w++) {
        cJSON *tokens = cJSON_GetObjectItem(cJSON_GetArrayItem(ws, w), "tokens");
        int n = cJSON_GetArraySize(tokens), dense = 1;
        for (int i = 0; i < n && dense; i++) dense = cJSON_GetObjectItem(cJSON_GetArrayItem(tokens, i), "pos")->valueint == i;
        lengths[w] = dense ? n : 0;
        if (dense) add_state_quantities(st, run, kind, windows[w], tokens, n);
        r->tokens += n;
    }
    r->windows += nw;
    cJSON_AddItemToObject(j, "verdicts", verdicts(st, run));
    cJSON_AddItemToObject(j, "sites", gs_view_sites(st, run, windows, lengths, nw));
    if (o->lens_k > 0) {
        cJSON *lens = gs_view_lens(st, run, windows, lengths, nw, o->lens_k), *why = cJSON_GetObjectItem(lens, "note");
        if (cJSON_IsString(why) && !r->lens_missing++) snprintf(r->lens_why, sizeof r->lens_why, "%s", why->valuestring);
        cJSON_AddItemToObject(j, "lens", lens);
    }
    cJSON_AddItemToObject(j, "attention", gs_view_attention(st, run, windows, nw, budget, r));
    cJSON_AddItemToObject(j, "attribution", gs_view_attribution(st, run, windows, lengths, nw));
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
    int64_t budget = ATTENTION_BUDGET;
    for (int64_t i = 0; i < n; i++) {
        int64_t run = o->runs ? o->runs[i] : ids[i], of;
        char kind[32];
        /* a control (gpnscope controls) is shown only when asked for: its verdicts are read beside its run's */
        if (!o->runs && store_run_control(st, run, kind, sizeof kind, &of) == 1) continue;
        cJSON *j = one_run(st, run, o, &budget, r);
        if (!j) { free(ids); cJSON_Delete(doc); return NULL; }
        if (cJSON_GetArraySize(cJSON_GetObjectItem(j, "windows")) == 0 && !o->runs) { cJSON_Delete(j); continue; }
        cJSON_AddItemToArray(runs, j);
        r->runs++;
    }
    free(ids);
    cJSON_AddItemToObject(doc, "patch", gs_view_patch(st));
    cJSON_AddItemToObject(doc, "steer", gs_view_steer(st));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text) gs_fail("out of memory writing the page's data");
    return text;
}
