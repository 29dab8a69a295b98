/* The logit lens on the page (view/view_internal.h): the run's windows re-run
 * with its model (the file the store names, checked by its sha256), every
 * lens site decoded (analyses/causal/lens.h), and for each token the top k of
 * the step that predicted it: step t for a family whose step t predicts x_t
 * (GPN), step t - 1 for one whose step predicts the next token (a
 * transformer), so a token's lens sits beside its stored NLL and top-1. The
 * sites are those the run recorded as its state (GPN's state.pred, each
 * layer's residual stream), so the lens is read where the recording was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h"
#include "analyses/causal/lens.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "view/view_internal.h"

static cJSON *note(const char *why) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "note", why);
    return o;
}

static int by_id(const void *a, const void *b) { return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b); }

/* {"id": piece} of every id the lens names, from the run's vocabulary */
static cJSON *pieces(store *st, int64_t run, int32_t *ids, size_t n) {
    cJSON *o = cJSON_CreateObject();
    qsort(ids, n, sizeof *ids, by_id);
    char key[16], piece[256];
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (i && ids[i] == ids[i - 1])) continue;
        if (store_token_piece(st, run, ids[i], piece, sizeof piece) != 0) continue;
        snprintf(key, sizeof key, "%d", ids[i]);
        cJSON_AddStringToObject(o, key, piece);
    }
    return o;
}

/* one window's lens as the page reads it: ids and logits [site][token][k], -1 / null where no step predicted it */
static int one_window(const gs_model *m, int shift, const int32_t *tokens, int T, const probe_site_ref *sites, int n_sites, int k, cJSON *ids_out, cJSON *logits_out, int32_t *all_ids) {
    gs_lens_result r;
    if (gs_lens_run(m, tokens, T, sites, n_sites, k, &r)) return -1;
    size_t o = 0;
    for (int i = 0; i < n_sites; i++)
        for (int t = 0; t < T; t++) {
            int step = t - shift;
            size_t at = ((size_t)i * T + step) * k;
            /* every logit equal (GPN's zero state at position 0): a tie ranks nothing */
            int tie = step >= 0 && k > 1 && r.logits[at] == r.logits[at + k - 1];
            for (int j = 0; j < k; j++) {
                int ok = step >= 0 && !tie;
                int32_t id = ok ? r.ids[at + j] : -1;
                cJSON_AddItemToArray(ids_out, cJSON_CreateNumber(id));
                cJSON_AddItemToArray(logits_out, ok ? gs_view_num6(r.logits[at + j]) : cJSON_CreateNull());
                all_ids[o++] = id;
            }
        }
    gs_lens_result_free(&r);
    return 0;
}

/* the run's recorded state sites of the model's width (the classic lens: every layer's residual), else the
 * model's default lens sites */
static int lens_sites(store *st, int64_t run, const gs_model *m, probe_site_ref **out) {
    store_site all[256];
    int n = store_run_sites(st, run, all, 256), k = 0;
    probe_site_ref *v = n > 0 ? calloc((size_t)n, sizeof *v) : NULL;
    for (int i = 0; v && i < n && i < 256; i++)
        if (!strcmp(all[i].role, "state") && !strcmp(all[i].shape, "vector") && all[i].width == m->cfg.d &&
            gs_lens_site(m, all[i].site, &v[k++])) {
            free(v);
            return -1;
        }
    if (k) { *out = v; return k; }
    free(v);
    return gs_lens_default_sites(m, out);
}

cJSON *gs_view_lens(store *st, int64_t run, const int32_t *windows, const int *lengths, int n_windows, int k) {
    store_run_info *info = malloc(sizeof *info);
    store_token_array tk = {0};
    gs_model *m = NULL;
    probe_site_ref *sites = NULL;
    int32_t *all = NULL;
    cJSON *o = NULL;
    char why[600];
    if (!info || store_run_get(st, run, info) || store_read_tokens(st, run, &tk)) goto fail;
    if (!(m = gs_analysis_load_model(info, NULL))) goto fail;
    const gs_family *f = gs_family_of(&m->cfg);
    if (!f || !f->decode) { gs_fail("the %s family has no decode to look through", f ? f->name : "model's"); goto fail; }
    int n_sites = lens_sites(st, run, m, &sites);
    if (n_sites < 0) goto fail;
    int shift = f->predicts_first_token ? 0 : 1, T_all = 0;
    for (int w = 0; w < n_windows; w++) T_all += lengths[w];
    if (!(all = malloc((size_t)n_sites * T_all * k * sizeof *all))) { gs_fail("out of memory for the lens"); goto fail; }
    o = cJSON_CreateObject();
    cJSON *names = cJSON_AddArrayToObject(o, "sites"), *ws = cJSON_AddArrayToObject(o, "windows");
    for (int i = 0; i < n_sites; i++) cJSON_AddItemToArray(names, cJSON_CreateString(sites[i].written));
    cJSON_AddNumberToObject(o, "k", k);
    cJSON_AddNumberToObject(o, "shift", shift);
    size_t used = 0;
    for (int w = 0; w < n_windows; w++) {
        int64_t at = -1;
        for (int64_t i = 0; i < tk.n_windows; i++)
            if (tk.window_ids[i] == windows[w]) at = i;
        const int32_t *tokens = at >= 0 ? tk.token_id + at * tk.n_positions : NULL;
        int T = lengths[w], complete = tokens != NULL && T > 0;
        for (int t = 0; t < T && complete; t++) complete = tokens[t] >= 0 && tokens[t] < m->cfg.V;
        cJSON *wo = cJSON_CreateObject();
        cJSON_AddNumberToObject(wo, "window", windows[w]);
        cJSON_AddItemToArray(ws, wo);
        if (!complete) { cJSON_AddStringToObject(wo, "note", "the window's tokens are incomplete: no lens"); continue; }
        cJSON *ids = cJSON_AddArrayToObject(wo, "ids"), *logits = cJSON_AddArrayToObject(wo, "logits");
        if (one_window(m, shift, tokens, T, sites, n_sites, k, ids, logits, all + used)) goto fail;
        used += (size_t)n_sites * T * k;
    }
    cJSON_AddItemToObject(o, "pieces", pieces(st, run, all, used));
    goto done;
fail:
    snprintf(why, sizeof why, "no lens: %s", gs_error());
    cJSON_Delete(o);
    o = note(why);
done:
    free(all);
    free(sites);
    gs_model_free(m);
    store_token_array_free(&tk);
    free(info);
    return o;
}
