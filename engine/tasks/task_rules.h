/* The label rules and DFA builders of each task, shared by the table in
 * tasks.c only (task_rules.c: rules from the definitions; task_dfas.c: the
 * minimal DFAs). */
#ifndef GS_ENGINE_TASK_RULES_H
#define GS_ENGINE_TASK_RULES_H

#include "engine/tasks/tasks.h"

#define TASK_ROW_FUNCS(id) \
    void id##_dfa(gs_dfa *dfa); \
    int id##_label(const int *s, int n);

TASK_ROW_FUNCS(parity)
TASK_ROW_FUNCS(even_pairs)
TASK_ROW_FUNCS(cycle_navigation)
TASK_ROW_FUNCS(modular_arithmetic)
TASK_ROW_FUNCS(tomita3)
TASK_ROW_FUNCS(tomita4)
TASK_ROW_FUNCS(tomita5)
TASK_ROW_FUNCS(tomita6)
TASK_ROW_FUNCS(tomita7)
TASK_ROW_FUNCS(d2)
TASK_ROW_FUNCS(d3)
TASK_ROW_FUNCS(d4)
TASK_ROW_FUNCS(d2_prefix)
TASK_ROW_FUNCS(d3_prefix)
TASK_ROW_FUNCS(d4_prefix)

#endif
