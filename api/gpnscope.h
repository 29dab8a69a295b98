/* libgpnscope.so: the embedding contract (docs/python.md). A small, stable C
 * API over the engine, its hooks, the tokenizer and the store's readers, for
 * the Python package (python/gpnscope, ctypes) and any other host.
 *
 * Errors: every function that can fail returns 0 (or a count >= 0) on
 * success and -1 on failure; gs_api_last_error() then gives the one-line
 * message of the failing call (thread-local, so two threads do not clobber
 * each other's). Nothing here prints, exits or aborts: a bad file, a bad
 * site name or a token outside the vocabulary is an error return.
 *
 * Ownership: a handle made by gs_api_*_open is the caller's and is freed by
 * the matching gs_api_*_close (NULL is fine there). Strings returned as
 * `const char *` belong to the handle and stay valid until it is closed;
 * buffers returned through `**out` pointers are malloc'd and freed with
 * gs_api_free. Every buffer passed in stays the caller's.
 *
 * Threads: handles are independent. One handle must not be used by two
 * threads at once (a model runs one batch at a time; lock around it or open
 * one handle per thread); a tokenizer handle may encode and decode from any
 * number of threads at once. The engine runs on the CPU, with OpenBLAS's own
 * threads. */
#ifndef GS_API_GPNSCOPE_H
#define GS_API_GPNSCOPE_H

#include <stddef.h>
#include <stdint.h>

#define GS_API_VERSION 1

typedef struct gs_api_model gs_api_model;
typedef struct gs_api_tokenizer gs_api_tokenizer;
typedef struct gs_api_store gs_api_store;
typedef struct gs_api_rows gs_api_rows;

/* The one-line message of this thread's last failing call. */
const char *gs_api_last_error(void);
/* GS_API_VERSION of the library, for a host to check against its own. */
int gs_api_version(void);
/* Frees what a function returned through a `**out` pointer (NULL is fine). */
void gs_api_free(void *p);

/* ---------- models ---------- */
/* A safetensors file, or a model folder holding model.safetensors (and
 * config.json). */
int gs_api_model_open(const char *path, gs_api_model **out);
void gs_api_model_close(gs_api_model *m);
/* The family's checkpoint name ("gpn_m", "tpp", "gdn", "rt", ...). */
const char *gs_api_model_family(const gs_api_model *m);
/* The configuration as one JSON object (arch, n_layers, d_state, ..., vocab_size,
 * predicts_first_token: 1 when step 0 predicts x_0, 0 when a transformer's
 * first NLL is NaN). */
const char *gs_api_model_config(const gs_api_model *m);
int gs_api_model_vocab(const gs_api_model *m);

/* A site as the model has it (docs/hooks.md): per-layer sites once per layer,
 * their names with the layer spelled out ("blocks.0.hook_resid_post"). */
typedef struct {
    const char *name;  /* owned by the model */
    int layer;         /* -1: not per layer */
    int width;         /* floats per token */
    const char *kind;  /* "vector", "per-head scalar", "per-head vector", "scalar" */
    const char *role;  /* "state", "decay", "logits", "nll" or "" */
} gs_api_site;
int gs_api_model_n_sites(const gs_api_model *m);
/* Site i (0 <= i < gs_api_model_n_sites) into *out. */
int gs_api_model_site(const gs_api_model *m, int i, gs_api_site *out);
/* Resolve a name, an alias ("s_pred") or "blocks.*.NAME" (layer -1 and the
 * name "blocks.{i}.NAME": every layer) to the site's row; the error says why
 * a name is not the model's. */
int gs_api_model_find_site(const gs_api_model *m, const char *name, gs_api_site *out);

/* ---------- running a batch ---------- */
/* A hook on a site: called at every step t (pos) with the batch's rows of the
 * site (B rows of width floats, row-major) after the model computed them; it
 * may change them in place and the step continues from the changed values
 * (an edit of a carried site is carried through the recurrence). site is
 * the name with the layer spelled out. Non-zero stops the run: gs_api_run
 * returns -1 and no other hook is called. */
typedef int (*gs_api_hook_fn)(void *ctx, const char *site, int layer, int pos, float *data, int B, int width);

/* One request on a site: a hook, a capture into out ([B, T, width] floats,
 * out[(b * T + t) * width + i]), or both (the hook runs first: out holds
 * what the step continues from). A hook may name every layer ("blocks.*.X");
 * a capture names one. Requests on one site run in the order given. */
typedef struct {
    const char *site;
    float *out;           /* NULL: no capture */
    gs_api_hook_fn hook;  /* NULL: no hook */
    void *ctx;
} gs_api_request;

/* Run B windows of T tokens (tokens[b * T + t]), each from the zero state, one
 * step per token, as record and eval do. Every site name is checked before
 * the first step. logits ([B, T, width of the site "logits": V for a language
 * model]) and nll ([B, T]) may be NULL; position t
 * holds the step's prediction of tokens[b * T + t] (the store's convention:
 * NaN at t = 0 for a family with no prediction of the first token). */
int gs_api_run(gs_api_model *m, const int32_t *tokens, int B, int T, const gs_api_request *req, int n_req,
               float *logits, float *nll);

/* ---------- tokenizer ---------- */
/* tokenizer.json or tokenizer.model (io/tokenizer/tokenizer.h). */
int gs_api_tokenizer_open(const char *path, gs_api_tokenizer **out);
void gs_api_tokenizer_close(gs_api_tokenizer *t);
int gs_api_tokenizer_vocab(const gs_api_tokenizer *t);
/* Encode len bytes: *ids malloc'd (gs_api_free), their count returned. */
int64_t gs_api_tokenize(const gs_api_tokenizer *t, const char *text, size_t len, int32_t **ids);
/* Decode n ids: *text malloc'd and NUL-terminated (gs_api_free), its length returned. */
int64_t gs_api_detokenize(const gs_api_tokenizer *t, const int32_t *ids, size_t n, char **text);

/* ---------- the store, read-only ---------- */
/* Opens a store for reading (the file must exist and be a gpnscope store). */
int gs_api_store_open(const char *path, gs_api_store **out);
void gs_api_store_close(gs_api_store *s);
/* Every run id, oldest first (*ids malloc'd); the count. */
int64_t gs_api_store_runs(gs_api_store *s, int64_t **ids);
/* What a run recorded and from what: a JSON object of the run's row (runs.*
 * columns), its settings and its sites (run_sites rows); *json malloc'd. */
int gs_api_store_run_json(gs_api_store *s, int64_t run, char **json);

/* The run's token rows as dense arrays [window][position] over the windows
 * present; ids -1 and floats NaN where missing. Free with gs_api_tokens_free. */
typedef struct {
    int64_t n_windows, n_positions;
    int32_t *window_ids;
    int32_t *token_id, *next_token_id, *top1;
    float *nll, *entropy;
} gs_api_tokens;
int gs_api_store_tokens(gs_api_store *s, int64_t run, gs_api_tokens **out);
void gs_api_tokens_free(gs_api_tokens *t);

/* The rows a site recorded into the states table, in (window, position)
 * order, float16 widened to float32, read in chunks: open by the site's name
 * (as run_sites has it; "state.pred" finds the rows stored as "pred"), with
 * how many rows there are and their width; then up to max_rows at a time
 * into rows[max_rows * width] and, when not NULL, windows[] and positions[]
 * (the rows read, 0 at the end). */
typedef struct gs_api_states gs_api_states;
int gs_api_states_open(gs_api_store *s, int64_t run, const char *site, gs_api_states **out, int64_t *n_rows,
                       int *width);
int64_t gs_api_states_read(gs_api_states *r, float *rows, int32_t *windows, int32_t *positions, int64_t max_rows);
void gs_api_states_close(gs_api_states *r);

/* A run's table as typed rows (store/rows.h): table one of "run", "vocabulary",
 * "head_steps", "analyses", "analysis_scalars", "analysis_series",
 * "analysis_vectors" (the columns docs/export.md lists). A row's values stay
 * valid until the next gs_api_rows_next. */
enum { GS_API_NULL = 0, GS_API_INT, GS_API_FLOAT, GS_API_TEXT, GS_API_BLOB };
int gs_api_rows_open(gs_api_store *s, int64_t run, const char *table, gs_api_rows **out);
/* 1: a row is current, 0: the end, -1: an error. */
int gs_api_rows_next(gs_api_rows *r);
int gs_api_rows_columns(const gs_api_rows *r);
const char *gs_api_rows_name(const gs_api_rows *r, int col);
int gs_api_rows_type(gs_api_rows *r, int col);
int64_t gs_api_rows_int(gs_api_rows *r, int col);
double gs_api_rows_double(gs_api_rows *r, int col);
/* A text or blob value and its length in bytes (NULL for NULL). */
const void *gs_api_rows_bytes(gs_api_rows *r, int col, int *bytes);
void gs_api_rows_close(gs_api_rows *r);

#endif
