#include "train/train.h"
#include "train/config_json.h"

#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "io/checkpoint/safetensors.h"
#include "io/corpora/corpus.h"
#include "io/tokenizer/tokenizer.h"
#include "engine/arch/family.h"
#include "engine/tape/train_family.h"
#include "engine/tape/train_init.h"
#include "engine/tape/train_ops.h"

#define OPT_FORMAT "gpnscope-train-state-1"

/* ---- configuration ------------------------------------------------------ */

/* "\"gpn\", \"gpn_m\", ...": the families whose rows have a training entry */
static const char *trainable_families(void) {
    static char list[256];
    list[0] = 0;
    const gs_family *f;
    for (int a = 0; (f = gs_family_of(&(gs_config){.arch = (gs_arch)a})) != NULL; a++) /* the ids number the rows */
        if (f->train)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", list[0] ? ", " : "", f->name);
    return list;
}

void train_config_defaults(train_config *c) {
    memset(c, 0, sizeof *c);
    gs_family_config("gpn_m", &c->model); /* the paper's */
    c->model.n_layers = 1;
    c->seq_len = 128;
    c->batch = 16;
    c->steps = 1000;
    c->seed = 0;
    c->opt = (adamw_config){.lr = 6e-4, .min_lr_ratio = 0.1, .warmup = 100, .total_steps = 1000, .beta1 = 0.9,
                            .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1, .clip = 1.0};
}

/* The int a key of a family's table sets (memcpy: own options lie in gs_config.own's bytes) */
static int key_value(const gs_config *c, const gs_train_key *k) {
    int v;
    memcpy(&v, (const char *)c + k->field, sizeof v);
    return v;
}

/* The "model" section for a family: its defaults, every key it reads (the
 * getters keep the first error), the keys it refuses, what follows from them */
static int read_model_keys(jsec *m, const gs_train_i *tr, gs_config *c) {
    if (tr->config_defaults) tr->config_defaults(c);
    for (const gs_train_key *k = tr->keys; k->key; k++) {
        if (k->use == GS_KEY_REFUSED) continue;
        int v = key_value(c, k);
        if (!k->hi) get_bool(m, k->key, &v);
        else get_int(m, k->key, &v, k->use == GS_KEY_REQUIRED, k->lo, k->hi);
        memcpy((char *)c + k->field, &v, sizeof v);
    }
    for (const gs_train_key *k = tr->keys; k->key; k++)
        if (k->use == GS_KEY_REFUSED && cJSON_GetObjectItemCaseSensitive(m->obj, k->key))
            return gs_fail("\"model.%s\" %s", k->key, k->why);
    if (tr->config_derive) tr->config_derive(c);
    return 0;
}

/* The keys read_model_keys() read, back into the "model" object m */
static void write_model_keys(cJSON *m, const gs_train_i *tr, const gs_config *c) {
    for (const gs_train_key *k = tr->keys; k->key; k++) {
        if (k->use == GS_KEY_REFUSED) continue;
        if (!k->hi) cJSON_AddBoolToObject(m, k->key, key_value(c, k));
        else cJSON_AddNumberToObject(m, k->key, key_value(c, k));
    }
}

/* The "model" keys a config may hold: "arch" and every key some trainable
 * family's table names, each family's in its table's order (a key new to the
 * list goes after the key before it in that table) */
static const char *const *known_model_keys(void) {
    enum { MAX_KEYS = 63 };
    static const char *list[MAX_KEYS + 1];
    int n = 0;
    list[n++] = "arch";
    const gs_family *f;
    for (int a = 0; (f = gs_family_of(&(gs_config){.arch = (gs_arch)a})) != NULL; a++) {
        if (!f->train) continue;
        int after = 0; /* where the table's previous key stands in the list */
        for (const gs_train_key *k = f->train->keys; k->key; k++) {
            int at = 0;
            while (at < n && strcmp(list[at], k->key)) at++;
            if (at == n && n < MAX_KEYS) {
                at = after + 1;
                memmove(list + at + 1, list + at, (size_t)(n - at) * sizeof *list);
                list[at] = k->key;
                n++;
            }
            if (at < n) after = at;
        }
    }
    list[n] = NULL;
    return list;
}

int train_config_load(const char *path, train_config *c) {
    cJSON *root = train_config_parse(path, "a training config, see docs/training.md");
    if (!root) return -1;
    /* relative paths in the file are relative to its directory; stored absolute */
    char base[TRAIN_PATH_MAX];
    train_config_dir(path, base, sizeof base);
    int rc = 0;
    static const char *const sections[] = {"model", "data", "training", "optimizer", "output", NULL};
    static const char *const k_data[] = {"train", "eval", "tokenizer", "seq_len", "batch_size", "shuffle", NULL};
    static const char *const k_training[] = {"steps", "seed", "bptt", "threads", NULL};
    static const char *const k_opt[] = {"learning_rate", "warmup_steps", "min_lr_ratio", "adam_beta1", "adam_beta2",
                                        "adam_eps", "weight_decay", "grad_clip_norm", NULL};
    static const char *const k_out[] = {"dir", "eval_every", "eval_windows", "checkpoint_every", "export_bf16", NULL};
    if (check_keys(root, "(top level)", sections) != 0) { rc = -1; goto done; }
    int err = 0;
    jsec m = {"model", cJSON_GetObjectItemCaseSensitive(root, "model"), &err};
    jsec d = {"data", cJSON_GetObjectItemCaseSensitive(root, "data"), &err};
    jsec t = {"training", cJSON_GetObjectItemCaseSensitive(root, "training"), &err};
    jsec o = {"optimizer", cJSON_GetObjectItemCaseSensitive(root, "optimizer"), &err};
    jsec u = {"output", cJSON_GetObjectItemCaseSensitive(root, "output"), &err};
    if (!m.obj || !cJSON_IsObject(m.obj)) { rc = gs_fail("missing object \"model\""); goto done; }
    if (!d.obj || !cJSON_IsObject(d.obj)) { rc = gs_fail("missing object \"data\""); goto done; }
    if (check_keys(m.obj, "model", known_model_keys()) || check_keys(d.obj, "data", k_data) ||
        check_keys(t.obj, "training", k_training) || check_keys(o.obj, "optimizer", k_opt) ||
        check_keys(u.obj, "output", k_out)) {
        rc = -1;
        goto done;
    }
    cJSON *arch = cJSON_GetObjectItemCaseSensitive(m.obj, "arch");
    if (arch) { /* any family whose row has a training entry; "sot" / "sot_m": GPN's old names */
        const char *name = cJSON_IsString(arch) ? arch->valuestring : "";
        const gs_family *fam = gs_family_by_name(!strcmp(name, "sot_m") ? "gpn_m" : !strcmp(name, "sot") ? "gpn" : name);
        if (!fam || !fam->train) {
            rc = gs_fail("\"model.arch\" must be one of %s", trainable_families());
            goto done;
        }
        c->model.arch = fam->arch;
    }
    const gs_family *family = gs_family_of(&c->model);
    if (!family || !family->train) {
        rc = gs_fail("the trainer trains %s, not %s", trainable_families(), gs_arch_name(c->model.arch));
        goto done;
    }
    if (read_model_keys(&m, family->train, &c->model) != 0) {
        rc = -1;
        goto done;
    }
    get_path(&d, "train", c->train_dir, 1, base);
    get_path(&d, "eval", c->eval_dir, 0, base);
    get_path(&d, "tokenizer", c->tokenizer, 0, base);
    get_int(&d, "seq_len", &c->seq_len, 0, 1, 1 << 20);
    get_int(&d, "batch_size", &c->batch, 0, 1, 1 << 16);
    get_bool(&d, "shuffle", &c->shuffle);
    get_long(&t, "steps", &c->steps, 0, 1, 1e12);
    get_seed(&t, "seed", &c->seed);
    get_int(&t, "bptt", &c->bptt, 0, 0, 1 << 20);
    get_int(&t, "threads", &c->threads, 0, 0, 1024);
    get_num(&o, "learning_rate", &c->opt.lr, 0, 0, 10);
    get_long(&o, "warmup_steps", &c->opt.warmup, 0, 0, 1e12);
    get_num(&o, "min_lr_ratio", &c->opt.min_lr_ratio, 0, 0, 1);
    get_num(&o, "adam_beta1", &c->opt.beta1, 0, 0, 0.999999);
    get_num(&o, "adam_beta2", &c->opt.beta2, 0, 0, 0.999999999);
    get_num(&o, "adam_eps", &c->opt.eps, 0, 0, 1);
    get_num(&o, "weight_decay", &c->opt.weight_decay, 0, 0, 100);
    get_num(&o, "grad_clip_norm", &c->opt.clip, 0, 0, 1e12);
    get_path(&u, "dir", c->out_dir, 1, base);
    get_long(&u, "eval_every", &c->eval_every, 0, 0, 1e12);
    get_int(&u, "eval_windows", &c->eval_windows, 0, 0, 1 << 30);
    get_long(&u, "checkpoint_every", &c->checkpoint_every, 0, 0, 1e12);
    get_bool(&u, "export_bf16", &c->export_bf16);
    c->opt.total_steps = c->steps;
    if (err) rc = -1;
    else if (!u.obj) rc = gs_fail("missing object \"output\" (with \"dir\")");
    else rc = train_config_validate(c);
done:
    cJSON_Delete(root);
    if (rc != 0) gs_fail_context("%s: ", path);
    return rc;
}

int train_config_validate(const train_config *c) {
    const gs_family *fam = gs_family_of(&c->model);
    if (!fam || !fam->train) return gs_fail("the trainer trains %s, not %s", trainable_families(), gs_arch_name(c->model.arch));
    if (gs_config_validate(&c->model) != 0) return -1;
    if (c->seq_len < 1 || c->batch < 1) return gs_fail("seq_len and batch_size must be positive");
    if (c->seq_len < fam->train->min_seq_len)
        return gs_fail("seq_len %d: a %s window needs at least %d tokens (it does not predict the first)", c->seq_len,
                       fam->name, fam->train->min_seq_len);
    if (c->steps < 1) return gs_fail("steps must be positive");
    if (c->bptt < 0) return gs_fail("bptt must be 0 (full window) or positive");
    if (c->bptt > 0 && !fam->train->truncated_bptt)
        return gs_fail("bptt %d: %s trains on the full window only (set training.bptt to 0)", c->bptt, fam->name);
    if (!c->train_dir[0]) return gs_fail("no training data directory (data.train)");
    if (!c->out_dir[0]) return gs_fail("no output directory (output.dir)");
    if (c->opt.beta1 < 0 || c->opt.beta1 >= 1 || c->opt.beta2 < 0 || c->opt.beta2 >= 1)
        return gs_fail("adam betas must lie in [0, 1)");
    return 0;
}

char *train_config_to_json(const train_config *c) {
    cJSON *root = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(m, "arch", gs_arch_name(c->model.arch));
    const gs_family *fam = gs_family_of(&c->model);
    if (fam && fam->train) write_model_keys(m, fam->train, &c->model);
    cJSON *d = cJSON_AddObjectToObject(root, "data");
    cJSON_AddStringToObject(d, "train", c->train_dir);
    if (c->eval_dir[0]) cJSON_AddStringToObject(d, "eval", c->eval_dir);
    if (c->tokenizer[0]) cJSON_AddStringToObject(d, "tokenizer", c->tokenizer);
    cJSON_AddNumberToObject(d, "seq_len", c->seq_len);
    cJSON_AddNumberToObject(d, "batch_size", c->batch);
    cJSON_AddBoolToObject(d, "shuffle", c->shuffle);
    cJSON *t = cJSON_AddObjectToObject(root, "training");
    cJSON_AddNumberToObject(t, "steps", (double)c->steps);
    cJSON_AddNumberToObject(t, "seed", (double)c->seed);
    cJSON_AddNumberToObject(t, "bptt", c->bptt);
    cJSON_AddNumberToObject(t, "threads", c->threads);
    cJSON *o = cJSON_AddObjectToObject(root, "optimizer");
    cJSON_AddNumberToObject(o, "learning_rate", c->opt.lr);
    cJSON_AddNumberToObject(o, "warmup_steps", (double)c->opt.warmup);
    cJSON_AddNumberToObject(o, "min_lr_ratio", c->opt.min_lr_ratio);
    cJSON_AddNumberToObject(o, "adam_beta1", c->opt.beta1);
    cJSON_AddNumberToObject(o, "adam_beta2", c->opt.beta2);
    cJSON_AddNumberToObject(o, "adam_eps", c->opt.eps);
    cJSON_AddNumberToObject(o, "weight_decay", c->opt.weight_decay);
    cJSON_AddNumberToObject(o, "grad_clip_norm", c->opt.clip);
    cJSON *u = cJSON_AddObjectToObject(root, "output");
    cJSON_AddStringToObject(u, "dir", c->out_dir);
    cJSON_AddNumberToObject(u, "eval_every", (double)c->eval_every);
    cJSON_AddNumberToObject(u, "eval_windows", c->eval_windows);
    cJSON_AddNumberToObject(u, "checkpoint_every", (double)c->checkpoint_every);
    cJSON_AddBoolToObject(u, "export_bf16", c->export_bf16);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

/* ---- the trainer --------------------------------------------------------- */

struct gs_trainer {
    train_config cfg;
    gs_model *model;
    adamw *opt;
    float *grads;
    const gs_train_i *tr; /* the family's training entry */
    void *tape, *eval_tape;
    gs_corpus *train, *eval;
    gs_tokenizer *tok; /* only for text / JSONL data */
    int64_t n_windows, n_batches;
    int32_t *tokens;
    int64_t data_pos;  /* batches consumed (all runs) */
    int64_t tokens_done;
    double elapsed;
    train_rng rng;
    int64_t *perm;     /* window order of perm_epoch when shuffling */
    int64_t perm_epoch;
    /* The decay parameters (GPN+M's write_A_log, write_dt_bias; GDN's A_log,
     * dt_bias of every layer) as initialised from the seed: kept so the log
     * shows how far training moved them and the checkpoint carries them (the
     * retention analysis compares against them). decay_init holds every A_log
     * tensor in spec order, then every dt_bias tensor. */
    size_t decay_off[2][GS_MAX_LAYERS], decay_h, decay_n; /* decay_n = decay_tensors * decay_h */
    int decay_tensors;
    float *decay_init;
    FILE *log;
    char path_model[TRAIN_PATH_MAX + 32], path_opt[TRAIN_PATH_MAX + 32], path_bf16[TRAIN_PATH_MAX + 32];
    char path_log[TRAIN_PATH_MAX + 32];
};

static uint64_t fnv1a(const void *data, size_t n) {
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The trainer's own loops are single-threaded on purpose: OpenMP workers
 * spinning next to OpenBLAS's pthreads starve the GEMMs on small machines
 * (measured: 5x slower on 2 cores unless OMP_WAIT_POLICY=passive). */
static void set_threads(int n) {
    if (n > 0) openblas_set_num_threads(n);
}

/* window index of the i-th sequence of batch `pos` */
static int64_t window_of(gs_trainer *t, int64_t pos, int i) {
    int64_t epoch = pos / t->n_batches, k = (pos % t->n_batches) * t->cfg.batch + i;
    if (!t->cfg.shuffle) return k;
    if (!t->perm || t->perm_epoch != epoch) {
        if (!t->perm) t->perm = malloc((size_t)t->n_windows * sizeof *t->perm);
        train_rng r;
        train_rng_seed(&r, t->cfg.seed * 0x9E3779B97F4A7C15ull + 0x5EED + (uint64_t)epoch);
        for (int64_t j = 0; j < t->n_windows; j++) t->perm[j] = j;
        for (int64_t j = t->n_windows - 1; j > 0; j--) { /* Fisher-Yates */
            int64_t x = (int64_t)(train_rng_uniform(&r) * (double)(j + 1));
            int64_t tmp = t->perm[j];
            t->perm[j] = t->perm[x];
            t->perm[x] = tmp;
        }
        t->perm_epoch = epoch;
    }
    return t->perm[k];
}

static int keep_decay_init(gs_trainer *t) {
    gs_tensor_spec *specs = malloc(GS_MAX_TENSORS * sizeof *specs);
    if (!specs) return gs_fail("out of memory");
    int n = gs_tensor_specs(&t->cfg.model, specs), k[2] = {0, 0}, bad = 0;
    for (int i = 0; i < n; i++)
        if (specs[i].role == GS_TENSOR_A_LOG || specs[i].role == GS_TENSOR_DT_BIAS) {
            int j = specs[i].role == GS_TENSOR_DT_BIAS;
            if (k[j] == GS_MAX_LAYERS || (k[0] + k[1] > 0 && specs[i].numel != t->decay_h)) bad = 1;
            else t->decay_off[j][k[j]++] = specs[i].offset;
            t->decay_h = specs[i].numel;
        }
    free(specs);
    if (k[0] + k[1] == 0) return 0; /* GPN, Transformer++: no decays */
    if (bad || k[0] != k[1]) return gs_fail("unexpected decay parameter layout");
    t->decay_tensors = k[0];
    t->decay_n = (size_t)k[0] * t->decay_h;
    t->decay_init = malloc(2 * t->decay_n * sizeof *t->decay_init);
    if (!t->decay_init) return gs_fail("out of memory");
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < t->decay_tensors; i++)
            memcpy(t->decay_init + j * t->decay_n + i * t->decay_h, t->model->block + t->decay_off[j][i],
                   t->decay_h * sizeof(float));
    return 0;
}

/* ",mean,max|change|" of A_log and of dt_bias (all layers) against their initial values */
static void decay_stats(const gs_trainer *t, char *out, size_t cap) {
    if (!t->decay_init) { snprintf(out, cap, ",,,,"); return; }
    size_t len = 0;
    for (int j = 0; j < 2; j++) {
        double sum = 0, moved = 0;
        for (int i = 0; i < t->decay_tensors; i++) {
            const float *now = t->model->block + t->decay_off[j][i], *init = t->decay_init + j * t->decay_n + i * t->decay_h;
            for (size_t h = 0; h < t->decay_h; h++) {
                sum += now[h];
                double d = fabs((double)now[h] - init[h]);
                if (d > moved) moved = d;
            }
        }
        len += (size_t)snprintf(out + len, cap - len, ",%.6f,%.6f", sum / (double)t->decay_n, moved);
    }
}

/* The initial decay parameters as checkpoint metadata: comma lists, %.9g (exact for float32). */
static char *float_list(const float *x, size_t n) {
    char *s = malloc(n * 18 + 1);
    if (!s) return NULL;
    size_t len = 0;
    s[0] = 0;
    for (size_t i = 0; i < n; i++) len += (size_t)sprintf(s + len, "%s%.9g", i ? "," : "", x[i]);
    return s;
}

static int save_model(const gs_trainer *t, const char *path, int bf16) {
    if (!t->decay_init) return gs_model_save(t->model, path, bf16);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)t->cfg.seed);
    char *a = float_list(t->decay_init, t->decay_n), *dt = float_list(t->decay_init + t->decay_n, t->decay_n);
    int rc;
    if (!a || !dt) rc = gs_fail("out of memory");
    else {
        const char *const *keys = t->tr->init_decay_keys; /* GPN+M's one write's, GDN's per layer */
        const char *meta[] = {"train_seed", seed, keys[0], a, keys[1], dt, NULL};
        rc = gs_model_save_meta(t->model, path, bf16, meta);
    }
    free(a);
    free(dt);
    return rc;
}

static int load_batch(gs_trainer *t, int64_t pos) {
    int T = t->cfg.seq_len;
    for (int i = 0; i < t->cfg.batch; i++)
        if (corpus_window(t->train, window_of(t, pos, i), t->tokens + (long)i * T) != 0) return -1;
    return 0;
}

/* loss.csv: keep the rows of steps <= step from `from` (a previous log) */
static int open_log(gs_trainer *t, const char *from, long step) {
    static const char *header =
        "step,tokens,train_loss,lr,grad_norm,eval_loss,elapsed_s,A_log_mean,A_log_max_change,dt_bias_mean,"
        "dt_bias_max_change\n";
    size_t cap = 1 << 16, len = 0;
    char *kept = malloc(cap);
    if (!kept) return gs_fail("out of memory");
    len = (size_t)snprintf(kept, cap, "%s", header);
    FILE *old = from ? fopen(from, "r") : NULL;
    if (old) {
        char line[1024];
        while (fgets(line, sizeof line, old)) {
            char *end;
            long s = strtol(line, &end, 10);
            if (end == line || *end != ',' || s < 1 || s > step) continue;
            size_t n = strlen(line);
            if (len + n + 1 > cap) {
                cap = 2 * (len + n + 1);
                char *k2 = realloc(kept, cap);
                if (!k2) { free(kept); fclose(old); return gs_fail("out of memory"); }
                kept = k2;
            }
            memcpy(kept + len, line, n + 1);
            len += n;
        }
        fclose(old);
    }
    int rc = gs_write_atomic(t->path_log, kept);
    free(kept);
    if (rc != 0) return -1;
    t->log = fopen(t->path_log, "a");
    if (!t->log) return gs_fail("cannot append to %s: %s", t->path_log, strerror(errno));
    return 0;
}

/* the sizes a training state belongs to (its "model" metadata), and the
 * family's own keys that name themselves there (GDN's " conv=4") */
static void model_signature(const gs_config *c, char *buf, size_t size) {
    int n = snprintf(buf, size, "%s V=%d d=%d e=%d f=%d H=%d dk=%d dv=%d N=%d bias=%d", gs_arch_name(c->arch), c->V, c->d,
                     c->e, c->f, c->H, c->dk, c->dv, c->n_layers, c->decoder_bias);
    const gs_family *fam = gs_family_of(c);
    if (!fam || !fam->train) return;
    for (const gs_train_key *k = fam->train->keys; k->key; k++) {
        int v = k->tag && k->use != GS_KEY_REFUSED ? key_value(c, k) : 0;
        if (v && n > 0 && (size_t)n < size) n += snprintf(buf + n, size - (size_t)n, " %s=%d", k->tag, v);
    }
}

static int tensor_i64(const st_file *f, const char *name, int64_t *out, int n) {
    const st_tensor *x = safetensors_find(f, name);
    if (!x || x->dtype != ST_I64 || x->numel != n) return gs_fail("missing or malformed tensor '%s' (I64[%d])", name, n);
    memcpy(out, x->data, (size_t)n * 8);
    return 0;
}

static int load_state(gs_trainer *t, const char *resume) {
    char path[TRAIN_PATH_MAX + 64];
    struct stat st;
    if (stat(resume, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(path, sizeof path, "%s/optimizer.safetensors", resume);
    else snprintf(path, sizeof path, "%s", resume);
    st_file *f = safetensors_open(path);
    if (!f) return gs_fail_context("resuming: ");
    int rc = -1;
    const gs_config *c = &t->cfg.model;
    const char *fmt = safetensors_meta(f, "format");
    const st_tensor *p = safetensors_find(f, "params"), *m = safetensors_find(f, "adam_m"), *v = safetensors_find(f, "adam_v");
    int64_t step = 0, pos = 0, tok = 0, rng[4];
    if (!fmt || strcmp(fmt, OPT_FORMAT) != 0) { gs_fail("not a gpnscope training state (format '%s')", fmt ? fmt : "?"); goto out; }
    const char *sizes = safetensors_meta(f, "model");
    char want[256];
    model_signature(c, want, sizeof want);
    if (!sizes || strcmp(sizes, want) != 0) {
        gs_fail("the checkpoint's model (%s) differs from the config's (%s)", sizes ? sizes : "?", want);
        goto out;
    }
    size_t n = t->model->n_params;
    if (!p || !m || !v || p->dtype != ST_F32 || m->dtype != ST_F32 || v->dtype != ST_F32 || (size_t)p->numel != n ||
        (size_t)m->numel != n || (size_t)v->numel != n) {
        gs_fail("tensors params/adam_m/adam_v must be F32[%zu]", n);
        goto out;
    }
    if (tensor_i64(f, "step", &step, 1) || tensor_i64(f, "data_position", &pos, 1) || tensor_i64(f, "tokens", &tok, 1) ||
        tensor_i64(f, "rng", rng, 4))
        goto out;
    const st_tensor *el = safetensors_find(f, "elapsed_s");
    if (!el || el->dtype != ST_F64 || el->numel != 1) { gs_fail("missing tensor 'elapsed_s' (F64[1])"); goto out; }
    if (step < 0 || pos < 0) { gs_fail("negative step or data position"); goto out; }
    memcpy(t->model->block, p->data, n * 4);
    memcpy(t->opt->m, m->data, n * 4);
    memcpy(t->opt->v, v->data, n * 4);
    const char *sum = safetensors_meta(f, "params_fnv1a64");
    char got[32];
    snprintf(got, sizeof got, "%016llx", (unsigned long long)fnv1a(t->model->block, n * 4));
    if (!sum || strcmp(sum, got) != 0) { gs_fail("the stored weights fail their checksum (file damaged)"); goto out; }
    t->opt->step = (long)step;
    t->data_pos = pos;
    t->tokens_done = tok;
    memcpy(&t->elapsed, el->data, 8);
    for (int i = 0; i < 4; i++) t->rng.s[i] = (uint64_t)rng[i];
    rc = 0;
out:
    safetensors_close(f);
    if (rc != 0) gs_fail_context("resuming from %s: ", path);
    return rc;
}

gs_trainer *gs_trainer_new(const train_config *cfg, const char *resume) {
    if (train_config_validate(cfg) != 0) return NULL;
    gs_trainer *t = calloc(1, sizeof *t);
    if (!t) { gs_fail("out of memory"); return NULL; }
    t->cfg = *cfg;
    t->cfg.opt.total_steps = cfg->steps;
    set_threads(cfg->threads);
    const train_config *c = &t->cfg;
    t->model = gs_model_new(&c->model);
    if (!t->model) goto fail;
    t->opt = adamw_new(&c->model, &c->opt);
    t->grads = calloc(t->model->n_params, sizeof *t->grads);
    t->tokens = calloc((size_t)c->batch * c->seq_len, sizeof *t->tokens);
    if (!t->opt || !t->grads || !t->tokens) { gs_fail("out of memory"); goto fail; }
    train_rng_seed(&t->rng, c->seed);
    t->tr = gs_family_of(&c->model)->train; /* validated above */
    t->tr->init(&c->model, t->model->block, &t->rng);
    if (keep_decay_init(t) != 0) goto fail;
    t->perm_epoch = -1;
    const char *paths[] = {c->train_dir, c->eval_dir, c->tokenizer};
    const char *what[] = {"training data (data.train)", "held-out data (data.eval)", "tokenizer (data.tokenizer)"};
    for (int i = 0; i < 3; i++) {
        struct stat ps;
        if (paths[i][0] && stat(paths[i], &ps) != 0) {
            gs_fail("%s %s: %s", what[i], paths[i], strerror(errno));
            goto fail;
        }
    }
    if (c->tokenizer[0]) {
        t->tok = tokenizer_load(c->tokenizer);
        if (!t->tok) goto fail;
        if (tokenizer_vocab_size(t->tok) != c->model.V) {
            gs_fail("the tokenizer %s has %d pieces but the model's vocab_size is %d", c->tokenizer,
                    tokenizer_vocab_size(t->tok), c->model.V);
            goto fail;
        }
    }
    corpus_options co;
    corpus_options_default(&co);
    co.seq_len = c->seq_len;
    co.vocab_size = c->model.V;
    t->train = corpus_open(c->train_dir, t->tok, &co);
    if (!t->train) { gs_fail_context("training data: "); goto fail; }
    t->n_windows = corpus_n_windows(t->train);
    t->n_batches = t->n_windows / c->batch;
    if (t->n_batches < 1) {
        gs_fail("training data %s has %lld windows of %d tokens, fewer than one batch of %d", c->train_dir,
                (long long)t->n_windows, c->seq_len, c->batch);
        goto fail;
    }
    if (c->eval_dir[0]) {
        co.windows = 0;
        t->eval = corpus_open(c->eval_dir, t->tok, &co);
        if (!t->eval) { gs_fail_context("held-out data: "); goto fail; }
    }
    t->tape = t->tr->tape_new(&c->model, c->batch, c->seq_len);
    if (!t->tape) goto fail;
    if (resume && load_state(t, resume) != 0) goto fail;
    if (gs_mkdir_p(c->out_dir) != 0) goto fail;
    snprintf(t->path_model, sizeof t->path_model, "%s/model.safetensors", c->out_dir);
    snprintf(t->path_opt, sizeof t->path_opt, "%s/optimizer.safetensors", c->out_dir);
    struct stat ost;
    if (!resume && stat(t->path_opt, &ost) == 0) {
        gs_fail("%s already holds a training run (optimizer.safetensors): continue it with --resume %s, or "
                "choose another output directory", c->out_dir, c->out_dir);
        goto fail;
    }
    snprintf(t->path_bf16, sizeof t->path_bf16, "%s/model.bf16.safetensors", c->out_dir);
    snprintf(t->path_log, sizeof t->path_log, "%s/loss.csv", c->out_dir);
    char *json = train_config_to_json(c), cpath[TRAIN_PATH_MAX + 32];
    snprintf(cpath, sizeof cpath, "%s/config.json", c->out_dir);
    int rc = json ? gs_write_atomic(cpath, json) : gs_fail("out of memory");
    free(json);
    if (rc != 0) goto fail;
    if (resume) {
        char from[TRAIN_PATH_MAX + 64];
        struct stat st;
        if (stat(resume, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(from, sizeof from, "%s/loss.csv", resume);
        else {
            snprintf(from, sizeof from, "%s", resume);
            char *sl = strrchr(from, '/');
            snprintf(sl ? sl + 1 : from, sizeof from - (size_t)(sl ? sl + 1 - from : 0), "loss.csv");
        }
        if (open_log(t, from, t->opt->step) != 0) goto fail;
    } else if (open_log(t, NULL, 0) != 0) {
        goto fail;
    }
    return t;
fail:
    gs_trainer_free(t);
    return NULL;
}

void gs_trainer_free(gs_trainer *t) {
    if (!t) return;
    if (t->log) fclose(t->log);
    if (t->tr) {
        t->tr->tape_free(t->tape);
        t->tr->tape_free(t->eval_tape);
    }
    corpus_free(t->train);
    corpus_free(t->eval);
    tokenizer_free(t->tok);
    adamw_free(t->opt);
    gs_model_free(t->model);
    free(t->grads);
    free(t->tokens);
    free(t->perm);
    free(t->decay_init);
    free(t);
}

int gs_trainer_evaluate(gs_trainer *t, double *loss) {
    if (!t->eval) return gs_fail("no held-out data (data.eval) to evaluate on");
    int T = t->cfg.seq_len, B = t->cfg.batch;
    int64_t n = corpus_n_windows(t->eval);
    if (t->cfg.eval_windows > 0 && t->cfg.eval_windows < n) n = t->cfg.eval_windows;
    double total = 0.0;
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    if (!tok) return gs_fail("out of memory");
    for (int64_t w0 = 0; w0 < n; w0 += B) {
        int nb = (int)(n - w0 < B ? n - w0 : B);
        void *tp = t->tape;
        if (nb < B) { /* the last, partial batch runs on its own (small) tape */
            t->tr->tape_free(t->eval_tape);
            t->eval_tape = tp = t->tr->tape_new(&t->cfg.model, nb, T);
            if (!tp) { free(tok); return -1; }
        }
        double l;
        for (int i = 0; i < nb; i++)
            if (corpus_window(t->eval, w0 + i, tok + (long)i * T) != 0) { free(tok); return -1; }
        if (t->tr->forward(tp, t->model->block, tok, NULL, &l) != 0) { free(tok); return -1; }
        total += l * nb;
    }
    t->tr->tape_free(t->eval_tape);
    t->eval_tape = NULL;
    free(tok);
    *loss = total / (double)n;
    return 0;
}

int gs_trainer_step(gs_trainer *t, train_report *r) {
    const train_config *c = &t->cfg;
    if (gs_trainer_done(t)) return gs_fail("training is complete (%ld of %ld steps)", t->opt->step, c->steps);
    double t0 = gs_now();
    if (load_batch(t, t->data_pos) != 0) return -1;
    memset(t->grads, 0, t->model->n_params * sizeof *t->grads);
    double loss;
    if (t->tr->forward(t->tape, t->model->block, t->tokens, t->grads, &loss) != 0) return -1;
    if (!isfinite(loss))
        return gs_fail("training diverged at step %ld (loss %g): lower optimizer.learning_rate or raise warmup_steps; "
                       "the last checkpoint is intact", t->opt->step + 1, loss);
    t->tr->backward(t->tape, t->model->block, t->grads, c->bptt);
    double lr, gnorm = adamw_step(t->opt, t->model->block, t->grads, &lr);
    if (!isfinite(gnorm)) /* the weights in memory are now damaged; the checkpoint on disk is not */
        return gs_fail("training diverged at step %ld (gradient norm %g): lower optimizer.learning_rate; "
                       "the last checkpoint is intact", t->opt->step, gnorm);
    t->data_pos++;
    t->tokens_done += (int64_t)c->batch * c->seq_len;
    t->elapsed += gs_now() - t0;
    long step = t->opt->step;
    train_report rep = {step, c->steps, t->tokens_done, loss, lr, gnorm, NAN, 0, 0};
    int last = step >= c->steps;
    if (t->eval && ((c->eval_every > 0 && step % c->eval_every == 0) || last)) {
        double t1 = gs_now();
        if (gs_trainer_evaluate(t, &rep.eval_loss) != 0) return -1;
        t->elapsed += gs_now() - t1;
    }
    rep.elapsed = t->elapsed;
    char ev[32] = "";
    if (!isnan(rep.eval_loss)) snprintf(ev, sizeof ev, "%.6f", rep.eval_loss);
    char decay[128];
    decay_stats(t, decay, sizeof decay);
    fprintf(t->log, "%ld,%lld,%.6f,%.6e,%.6f,%s,%.3f%s\n", step, (long long)t->tokens_done, loss, lr, gnorm, ev,
            t->elapsed, decay);
    fflush(t->log);
    if ((c->checkpoint_every > 0 && step % c->checkpoint_every == 0) || last) {
        if (gs_trainer_checkpoint(t) != 0) return -1;
        rep.checkpointed = 1;
    }
    if (r) *r = rep;
    return 0;
}

int gs_trainer_done(const gs_trainer *t) { return t->opt->step >= t->cfg.steps; }

int gs_trainer_checkpoint(gs_trainer *t) {
    const gs_config *c = &t->cfg.model;
    size_t n = t->model->n_params;
    st_writer *w = st_writer_new();
    if (!w) return -1;
    int64_t shape1[1] = {(int64_t)n}, one[1] = {1}, four[1] = {4};
    int64_t step = t->opt->step, pos = t->data_pos, tok = t->tokens_done, rng[4];
    for (int i = 0; i < 4; i++) rng[i] = (int64_t)t->rng.s[i];
    st_writer_add(w, "params", ST_F32, 1, shape1, t->model->block);
    st_writer_add(w, "adam_m", ST_F32, 1, shape1, t->opt->m);
    st_writer_add(w, "adam_v", ST_F32, 1, shape1, t->opt->v);
    st_writer_add(w, "step", ST_I64, 1, one, &step);
    st_writer_add(w, "data_position", ST_I64, 1, one, &pos);
    st_writer_add(w, "tokens", ST_I64, 1, one, &tok);
    st_writer_add(w, "rng", ST_I64, 1, four, rng);
    st_writer_add(w, "elapsed_s", ST_F64, 1, one, &t->elapsed);
    char buf[256];
    st_writer_meta(w, "format", OPT_FORMAT);
    model_signature(c, buf, sizeof buf);
    st_writer_meta(w, "model", buf);
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)fnv1a(t->model->block, n * 4));
    st_writer_meta(w, "params_fnv1a64", buf);
    int rc = st_writer_save(w, t->path_opt);
    st_writer_free(w);
    if (rc != 0) return gs_fail_context("checkpoint: ");
    if (save_model(t, t->path_model, 0) != 0) return gs_fail_context("checkpoint: ");
    if (t->cfg.export_bf16 && save_model(t, t->path_bf16, 1) != 0) return gs_fail_context("checkpoint: ");
    return 0;
}

const gs_model *gs_trainer_model(const gs_trainer *t) { return t->model; }
const train_config *gs_trainer_config(const gs_trainer *t) { return &t->cfg; }
long gs_trainer_step_count(const gs_trainer *t) { return t->opt->step; }
int64_t gs_trainer_train_tokens(const gs_trainer *t) { return corpus_total_tokens(t->train); }
size_t gs_trainer_memory(const gs_trainer *t) { return t->tr->tape_bytes(&t->cfg.model, t->cfg.batch, t->cfg.seq_len); }
