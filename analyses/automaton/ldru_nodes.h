/* MLP-LDRU's tree (engine/arch/ldru/ldru.h) as a node source for the
 * automaton analysis: every node of every level of ldru_tree_forward over
 * one string, with the segment ldru_segment gives it. The glue is these
 * two files; the analysis itself knows only gs_node_source. */
#ifndef GS_ANALYSES_AUTOMATON_LDRU_NODES_H
#define GS_ANALYSES_AUTOMATON_LDRU_NODES_H

#include "analyses/automaton/automaton.h"
#include "engine/arch/ldru/ldru.h"
#include "engine/model.h"

typedef struct {
    const gs_model *model;
    ldru_weights w;
} gs_ldru_nodes;

/* Fills *src for MODEL (which must outlive it, as must ctx); 0, or -1 with
 * "MODEL is a FAMILY model; the automaton analysis reads MLP-LDRU's tree"
 * or the task's alphabet not matching the model's symbols. */
int gs_node_source_ldru(const gs_model *model, const gs_task *task, gs_ldru_nodes *ctx, gs_node_source *src);

#endif
