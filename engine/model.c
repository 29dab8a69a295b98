#include "engine/model.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/half.h"
#include "engine/arch/family.h"
#include "io/checkpoint/safetensors.h"

const char *gs_arch_name(gs_arch a) {
    gs_config c = {.arch = a};
    const gs_family *f = gs_family_of(&c);
    return f ? f->name : "?";
}

const float *gs_model_tensor(const gs_model *m, const char *name) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&m->cfg, specs);
    for (int i = 0; i < n; i++)
        if (!strcmp(specs[i].name, name)) return m->block + specs[i].offset;
    return NULL;
}

/* Architecture knowledge comes from the model's family (engine/arch/family.h). */
int gs_tensor_specs(const gs_config *c, gs_tensor_spec *s) { return gs_family_of(c)->tensor_specs(c, s); }

void gpn_params_bind(const gs_config *c, float *block, gpn_params *p) {
    const gs_family *f = gs_family_of(c);
    memset(p, 0, sizeof *p);
    if (f->bind) f->bind(c, block, p);
}

int gs_config_validate(const gs_config *c) {
    const gs_family *f = gs_family_of(c);
    if (!f) return gs_fail("unknown architecture %d", (int)c->arch);
    return f->validate(c);
}

void gs_spec_add(gs_tensor_spec *s, int *n, size_t *off, const char *name, const char *group, gs_tensor_role role,
                 int64_t r, int64_t c) {
    gs_tensor_spec *t = &s[(*n)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = c ? 2 : 1;
    t->shape[0] = r;
    t->shape[1] = c;
    t->numel = (size_t)r * (size_t)(c ? c : 1);
    t->offset = *off;
    t->role = role;
    t->group = group;
    *off += t->numel;
}

void gs_spec_add3(gs_tensor_spec *s, int *n, size_t *off, const char *name, const char *group, gs_tensor_role role,
                  int64_t r, int64_t c, int64_t k) {
    gs_spec_add(s, n, off, name, group, role, r, c);
    gs_tensor_spec *t = &s[*n - 1];
    t->ndim = 3;
    t->shape[2] = k;
    *off += t->numel * (size_t)(k - 1);
    t->numel *= (size_t)k;
}

const char *gs_layer_group(int layer) {
    static char names[GS_MAX_LAYERS][16];
    if (!names[layer][0]) snprintf(names[layer], sizeof names[layer], "layer %d", layer);
    return names[layer];
}

size_t gs_param_count(const gs_config *c) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    return specs[n - 1].offset + specs[n - 1].numel;
}

gs_model *gs_model_new(const gs_config *c) {
    if (gs_config_validate(c) != 0) return NULL;
    gs_model *m = calloc(1, sizeof *m);
    if (!m) { gs_fail("out of memory"); return NULL; }
    m->cfg = *c;
    m->n_params = gs_param_count(c);
    m->block = calloc(m->n_params, sizeof(float));
    if (!m->block) { free(m); gs_fail("out of memory for %zu parameters", gs_param_count(c)); return NULL; }
    gpn_params_bind(c, m->block, &m->p);
    snprintf(m->source_dtype, sizeof m->source_dtype, "F32");
    return m;
}

void gs_model_free(gs_model *m) {
    if (!m) return;
    for (int i = 0; i < m->n_extra; i++) free(m->extra_tensors[i]);
    free(m->extra_tensors);
    free(m->block);
    free(m->path);
    free(m);
}

/* A model folder (models/gpnm15-small) stands for its model.safetensors, as
 * the shipped models and a converted companion checkpoint are laid out. */
const char *gs_model_file(const char *path, char *buf, size_t size) {
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return path;
    snprintf(buf, size, "%s%smodel.safetensors", path, path[strlen(path) - 1] == '/' ? "" : "/");
    if (stat(buf, &sb) != 0) {
        gs_fail("%s is a folder without a model.safetensors: name the model file, or convert a checkpoint into it "
                "(gpnscope convert CHECKPOINT %s)", path, buf);
        return NULL;
    }
    return buf;
}

gs_model *gs_model_load(const char *given) {
    char buf[4096];
    const char *path = gs_model_file(given, buf, sizeof buf);
    if (!path) return NULL;
    st_file *f = safetensors_open(path);
    if (!f) return NULL;
    gs_model *m = NULL;
    gs_config c;
    /* sizes are ints: a larger dimension (possible in a tensor of no data,
     * shaped [0, 2^40]) is refused rather than truncated */
    for (int i = 0; i < f->n_tensors; i++)
        for (int k = 0; k < f->tensors[i].ndim; k++)
            if (f->tensors[i].shape[k] > INT32_MAX) {
                gs_fail("tensor '%s' has dimension %lld, more than a model can have", f->tensors[i].name,
                        (long long)f->tensors[i].shape[k]);
                goto fail;
            }
    const gs_family *fam = gs_family_of_file(f);
    if (!fam || fam->infer(f, &c) != 0 || fam->check_metadata(f, &c) != 0 || gs_config_validate(&c) != 0) goto fail;
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&c, specs);
    /* Every tensor is checked before the parameters are allocated: the sizes
     * come from a few shapes (one may be [f, 0], holding no data), so a file
     * of a few hundred bytes could otherwise ask for gigabytes. Once all
     * shapes match, the file itself holds every parameter. */
    for (int i = 0; i < n; i++) {
        const gs_tensor_spec *s = &specs[i];
        const st_tensor *t = safetensors_find(f, s->name);
        char want[96] = "[";
        for (int k = 0; k < s->ndim; k++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", k ? ", " : "", (long long)s->shape[k]);
        strncat(want, "]", sizeof want - strlen(want) - 1);
        if (!t) { gs_fail("missing tensor '%s' (needed by %s, shape %s)", s->name, gs_arch_name(c.arch), want); goto fail; }
        int ok = t->ndim == s->ndim;
        for (int k = 0; ok && k < s->ndim; k++) ok = t->shape[k] == s->shape[k];
        if (!ok) {
            char got[128] = "[";
            for (int k = 0; k < t->ndim; k++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", k ? ", " : "", (long long)t->shape[k]);
            strncat(got, "]", sizeof got - strlen(got) - 1);
            gs_fail("tensor '%s' has shape %s, expected %s for this configuration", s->name, got, want);
            goto fail;
        }
    }
    m = gs_model_new(&c);
    if (!m) goto fail;
    for (int i = 0; i < n; i++) {
        const gs_tensor_spec *s = &specs[i];
        const st_tensor *t = safetensors_find(f, s->name);
        if (st_tensor_to_f32(t, m->block + s->offset) != 0) goto fail;
        if (i == 0) snprintf(m->source_dtype, sizeof m->source_dtype, "%s", st_dtype_name(t->dtype));
    }
    /* tensors the architecture does not use are reported, not silently dropped */
    m->extra_tensors = calloc((size_t)f->n_tensors + 1, sizeof *m->extra_tensors);
    if (!m->extra_tensors) { gs_fail("out of memory"); goto fail; }
    for (int i = 0; i < f->n_tensors; i++) {
        int used = 0;
        for (int k = 0; k < n && !used; k++) used = strcmp(specs[k].name, f->tensors[i].name) == 0;
        if (!used) m->extra_tensors[m->n_extra++] = strdup(f->tensors[i].name);
    }
    m->path = strdup(path);
    if (gs_hash_file(path, m->hash) != 0) goto fail;
    safetensors_close(f);
    return m;
fail:
    gs_fail_context("%s: ", path);
    gs_model_free(m);
    safetensors_close(f);
    return NULL;
}

int gs_model_save(const gs_model *m, const char *path, int as_bf16) { return gs_model_save_meta(m, path, as_bf16, NULL); }

int gs_model_save_meta(const gs_model *m, const char *path, int as_bf16, const char *const *extra_meta) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&m->cfg, specs);
    st_writer *w = st_writer_new();
    if (!w) return -1;
    uint16_t *half = NULL;
    if (as_bf16) {
        half = malloc(m->n_params * sizeof *half);
        if (!half) { st_writer_free(w); return gs_fail("out of memory"); }
        for (size_t i = 0; i < m->n_params; i++) half[i] = f32_to_bf16(m->block[i]);
    }
    for (int i = 0; i < n; i++) {
        const void *data = as_bf16 ? (const void *)(half + specs[i].offset) : (const void *)(m->block + specs[i].offset);
        st_writer_add(w, specs[i].name, as_bf16 ? ST_BF16 : ST_F32, specs[i].ndim, specs[i].shape, data);
    }
    gs_family_of(&m->cfg)->write_metadata(&m->cfg, w);
    for (int i = 0; extra_meta && extra_meta[i]; i += 2) st_writer_meta(w, extra_meta[i], extra_meta[i + 1]);
    int rc = st_writer_save(w, path);
    st_writer_free(w);
    free(half);
    return rc;
}
