/* The table of regular-language tasks and their example generator. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/prng.h"
#include "engine/tasks/task_rules.h"

#define DELETANG "Deletang et al. 2023, google-deepmind/neural_networks_chomsky_hierarchy tasks/regular/"
#define TOMITA "Tomita 1982, as in Weiss et al. 2018 (see docs/tasks.md)"
#define DYCK "Bhattamishra et al. 2020 (D_n: Dyck-1 of depth <= n; see docs/tasks.md)"

#define ROW(id, alphabet, classes, sampling, odd, summary, source) \
    {#id, alphabet, classes, sampling, odd, summary, source, id##_dfa, id##_label}

static const gs_task task_table[] = {
    ROW(parity, "01", 2, GS_TASK_UNIFORM, 0, "the number of 1s mod 2", DELETANG "parity_check.py"),
    ROW(even_pairs, "01", 2, GS_TASK_UNIFORM, 0, "the number of 01 and 10 pairs mod 2", DELETANG "even_pairs.py"),
    ROW(cycle_navigation, "012", 5, GS_TASK_UNIFORM, 0, "the end position on a cycle of 5; symbol a moves a-1",
        DELETANG "cycle_navigation.py"),
    ROW(modular_arithmetic, "01234+-*", 5, GS_TASK_UNIFORM, 1, "the value mod 5 of number (op number)*, * before + -",
        DELETANG "modular_arithmetic.py"),
    ROW(tomita3, "01", 2, GS_TASK_BALANCED, 0, "1 unless an odd run of 1s is followed by an odd run of 0s", TOMITA),
    ROW(tomita4, "01", 2, GS_TASK_BALANCED, 0, "1 unless 000 occurs", TOMITA),
    ROW(tomita5, "01", 2, GS_TASK_BALANCED, 0, "1 if the numbers of 0s and of 1s are both even", TOMITA),
    ROW(tomita6, "01", 2, GS_TASK_BALANCED, 0, "1 if #0 - #1 is divisible by 3", TOMITA),
    ROW(tomita7, "01", 2, GS_TASK_BALANCED, 0, "1 if the string is in 0*1*0*1*", TOMITA),
    ROW(d2, "ab", 2, GS_TASK_BALANCED, 0, "1 if balanced (a opens, b closes) with depth <= 2", DYCK),
    ROW(d3, "ab", 2, GS_TASK_BALANCED, 0, "1 if balanced with depth <= 3", DYCK),
    ROW(d4, "ab", 2, GS_TASK_BALANCED, 0, "1 if balanced with depth <= 4", DYCK),
    ROW(d2_prefix, "ab", 2, GS_TASK_BALANCED, 0, "1 if a prefix of a D_2 word (depth stays in 0..2)", DYCK),
    ROW(d3_prefix, "ab", 2, GS_TASK_BALANCED, 0, "1 if a prefix of a D_3 word", DYCK),
    ROW(d4_prefix, "ab", 2, GS_TASK_BALANCED, 0, "1 if a prefix of a D_4 word", DYCK),
};

const gs_task *gs_tasks(int *count) {
    *count = (int)(sizeof task_table / sizeof task_table[0]);
    return task_table;
}

const gs_task *gs_task_find(const char *name) {
    int n;
    const gs_task *t = gs_tasks(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    gs_fail("unknown task '%s' (gpnscope tasks --list names them)", name);
    return NULL;
}

void gs_task_dfa(const gs_task *task, gs_dfa *dfa) { task->build_dfa(dfa); }

int gs_dfa_run(const gs_dfa *dfa, const int *symbols, int length) {
    int q = dfa->start;
    for (int i = 0; i < length; i++) q = dfa->next[q][symbols[i]];
    return dfa->output[q];
}

int gs_task_check_length(const gs_task *task, long long length) {
    if (length < 1 || length > GS_TASK_MAX_LENGTH)
        return gs_fail("task %s: length %lld is outside 1..%d", task->name, length, GS_TASK_MAX_LENGTH);
    if (task->odd_lengths_only && length % 2 == 0)
        return gs_fail("task %s: length %lld is even; expressions (number (op number)*) have odd lengths", task->name,
                       length);
    return 0;
}

static int uniform_below(uint64_t *state, int n) { return (int)(((gs_splitmix64(state) >> 32) * (uint64_t)n) >> 32); }
static double uniform01(uint64_t *state) { return (double)(gs_splitmix64(state) >> 11) * 0x1p-53; }

/* ways[k*S + q]: how many strings of length k lead from q to a state whose
 * output is LABEL (doubles: 2^1000 still fits). */
static void count_ways(const gs_dfa *dfa, int length, int label, double *ways) {
    int S = dfa->n_states;
    for (int q = 0; q < S; q++) ways[q] = dfa->output[q] == label;
    for (int k = 1; k <= length; k++)
        for (int q = 0; q < S; q++) {
            double w = 0;
            for (int s = 0; s < dfa->n_symbols; s++) w += ways[(k - 1) * S + dfa->next[q][s]];
            ways[k * S + q] = w;
        }
}

/* One string uniform among those of LENGTH with the label WAYS counts. */
static void sample_with_label(const gs_dfa *dfa, int length, const double *ways, uint64_t *state, int *out) {
    int S = dfa->n_states, q = dfa->start;
    for (int t = 0; t < length; t++) {
        int rest = length - t - 1, s = 0;
        double r = uniform01(state) * ways[(rest + 1) * S + q];
        for (; s < dfa->n_symbols - 1; s++) {
            r -= ways[rest * S + dfa->next[q][s]];
            if (r < 0) break;
        }
        while (ways[rest * S + dfa->next[q][s]] == 0) s--; /* rounding at the top end */
        out[t] = s;
        q = dfa->next[q][s];
    }
}

static void sample_uniform(const gs_task *task, int length, uint64_t *state, int *out) {
    int k = (int)strlen(task->alphabet);
    for (int t = 0; t < length; t++) {
        if (task->odd_lengths_only) /* numbers at even positions, operators at odd ones */
            out[t] = t % 2 == 0 ? uniform_below(state, 5) : 5 + uniform_below(state, 3);
        else
            out[t] = uniform_below(state, k);
    }
}

int gs_task_generate(const gs_task *task, int length, int count, uint64_t seed, int *symbols, int *labels) {
    if (gs_task_check_length(task, length) != 0) return -1;
    if (count < 1) return gs_fail("task %s: count %d must be at least 1", task->name, count);
    uint64_t state = seed;
    if (task->sampling == GS_TASK_UNIFORM) {
        for (int i = 0; i < count; i++) {
            sample_uniform(task, length, &state, symbols + (size_t)i * length);
            labels[i] = task->label(symbols + (size_t)i * length, length);
        }
        return 0;
    }
    /* balanced: each example's label is drawn among the labels that some
     * string of this length has, then the string uniformly among them */
    gs_dfa dfa;
    gs_task_dfa(task, &dfa);
    size_t per_label = (size_t)(length + 1) * dfa.n_states;
    double *ways = malloc(per_label * task->n_classes * sizeof *ways);
    if (!ways) return gs_fail("task %s: out of memory for length %d", task->name, length);
    int present[GS_DFA_MAX_STATES], n_present = 0;
    for (int c = 0; c < task->n_classes; c++) {
        count_ways(&dfa, length, c, ways + c * per_label);
        if (ways[c * per_label + (size_t)length * dfa.n_states + dfa.start] > 0) present[n_present++] = c;
    }
    for (int i = 0; i < count; i++) {
        int c = present[uniform_below(&state, n_present)];
        sample_with_label(&dfa, length, ways + c * per_label, &state, symbols + (size_t)i * length);
        labels[i] = c;
    }
    free(ways);
    return 0;
}
