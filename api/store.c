/* The store, read-only (api/gpnscope.h): store/'s named readers, no SQL. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/gpnscope.h"
#include "base/error.h"
#include "probes/site_ref.h"
#include "store/rows.h"
#include "store/store.h"

struct gs_api_store {
    store *st;
};

struct gs_api_states {
    store_states *r;
};

int gs_api_store_open(const char *path, gs_api_store **out) {
    *out = NULL;
    if (!path) return gs_fail("no store path");
    gs_api_store *s = calloc(1, sizeof *s);
    if (!s) return gs_fail("out of memory");
    if (!(s->st = store_open(path, STORE_READ))) return free(s), -1;
    *out = s;
    return 0;
}

void gs_api_store_close(gs_api_store *s) {
    if (!s) return;
    store_close(s->st);
    free(s);
}

int64_t gs_api_store_runs(gs_api_store *s, int64_t **ids) { return store_list_runs(s->st, ids); }

static void add_site(cJSON *sites, const store_site *x) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "site", x->site);
    cJSON_AddStringToObject(o, "shape", x->shape);
    cJSON_AddNumberToObject(o, "layer", x->layer);
    cJSON_AddNumberToObject(o, "width", x->width);
    cJSON_AddStringToObject(o, "dtype", x->dtype);
    cJSON_AddStringToObject(o, "stored_in", x->stored_in);
    cJSON_AddStringToObject(o, "stored_as", x->stored_as);
    cJSON_AddStringToObject(o, "role", x->role);
    cJSON_AddItemToArray(sites, o);
}

int gs_api_store_run_json(gs_api_store *s, int64_t run, char **json) {
    *json = NULL;
    store_run_info *i = calloc(1, sizeof *i);
    if (!i) return gs_fail("out of memory");
    if (store_run_get(s->st, run, i)) return free(i), -1;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)i->id);
    cJSON_AddStringToObject(o, "kind", i->kind);
    cJSON_AddStringToObject(o, "status", i->status);
    cJSON_AddStringToObject(o, "states", i->states);
    cJSON_AddStringToObject(o, "positions", i->positions);
    cJSON_AddStringToObject(o, "state_dtype", i->state_dtype);
    cJSON_AddStringToObject(o, "device", i->device);
    cJSON_AddNumberToObject(o, "seq_len", i->seq_len);
    cJSON_AddNumberToObject(o, "batch", i->batch);
    cJSON_AddNumberToObject(o, "d_state", i->d_state);
    cJSON_AddNumberToObject(o, "n_heads", i->n_heads);
    cJSON_AddNumberToObject(o, "n_windows", (double)i->n_windows);
    cJSON_AddNumberToObject(o, "windows_done", (double)i->windows_done);
    cJSON_AddNumberToObject(o, "tokens_done", (double)i->tokens_done);
    cJSON_AddStringToObject(o, "model_sha256", i->model_sha256);
    cJSON_AddStringToObject(o, "model_path", i->model_path);
    cJSON_AddStringToObject(o, "model_arch", i->model_arch);
    cJSON_AddStringToObject(o, "tokenizer_sha256", i->tokenizer_sha256);
    cJSON_AddStringToObject(o, "tokenizer_path", i->tokenizer_path);
    cJSON_AddStringToObject(o, "corpus_sha256", i->corpus_sha256);
    cJSON_AddStringToObject(o, "corpus_path", i->corpus_path);
    cJSON_AddStringToObject(o, "code_version", i->code_version);
    cJSON_AddStringToObject(o, "started_at", i->started_at);
    cJSON_AddStringToObject(o, "finished_at", i->finished_at);
    free(i);
    char *settings = store_run_settings(s->st, run);
    cJSON *set = settings ? cJSON_Parse(settings) : NULL;
    free(settings);
    cJSON_AddItemToObject(o, "settings", set ? set : cJSON_CreateObject());
    store_site sites[64];
    int n = store_run_sites(s->st, run, sites, 64);
    cJSON *list = cJSON_AddArrayToObject(o, "sites");
    for (int k = 0; k < n && k < 64; k++) add_site(list, &sites[k]);
    *json = n < 0 ? NULL : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return *json ? 0 : n < 0 ? -1 : gs_fail("out of memory");
}

int gs_api_store_tokens(gs_api_store *s, int64_t run, gs_api_tokens **out) {
    *out = NULL;
    store_token_array a;
    if (store_read_tokens(s->st, run, &a)) return -1;
    gs_api_tokens *t = malloc(sizeof *t);
    if (!t) return store_token_array_free(&a), gs_fail("out of memory");
    *t = (gs_api_tokens){a.n_windows, a.n_positions, a.window_ids, a.token_id, a.next_token_id, a.top1, a.nll, a.entropy};
    *out = t;
    return 0;
}

void gs_api_tokens_free(gs_api_tokens *t) {
    if (!t) return;
    store_token_array a = {t->n_windows, t->n_positions, t->window_ids, t->token_id, t->next_token_id, t->top1,
                           t->nll, t->entropy};
    store_token_array_free(&a);
    free(t);
}

/* the states.kind of a site: its run_sites row's, else (a run from before run_sites) probe_stored_kind */
static int site_kind(store *st, int64_t run, const char *site, store_site *x) {
    int got = store_find_site(st, run, site, x);
    if (got < 0) return -1;
    if (got == 1) {
        snprintf(x->stored_in, sizeof x->stored_in, "states");
        snprintf(x->stored_as, sizeof x->stored_as, "%s", probe_stored_kind(site));
    }
    if (strcmp(x->stored_in, "states"))
        return gs_fail("%s: run %lld stores %s in %s, not states: read it with %s", store_path(st), (long long)run, site,
                       x->stored_in, !strcmp(x->stored_in, "tokens") ? "tokens()" : "the head_steps rows");
    return 0;
}

int gs_api_states_open(gs_api_store *s, int64_t run, const char *site, gs_api_states **out, int64_t *n_rows,
                       int *width) {
    *out = NULL;
    store_site x;
    if (!site) return gs_fail("no site name");
    if (site_kind(s->st, run, site, &x)) return -1;
    int64_t n = store_count_states(s->st, run, x.stored_as);
    if (n < 0) return -1;
    if (n == 0) return gs_fail("%s: run %lld has no rows of %s", store_path(s->st), (long long)run, site);
    gs_api_states *r = calloc(1, sizeof *r);
    if (!r) return gs_fail("out of memory");
    if (!(r->r = store_states_open(s->st, run, x.stored_as, -1, -1))) return free(r), -1;
    *n_rows = n;
    *width = store_states_dim(r->r);
    *out = r;
    return 0;
}

int64_t gs_api_states_read(gs_api_states *r, float *rows, int32_t *windows, int32_t *positions, int64_t max_rows) {
    return store_states_read(r->r, rows, windows, positions, max_rows);
}

void gs_api_states_close(gs_api_states *r) {
    if (!r) return;
    store_states_close(r->r);
    free(r);
}

/* ---------- a run's tables as rows ---------- */
static const char *const table_names[STORE_ROWS_COUNT] = {
    [STORE_ROWS_RUN] = "run",
    [STORE_ROWS_TOKENS_TEXT] = "tokens_text",
    [STORE_ROWS_VOCABULARY] = "vocabulary",
    [STORE_ROWS_HEAD_STEPS] = "head_steps",
    [STORE_ROWS_ANALYSES] = "analyses",
    [STORE_ROWS_ANALYSIS_SCALARS] = "analysis_scalars",
    [STORE_ROWS_ANALYSIS_SERIES] = "analysis_series",
    [STORE_ROWS_ANALYSIS_VECTORS] = "analysis_vectors",
};

int gs_api_rows_open(gs_api_store *s, int64_t run, const char *table, gs_api_rows **out) {
    *out = NULL;
    for (int t = 0; t < STORE_ROWS_COUNT; t++)
        if (table && !strcmp(table, table_names[t]))
            return (*out = (gs_api_rows *)store_rows_open(s->st, run, (store_rows_table)t)) ? 0 : -1;
    return gs_fail("no table '%s' to read: run, tokens_text, vocabulary, head_steps, analyses, analysis_scalars, "
                   "analysis_series or analysis_vectors", table ? table : "(null)");
}

_Static_assert(GS_API_NULL == (int)STORE_VALUE_NULL && GS_API_BLOB == (int)STORE_VALUE_BLOB, "value types in one order");

/* The rows handle is store/'s cursor itself, under the opaque name of the API. */
int gs_api_rows_next(gs_api_rows *r) { return store_rows_next((store_rows *)r); }
int gs_api_rows_columns(const gs_api_rows *r) { return store_rows_columns((const store_rows *)r); }
const char *gs_api_rows_name(const gs_api_rows *r, int col) { return store_rows_name((const store_rows *)r, col); }
int gs_api_rows_type(gs_api_rows *r, int col) { return (int)store_rows_type((store_rows *)r, col); }
int64_t gs_api_rows_int(gs_api_rows *r, int col) { return store_rows_int((store_rows *)r, col); }
double gs_api_rows_double(gs_api_rows *r, int col) { return store_rows_double((store_rows *)r, col); }

const void *gs_api_rows_bytes(gs_api_rows *r, int col, int *bytes) {
    store_rows *x = (store_rows *)r;
    *bytes = 0;
    if (store_rows_type(x, col) == STORE_VALUE_BLOB) return store_rows_blob(x, col, bytes);
    const char *t = store_rows_text(x, col);
    if (t) *bytes = (int)strlen(t);
    return t;
}

void gs_api_rows_close(gs_api_rows *r) { store_rows_close((store_rows *)r); }
