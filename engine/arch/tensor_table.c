/* Specs and look-ups from a family's tensor table (tensor_table.h). */
#include "engine/arch/tensor_table.h"

#include <string.h>

#include "engine/arch/family.h"
#include "engine/arch/layer_pattern.h"

/* The row's shape for c: its rank, 0 when a size is 0 (the tensor is left out). */
static int shape_of(const gs_tensor_table *t, const gs_tensor_name *row, const gs_config *c, int64_t dims[3]) {
    int nd = 0;
    while (nd < 3 && row->dims[nd] != GS_SZ_END) {
        dims[nd] = t->size(c, row->dims[nd]);
        if (dims[nd] <= 0) return 0;
        nd++;
    }
    return nd;
}

static void add_row(const gs_tensor_table *t, int id, int layer, const gs_config *c, gs_tensor_spec *s, int *n,
                    size_t *off) {
    const gs_tensor_name *row = &t->tensors[id];
    int64_t d[3] = {0, 0, 0};
    int nd = row->name ? shape_of(t, row, c, d) : 0;
    if (!nd) return;
    char name[sizeof s->name];
    gs_pattern_format(row->name, layer, name, sizeof name);
    const char *group = row->group ? row->group : gs_layer_group(layer);
    if (nd == 3) gs_spec_add3(s, n, off, name, group, row->role, d[0], d[1], d[2]);
    else gs_spec_add(s, n, off, name, group, row->role, d[0], nd == 2 ? d[1] : 0);
}

int gs_table_specs(const gs_tensor_table *t, const gs_config *c, gs_tensor_spec *specs) {
    int n = 0;
    size_t off = 0;
    for (int id = 0; id < t->n;) {
        if (!gs_pattern_per_layer(t->tensors[id].name)) {
            add_row(t, id++, 0, c, specs, &n, &off);
            continue;
        }
        int end = id;
        while (end < t->n && gs_pattern_per_layer(t->tensors[end].name)) end++;
        for (int l = 0; l < c->n_layers && l < GS_MAX_LAYERS; l++)
            for (int k = id; k < end; k++) add_row(t, k, l, c, specs, &n, &off);
        id = end;
    }
    return n;
}

void gs_table_name(const gs_tensor_table *t, int id, int layer, char *out, size_t size) {
    gs_pattern_format(t->tensors[id].name, layer, out, size);
}

const st_tensor *gs_table_find(const st_file *f, const gs_tensor_table *t, int id, int layer) {
    char name[sizeof((gs_tensor_spec *)0)->name];
    gs_table_name(t, id, layer, name, sizeof name);
    return safetensors_find(f, name);
}

const float *gs_table_tensor(const gs_model *m, const gs_tensor_table *t, int id, int layer) {
    char name[sizeof((gs_tensor_spec *)0)->name];
    gs_table_name(t, id, layer, name, sizeof name);
    return gs_model_tensor(m, name);
}

float *gs_table_in_block(const gs_tensor_table *t, const gs_config *c, float *block, int id, int layer) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_table_specs(t, c, specs);
    char name[sizeof specs->name];
    gs_table_name(t, id, layer, name, sizeof name);
    for (int i = 0; i < n; i++)
        if (!strcmp(specs[i].name, name)) return block + specs[i].offset;
    return NULL;
}

void gs_table_describe_shape(char *buf, size_t size, const char *key, long value, const st_file *f,
                             const gs_tensor_table *t, int id, int layer, const char *how) {
    char name[sizeof((gs_tensor_spec *)0)->name];
    gs_table_name(t, id, layer, name, sizeof name);
    gs_describe_shape(buf, size, key, value, f, name, how);
}
