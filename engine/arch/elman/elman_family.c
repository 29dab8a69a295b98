/* The Elman row of the family table: its tensors, config, sites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/decode.h"
#include "engine/arch/elman/elman.h"

/* sizes: V, d */
enum { SZ_V = 1, SZ_D };
static const gs_tensor_name tensors[ELMAN_N_TENSORS] = {
    [ELMAN_EMBED] = {"embedding", "embedding", GS_TENSOR_MATRIX, {SZ_V, SZ_D}},
    [ELMAN_W] = {"elman.W", "recurrence", GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [ELMAN_U] = {"elman.U", "recurrence", GS_TENSOR_MATRIX, {SZ_D, SZ_D}},
    [ELMAN_B] = {"elman.b", "recurrence", GS_TENSOR_BIAS, {SZ_D}},
};

static int64_t size_of(const gs_config *c, int sz) { return sz == SZ_V ? c->V : sz == SZ_D ? c->d : 0; }

const gs_tensor_table elman_tensors = {tensors, ELMAN_N_TENSORS, size_of};

static int recognise(const st_file *f) { return gs_table_find(f, &elman_tensors, ELMAN_W, 0) != NULL; }

static int infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    const st_tensor *e = gs_table_find(f, &elman_tensors, ELMAN_EMBED, 0);
    if (!e || e->ndim != 2) return gs_fail("missing 2-D tensor '%s' (V, d)", tensors[ELMAN_EMBED].name);
    c->arch = GS_ARCH_ELMAN;
    c->n_layers = 1;
    c->V = (int)e->shape[0];
    c->d = c->e = (int)e->shape[1]; /* the decode is tied: the embedding is d wide */
    return 0;
}

/* Where each size came from, as infer() found it. */
static void describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    gs_table_describe_shape(buf, size, "vocab_size", c->V, f, &elman_tensors, ELMAN_EMBED, 0, "");
    gs_table_describe_shape(buf, size, "d_state", c->d, f, &elman_tensors, ELMAN_EMBED, 0, " (the decode is tied)");
}

static int check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch && strcmp(arch, "elman"))
        return gs_fail("__metadata__ says arch=%s but the tensors are those of elman", arch);
    const char *d = safetensors_meta(f, "d_state");
    if (d && atoi(d) != c->d) return gs_fail("__metadata__ says d_state=%s but the tensor shapes give %d", d, c->d);
    return 0;
}

static int validate(const gs_config *c) {
    if (c->V < 1 || c->d < 1) return gs_fail("invalid sizes (V=%d, d=%d): both must be positive", c->V, c->d);
    if ((int64_t)c->V * c->d > INT32_MAX) return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_table_specs(&elman_tensors, c, s); }

static void write_metadata(const gs_config *c, st_writer *w) {
    char buf[32];
    st_writer_meta(w, "arch", "elman");
    snprintf(buf, sizeof buf, "%d", c->d);
    st_writer_meta(w, "d_state", buf);
}

static const gs_site sites[] = {
    {"state.pred", "s_pred", GS_HOOK_S_PRED, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_STATE, 0, 1,
     "the state s_{t-1} before x_t: decoded into the prediction of x_t, and carried"},
    {"logits", NULL, GS_HOOK_LOGITS, GS_SITE_VECTOR, 0, GS_DIM_VOCAB, GS_ROLE_LOGITS, 0, 1, "E s_{t-1}"},
    {"nll", NULL, GS_HOOK_NLL, GS_SITE_SCALAR, 0, GS_DIM_ONE, GS_ROLE_NLL, 0, 1, "-log p(x_t)"},
    {"state.next", "s_ground", GS_HOOK_S_GROUND, GS_SITE_VECTOR, 0, GS_DIM_STATE, GS_ROLE_NONE, 0, 1,
     "s_t = tanh(W s_{t-1} + U E[x_t] + b), carried to the next step"},
};

/* the tied decode: logits = E s */
static int decode(const gs_model *m, const float *s, float *logits) {
    return gs_decode_rms_head(s, NULL, 0, m->cfg.d, gs_table_tensor(m, &elman_tensors, ELMAN_EMBED, 0), m->cfg.V, logits);
}

static const float *embedding(const gs_model *m, int *width) {
    *width = m->cfg.d;
    return gs_table_tensor(m, &elman_tensors, ELMAN_EMBED, 0);
}

const gs_family gs_family_elman = {
    "elman", "elman", "Elman RNN, a toy family", GS_ARCH_ELMAN, 1, sites, (int)(sizeof sites / sizeof *sites),
    recognise, "tensor 'elman.W'", infer, check_metadata, validate, tensor_specs, NULL, write_metadata,
    elman_cpu_new, NULL, decode, embedding, describe, NULL, NULL, NULL, NULL,
    0, 0, NULL, /* no matrix memory; not attributable; no delta-rule memory */
};
