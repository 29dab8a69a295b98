/* The regular-language tasks (engine/tasks): for every task, on every
 * string up to length 12 over its alphabet (modular arithmetic: every
 * string up to length 6 and every well-formed expression up to length 11,
 * since 8^12 strings are too many), the label rule written from the
 * definition equals the DFA's run; every DFA state is reachable and no two
 * are equivalent (Moore partition refinement, written here, not taken from
 * the library); generated examples carry the rule's label, are the same for
 * a seed and differ across seeds, and membership tasks give both labels;
 * bad names and lengths fail with one line; the Tomita 3 reading is pinned. */
#include <string.h>

#include "base/error.h"
#include "engine/tasks/tasks.h"
#include "testlib.h"

/* Number of blocks of the coarsest partition of the states that respects
 * outputs and transitions (the minimal DFA's size, when all are reachable). */
static int moore_blocks(const gs_dfa *d) {
    int block[GS_DFA_MAX_STATES], next_block[GS_DFA_MAX_STATES], n_blocks = 0;
    /* initial blocks: by output */
    for (int q = 0; q < d->n_states; q++) {
        block[q] = -1;
        for (int p = 0; p < q; p++)
            if (d->output[p] == d->output[q]) { block[q] = block[p]; break; }
        if (block[q] < 0) block[q] = n_blocks++;
    }
    for (;;) {
        int m = 0;
        for (int q = 0; q < d->n_states; q++) {
            next_block[q] = -1;
            for (int p = 0; p < q && next_block[q] < 0; p++) {
                int same = block[p] == block[q];
                for (int s = 0; same && s < d->n_symbols; s++) same = block[d->next[p][s]] == block[d->next[q][s]];
                if (same) next_block[q] = next_block[p];
            }
            if (next_block[q] < 0) next_block[q] = m++;
        }
        memcpy(block, next_block, sizeof block);
        if (m == n_blocks) return m;
        n_blocks = m;
    }
}

static int reachable(const gs_dfa *d) {
    int seen[GS_DFA_MAX_STATES] = {0}, stack[GS_DFA_MAX_STATES], top = 0, n = 1;
    seen[d->start] = 1;
    stack[top++] = d->start;
    while (top) {
        int q = stack[--top];
        for (int s = 0; s < d->n_symbols; s++)
            if (!seen[d->next[q][s]]) { seen[d->next[q][s]] = 1; stack[top++] = d->next[q][s]; n++; }
    }
    return n;
}

/* Every string of length 0..max_len whose symbol at position t is drawn
 * from symbol_at(t) (all symbols, or the expression grammar's). */
static long check_all(const gs_task *task, const gs_dfa *d, int max_len, int grammar_only, long *mismatches) {
    long checked = 0;
    int s[16] = {0}; /* zeroed: length 0 passes it unread, which GCC -O3 cannot see */
    for (int len = 0; len <= max_len; len++) {
        if (grammar_only && len % 2 == 0) continue;
        for (int t = 0; t < len; t++) s[t] = grammar_only && t % 2 ? 5 : 0;
        for (;;) {
            int rule = task->label(s, len), run = gs_dfa_run(d, s, len);
            if (rule != run) {
                if (*mismatches < 3) {
                    char str[17];
                    for (int t = 0; t < len; t++) str[t] = task->alphabet[s[t]];
                    str[len] = 0;
                    fprintf(stderr, "  %s: '%s' rule %d, DFA %d\n", task->name, str, rule, run);
                }
                ++*mismatches;
            }
            checked++;
            int t = len - 1; /* odometer */
            for (; t >= 0; t--) {
                int lo = grammar_only ? (t % 2 ? 5 : 0) : 0, hi = grammar_only ? (t % 2 ? 8 : 5) : d->n_symbols;
                if (++s[t] < hi) break;
                s[t] = lo;
            }
            if (t < 0) break;
        }
    }
    return checked;
}

static void test_task(const gs_task *task) {
    gs_dfa d;
    gs_task_dfa(task, &d);
    CHECK(d.n_symbols == (int)strlen(task->alphabet), "%s: DFA symbols %d, alphabet '%s'", task->name, d.n_symbols,
          task->alphabet);
    CHECK(reachable(&d) == d.n_states, "%s: %d of %d states reachable", task->name, reachable(&d), d.n_states);
    CHECK(moore_blocks(&d) == d.n_states, "%s: %d states but only %d classes of equivalent ones", task->name, d.n_states,
          moore_blocks(&d));
    long mismatches = 0, checked;
    if (task->odd_lengths_only)
        checked = check_all(task, &d, 6, 0, &mismatches) + check_all(task, &d, 11, 1, &mismatches);
    else
        checked = check_all(task, &d, 12, 0, &mismatches);
    CHECK(mismatches == 0, "%s: rule and DFA differ on %ld of %ld strings", task->name, mismatches, checked);
    printf("  %-20s %2d states, %ld strings agree\n", task->name, d.n_states, checked);

    /* generator: labels are the rule's, deterministic, seed-dependent */
    enum { N = 200 };
    int len = task->odd_lengths_only ? 41 : 40;
    static int a[N * 41], b[N * 41], la[N], lb[N];
    CHECK(gs_task_generate(task, len, N, 7, a, la) == 0, "%s: generate: %s", task->name, gs_error());
    CHECK(gs_task_generate(task, len, N, 7, b, lb) == 0, "%s: generate again", task->name);
    CHECK(memcmp(a, b, sizeof(int) * N * len) == 0 && memcmp(la, lb, sizeof la) == 0, "%s: seed 7 twice differs",
          task->name);
    CHECK(gs_task_generate(task, len, N, 8, b, lb) == 0 && memcmp(a, b, sizeof(int) * N * len) != 0,
          "%s: seeds 7 and 8 give the same examples", task->name);
    int wrong = 0, with_one = 0;
    for (int i = 0; i < N; i++) {
        wrong += task->label(a + i * len, len) != la[i] || gs_dfa_run(&d, a + i * len, len) != la[i];
        with_one += la[i] == 1;
    }
    CHECK(wrong == 0, "%s: %d of %d generated labels differ from the rule", task->name, wrong, N);
    if (task->sampling == GS_TASK_BALANCED)
        CHECK(with_one > N / 4 && with_one < 3 * N / 4, "%s: %d of %d positives at length %d", task->name, with_one, N,
              len);
    /* a long one: in the DFA's domain and labelled by the rule */
    static int big[GS_TASK_MAX_LENGTH];
    int big_label, big_len = task->odd_lengths_only ? 999 : 1000;
    CHECK(gs_task_generate(task, big_len, 1, 3, big, &big_label) == 0 && task->label(big, big_len) == big_label,
          "%s: length %d", task->name, big_len);
}

static void test_errors(void) {
    CHECK(gs_task_find("tomita9") == NULL && strstr(gs_error(), "tomita9") && !strchr(gs_error(), '\n'),
          "unknown task: '%s'", gs_error());
    const gs_task *p = gs_task_find("parity"), *m = gs_task_find("modular_arithmetic");
    CHECK(p && m, "parity and modular_arithmetic are rows");
    if (!p || !m) return;
    int s[4], l;
    CHECK(gs_task_generate(p, 0, 1, 0, s, &l) != 0 && strstr(gs_error(), "length 0") && !strchr(gs_error(), '\n'),
          "length 0: '%s'", gs_error());
    CHECK(gs_task_check_length(p, 1001) != 0 && strstr(gs_error(), "1..1000"), "length 1001: '%s'", gs_error());
    CHECK(gs_task_generate(m, 4, 1, 0, s, &l) != 0 && strstr(gs_error(), "even") && !strchr(gs_error(), '\n'),
          "even expression length: '%s'", gs_error());
    CHECK(gs_task_check_length(m, 3) == 0, "length 3 is a valid expression length");
}

/* Pins the reading of Tomita 3 chosen in docs/tasks.md: an odd 0-run counts
 * only right after an odd 1-run. */
static void test_tomita3_reading(void) {
    const gs_task *t = gs_task_find("tomita3");
    static const int later[] = {0, 1, 1, 1, 0, 0, 1, 1, 0, 1}, right_after[] = {1, 0, 0, 1, 0, 0, 0};
    gs_dfa d;
    gs_task_dfa(t, &d);
    CHECK(t->label(later, 10) == 1 && gs_dfa_run(&d, later, 10) == 1, "tomita3 accepts 0111001101");
    CHECK(t->label(right_after, 7) == 0 && gs_dfa_run(&d, right_after, 7) == 0, "tomita3 rejects 1001000");
}

int main(void) {
    int n;
    const gs_task *tasks = gs_tasks(&n);
    CHECK(n == 15, "15 tasks, got %d", n);
    for (int i = 0; i < n; i++) test_task(&tasks[i]);
    test_errors();
    test_tomita3_reading();
    return test_summary();
}
