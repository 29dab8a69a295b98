/* analyses/automaton/ldru_nodes.h */
#include "analyses/automaton/ldru_nodes.h"

#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"

static int ldru_nodes(void *ctx, const int *symbols, int length, int *level, int *start, int *span, float *vectors) {
    const gs_ldru_nodes *c = ctx;
    const int d = c->model->cfg.d;
    ldru_tree tree;
    if (ldru_tree_alloc(&tree, &c->model->cfg, 1, length)) return -1;
    _Static_assert(sizeof(int) == sizeof(int32_t), "task symbols are ints, the tree takes int32_t");
    ldru_tree_forward(&tree, &c->w, (const int32_t *)symbols);
    int n = 0;
    for (int l = 0; l < tree.n_levels; l++)
        for (int k = 0; k < tree.count[l]; k++, n++) {
            int s, e;
            ldru_segment(length, l, k, &s, &e);
            level[n] = l, start[n] = s, span[n] = e - s;
            memcpy(vectors + (size_t)n * d, ldru_tree_node(&tree, 0, l, k), (size_t)d * sizeof *vectors);
        }
    ldru_tree_free(&tree);
    return n;
}

int gs_node_source_ldru(const gs_model *model, const gs_task *task, gs_ldru_nodes *ctx, gs_node_source *src) {
    if (!gs_family_is(&model->cfg, "ldru"))
        return gs_fail("%s is a %s model; the automaton analysis reads MLP-LDRU's tree", model->path ? model->path : "the model",
                       gs_arch_name(model->cfg.arch));
    int symbols = (int)strlen(task->alphabet);
    if (model->cfg.V != symbols)
        return gs_fail("the model reads %d symbols but task %s has %d (%s): give the task it was trained on",
                       model->cfg.V, task->name, symbols, task->alphabet);
    ctx->model = model;
    ldru_weights_bind(&model->cfg, model->block, &ctx->w);
    *src = (gs_node_source){.width = model->cfg.d, .ctx = ctx, .nodes = ldru_nodes};
    return 0;
}
