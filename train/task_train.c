/* The task trainer (task_train.h): MLP-LDRU on a regular-language task. */
#include "train/task_train.h"

#include <cblas.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/prng.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/tasks/tasks.h"
#include "train/config_json.h"
#include "train/train.h"
#include "engine/tape/train_init.h"

/* ---- configuration ---- */

int task_train_is_task_config(const char *path) {
    cJSON *root = train_config_parse(path, "");
    int yes = root && cJSON_GetObjectItemCaseSensitive(root, "task") != NULL;
    cJSON_Delete(root);
    gs_clear_error();
    return yes;
}

void task_train_defaults(task_train_config *c) {
    memset(c, 0, sizeof *c);
    c->d = 64, c->f = 128;
    c->steps = 2000, c->batch = 64, c->max_length = 40, c->seed = 1, c->threads = 1;
    c->opt = (adamw_config){.lr = 1e-3, .min_lr_ratio = 0.1, .warmup = 100, .total_steps = 2000, .beta1 = 0.9,
                            .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.01, .clip = 1.0};
    c->eval_count = 32, c->ood_max = 500, c->ood_lengths = 24;
    c->log_every = 10;
}

int task_train_load(const char *path, task_train_config *c) {
    cJSON *root = train_config_parse(path, "a task training config, see docs/ldru.md");
    if (!root) return -1;
    char base[TRAIN_PATH_MAX];
    train_config_dir(path, base, sizeof base);
    static const char *const sections[] = {"task", "model", "training", "optimizer", "eval", "output", NULL};
    static const char *const k_model[] = {"arch", "d_model", "d_ffn", NULL};
    static const char *const k_training[] = {"steps", "batch", "max_length", "seed", "threads", "log_every", NULL};
    static const char *const k_opt[] = {"lr", "min_lr_ratio", "warmup", "beta1", "beta2", "eps", "weight_decay", "clip", NULL};
    static const char *const k_eval[] = {"count", "ood_max", "ood_lengths", NULL};
    static const char *const k_out[] = {"dir", NULL};
    int err = 0;
    jsec m = {"model", cJSON_GetObjectItemCaseSensitive(root, "model"), &err};
    jsec t = {"training", cJSON_GetObjectItemCaseSensitive(root, "training"), &err};
    jsec o = {"optimizer", cJSON_GetObjectItemCaseSensitive(root, "optimizer"), &err};
    jsec e = {"eval", cJSON_GetObjectItemCaseSensitive(root, "eval"), &err};
    jsec u = {"output", cJSON_GetObjectItemCaseSensitive(root, "output"), &err};
    cJSON *task = cJSON_GetObjectItemCaseSensitive(root, "task");
    cJSON *arch = cJSON_GetObjectItemCaseSensitive(m.obj, "arch");
    int rc = 0;
    if (check_keys(root, "the config", sections) || check_keys(m.obj, "model", k_model) ||
        check_keys(t.obj, "training", k_training) || check_keys(o.obj, "optimizer", k_opt) ||
        check_keys(e.obj, "eval", k_eval) || check_keys(u.obj, "output", k_out))
        rc = -1;
    else if (!cJSON_IsString(task) || !gs_task_find(task->valuestring))
        rc = cJSON_IsString(task) ? -1 : gs_fail("\"task\" must be a task's name (gpnscope tasks --list)");
    else if (arch && (!cJSON_IsString(arch) || strcmp(arch->valuestring, "ldru")))
        rc = gs_fail("a task config trains model.arch \"ldru\" (MLP-LDRU), not %s", cJSON_IsString(arch) ? arch->valuestring : "a non-string");
    if (rc == 0) {
        snprintf(c->task, sizeof c->task, "%s", task->valuestring);
        get_int(&m, "d_model", &c->d, 0, 1, 4096);
        get_int(&m, "d_ffn", &c->f, 0, 1, 16384);
        get_long(&t, "steps", &c->steps, 0, 1, 1e9);
        get_int(&t, "batch", &c->batch, 0, 1, 65536);
        get_int(&t, "max_length", &c->max_length, 0, 1, GS_TASK_MAX_LENGTH);
        get_seed(&t, "seed", &c->seed);
        get_int(&t, "threads", &c->threads, 0, 0, 1024);
        get_long(&t, "log_every", &c->log_every, 0, 1, 1e9);
        get_num(&o, "lr", &c->opt.lr, 0, 0, 10);
        get_num(&o, "min_lr_ratio", &c->opt.min_lr_ratio, 0, 0, 1);
        get_long(&o, "warmup", &c->opt.warmup, 0, 0, 1e9);
        get_num(&o, "beta1", &c->opt.beta1, 0, 0, 1);
        get_num(&o, "beta2", &c->opt.beta2, 0, 0, 1);
        get_num(&o, "eps", &c->opt.eps, 0, 0, 1);
        get_num(&o, "weight_decay", &c->opt.weight_decay, 0, 0, 10);
        get_num(&o, "clip", &c->opt.clip, 0, -1, 1e9);
        get_int(&e, "count", &c->eval_count, 0, 1, 1 << 20);
        get_int(&e, "ood_max", &c->ood_max, 0, 1, GS_TASK_MAX_LENGTH);
        get_int(&e, "ood_lengths", &c->ood_lengths, 0, 0, GS_TASK_MAX_LENGTH);
        get_path(&u, "dir", c->out_dir, 1, base);
        c->opt.total_steps = c->steps;
        rc = err ? -1 : 0;
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- the model ---- */

/* LeCun normal matrices, V_i = V_j = W_out = I (the operator starts as a gated
 * sum of its inputs), the FFN's second matrix zero (its residual starts as the
 * identity), embedding normal(1) (the scale LayerNorm gives every other
 * node), biases zero, LayerNorm gains one; tensors in spec order from one stream. */
static void init_params(const gs_config *c, float *block, uint64_t seed) {
    train_rng r;
    train_rng_seed(&r, seed);
    gs_tensor_spec s[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, s);
    for (int i = 0; i < n; i++) {
        float *x = block + s[i].offset;
        int identity = i == LDRU_V_LEFT || i == LDRU_V_RIGHT || i == LDRU_W_OUT;
        for (size_t k = 0; k < s[i].numel; k++) {
            if (identity) x[k] = k / s[i].shape[1] == k % s[i].shape[1] ? 1.0f : 0.0f;
            else if (i == LDRU_F2 || s[i].role == GS_TENSOR_BIAS) x[k] = 0.0f;
            else if (s[i].role == GS_TENSOR_NORM) x[k] = 1.0f;
            else if (i == LDRU_EMBED) x[k] = (float)train_rng_normal(&r);
            else x[k] = (float)(train_rng_truncated_normal(&r, -2.0, 2.0) / sqrt((double)s[i].shape[1]) / 0.87962566103423978);
        }
    }
}

/* mean cross-entropy and accuracy of logits (B x C) against labels; dlogits (may be NULL) = its gradient */
static double cross_entropy(const float *logits, const int *labels, int B, int C, float *dlogits, int *correct) {
    double loss = 0;
    *correct = 0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (size_t)b * C;
        int best = 0;
        float mx = z[0];
        for (int k = 1; k < C; k++)
            if (z[k] > mx) mx = z[k], best = k;
        double sum = 0;
        for (int k = 0; k < C; k++) sum += exp((double)z[k] - mx);
        loss += log(sum) + mx - z[labels[b]];
        *correct += best == labels[b];
        for (int k = 0; dlogits && k < C; k++)
            dlogits[(size_t)b * C + k] = (float)((exp((double)z[k] - mx) / sum - (k == labels[b])) / B);
    }
    return loss / B;
}

/* a length in 1..max the task has (modular arithmetic: odd only) */
static int draw_length(const gs_task *task, int max, uint64_t *rng) {
    for (;;) {
        int L = 1 + (int)(gs_splitmix64(rng) % (uint64_t)max);
        if (gs_task_check_length(task, L) == 0) return L;
    }
}

static int eval_length(const gs_model *m, const gs_task *task, int L, int count, uint64_t seed, task_eval_row *row) {
    int *sym = malloc((size_t)count * L * sizeof *sym), *lab = malloc((size_t)count * sizeof *lab);
    int32_t *s32 = malloc((size_t)count * L * sizeof *s32);
    ldru_tree t;
    int rc = !sym || !lab || !s32 ? gs_fail("out of memory evaluating length %d", L) : 0;
    if (rc == 0) rc = gs_task_generate(task, L, count, seed, sym, lab);
    if (rc == 0) rc = ldru_tree_alloc(&t, &m->cfg, count, L);
    if (rc == 0) {
        ldru_weights w;
        ldru_weights_bind(&m->cfg, m->block, &w);
        for (size_t i = 0; i < (size_t)count * L; i++) s32[i] = sym[i];
        ldru_tree_forward(&t, &w, s32);
        row->length = L, row->n = count;
        cross_entropy(t.logits, lab, count, m->cfg.n_classes, NULL, &row->correct);
        ldru_tree_free(&t);
    }
    free(sym), free(lab), free(s32);
    return rc;
}

int task_train_evaluate(const gs_model *m, const char *task_name, int max_length, int ood_max, int ood_lengths,
                        int count, uint64_t seed, task_eval *ev) {
    const gs_task *task = gs_task_find(task_name);
    if (!task) return -1;
    memset(ev, 0, sizeof *ev);
    int lengths[TASK_EVAL_MAX_LENGTHS], n = 0;
    for (int L = 1; L <= max_length; L++)
        if (gs_task_check_length(task, L) == 0) lengths[n++] = L;
    for (int i = 0; i < ood_lengths && ood_max > max_length && n < TASK_EVAL_MAX_LENGTHS; i++) {
        int L = max_length + 1 + (int)((long)i * (ood_max - max_length - 1) / (ood_lengths > 1 ? ood_lengths - 1 : 1));
        if (gs_task_check_length(task, L) != 0) L += L < ood_max ? 1 : -1; /* modular arithmetic: the odd neighbour */
        if (gs_task_check_length(task, L) == 0 && (n == 0 || lengths[n - 1] != L)) lengths[n++] = L;
    }
    long in_n = 0, in_c = 0, ood[3][2] = {{0}};
    for (int i = 0; i < n; i++) {
        task_eval_row *r = &ev->rows[ev->n_rows];
        if (eval_length(m, task, lengths[i], count, seed + (uint64_t)lengths[i] * 0x9E3779B97F4A7C15ull, r)) return -1;
        ev->n_rows++;
        if (r->length <= max_length) in_n += r->n, in_c += r->correct;
        else {
            int b = r->length <= 100 ? 0 : r->length <= 200 ? 1 : 2;
            ood[b][0] += r->n, ood[b][1] += r->correct;
        }
    }
    long on = ood[0][0] + ood[1][0] + ood[2][0], oc = ood[0][1] + ood[1][1] + ood[2][1];
    ev->in_acc = in_n ? (double)in_c / in_n : NAN;
    ev->ood_acc = on ? (double)oc / on : NAN;
    ev->ood_100 = ood[0][0] ? (double)ood[0][1] / ood[0][0] : NAN;
    ev->ood_200 = ood[1][0] ? (double)ood[1][1] / ood[1][0] : NAN;
    ev->ood_rest = ood[2][0] ? (double)ood[2][1] / ood[2][0] : NAN;
    return 0;
}

static int write_eval(const char *path, const task_train_config *c, const task_eval *ev, double seconds) {
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "task", c->task);
    cJSON_AddNumberToObject(root, "steps", (double)c->steps);
    cJSON_AddNumberToObject(root, "train_seconds", seconds);
    cJSON_AddNumberToObject(root, "max_length", c->max_length);
    cJSON_AddNumberToObject(root, "ood_max", c->ood_max);
    /* NaN (a bucket without lengths) is written as null */
    const struct { const char *k; double v; } acc[] = {{"in_distribution", ev->in_acc}, {"out_of_distribution", ev->ood_acc},
                                                       {"ood_41_100", ev->ood_100}, {"ood_101_200", ev->ood_200},
                                                       {"ood_201_max", ev->ood_rest}};
    for (size_t i = 0; i < sizeof acc / sizeof *acc; i++)
        isnan(acc[i].v) ? cJSON_AddNullToObject(root, acc[i].k) : cJSON_AddNumberToObject(root, acc[i].k, acc[i].v);
    for (int i = 0; i < ev->n_rows; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "length", ev->rows[i].length);
        cJSON_AddNumberToObject(r, "n", ev->rows[i].n);
        cJSON_AddNumberToObject(r, "accuracy", (double)ev->rows[i].correct / ev->rows[i].n);
        cJSON_AddItemToArray(rows, r);
    }
    cJSON_AddItemToObject(root, "lengths", rows);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    int rc = text ? gs_write_atomic(path, text) : gs_fail("out of memory writing %s", path);
    free(text);
    return rc;
}

int task_train_run(const task_train_config *c, int (*progress)(void *ctx, const task_train_report *r), void *ctx,
                   task_eval *ev) {
    const gs_task *task = gs_task_find(c->task);
    if (!task) return -1;
    if (c->threads > 0) openblas_set_num_threads(c->threads);
    if (gs_mkdir_p(c->out_dir)) return -1;
    gs_config mc = {0};
    mc.arch = gs_family_ldru.arch, mc.n_layers = LDRU_SITE_LEVELS, mc.norm_eps = LDRU_LN_EPS;
    mc.V = (int)strlen(task->alphabet), mc.d = mc.e = c->d, mc.f = c->f, mc.n_classes = task->n_classes;
    gs_model *m = gs_model_new(&mc);
    if (!m) return -1;
    init_params(&mc, m->block, c->seed);
    adamw *opt = adamw_new(&mc, &c->opt);
    float *grads = calloc(m->n_params, sizeof(float)), *dlogits = malloc((size_t)c->batch * mc.n_classes * sizeof(float));
    int *sym = malloc((size_t)c->batch * c->max_length * sizeof *sym), *lab = malloc((size_t)c->batch * sizeof *lab);
    int32_t *s32 = malloc((size_t)c->batch * c->max_length * sizeof *s32);
    char path[TRAIN_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/loss.csv", c->out_dir);
    FILE *csv = fopen(path, "w");
    int rc = 0;
    if (!opt || !grads || !dlogits || !sym || !lab || !s32) rc = gs_fail("out of memory for the task trainer");
    else if (!csv) rc = gs_fail("cannot write %s", path);
    if (csv) fprintf(csv, "step,length,loss,accuracy,lr,grad_norm,elapsed_s\n");
    ldru_weights w;
    ldru_weights_bind(&mc, m->block, &w);
    uint64_t lengths_rng = c->seed ^ 0x5DEECE66Dull;
    double t0 = gs_now(), loss_sum = 0, acc_sum = 0;
    long since = 0, step = 0;
    for (; rc == 0 && step < c->steps; step++) {
        int L = draw_length(task, c->max_length, &lengths_rng), correct;
        if ((rc = gs_task_generate(task, L, c->batch, c->seed * 1000003ull + (uint64_t)step, sym, lab))) break;
        for (size_t i = 0; i < (size_t)c->batch * L; i++) s32[i] = sym[i];
        ldru_tree t;
        if ((rc = ldru_tree_alloc(&t, &mc, c->batch, L))) break;
        ldru_tree_forward(&t, &w, s32);
        double loss = cross_entropy(t.logits, lab, c->batch, mc.n_classes, dlogits, &correct);
        memset(grads, 0, m->n_params * sizeof(float));
        ldru_tree_backward(&t, &w, s32, dlogits, grads);
        ldru_tree_free(&t);
        double lr, gn = adamw_step(opt, m->block, grads, &lr);
        if (!isfinite(loss) || !isfinite(gn)) { rc = gs_fail("step %ld: the loss or the gradient is not finite", step + 1); break; }
        loss_sum += loss, acc_sum += (double)correct / c->batch, since++;
        if ((step + 1) % c->log_every == 0 || step + 1 == c->steps) {
            task_train_report r = {step + 1, L, loss_sum / since, acc_sum / since, lr, gn, gs_now() - t0};
            fprintf(csv, "%ld,%d,%.6f,%.4f,%.6g,%.4f,%.2f\n", r.step, L, r.loss, r.accuracy, lr, gn, r.elapsed);
            fflush(csv); /* the log so far survives a kill */
            loss_sum = acc_sum = 0, since = 0;
            if (progress && progress(ctx, &r)) { step++; break; }
        }
    }
    double seconds = gs_now() - t0;
    if (csv && fclose(csv) && rc == 0) rc = gs_fail("cannot write %s/loss.csv", c->out_dir);
    snprintf(path, sizeof path, "%s/model.safetensors", c->out_dir);
    char steps_done[32];
    snprintf(steps_done, sizeof steps_done, "%ld", step);
    const char *meta[] = {"task", c->task, "steps", steps_done, NULL};
    if (rc == 0) rc = gs_model_save_meta(m, path, 0, meta);
    if (rc == 0) rc = task_train_evaluate(m, c->task, c->max_length, c->ood_max, c->ood_lengths, c->eval_count,
                                          c->seed + 0xE7A1ull, ev);
    snprintf(path, sizeof path, "%s/eval.json", c->out_dir);
    if (rc == 0) rc = write_eval(path, c, ev, seconds);
    adamw_free(opt);
    free(grads), free(dlogits), free(sym), free(lab), free(s32);
    gs_model_free(m);
    return rc;
}
