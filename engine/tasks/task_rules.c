/* Each task's label, computed from its definition (counts, runs, an
 * expression's value) without any automaton, so that the DFAs of
 * task_dfas.c are checked against something written independently. */
#include "engine/tasks/task_rules.h"

int parity_label(const int *s, int n) { /* the number of 1s, mod 2 */
    int ones = 0;
    for (int i = 0; i < n; i++) ones += s[i];
    return ones % 2;
}

int even_pairs_label(const int *s, int n) { /* the number of unequal neighbours (01, 10), mod 2 */
    int unequal = 0;
    for (int i = 0; i + 1 < n; i++) unequal += s[i] != s[i + 1];
    return unequal % 2;
}

int cycle_navigation_label(const int *s, int n) { /* symbol a moves a-1 on a cycle of 5, from 0 */
    int pos = 0;
    for (int i = 0; i < n; i++) pos += s[i] - 1;
    return ((pos % 5) + 5) % 5;
}

/* Symbols 0-4 are numbers, 5 '+', 6 '-', 7 '*'. Value with the usual
 * precedence (products first), mod 5: the sum of signed products. */
int modular_arithmetic_label(const int *s, int n) {
    if (n % 2 == 0) return GS_TASK_NO_LABEL;
    for (int i = 0; i < n; i++)
        if ((i % 2 == 0) != (s[i] < 5)) return GS_TASK_NO_LABEL;
    int sum = 0, product = s[0];
    for (int i = 1; i < n; i += 2) {
        int number = s[i + 1];
        if (s[i] == 7) {
            product = product * number % 5;
        } else {
            sum = (sum + product) % 5;
            product = s[i] == 5 ? number : (5 - number) % 5;
        }
    }
    return (sum + product) % 5;
}

/* Tomita 3: no odd run of 1s immediately followed by an odd run of 0s
 * (both runs maximal). */
int tomita3_label(const int *s, int n) {
    int i = 0;
    while (i < n) {
        int j = i;
        while (j < n && s[j] == s[i]) j++;
        if (s[i] == 1 && (j - i) % 2 == 1 && j < n) {
            int k = j;
            while (k < n && s[k] == 0) k++;
            if ((k - j) % 2 == 1) return 0;
        }
        i = j;
    }
    return 1;
}

int tomita4_label(const int *s, int n) { /* no 000 */
    for (int i = 0; i + 2 < n; i++)
        if (s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 0) return 0;
    return 1;
}

int tomita5_label(const int *s, int n) { /* an even number of 0s and of 1s */
    int ones = 0;
    for (int i = 0; i < n; i++) ones += s[i];
    return ones % 2 == 0 && (n - ones) % 2 == 0;
}

int tomita6_label(const int *s, int n) { /* #0 - #1 divisible by 3 */
    int ones = 0;
    for (int i = 0; i < n; i++) ones += s[i];
    return (n - 2 * ones) % 3 == 0;
}

int tomita7_label(const int *s, int n) { /* 0*1*0*1*: at most three changes of symbol, starting from 0 */
    int changes = n > 0 && s[0] == 1;
    for (int i = 0; i + 1 < n; i++) changes += s[i] != s[i + 1];
    return changes <= 3;
}

/* D_n over {a, b}: balanced (a opens, b closes) with nesting depth at most
 * n; its prefix language: the prefixes of D_n words (depth stays in 0..n). */
static int depth_ok(const int *s, int n, int max_depth, int want_closed) {
    int depth = 0;
    for (int i = 0; i < n; i++) {
        depth += s[i] == 0 ? 1 : -1;
        if (depth < 0 || depth > max_depth) return 0;
    }
    return want_closed ? depth == 0 : 1;
}

int d2_label(const int *s, int n) { return depth_ok(s, n, 2, 1); }
int d3_label(const int *s, int n) { return depth_ok(s, n, 3, 1); }
int d4_label(const int *s, int n) { return depth_ok(s, n, 4, 1); }
int d2_prefix_label(const int *s, int n) { return depth_ok(s, n, 2, 0); }
int d3_prefix_label(const int *s, int n) { return depth_ok(s, n, 3, 0); }
int d4_prefix_label(const int *s, int n) { return depth_ok(s, n, 4, 0); }
