/* GPN and GPN+M checkpoints: the tensors (docs/gpn-model.md, names as the
 * companion's checkpoints have them), the config inferred from their shapes,
 * the metadata that may confirm it, and the named pointers of gpn_params. */
#include <cblas.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/gpn/gpn_family.h"
#include "engine/cpu/ops.h"
#include "io/checkpoint/safetensors.h"

#define add_spec gs_spec_add

int gpn_family_tensor_specs(const gs_config *c, gs_tensor_spec *s) {
    int n = 0;
    size_t off = 0;
    int d = c->d, e = c->e, f = c->f, H = c->H, dk = c->dk, dv = c->dv;
    add_spec(s, &n, &off, "embedding", "embedding", GS_TENSOR_MATRIX, c->V, e);
    add_spec(s, &n, &off, "decode_norm_w", "decode", GS_TENSOR_NORM, d, 0);
    add_spec(s, &n, &off, "decode_proj_k", "decode", GS_TENSOR_MATRIX, d, e);
    if (c->decoder_bias) add_spec(s, &n, &off, "decode_bias", "decode", GS_TENSOR_BIAS, e, 0);
    add_spec(s, &n, &off, "fuse_norm_w", "fuse", GS_TENSOR_NORM, e, 0);
    add_spec(s, &n, &off, "fuse_proj_k", "fuse", GS_TENSOR_MATRIX, e, d);
    add_spec(s, &n, &off, "fg_norm_w", "fuse", GS_TENSOR_NORM, d, 0);
    add_spec(s, &n, &off, "fg_gate_k", "fuse", GS_TENSOR_MATRIX, d, d);
    add_spec(s, &n, &off, "fg_gate_b", "fuse", GS_TENSOR_BIAS, d, 0);
    if (c->arch == GS_ARCH_GPN) {
        add_spec(s, &n, &off, "ffn_norm_w", "ffn+gate", GS_TENSOR_NORM, d, 0);
        add_spec(s, &n, &off, "ffn_w1_k", "ffn+gate", GS_TENSOR_MATRIX, d, 2 * f);
        add_spec(s, &n, &off, "ffn_w2_k", "ffn+gate", GS_TENSOR_MATRIX, f, d);
        add_spec(s, &n, &off, "pg_norm_w", "ffn+gate", GS_TENSOR_NORM, d, 0);
        add_spec(s, &n, &off, "pg_gate_k", "ffn+gate", GS_TENSOR_MATRIX, d, d);
        add_spec(s, &n, &off, "pg_gate_b", "ffn+gate", GS_TENSOR_BIAS, d, 0);
        return n;
    }
    const char *w = "memory write";
    add_spec(s, &n, &off, "write_norm_w", w, GS_TENSOR_NORM, d, 0);
    add_spec(s, &n, &off, "write_W_k_k", w, GS_TENSOR_MATRIX, d, H * dk);
    add_spec(s, &n, &off, "write_W_k_b", w, GS_TENSOR_BIAS, H * dk, 0);
    add_spec(s, &n, &off, "write_W_v_k", w, GS_TENSOR_MATRIX, d, H * dv);
    add_spec(s, &n, &off, "write_W_beta_k", w, GS_TENSOR_MATRIX, d, H);
    add_spec(s, &n, &off, "write_A_log", w, GS_TENSOR_A_LOG, H, 0);
    add_spec(s, &n, &off, "write_dt_bias", w, GS_TENSOR_DT_BIAS, H, 0);
    add_spec(s, &n, &off, "write_W_a_k", w, GS_TENSOR_MATRIX, d, H);
    for (int i = 0; i < c->n_layers && i < GS_MAX_LAYERS; i++) {
        const char *g = gs_layer_group(i);
        char name[48];
#define L(suffix, role, r, cc) (snprintf(name, sizeof name, "L%d_%s", i, suffix), add_spec(s, &n, &off, name, g, role, r, cc))
        L("ffn_norm_w", GS_TENSOR_NORM, d, 0);
        L("ffn_w1_k", GS_TENSOR_MATRIX, d, 2 * f);
        L("ffn_w2_k", GS_TENSOR_MATRIX, f, d);
        L("pg_norm_w", GS_TENSOR_NORM, d, 0);
        L("pg_gate_k", GS_TENSOR_MATRIX, d, d);
        L("pg_gate_b", GS_TENSOR_BIAS, d, 0);
        L("read_norm_w", GS_TENSOR_NORM, d, 0);
        L("read_W_q_k", GS_TENSOR_MATRIX, d, H * dk);
        L("read_W_q_b", GS_TENSOR_BIAS, H * dk, 0);
        L("read_W_gate_k", GS_TENSOR_MATRIX, d, H * dv);
        L("read_out_norm_w", GS_TENSOR_NORM, H * dv, 0);
        L("read_W_o_k", GS_TENSOR_MATRIX, H * dv, d);
#undef L
    }
    return n;
}

void gpn_family_bind(const gs_config *c, float *block, gpn_params *p) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gpn_family_tensor_specs(c, specs);
    for (int i = 0; i < n; i++) {
        const char *nm = specs[i].name;
        float *ptr = block + specs[i].offset;
        int layer = 0;
        const char *suffix = nm;
        if (c->arch == GS_ARCH_GPN_M && nm[0] == 'L' && sscanf(nm, "L%d_", &layer) == 1) suffix = strchr(nm, '_') + 1;
        gpn_layer_params *lp = &p->layers[layer];
        static const struct { const char *name; size_t off; } top[] = {
#define T(n, f) {n, offsetof(gpn_params, f)}
            T("embedding", embedding), T("decode_norm_w", decode_norm_w), T("decode_proj_k", decode_proj_k),
            T("decode_bias", decode_bias), T("fuse_norm_w", fuse_norm_w), T("fuse_proj_k", fuse_proj_k),
            T("fg_norm_w", fg_norm_w), T("fg_gate_k", fg_gate_k), T("fg_gate_b", fg_gate_b),
            T("write_norm_w", write_norm_w), T("write_W_k_k", write_W_k_k), T("write_W_k_b", write_W_k_b),
            T("write_W_v_k", write_W_v_k), T("write_W_beta_k", write_W_beta_k), T("write_A_log", write_A_log),
            T("write_dt_bias", write_dt_bias), T("write_W_a_k", write_W_a_k),
#undef T
        };
        static const struct { const char *name; size_t off; } per_layer[] = {
#define T(n, f) {n, offsetof(gpn_layer_params, f)}
            T("ffn_norm_w", ffn_norm_w), T("ffn_w1_k", ffn_w1), T("ffn_w2_k", ffn_w2), T("pg_norm_w", pg_norm_w),
            T("pg_gate_k", pg_gate_k), T("pg_gate_b", pg_gate_b), T("read_norm_w", read_norm_w),
            T("read_W_q_k", read_W_q_k), T("read_W_q_b", read_W_q_b), T("read_W_gate_k", read_W_gate_k),
            T("read_out_norm_w", read_out_norm_w), T("read_W_o_k", read_W_o_k),
#undef T
        };
        int bound = 0;
        if (suffix == nm)
            for (size_t k = 0; k < sizeof top / sizeof *top && !bound; k++)
                if (strcmp(top[k].name, nm) == 0) { *(float **)((char *)p + top[k].off) = ptr; bound = 1; }
        for (size_t k = 0; k < sizeof per_layer / sizeof *per_layer && !bound; k++)
            if (strcmp(per_layer[k].name, suffix) == 0) { *(float **)((char *)lp + per_layer[k].off) = ptr; bound = 1; }
    }
}

int gpn_family_validate(const gs_config *c) {
    if (c->V < 1 || c->d < 1 || c->e < 1 || c->f < 1)
        return gs_fail("invalid sizes (V=%d, d=%d, e=%d, f=%d): all must be positive", c->V, c->d, c->e, c->f);
    if (c->arch == GS_ARCH_GPN_M) {
        if (c->H < 1 || c->dk < 1 || c->dv < 1)
            return gs_fail("invalid memory sizes (H=%d, dk=%d, dv=%d): all must be positive", c->H, c->dk, c->dv);
        if (c->n_layers < 1 || c->n_layers > GS_MAX_LAYERS)
            return gs_fail("%d layers: between 1 and %d supported", c->n_layers, GS_MAX_LAYERS);
    } else if (c->n_layers != 1) {
        return gs_fail("a GPN without memory has exactly one layer (got %d)", c->n_layers);
    }
    /* keep every matrix index within int range for CBLAS (and every size
     * product gs_tensor_specs computes in int) */
    if ((int64_t)c->V * c->e > INT32_MAX || (int64_t)c->d * c->d > INT32_MAX || (int64_t)c->d * 2 * c->f > INT32_MAX ||
        (int64_t)c->d * c->H * c->dk > INT32_MAX || (int64_t)c->d * c->H * c->dv > INT32_MAX)
        return gs_fail("sizes too large for 32-bit BLAS indices");
    return 0;
}

static int64_t dim(const st_tensor *t, int i) { return t && i < t->ndim ? t->shape[i] : -1; }

/* Infer the configuration from tensor shapes (gpn-model.md, "Every size is
 * recoverable from tensor shapes"). */
int gpn_family_infer(const st_file *f, gs_config *c) {
    memset(c, 0, sizeof *c);
    const st_tensor *emb = safetensors_find(f, "embedding"), *dn = safetensors_find(f, "decode_norm_w");
    if (!emb || emb->ndim != 2) return gs_fail("missing 2-D tensor 'embedding' (V, d_emb): not a GPN checkpoint");
    if (!dn || dn->ndim != 1) return gs_fail("missing 1-D tensor 'decode_norm_w' (d_state): not a GPN checkpoint");
    c->V = (int)emb->shape[0];
    c->e = (int)emb->shape[1];
    c->d = (int)dn->shape[0];
    c->decoder_bias = safetensors_find(f, "decode_bias") != NULL;
    const st_tensor *alog = safetensors_find(f, "write_A_log");
    if (!alog) {
        c->arch = GS_ARCH_GPN;
        c->n_layers = 1;
        const st_tensor *w2 = safetensors_find(f, "ffn_w2_k");
        if (!w2) return gs_fail("missing tensor 'ffn_w2_k' (GPN) and 'write_A_log' (GPN+M): cannot tell the architecture");
        c->f = (int)dim(w2, 0);
        return 0;
    }
    c->arch = GS_ARCH_GPN_M;
    c->H = (int)dim(alog, 0);
    const st_tensor *wk = safetensors_find(f, "write_W_k_k"), *wv = safetensors_find(f, "write_W_v_k");
    if (!wk || wk->ndim != 2) return gs_fail("missing 2-D tensor 'write_W_k_k'");
    if (!wv || wv->ndim != 2) return gs_fail("missing 2-D tensor 'write_W_v_k'");
    if (c->H < 1 || wk->shape[1] % c->H || wv->shape[1] % c->H)
        return gs_fail("write_W_k_k (%lld cols) and write_W_v_k (%lld cols) are not multiples of n_heads=%d",
                       (long long)wk->shape[1], (long long)wv->shape[1], c->H);
    c->dk = (int)(wk->shape[1] / c->H);
    c->dv = (int)(wv->shape[1] / c->H);
    char name[48];
    while (c->n_layers < GS_MAX_LAYERS) {
        snprintf(name, sizeof name, "L%d_ffn_w2_k", c->n_layers);
        if (!safetensors_find(f, name)) break;
        c->n_layers++;
    }
    if (c->n_layers == 0) return gs_fail("GPN+M checkpoint without layers: missing tensor 'L0_ffn_w2_k'");
    c->f = (int)dim(safetensors_find(f, "L0_ffn_w2_k"), 0);
    return 0;
}

/* Where each size came from, as gpn_family_infer found it. */
void gpn_family_describe(const st_file *f, const gs_config *c, char *buf, size_t size) {
    gs_describe_shape(buf, size, "vocab_size", c->V, f, "embedding", "");
    gs_describe_shape(buf, size, "d_emb", c->e, f, "embedding", "");
    gs_describe_shape(buf, size, "d_state", c->d, f, "decode_norm_w", "");
    gs_describe(buf, size, "decoder_bias", c->decoder_bias, "tensor decode_bias %s", c->decoder_bias ? "present" : "absent");
    if (c->arch == GS_ARCH_GPN) {
        gs_describe(buf, size, "n_layers", 1, "GPN has one layer: no tensor write_A_log");
        gs_describe_shape(buf, size, "d_ffn", c->f, f, "ffn_w2_k", "");
        return;
    }
    gs_describe(buf, size, "n_layers", c->n_layers, "L{i}_ffn_w2_k for i = 0..%d", c->n_layers - 1);
    gs_describe_shape(buf, size, "d_ffn", c->f, f, "L0_ffn_w2_k", "");
    gs_describe_shape(buf, size, "n_heads", c->H, f, "write_A_log", "");
    gs_describe_shape(buf, size, "d_key", c->dk, f, "write_W_k_k", " / n_heads");
    gs_describe_shape(buf, size, "d_val", c->dv, f, "write_W_v_k", " / n_heads");
}

/* __metadata__ may confirm the inferred config, never contradict it. */
int gpn_family_check_metadata(const st_file *f, const gs_config *c) {
    const char *arch = safetensors_meta(f, "arch");
    if (arch) {
        int is_m = strcmp(arch, "gpn_m") == 0 || strcmp(arch, "sot_m") == 0;
        int is_plain = strcmp(arch, "gpn") == 0 || strcmp(arch, "sot") == 0;
        if (!is_m && !is_plain) return gs_fail("__metadata__ arch '%s' is unknown (expected gpn or gpn_m)", arch);
        if (is_m != (c->arch == GS_ARCH_GPN_M))
            return gs_fail("__metadata__ says arch=%s but the tensors are those of %s", arch, gs_arch_name(c->arch));
    }
    const struct { const char *key; int value; } keys[] = {
        {"vocab_size", c->V}, {"d_state", c->d}, {"d_emb", c->e}, {"d_ffn", c->f}, {"n_heads", c->H},
        {"d_key", c->dk}, {"d_val", c->dv}, {"n_layers", c->n_layers},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = safetensors_meta(f, keys[i].key);
        if (!v) continue;
        char *end;
        long x = strtol(v, &end, 10);
        if (*v == 0 || *end != 0) return gs_fail("__metadata__ %s='%s' is not an integer", keys[i].key, v);
        if (c->arch == GS_ARCH_GPN && (keys[i].value == 0 || strcmp(keys[i].key, "n_layers") == 0) && x == keys[i].value) continue;
        if (x != keys[i].value)
            return gs_fail("__metadata__ says %s=%ld but the tensor shapes give %d", keys[i].key, x, keys[i].value);
    }
    const char *bias = safetensors_meta(f, "use_decoder_bias");
    if (bias) {
        int b = strcmp(bias, "true") == 0 || strcmp(bias, "True") == 0 || strcmp(bias, "1") == 0;
        if (b != c->decoder_bias)
            return gs_fail("__metadata__ says use_decoder_bias=%s but decode_bias is %s", bias, c->decoder_bias ? "present" : "absent");
    }
    return 0;
}


int gpn_family_recognise(const st_file *f) {
    return safetensors_find(f, "decode_norm_w") != NULL && safetensors_find(f, "embedding") != NULL;
}

void gpn_family_write_metadata(const gs_config *c, st_writer *w) {
    char buf[32];
    st_writer_meta(w, "arch", gs_arch_name(c->arch));
#define META(k, v) (snprintf(buf, sizeof buf, "%d", v), st_writer_meta(w, k, buf))
    META("vocab_size", c->V); META("d_state", c->d); META("d_emb", c->e); META("d_ffn", c->f);
    if (c->arch == GS_ARCH_GPN_M) { META("n_heads", c->H); META("d_key", c->dk); META("d_val", c->dv); META("n_layers", c->n_layers); }
#undef META
    st_writer_meta(w, "use_decoder_bias", c->decoder_bias ? "true" : "false");
}

/* decode(s) = rms(s, decode_norm_w) decode_proj_k (+ decode_bias), then E^T (docs/gpn-model.md) */
int gpn_family_decode(const gs_model *m, const float *s, float *logits) {
    const gs_config *c = &m->cfg;
    float *xn = malloc((size_t)c->d * sizeof *xn), *z = malloc((size_t)c->e * sizeof *z);
    if (!xn || !z) { free(xn); free(z); return gs_fail("out of memory"); }
    rmsnorm_forward(xn, s, m->p.decode_norm_w, 1, c->d);
    matmul_forward(z, xn, m->p.decode_proj_k, c->decoder_bias ? m->p.decode_bias : NULL, 1, c->d, c->e);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, c->V, c->e, 1.0f, m->p.embedding, c->e, z, 1, 0.0f, logits, 1);
    free(xn);
    free(z);
    return 0;
}

const float *gpn_family_embedding(const gs_model *m, int *width) {
    *width = m->cfg.e;
    return m->p.embedding;
}
