/* gpnscope import: store traces recorded elsewhere (.npy arrays) as a
 * complete run, so every analysis works on them. All inputs are opened and
 * their shapes checked before the store is touched: a bad file leaves no
 * trace in it. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "engine/model.h"
#include "probes/site_ref.h"
#include "store/npy.h"
#include "store/store.h"

static const char *help =
    "usage: gpnscope import --db FILE --states STATES.npy [--tokens TOKENS.npy]\n"
    "                       [--alpha ALPHA.npy] [--beta BETA.npy] [--model MODEL]\n"
    "                       [--kind pred|ground] [--dtype f32|f16]\n\n"
    "Store traces recorded elsewhere (e.g. dumped from the companion code) as a\n"
    "complete run of kind 'import', so every analysis and SQL query works on them.\n"
    "N windows of T positions; .npy files in C order, little-endian.\n\n"
    "  --db FILE         the store (created if it does not exist)\n"
    "  --states F.npy    state vectors, shape (N, T, d), float (<f2, <f4 or <f8)\n"
    "  --tokens F.npy    token ids, shape (N, T), integers; also recorded as the run's\n"
    "                    corpus (with its SHA-256 and unigram counts), and each row's\n"
    "                    next_token_id is the id at the next position\n"
    "  --alpha F.npy     memory decay per head, shape (N, T, H), float\n"
    "  --beta F.npy      memory write strength per head, shape (N, T, H), float\n"
    "  --model MODEL     the checkpoint that produced the traces: its SHA-256 is recorded\n"
    "                    (the file is only hashed, not loaded)\n"
    "  --kind K          which state the vectors are: pred (default) or ground\n"
    "  --dtype D         store states as f32 or f16 (default: f16 for <f2 input, else f32)\n";

typedef struct {
    const char *path;
    npy_file *f;
    char sha[GS_HASH_HEX];
} input;

/* Open an input and check its rank and leading dimensions against (N, T). */
static int open_input(input *in, int ndim, const char *what, int64_t n, int64_t t) {
    if (!in->path) return 0;
    if (gs_hash_file(in->path, in->sha)) return -1;
    in->f = npy_open(in->path);
    if (!in->f) return -1;
    char shape[160];
    npy_shape_str(in->f, shape, sizeof shape);
    if (in->f->ndim != ndim)
        return gs_fail("%s: %s must be an array of %d dimensions (%s), got shape %s", in->path, what, ndim,
                       ndim == 3 ? "N, T, d" : "N, T", shape);
    for (int i = 0; i < ndim; i++)
        if (in->f->shape[i] <= 0 || in->f->shape[i] > INT32_MAX)
            return gs_fail("%s: shape %s: every dimension must be between 1 and %d", in->path, shape, INT32_MAX);
    if (n >= 0 && (in->f->shape[0] != n || in->f->shape[1] != t))
        return gs_fail("%s: shape %s does not match the states' N=%lld windows of T=%lld positions", in->path, shape,
                       (long long)n, (long long)t);
    return 0;
}

static char *settings_json(input *in[], const char *const names[], int n, const char *kind, const char *dtype) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", "import");
    for (int i = 0; i < n; i++) {
        if (!in[i]->path) continue;
        cJSON *x = cJSON_AddObjectToObject(o, names[i]);
        cJSON_AddStringToObject(x, "path", in[i]->path);
        cJSON_AddStringToObject(x, "sha256", in[i]->sha);
        cJSON_AddStringToObject(x, "dtype", npy_dtype_name(in[i]->f->dtype));
    }
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "state_dtype", dtype);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* run_sites (docs/schema.md): the imported state under its kind, the heads' columns */
static int put_sites(store *st, int64_t run, const char *kind, const char *dtype, int64_t d, int64_t H, int alpha,
                     int beta) {
    store_site x = {.layer = -1, .width = (int)d};
    snprintf(x.site, sizeof x.site, "%s", probe_site_of_stored_kind(kind));
    snprintf(x.shape, sizeof x.shape, "vector");
    snprintf(x.dtype, sizeof x.dtype, "%s", dtype);
    snprintf(x.stored_in, sizeof x.stored_in, "states");
    snprintf(x.stored_as, sizeof x.stored_as, "%s", kind);
    snprintf(x.role, sizeof x.role, "%s", !strcmp(kind, "pred") ? "state" : "");
    if (store_put_site(st, run, &x)) return -1;
    const struct { int have; const char *site, *col, *role; } heads[] = {{alpha, "mem.alpha", "alpha", "decay"},
                                                                         {beta, "mem.beta", "beta", ""}};
    for (int i = 0; i < 2; i++) {
        if (!heads[i].have || H <= 0) continue;
        store_site h = {.layer = -1, .width = (int)H};
        snprintf(h.site, sizeof h.site, "%s", heads[i].site);
        snprintf(h.shape, sizeof h.shape, "per-head scalar");
        snprintf(h.stored_in, sizeof h.stored_in, "head_steps");
        snprintf(h.stored_as, sizeof h.stored_as, "%s", heads[i].col);
        snprintf(h.role, sizeof h.role, "%s", heads[i].role);
        if (store_put_site(st, run, &h)) return -1;
    }
    return 0;
}

int cmd_import(int argc, char **argv) {
    const char *db = NULL, *model = NULL, *kind = "pred", *dtype = NULL;
    input states = {0}, tokens = {0}, alpha = {0}, beta = {0};
    const cli_opt opts[] = {
        {CLI_STRING("db", &db)},         {CLI_STRING("states", &states.path)}, {CLI_STRING("tokens", &tokens.path)},
        {CLI_STRING("alpha", &alpha.path)}, {CLI_STRING("beta", &beta.path)}, {CLI_STRING("model", &model)},
        {CLI_STRING("kind", &kind)},     {CLI_STRING("dtype", &dtype)},       {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"import", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc || !db || !states.path) { fputs(help, stderr); return 2; }
    if (strcmp(kind, "pred") && strcmp(kind, "ground")) {
        fprintf(stderr, "gpnscope import: --kind must be pred or ground, got '%s'\n", kind);
        return 2;
    }
    if (dtype && strcmp(dtype, "f32") && strcmp(dtype, "f16")) {
        fprintf(stderr, "gpnscope import: --dtype must be f32 or f16, got '%s'\n", dtype);
        return 2;
    }

    int status = 1;
    store *st = NULL;
    int64_t run = 0;
    float *buf = NULL, *a = NULL, *b = NULL;
    int64_t *ids = NULL, *counts = NULL, n_counts = 0;
    store_token_row *rows = NULL;
    char *settings = NULL;

    /* ---- every input checked before the store is opened ---- */
    if (open_input(&states, 3, "states", -1, -1)) goto fail;
    int64_t N = states.f->shape[0], T = states.f->shape[1], d = states.f->shape[2], H = 0;
    if (!states.f->is_float) { gs_fail("%s: states must be floats, got dtype %s", states.path, npy_dtype_name(states.f->dtype)); goto fail; }
    if (open_input(&tokens, 2, "tokens", N, T) || open_input(&alpha, 3, "alpha", N, T) || open_input(&beta, 3, "beta", N, T))
        goto fail;
    if (tokens.f && tokens.f->is_float) { gs_fail("%s: token ids must be integers, got dtype %s", tokens.path, npy_dtype_name(tokens.f->dtype)); goto fail; }
    for (input *in = &alpha; in; in = in == &alpha ? &beta : NULL) {
        if (!in->f) continue;
        if (!in->f->is_float) { gs_fail("%s: alpha and beta must be floats, got dtype %s", in->path, npy_dtype_name(in->f->dtype)); goto fail; }
        if (H && in->f->shape[2] != H) { gs_fail("%s: has H=%lld heads but alpha has %lld", in->path, (long long)in->f->shape[2], (long long)H); goto fail; }
        H = in->f->shape[2];
    }
    if (!dtype) dtype = states.f->dtype == NPY_F2 ? "f16" : "f32";
    char model_sha[GS_HASH_HEX], model_buf[4200];
    if (model && !(model = gs_model_file(model, model_buf, sizeof model_buf))) goto fail; /* a model folder: its file */
    if (model && gs_hash_file(model, model_sha)) goto fail;

    buf = malloc((size_t)(T * d) * sizeof *buf);
    ids = tokens.f ? malloc((size_t)T * sizeof *ids) : NULL;
    rows = tokens.f ? malloc((size_t)T * sizeof *rows) : NULL;
    a = H ? malloc((size_t)(T * H) * sizeof *a) : NULL;
    b = H ? malloc((size_t)(T * H) * sizeof *b) : NULL;
    if (!buf || (tokens.f && (!ids || !rows)) || (H && (!a || !b))) { gs_fail("out of memory for a window of %lld x %lld", (long long)T, (long long)d); goto fail; }

    /* ---- the run ---- */
    st = store_open(db, STORE_WRITE | STORE_CREATE);
    if (!st) goto fail;
    input *all[] = {&states, &tokens, &alpha, &beta};
    static const char *const names[] = {"states", "tokens", "alpha", "beta"};
    settings = settings_json(all, names, 4, kind, dtype);
    if (!settings) { gs_fail("out of memory"); goto fail; }
    int64_t model_id = 0, corpus_id = 0;
    if (model && (model_id = store_add_model(st, &(store_model){.path = model, .sha256 = model_sha})) < 0) goto fail;
    if (tokens.f &&
        (corpus_id = store_add_corpus(st, &(store_corpus){.path = tokens.path, .sha256 = tokens.sha, .kind = "npy-tokens", .n_tokens = N * T})) < 0)
        goto fail;
    run = store_begin_run(st, &(store_run){.model_id = model_id, .corpus_id = corpus_id, .kind = "import",
                                            .settings_json = settings, .seq_len = (int)T, .n_windows = N,
                                            .states = kind, .positions = "all", .state_dtype = dtype,
                                            .d_state = (int)d, .n_heads = (int)H, .code_version = GPNSCOPE_VERSION});
    if (run < 0 || put_sites(st, run, kind, dtype, d, H, alpha.f != NULL, beta.f != NULL)) goto fail;

    /* ---- one batch per window ---- */
    store_dtype sd = !strcmp(dtype, "f16") ? STORE_F16 : STORE_F32;
    for (int64_t w = 0; w < N; w++) {
        if (npy_read_f32(states.f, buf, T * d)) goto fail;
        if (tokens.f && npy_read_i64(tokens.f, ids, T)) goto fail;
        if (alpha.f && npy_read_f32(alpha.f, a, T * H)) goto fail;
        if (beta.f && npy_read_f32(beta.f, b, T * H)) goto fail;
        if (store_begin(st)) goto fail;
        for (int64_t t = 0; t < T; t++)
            if (store_put_state(st, run, (int32_t)w, (int32_t)t, kind, sd, buf + t * d, (int)d)) goto fail;
        if (tokens.f) {
            for (int64_t t = 0; t < T; t++) {
                if (ids[t] < 0 || ids[t] > INT32_MAX) {
                    gs_fail("%s: token id %lld at window %lld position %lld is not a valid id", tokens.path,
                            (long long)ids[t], (long long)w, (long long)t);
                    goto fail;
                }
                rows[t] = (store_token_row){.window = (int32_t)w, .position = (int32_t)t, .token_id = (int32_t)ids[t],
                                            .next_token_id = t + 1 < T ? (int32_t)ids[t + 1] : -1, .top1 = -1,
                                            .nll = NAN, .entropy = NAN};
                if (ids[t] >= n_counts) {
                    int64_t cap = n_counts ? n_counts : 1024;
                    while (cap <= ids[t]) cap *= 2;
                    int64_t *c = realloc(counts, (size_t)cap * sizeof *c);
                    if (!c) { gs_fail("out of memory counting tokens"); goto fail; }
                    memset(c + n_counts, 0, (size_t)(cap - n_counts) * sizeof *c);
                    counts = c;
                    n_counts = cap;
                }
                counts[ids[t]]++;
            }
            if (store_put_tokens(st, run, rows, T)) goto fail;
        }
        for (int64_t t = 0; H && t < T; t++)
            if (store_put_head_steps(st, run, (int32_t)w, (int32_t)t, (int)H, alpha.f ? a + t * H : NULL,
                                     beta.f ? b + t * H : NULL, NULL))
                goto fail;
        if (store_window_done(st, run, (int32_t)w, w * T, (int32_t)T) || store_run_progress(st, run, w + 1, (w + 1) * T) ||
            store_commit(st))
            goto fail;
    }
    if (counts && store_put_unigram_counts(st, corpus_id, counts, n_counts)) goto fail;
    if (store_finish_run(st, run, "complete", NULL)) goto fail;
    printf("imported run %lld into %s: %lld windows x %lld positions, %lld %s states (%s, d=%lld)%s%s%s\n",
           (long long)run, db, (long long)N, (long long)T, (long long)(N * T), kind, dtype, (long long)d,
           tokens.f ? ", tokens" : "", alpha.f ? ", alpha" : "", beta.f ? ", beta" : "");
    status = 0;
    goto done;
fail:
    fprintf(stderr, "gpnscope import: %s\n", gs_error());
    if (st && run > 0) {
        /* keep the file consistent and say what happened to the partial run */
        store_rollback(st);
        store_finish_run(st, run, "failed", gs_error());
    }
done:
    store_close(st);
    npy_close(states.f);
    npy_close(tokens.f);
    npy_close(alpha.f);
    npy_close(beta.f);
    free(buf);
    free(ids);
    free(rows);
    free(a);
    free(b);
    free(counts);
    free(settings);
    return status;
}
