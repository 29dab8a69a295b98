/* The transition monoid (analyses/automaton/monoid.h): its size for every
 * task, five of them checked by hand below; element 0 is the identity; each
 * element's map equals running the DFA over its word from every state (a
 * loop written here, not the library's); f_uv = f_v o f_u on random words;
 * the set is closed under composition; a bound below the size fails in one
 * line.
 *
 * Sizes by hand:
 * - parity: the identity and the swap of the two states: 2.
 * - cycle_navigation: the rotations of Z_5 (symbol 1 is the identity,
 *   0 and 2 rotate by -1 and +1): 5.
 * - tomita5 (#0, #1 both even): Z_2 x Z_2: 4. tomita6 (#0 - #1 mod 3): Z_3: 3.
 * - even_pairs (the label is "first symbol == last symbol"): the identity
 *   and one map per (first, last) pair: 5.
 * - tomita4 (no 000; states: trailing 0s 0..2 and dead): the identity, f_0,
 *   f_00; the constant dead map (words with 000); words with a 1, fixed by
 *   their leading a and trailing b zeros (q -> b if q + a < 3, else dead):
 *   9 maps, but (a, b) = (2, 2) equals f_00. 1 + 2 + 1 + 9 - 1 = 12. */
#include "analyses/automaton/monoid.h"
#include "base/error.h"
#include "base/prng.h"
#include "testlib.h"

static const struct {
    const char *task;
    int size;
} sizes[] = {
    {"parity", 2},  {"even_pairs", 5}, {"cycle_navigation", 5}, {"modular_arithmetic", 518}, {"tomita3", 26},
    {"tomita4", 12}, {"tomita5", 4},   {"tomita6", 3},          {"tomita7", 9},              {"d2", 15},
    {"d3", 31},     {"d4", 56},       {"d2_prefix", 15},       {"d3_prefix", 31},           {"d4_prefix", 56},
};

static int run_from(const gs_dfa *d, int q, const int *w, int n) {
    for (int t = 0; t < n; t++) q = d->next[q][w[t]];
    return q;
}

static void check_task(const gs_task *task, int want) {
    gs_dfa d;
    gs_task_dfa(task, &d);
    gs_monoid *m = gs_monoid_build(&d, GS_MONOID_DEFAULT_MAX);
    CHECK(m != NULL, "%s: %s", task->name, gs_error());
    if (!m) return;
    int n = gs_monoid_size(m);
    CHECK(n == want, "%s: monoid of %d elements, want %d", task->name, n, want);
    const uint8_t *id = gs_monoid_map(m, 0);
    int is_id = 1;
    for (int q = 0; q < d.n_states; q++) is_id &= id[q] == q;
    CHECK(is_id && gs_monoid_word(m, NULL, 0) == 0, "%s: element 0 is not the identity", task->name);
    uint64_t rng = 42;
    int bad_map = 0, bad_then = 0, u[40], v[40], uv[80];
    for (int trial = 0; trial < 300; trial++) {
        int nu = (int)(gs_splitmix64(&rng) % 30), nv = (int)(gs_splitmix64(&rng) % 30);
        for (int t = 0; t < nu; t++) uv[t] = u[t] = (int)(gs_splitmix64(&rng) % (uint64_t)d.n_symbols);
        for (int t = 0; t < nv; t++) uv[nu + t] = v[t] = (int)(gs_splitmix64(&rng) % (uint64_t)d.n_symbols);
        int eu = gs_monoid_word(m, u, nu), ev = gs_monoid_word(m, v, nv), euv = gs_monoid_word(m, uv, nu + nv);
        const uint8_t *f = gs_monoid_map(m, euv);
        for (int q = 0; q < d.n_states; q++) bad_map += f[q] != run_from(&d, q, uv, nu + nv);
        bad_then += gs_monoid_then(m, eu, ev) != euv;
    }
    CHECK(bad_map == 0, "%s: %d map entries differ from running the DFA", task->name, bad_map);
    CHECK(bad_then == 0, "%s: f_uv != f_v o f_u in %d of 300 pairs", task->name, bad_then);
    if (n <= 60) { /* closure: every product is an element */
        int missing = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) missing += gs_monoid_then(m, a, b) < 0;
        CHECK(missing == 0, "%s: %d products are not elements", task->name, missing);
    }
    gs_monoid_free(m);
}

int main(void) {
    int n;
    const gs_task *t = gs_tasks(&n);
    CHECK(n == (int)(sizeof sizes / sizeof *sizes), "%d tasks, the table here has %d", n, (int)(sizeof sizes / sizeof *sizes));
    for (int i = 0; i < (int)(sizeof sizes / sizeof *sizes); i++) {
        const gs_task *task = gs_task_find(sizes[i].task);
        CHECK(task != NULL, "no task %s", sizes[i].task);
        if (task) check_task(task, sizes[i].size);
    }
    /* shortlex order: parity's element 1 is the word "1" */
    gs_dfa d;
    gs_task_dfa(gs_task_find("parity"), &d);
    gs_monoid *m = gs_monoid_build(&d, 16);
    int one = 1, zero = 0;
    CHECK(m && gs_monoid_word(m, &one, 1) == 1 && gs_monoid_word(m, &zero, 1) == 0, "parity: 1 -> element 1, 0 -> identity");
    gs_monoid_free(m);
    gs_task_dfa(gs_task_find("tomita3"), &d);
    m = gs_monoid_build(&d, 25);
    CHECK(m == NULL && strstr(gs_error(), "more than 25 elements"), "a bound of 25 for tomita3's 26: %s", gs_error());
    (void)t;
    return test_summary();
}
