/* The MLP-LDRU row of the family table: its tensors ("ldru.*"), its config
 * from their shapes (the metadata may confirm, never contradict), and its
 * sites (docs/hooks.md, "MLP-LDRU"). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/tape/train_family.h"

_Static_assert(LDRU_HOOK_PREFIX <= GS_HOOK_LOCAL_LAST, "LDRU's hook points overflow the family-local range");
_Static_assert(LDRU_N_TENSORS <= GS_MAX_TENSORS, "LDRU has more tensors than a spec table holds");

/* name, group, role, shape as multiples of the sizes: S symbols, d, f (the
 * FFN's width), C classes */
enum { SZ_S = 1, SZ_D, SZ_2D, SZ_4D, SZ_F, SZ_C };
static const gs_tensor_name tensors[LDRU_N_TENSORS] = {
    [LDRU_EMBED] = {"ldru.embedding", "embedding", GS_TENSOR_MATRIX, {SZ_S, SZ_D}},
    [LDRU_W1] = {"ldru.op.mlp.w1", "operator", GS_TENSOR_MATRIX, {SZ_4D, SZ_2D}},
    [LDRU_B1] = {"ldru.op.mlp.b1", "operator", GS_TENSOR_BIAS, {SZ_4D}},
    [LDRU_W2] = {"ldru.op.mlp.w2", "operator", GS_TENSOR_MATRIX, {SZ_2D, SZ_4D}},
    [LDRU_B2] = {"ldru.op.mlp.b2", "operator", GS_TENSOR_BIAS, {SZ_2D}},
    [LDRU_V_LEFT] = {"ldru.op.v_left", "operator", GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [LDRU_B_LEFT] = {"ldru.op.b_left", "operator", GS_TENSOR_BIAS, {SZ_D}},
    [LDRU_V_RIGHT] = {"ldru.op.v_right", "operator", GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [LDRU_B_RIGHT] = {"ldru.op.b_right", "operator", GS_TENSOR_BIAS, {SZ_D}},
    [LDRU_W_OUT] = {"ldru.op.w_out", "operator", GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [LDRU_B_OUT] = {"ldru.op.b_out", "operator", GS_TENSOR_BIAS, {SZ_D}},
    [LDRU_F1] = {"ldru.ffn.w1", "level ffn", GS_TENSOR_MATRIX, {SZ_F, SZ_D}},
    [LDRU_C1] = {"ldru.ffn.b1", "level ffn", GS_TENSOR_BIAS, {SZ_F}},
    [LDRU_F2] = {"ldru.ffn.w2", "level ffn", GS_TENSOR_MATRIX, {SZ_D, SZ_F}},
    [LDRU_C2] = {"ldru.ffn.b2", "level ffn", GS_TENSOR_BIAS, {SZ_D}},
    [LDRU_LN_W] = {"ldru.norm.weight", "level ffn", GS_TENSOR_NORM, {SZ_D}},
    [LDRU_LN_B] = {"ldru.norm.bias", "level ffn", GS_TENSOR_BIAS, {SZ_D}},
    [LDRU_HEAD_W] = {"ldru.head.weight", "classifier", GS_TENSOR_MATRIX, {SZ_C, SZ_D}},
    [LDRU_HEAD_B] = {"ldru.head.bias", "classifier", GS_TENSOR_BIAS, {SZ_C}},
};

static int64_t size_of(const gs_config *c, int sz) {
    switch (sz) {
    case SZ_S: return c->V;
    case SZ_D: return c->d;
    case SZ_2D: return 2 * (int64_t)c->d;
    case SZ_4D: return 4 * (int64_t)c->d;
    case SZ_F: return c->f;
    case SZ_C: return c->n_classes;
    }
    return 0;
}

const gs_tensor_table ldru_tensors = {tensors, LDRU_N_TENSORS, size_of};

static int recognise(const st_file *f) { return gs_table_find(f, &ldru_tensors, LDRU_W1, 0) != NULL; }

static int shape2(const st_file *f, int t, int64_t *rows, int64_t *cols) {
    const st_tensor *x = safetensors_find(f, tensors[t].name);
    if (!x || x->ndim != 2) return gs_fail("missing 2-D tensor '%s'", tensors[t].name);
    *rows = x->shape[0], *cols = x->shape[1];
    return 0;
}

static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    c->arch = GS_ARCH_LDRU;
    c->n_layers = LDRU_SITE_LEVELS;
    c->norm_eps = LDRU_LN_EPS;
    int64_t r = 0, k = 0; /* (set by shape2 before use; -O3 cannot see it through the early returns) */
    if (shape2(f, LDRU_EMBED, &r, &k)) return -1;
    c->V = (int)r, c->d = c->e = (int)k;
    if (shape2(f, LDRU_F1, &r, &k)) return -1;
    c->f = (int)r;
    if (shape2(f, LDRU_HEAD_W, &r, &k)) return -1;
    c->n_classes = (int)r;
    return 0;
}

static const struct {
    const char *key;
    size_t off;
    int tensor;
} meta_ints[] = {
    {"n_symbols", offsetof(gs_config, V), LDRU_EMBED},
    {"d_model", offsetof(gs_config, d), LDRU_EMBED},
    {"ffn_dim", offsetof(gs_config, f), LDRU_F1},
    {"n_classes", offsetof(gs_config, n_classes), LDRU_HEAD_W},
};

static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    for (size_t i = 0; i < sizeof meta_ints / sizeof *meta_ints; i++)
        gs_describe_shape(buf, size, meta_ints[i].key, *(const int *)((const char *)c + meta_ints[i].off), f,
                          tensors[meta_ints[i].tensor].name, "");
    gs_describe(buf, size, "site_levels", c->n_layers, "tree.level.0..%d: strings up to %d symbols", c->n_layers - 1,
                1 << (c->n_layers - 1));
    const char *task = safetensors_meta(f, "task");
    if (task) {
        size_t at = strlen(buf);
        snprintf(buf + at, size > at ? size - at : 0, "task %s (__metadata__ task)\n", task);
    }
}

static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "ldru")) return gs_fail("__metadata__ says arch=%s but the tensors are those of ldru", arch);
    for (size_t i = 0; i < sizeof meta_ints / sizeof *meta_ints; i++) {
        const char *v = safetensors_meta(f, meta_ints[i].key);
        int have = *(const int *)((const char *)c + meta_ints[i].off);
        if (v && atoi(v) != have)
            return gs_fail("__metadata__ says %s=%s but the tensor shapes give %d", meta_ints[i].key, v, have);
    }
    return 0;
}

static int validate(const gs_config *c) {
    if (c->V < 1 || c->d < 1 || c->f < 1 || c->n_classes < 1)
        return gs_fail("invalid sizes (symbols=%d, d=%d, ffn=%d, classes=%d): all must be positive", c->V, c->d, c->f,
                       c->n_classes);
    if (c->V > 1 << 16 || c->d > 1 << 14 || c->f > 1 << 16 || c->n_classes > 1 << 16)
        return gs_fail("sizes too large (symbols=%d, d=%d, ffn=%d, classes=%d)", c->V, c->d, c->f, c->n_classes);
    if (c->n_layers != LDRU_SITE_LEVELS) return gs_fail("an LDRU config has %d site levels (not %d)", LDRU_SITE_LEVELS, c->n_layers);
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&ldru_tensors, c, s); }

static void write_metadata(const gs_config *c, st_writer *w) {
    st_writer_meta(w, "arch", "ldru");
    for (size_t i = 0; i < sizeof meta_ints / sizeof *meta_ints; i++) {
        char buf[24];
        snprintf(buf, sizeof buf, "%d", *(const int *)((const char *)c + meta_ints[i].off));
        st_writer_meta(w, meta_ints[i].key, buf);
    }
}

/* In step order (docs/hooks.md, "MLP-LDRU"): a step reads one symbol x_t. */
static const gs_site sites[] = {
    {"tree.level.{i}", NULL, LDRU_HOOK_NODE, GS_SITE_VECTOR, 1, GS_DIM_STATE, GS_ROLE_NONE, 0, 0,
     "the level-i node completed by x_t, segment [t+1-2^i, t+1) (level 0: the embedding); NaN rows where none "
     "completes (edits are carried)"},
    {"prefix", NULL, LDRU_HOOK_PREFIX, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_STATE, 0, 1,
     "the prefix state: the root of the tree over x_0..x_t (the completed subtrees combined with the zero pad)"},
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_CLASSES, GS_ROLE_LOGITS, 0, 1,
     "the classifier on the prefix state: the label of x_0..x_t (n_classes wide, not the vocabulary)"},
};

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &ldru_tensors, LDRU_EMBED, 0);
}

const gs_family gs_family_ldru = {
    "ldru", "ldru", "MLP-LDRU, a log-depth tree of one operator (sequence classifier)", GS_ARCH_LDRU, 0, sites,
    (int)(sizeof sites / sizeof *sites), recognise, "tensor 'ldru.op.mlp.w1'", infer, check_metadata, validate,
    tensor_specs, NULL, write_metadata, ldru_cpu_new, NULL, NULL, embedding, describe, NULL,
    "an MLP-LDRU sequence classifier", NULL, NULL,
    0, 0, NULL, /* no matrix memory; not attributable; no delta-rule memory */
};
