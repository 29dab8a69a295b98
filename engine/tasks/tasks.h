/* Regular-language tasks (parity, even pairs, cycle navigation, modular
 * arithmetic, Tomita 3-7, D_n and the prefixes of D_n): each task is one row
 * of the table in tasks.c with its alphabet, its minimal DFA (a transition
 * table with an output per state) and a label rule written directly from
 * the task's definition. The two descriptions are independent on purpose:
 * tests/unit/test_tasks.c runs both on every short string and demands they
 * agree. See docs/tasks.md. */
#ifndef GS_ENGINE_TASKS_H
#define GS_ENGINE_TASKS_H

#include <stdint.h>

#define GS_DFA_MAX_STATES 64
#define GS_DFA_MAX_SYMBOLS 8
#define GS_TASK_MAX_LENGTH 1000
/* The output of a DFA state whose strings are outside the task's domain
 * (an ill-formed modular-arithmetic expression). */
#define GS_TASK_NO_LABEL (-1)

typedef struct {
    int n_states, n_symbols, start;
    int next[GS_DFA_MAX_STATES][GS_DFA_MAX_SYMBOLS];
    int output[GS_DFA_MAX_STATES]; /* the label of a string ending here */
} gs_dfa;

typedef enum {
    GS_TASK_UNIFORM,   /* inputs drawn uniformly, as the chomsky-hierarchy benchmark does */
    GS_TASK_BALANCED,  /* membership: half in the language, half not, each uniform */
} gs_task_sampling;

typedef struct {
    const char *name;
    const char *alphabet;   /* one character per symbol; symbol i is alphabet[i] */
    int n_classes;          /* labels are 0..n_classes-1 */
    gs_task_sampling sampling;
    int odd_lengths_only;   /* modular arithmetic: number (op number)* */
    const char *summary;    /* what the label says */
    const char *source;     /* where the definition comes from */
    void (*build_dfa)(gs_dfa *dfa);
    /* The label from the definition, or GS_TASK_NO_LABEL outside the domain. */
    int (*label)(const int *symbols, int length);
} gs_task;

const gs_task *gs_tasks(int *count);
/* The row named NAME, or NULL with "unknown task 'NAME' ..." set. */
const gs_task *gs_task_find(const char *name);
void gs_task_dfa(const gs_task *task, gs_dfa *dfa);
/* The output of the state the DFA ends in after reading the string. */
int gs_dfa_run(const gs_dfa *dfa, const int *symbols, int length);
/* 0, or -1 with a one-line message when LENGTH is not one the task has. */
int gs_task_check_length(const gs_task *task, long long length);
/* COUNT examples of LENGTH symbols from SEED: symbols[i*length + t] and
 * labels[i]; deterministic for a seed. 0, or -1 with a message. */
int gs_task_generate(const gs_task *task, int length, int count, uint64_t seed, int *symbols, int *labels);

#endif
