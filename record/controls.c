#include "record/controls.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "engine/arch/family.h"
#include "engine/model.h"
#include "engine/tape/train_family.h"
#include "store/store.h"

/* The run's recording settings, read back into record options (strings point into j). */
static int options_of_run(const store_run_info *info, const cJSON *j, gs_record_opts *o) {
    gs_record_opts_default(o);
    const cJSON *x;
#define NUM(key, field) if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(j, key))) o->field = x->valuedouble
#define STR(key, field) if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(j, key))) o->field = x->valuestring
    NUM("seq_len", seq_len);
    NUM("windows", windows);
    NUM("skip", skip);
    NUM("sample", sample);
    NUM("seed", seed);
    STR("states", states);
    STR("sites", sites);
    STR("positions", positions);
    STR("dtype", dtype);
    STR("field", field);
    STR("separator", separator);
    STR("device", device);
    STR("precision", precision);
#undef NUM
#undef STR
    if (o->sample) { /* the windows --sample drew from */
        if (!cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(j, "windows_requested")))
            return gs_fail("run %lld sampled its windows (--sample) before gpnscope kept the count they were drawn "
                           "from: record it again to give it controls", (long long)info->id);
        o->windows = (int64_t)x->valuedouble;
    }
    o->seq_len_given = 1; /* per document the settings hold the length chosen */
    if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(j, "window_unit"))) {
        o->per_document = strcmp(x->valuestring, "line") ? 1 : 2;
        if (o->per_document == 2) o->separator = NULL; /* --per-line gives its own */
    }
    o->states_given = strcmp(o->states, "pred") != 0;
    o->batch = info->batch > 0 ? info->batch : 16;
    o->model = info->model_path;
    o->tokenizer = info->tokenizer_path[0] ? info->tokenizer_path : NULL;
    o->corpus = info->corpus_path;
    if (!info->model_path[0] || access(info->model_path, R_OK))
        return gs_fail("run %lld's model %s cannot be read: controls re-run it", (long long)info->id,
                       info->model_path[0] ? info->model_path : "(none: an imported run)");
    if (!info->corpus_path[0] || access(info->corpus_path, R_OK))
        return gs_fail("run %lld's corpus %s cannot be read: controls re-run the model over it", (long long)info->id,
                       info->corpus_path[0] ? info->corpus_path : "(none)");
    return 0;
}

/* The family's initialisation of the run's model, as a model folder beside the store (with the trained
 * model's config.json, so its training length is known): 0, 1 with why when the family has no
 * initialiser, -1 with gs_error(). */
static int write_untrained(const char *db, const store_run_info *info, uint64_t seed, char *path, size_t size,
                           char *why, size_t why_size) {
    gs_model *m = gs_model_load(info->model_path);
    if (!m) return -1;
    const gs_family *fam = gs_family_of(&m->cfg);
    if (!fam->train) {
        snprintf(why, why_size, "%s has no initialiser in gpnscope's trainer", fam->name);
        gs_model_free(m);
        return 1;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s.controls/run-%lld-untrained-seed%llu", db, (long long)info->id,
             (unsigned long long)seed);
    snprintf(path, size, "%s/model.safetensors", dir);
    gs_model *u = gs_mkdir_p(dir) ? NULL : gs_model_new(&m->cfg);
    int rc = -1;
    if (u) {
        train_rng r;
        train_rng_seed(&r, seed);
        fam->train->init(&u->cfg, u->block, &r);
        rc = gs_model_save(u, path, 0);
    }
    /* the trained model's config.json: the training length every analysis reads positions below */
    char cfg[4200], *slash = strrchr(info->model_path, '/');
    snprintf(cfg, sizeof cfg, "%.*s/config.json", slash ? (int)(slash - info->model_path) : 1,
             slash ? info->model_path : ".");
    size_t len;
    char *text = rc == 0 && access(cfg, R_OK) == 0 ? gs_read_file(cfg, "config ", 1 << 12, 1 << 30, &len) : NULL;
    if (text) {
        snprintf(cfg, sizeof cfg, "%s/config.json", dir);
        rc = gs_write_atomic(cfg, text);
        free(text);
    }
    gs_model_free(u);
    gs_model_free(m);
    return rc;
}

/* The seed a control run was recorded with (its settings' control.seed; -1 when unreadable). */
static int64_t control_seed(store *st, int64_t run) {
    char *text = store_run_settings(st, run);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "control");
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(c, "seed");
    int64_t seed = cJSON_IsNumber(x) ? (int64_t)x->valuedouble : -1;
    cJSON_Delete(j);
    free(text);
    return seed;
}

/* 1 when the store's newest unfinished run is this control (so the recorder resumes it), 0 when not */
static int unfinished_control(store *st, int64_t of, const char *kind, uint64_t seed) {
    int64_t u = store_last_run(st, STORE_RUN_UNFINISHED);
    char k[32];
    int64_t o;
    return u > 0 && store_run_control(st, u, k, sizeof k, &o) == 1 && o == of && !strcmp(k, kind) &&
           control_seed(st, u) == (int64_t)seed;
}

typedef struct {
    void (*fn)(void *ctx, int k, int64_t done, int64_t total);
    void *ctx;
    int k;
} control_progress;

static void on_progress(void *ctx, int64_t done, int64_t total) {
    control_progress *p = ctx;
    if (p->fn) p->fn(p->ctx, p->k, done, total);
}

/* Look the run up: its info and settings, refused when it is a control itself or not complete. */
static cJSON *run_settings(store *st, gs_controls_opts *o, store_run_info *info) {
    if (!o->run && (o->run = store_last_run(st, STORE_RUN_COMPLETE)) <= 0) {
        if (o->run == 0) gs_fail("%s has no complete run to control", store_path(st));
        return NULL;
    }
    if (store_run_get(st, o->run, info)) return NULL;
    char kind[32];
    int64_t of;
    int c = store_run_control(st, o->run, kind, sizeof kind, &of);
    if (c < 0) return NULL;
    if (c) {
        gs_fail("run %lld is the %s control of run %lld: name the run it controls (--run %lld)", (long long)o->run, kind,
                (long long)of, (long long)of);
        return NULL;
    }
    if (strcmp(info->status, "complete")) {
        gs_fail("run %lld is %s: finish it (gpnscope record ... --resume) before recording its controls",
                (long long)o->run, info->status);
        return NULL;
    }
    char *text = store_run_settings(st, o->run);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    if (text && !j) gs_fail("run %lld's settings are not JSON", (long long)o->run);
    free(text);
    return j;
}

int gs_record_controls(const char *db, const gs_controls_opts *opts,
                       void (*progress)(void *ctx, int k, int64_t done, int64_t total), void *ctx,
                       const volatile sig_atomic_t *stop, gs_controls_result *res) {
    gs_controls_opts o = *opts;
    memset(res, 0, sizeof *res);
    store_run_info *info = calloc(1, sizeof *info); /* three paths of 4096: not for the stack */
    store *st = info ? store_open(db, STORE_READ) : NULL;
    cJSON *settings = st ? run_settings(st, &o, info) : NULL;
    gs_record_opts base;
    int rc = settings && options_of_run(info, settings, &base) == 0 ? 0 : 1;
    res->of = o.run;
    if (!info) gs_fail("out of memory");
    char model[4300] = "";
    for (int k = 0; rc == 0 && k < STORE_N_CONTROLS; k++) {
        if (o.kinds && !(o.kinds & 1u << k)) continue;
        const char *kind = store_control_names[k];
        int64_t have = store_control_run(st, o.run, kind);
        if (have < 0) { rc = 1; break; }
        const int64_t had = have > 0 ? control_seed(st, have) : 0;
        if (have > 0 && had != (int64_t)o.seed) {
            rc = gs_fail("run %lld is already run %lld's %s control, recorded with seed %lld: a run keeps one control "
                         "of each kind (--seed %lld names it)", (long long)have, (long long)o.run, kind, (long long)had,
                         (long long)had);
            break;
        }
        if (have > 0) { res->run[k] = have; continue; }
        gs_record_opts ro = base;
        ro.db = db;
        ro.code_version = o.code_version;
        ro.control = kind;
        ro.control_of = o.run;
        ro.control_seed = o.seed;
        ro.resume = unfinished_control(st, o.run, kind, o.seed);
        if (k == STORE_CONTROL_UNTRAINED) {
            int w = write_untrained(db, info, o.seed, model, sizeof model, res->skipped[k], sizeof res->skipped[k]);
            if (w < 0) { rc = 1; break; }
            if (w > 0) continue;
            ro.model = model;
        }
        control_progress cp = {progress, ctx, k};
        if (progress) progress(ctx, k, 0, 0); /* the clock of its line starts now */
        gs_record_result rr;
        int r = gs_record(&ro, on_progress, &cp, stop, &rr);
        res->run[k] = rr.run > 0 ? rr.run : 0;
        if (r == 130) { rc = 130; break; }
        if (r) {
            gs_fail_context("the %s control of run %lld: ", kind, (long long)o.run);
            rc = 1;
            break;
        }
        res->recorded[k] = 1;
    }
    cJSON_Delete(settings);
    store_close(st);
    free(info);
    return rc;
}
