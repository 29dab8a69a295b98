/* The store: one SQLite file per study (docs/schema.md describes every table).
 *
 * Plain C types only: the store knows nothing of the engine. Every function
 * returns 0 (or an id > 0, or a count >= 0) on success and -1 (NULL) on
 * failure with gs_error() set to one line naming the file and what to do.
 *
 * Writing (what `gpnscope record` does):
 *     store *st = store_open("study.db", STORE_WRITE | STORE_CREATE);
 *     int64_t model = store_add_model(st, &(store_model){.path=..., .sha256=...});
 *     int64_t run = store_begin_run(st, &(store_run){.model_id = model, ...});
 *     for each batch of windows:
 *         store_begin(st);
 *         store_put_tokens / store_put_head_steps / store_put_state ...
 *         store_window_done(st, run, w, offset, n_tokens);  (each finished window)
 *         store_run_progress(st, run, windows_done, tokens_done);
 *         store_commit(st);            (on any error: store_rollback, then stop)
 *     store_finish_run(st, run, "complete", NULL);
 *     store_close(st);
 * A run is resumable at window granularity: store_resume_run() checks the
 * model hash, deletes rows of windows that were not marked done (a kill in
 * the middle of a batch leaves them) and returns the first window to record.
 *
 * Reading (what the analyses do): store_run_get, store_states_open/read/close
 * (float32 rows, float16 widened), store_read_heads, store_read_tokens,
 * store_read_unigram_counts. Results: store_analysis_begin, then scalars,
 * series and vectors, then store_commit. */
#ifndef GS_STORE_STORE_H
#define GS_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct store store;
struct sqlite3;

/* Schema version written to PRAGMA user_version by this build. */
#define STORE_SCHEMA_VERSION 3

/* ---------- opening ---------- */
enum {
    STORE_READ = 0,   /* read only; the file must exist and be a gpnscope store */
    STORE_WRITE = 1,  /* read-write; migrates an older schema */
    STORE_CREATE = 2, /* with STORE_WRITE: create the file if it does not exist */
};

store *store_open(const char *path, int flags);
void store_close(store *st); /* NULL is fine; rolls back an open batch */
const char *store_path(const store *st);
/* The connection, vector functions registered, for ad-hoc SQL: the sql
 * command and the store bench only (docs/architecture.md, "Who may talk
 * SQL"); every other module asks a named reader. Do not close it. */
struct sqlite3 *store_db(store *st);

/* ---------- batches ---------- */
/* Transactions nest by count: only the outermost begin/commit touch SQLite.
 * Writers called outside a batch commit by themselves (slow; fine for small
 * tables). After a failed write call store_rollback: the batch is lost, the
 * file stays consistent. */
int store_begin(store *st);
int store_commit(store *st);
int store_rollback(store *st);

/* ---------- what was recorded from what ---------- */
/* A NULL string or a 0 number means "unknown" (stored as NULL). Adding a
 * sha256 already present returns the existing id and fills in columns that
 * were unknown (an import knows only the hash; a later record knows sizes). */
typedef struct {
    const char *path, *sha256; /* sha256: 64 hex digits, required */
    const char *arch;          /* "gpn" | "gpn+m" */
    int n_layers, d_state, d_emb, d_ffn, n_heads, d_key, d_val, vocab_size;
    int64_t n_params;
    const char *dtype; /* stored dtype of the checkpoint, e.g. "bf16" */
} store_model;
int64_t store_add_model(store *st, const store_model *m);

typedef struct {
    const char *path, *sha256, *kind; /* kind: e.g. "sentencepiece", "gpt2-bpe" */
    int vocab_size;
} store_tokenizer;
int64_t store_add_tokenizer(store *st, const store_tokenizer *t);

typedef struct {
    const char *path, *sha256, *kind; /* kind: e.g. "text", "uint16-tokens", "npy" */
    int64_t n_tokens;
    int64_t tokenizer_id; /* 0: none (pre-tokenized) */
} store_corpus;
/* Identity is (sha256, tokenizer_id): one text tokenized two ways is two corpora. */
int64_t store_add_corpus(store *st, const store_corpus *c);

/* ---------- runs ---------- */
typedef struct {
    int64_t model_id, tokenizer_id, corpus_id; /* 0: none */
    const char *kind;          /* "record" (default) | "import" */
    const char *settings_json; /* every setting, as one JSON object (NULL: "{}") */
    int seq_len, batch;
    int64_t n_windows;
    const char *states;      /* "pred,ground" | "pred" | "ground" | "none" */
    const char *positions;   /* "all" | "stride:K" | "sample:K" */
    const char *state_dtype; /* "f32" | "f16" */
    const char *device;      /* "cpu" | "cuda" */
    int d_state, n_heads;    /* sizes of a state vector and of the head axis */
    const char *code_version;
} store_run;
/* A new run with status 'running' and started_at now; returns its id. */
int64_t store_begin_run(store *st, const store_run *r);
int store_run_progress(store *st, int64_t run_id, int64_t windows_done, int64_t tokens_done);
/* status: "complete" | "interrupted" | "failed"; message (NULL ok) says why. */
int store_finish_run(store *st, int64_t run_id, const char *status, const char *message);

/* Resume a run: the model's sha256 must match the run's (else a clear
 * error); if settings_json is not NULL it must equal the run's settings (key
 * order and spacing ignored). Deletes every row of windows not marked done
 * and of windows after the first gap, marks the run 'running' and returns
 * the number of leading complete windows (= the next window to record). */
int64_t store_resume_run(store *st, int64_t run_id, const char *model_sha256, const char *settings_json);
/* The same for a run that records windows from `from` on (a rank's shard,
 * docs/scale.md): the window to continue at is from + its complete leading
 * windows; windows_done and tokens_done count from `from`. */
int64_t store_resume_run_at(store *st, int64_t run_id, const char *model_sha256, const char *settings_json,
                            int64_t from);

/* ---------- per-token rows (inside a batch) ---------- */
/* One row per token, as the model steps (docs/gpn-model.md): token_id is x_t,
 * the token at `position`; nll = -ln p(x_t), entropy (nats) and top1 (the most
 * likely token) describe the prediction of x_t made from the predicted state
 * s^p_t, before x_t was read, so top1 == token_id is a correct prediction.
 * next_token_id is x_{t+1} when the writer knows it (-1: unknown). -1 ids
 * and NaN floats are stored as NULL. */
typedef struct {
    int32_t window, position;
    int32_t token_id, next_token_id, top1;
    float nll, entropy;
} store_token_row;
int store_put_tokens(store *st, int64_t run_id, const store_token_row *rows, int64_t n);

/* One row per memory head at (window, position). Any of the arrays may be
 * NULL (column stored as NULL); NaN values are stored as NULL too. */
int store_put_head_steps(store *st, int64_t run_id, int32_t window, int32_t position, int n_heads,
                         const float *alpha, const float *beta, const float *mem_norm);

typedef enum { STORE_F32 = 0, STORE_F16 = 1 } store_dtype;
/* A state vector of d floats, stored little-endian in dtype, under kind
 * (probes/site_ref.h probe_stored_kind; at most STORE_KIND_MAX bytes: a site's name with a
 * head selector, "blocks.11.attn.hook_pattern[heads=0-2,5]", fits). */
#define STORE_KIND_MAX 63
int store_put_state(store *st, int64_t run_id, int32_t window, int32_t position, const char *kind,
                    store_dtype dtype, const float *v, int d);

/* Mark a window complete (call after all its rows, in the same batch). */
int store_window_done(store *st, int64_t run_id, int32_t window, int64_t corpus_offset, int32_t n_tokens);

/* Vocabulary: the bytes of one token's piece. Invalid UTF-8 is kept in
 * `bytes` and shown escaped (\xNN) in the `piece` text column. */
int store_put_piece(store *st, int64_t tokenizer_id, int32_t token_id, const char *bytes, size_t len);

/* Unigram counts of a corpus (replaces any earlier counts of that corpus;
 * zero counts are not stored). */
int store_put_unigram_counts(store *st, int64_t corpus_id, const int64_t *counts, int64_t n_vocab);

/* ---------- reading ---------- */
typedef struct {
    int64_t id, model_id, tokenizer_id, corpus_id; /* 0: none */
    char kind[16], status[16];
    char states[512], positions[32], state_dtype[8], device[16]; /* states: the recorded vector sites' kinds */
    int seq_len, batch, d_state, n_heads;
    int64_t n_windows, windows_done, tokens_done;
    char model_sha256[65], tokenizer_sha256[65], corpus_sha256[65];
    char code_version[64], started_at[32], finished_at[32];
    /* the files as registered with the run ("" when none or no path): the model analyses load, the
     * tokenizer and corpus they name */
    char model_path[4096], tokenizer_path[4096], corpus_path[4096];
    int64_t model_vocab, tokenizer_vocab; /* their vocab_size; 0 when unknown */
    char model_arch[32];                  /* the model's arch as registered; "" when unknown */
} store_run_info;

/* Ids of every run, oldest first (*ids malloc'd; free it). Returns the count. */
int64_t store_list_runs(store *st, int64_t **ids);
/* One snapshot of the store for a series of reads (a plot, an export), even while a recording writes:
 * a read transaction begun and its first read done; end it with store_snapshot_end. Best effort: a
 * snapshot that cannot begin leaves every read on its own (and returns -1 with the error set, for a
 * caller that needs the one snapshot: the exporter). */
int store_snapshot_begin(store *st);
void store_snapshot_end(store *st);
int store_run_get(store *st, int64_t run_id, store_run_info *out);
/* The run's settings JSON (malloc'd; free it). */
char *store_run_settings(store *st, int64_t run_id);
/* The newest run of those `which` selects; 0 if there is none. */
enum {
    STORE_RUN_ANY = 0,        /* any status */
    STORE_RUN_UNFINISHED = 1, /* not complete (running, interrupted, failed): what --resume continues */
    STORE_RUN_COMPLETE = 2,   /* complete and not a control run: what analyses pick by default */
};
int64_t store_last_run(store *st, int which);
/* Control runs (gpnscope controls; docs/controls.md): a run whose settings
 * hold {"control": {"kind": K, "of": RUN, ...}} is run RUN's control of kind
 * K ("untrained", "shuffled"). The newest complete control of run of that
 * kind, 0 when none (-1 with gs_error() on a read error). */
int64_t store_control_run(store *st, int64_t run, const char *kind);
enum { STORE_CONTROL_UNTRAINED, STORE_CONTROL_SHUFFLED, STORE_N_CONTROLS };
extern const char *const store_control_names[STORE_N_CONTROLS]; /* "untrained", "shuffled" */
/* Whether run is a control: 1 with its kind and the run it controls, 0 when not, -1 on error. */
int store_run_control(store *st, int64_t run, char *kind, size_t size, int64_t *of);

int64_t store_count_states(store *st, int64_t run_id, const char *kind);
/* The same from position `first` on (states after a warm-up that analyses skip). */
int64_t store_count_states_from(store *st, int64_t run_id, const char *kind, int first);
/* The same at positions first <= p < end (end <= 0: no end), what an analysis reading a model's training length counts. */
int64_t store_count_states_in(store *st, int64_t run_id, const char *kind, int first, int end);
/* The windows among the first `take` of the states at positions first <= p < end (end <= 0: no end) in
 * (window, position) order. */
int64_t store_count_windows_in_prefix(store *st, int64_t run_id, const char *kind, int first, int end, int64_t take);

/* Stream a run's states of one kind, ordered by (window, position), as float32
 * rows. windows [window_from, window_to] inclusive; -1 for either end means
 * unbounded. Every state must have the same length (else an error). */
typedef struct store_states store_states;
store_states *store_states_open(store *st, int64_t run_id, const char *kind, int64_t window_from, int64_t window_to);
/* Length of the vectors (0 when there are no rows). */
int store_states_dim(const store_states *r);
/* Fill up to max_rows rows of dim floats into rows (and their windows and
 * positions, either may be NULL); returns the rows read, 0 at the end. */
int64_t store_states_read(store_states *r, float *rows, int32_t *windows, int32_t *positions, int64_t max_rows);
void store_states_close(store_states *r);

/* Per-head values as a dense array [window][position][head] over the
 * windows present (window_ids, ascending), positions 0..n_positions-1 and
 * heads 0..n_heads-1; NaN where no row (or a NULL value) exists. */
typedef struct {
    int64_t n_windows, n_positions, n_heads;
    int32_t *window_ids;
    float *values;
} store_head_array;
/* what: "alpha" | "beta" | "mem_norm" */
int store_read_heads(store *st, int64_t run_id, const char *what, store_head_array *out);
void store_head_array_free(store_head_array *a);

/* The sites a run recorded (table run_sites, docs/schema.md): the site's
 * name (docs/hooks.md), its shape, layer (-1: not per layer), width, and
 * where it lives: stored_in "states" (stored_as: the states.kind, dtype),
 * "head_steps" (stored_as: the column) or "tokens" (the column); role
 * "state" / "decay" / "" as the family's table marks it. */
typedef struct {
    char site[64], shape[20], dtype[4], stored_in[12], stored_as[64], role[8];
    int layer, width;
} store_site;
int store_put_site(store *st, int64_t run_id, const store_site *s);
/* Up to max sites by name; returns how many the run has, or -1. */
int store_run_sites(store *st, int64_t run_id, store_site *out, int max);
/* 0 found, 1 not there, -1 error. */
int store_find_site(store *st, int64_t run_id, const char *site, store_site *out);
int store_site_of_role(store *st, int64_t run_id, const char *role, store_site *out);
/* A per-head scalar site by name, laid out as store_read_heads, wherever the
 * run stored it (head_steps columns, or states vectors of H floats); a run
 * with no run_sites row for mem.alpha / mem.beta reads head_steps' columns. */
int store_read_site_heads(store *st, int64_t run_id, const char *site, store_head_array *out);

/* Token rows as dense arrays [window][position] over the windows present;
 * ids -1 and floats NaN where missing. */
typedef struct {
    int64_t n_windows, n_positions;
    int32_t *window_ids;
    int32_t *token_id, *next_token_id, *top1;
    float *nll, *entropy;
} store_token_array;
int store_read_tokens(store *st, int64_t run_id, store_token_array *out);
/* The first token row of the run whose id is not an integer in [0, V) (an
 * import of another tokenizer's ids, say): 1 with its window, position and
 * the id as stored (text) filled in, 0 when every id is in range, -1 on error. */
int store_first_token_outside(store *st, int64_t run_id, int V, int64_t *window, int64_t *position, char *id_text,
                              size_t size);
void store_token_array_free(store_token_array *a);

/* Unigram counts of the run's corpus as a dense array (*counts malloc'd) of
 * length *n_vocab (the tokenizer's or model's vocab size when known, else
 * the largest token id + 1). */
int store_read_unigram_counts(store *st, int64_t run_id, int64_t **counts, int64_t *n_vocab);
/* The piece text of a token in the run's vocabulary into buf; 0, or -1 if the
 * run has no vocabulary row for it. */
int store_token_piece(store *st, int64_t run_id, int32_t token_id, char *buf, size_t size);
/* The piece texts of window's tokens at positions 0..T-1 into pieces[] (strdup'd; entries already set,
 * and positions without a token or piece, are left as they are). 0, or -1 on error. */
int store_window_pieces(store *st, int64_t run_id, int32_t window, int T, char **pieces);
/* The run's windows in order as (corpus_offset, n_tokens) pairs, -1 where unknown (*pairs malloc'd, 2 per
 * window); the count of windows, or -1. */
int64_t store_window_offsets(store *st, int64_t run_id, int64_t **pairs);

/* ---------- analysis results ---------- */
/* Start the results of analysis `name` on a run with these settings (a JSON
 * object; key order and spacing do not matter). Opens a batch; results with
 * the same (run, name, settings) are deleted (replaced), results with other
 * settings are kept. Returns the analysis id; finish with store_commit (or
 * store_rollback). */
int64_t store_analysis_begin(store *st, int64_t run_id, const char *name, const char *settings_json,
                             const char *code_version);
int store_analysis_scalar(store *st, int64_t analysis_id, const char *key, double value, const char *note);
/* A series of n points; labels (may be NULL, or hold NULLs) name points,
 * e.g. the token text of a top-10 list. NaN values are stored as NULL. */
int store_analysis_series(store *st, int64_t analysis_id, const char *series, const double *x, const double *y,
                          const char *const *labels, int64_t n);
int store_analysis_vector(store *st, int64_t analysis_id, const char *key, const float *v, int64_t n);

/* Per-token NLL under an intervention: positions 0..n_positions-1 of a
 * window, keyed by the "ablation" analysis that names the intervention (the
 * view ablation_effects joins them with the baseline tokens). Inside the
 * analysis's batch. */
int store_put_ablation_nll(store *st, int64_t analysis_id, int32_t window, const float *nll, int n_positions);

/* The newest analysis `name` of a run with these settings (NULL: any
 * settings); 0 if none. */
int64_t store_analysis_find(store *st, int64_t run_id, const char *name, const char *settings_json);
int store_analysis_get_scalar(store *st, int64_t analysis_id, const char *key, double *value);
/* Returns n and malloc'd *x, *y (free them); NULL values read as NaN. */
int64_t store_analysis_get_series(store *st, int64_t analysis_id, const char *series, double **x, double **y);
int64_t store_analysis_get_vector(store *st, int64_t analysis_id, const char *key, float **v);

/* Lists for figures and reports (store/analysis_read.c). */
/* The newest run that has analyses; 0 if none has, -1 on error. */
int64_t store_newest_analysed_run(store *st);
/* The run's distinct analysis names, at most max of them, sorted by name (by_first = 0) or in the order
 * they were first stored (1); the count, or -1. */
int store_analysis_names(store *st, int64_t run_id, char (*names)[64], int max, int by_first);
/* How many states of each kind the run stored, by kind (*out malloc'd); the count of kinds, or -1. */
typedef struct {
    char kind[STORE_KIND_MAX + 1];
    int64_t n;
} store_kind_count;
int store_state_counts(store *st, int64_t run_id, store_kind_count **out);
/* The run's head_steps rows; -1 on error. */
int64_t store_count_head_steps(store *st, int64_t run_id);
/* The labels of a series in point order (*labels malloc'd, NULL entries where none; free with
 * store_free_labels); the count, or -1. */
int64_t store_analysis_get_labels(store *st, int64_t analysis_id, const char *series, char ***labels);
void store_free_labels(char **labels, int64_t n);
/* fn(ctx, key, value) for each scalar of the analysis with a value, by key: 0, or -1 on error. */
int store_analysis_each_scalar(store *st, int64_t analysis_id, void (*fn)(void *ctx, const char *key, double value),
                               void *ctx);
/* A scalar's note into buf ("" when NULL): 0, 1 when the scalar is absent, -1 on error. */
int store_analysis_get_note(store *st, int64_t analysis_id, const char *key, char *buf, size_t size);
/* The newest "ablation" analysis per intervention of the run (what, and scope + heads_at as one string),
 * oldest first (*out malloc'd); the count, or -1. */
typedef struct {
    int64_t id;
    char what[256], scope[128];
} store_ablation_ref;
int store_newest_ablations(store *st, int64_t run_id, store_ablation_ref **out);
/* The newest analysis per name of the run (and per intervention for ablations), oldest first (*out
 * malloc'd); the count, or -1. */
typedef struct {
    int64_t id;
    char name[64], created_at[32], code_version[64], settings[2048];
} store_analysis_ref;
int store_newest_analyses(store *st, int64_t run_id, store_analysis_ref **out);
/* Every scalar of an analysis by key (*out malloc'd; NULL values read as NaN); the count, or -1. */
typedef struct {
    char key[128], note[4096]; /* the findings' sentences run past 1,200 characters */
    double value;
} store_scalar_row;
int store_analysis_scalar_rows(store *st, int64_t analysis_id, store_scalar_row **out);
/* The newest analysis `name` of a run, or of any run when run_id <= 0; 0 if none, -1 on error. */
int64_t store_analysis_newest(store *st, int64_t run_id, const char *name);

/* Canonical form of a settings JSON object (keys sorted, no spaces; malloc'd)
 * and its sha256; NULL/-1 with gs_error() on invalid JSON. */
char *store_canonical_json(const char *json);
int store_settings_hash(const char *json, char out[65]);

#endif
