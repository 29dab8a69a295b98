/* The minimal DFA of each task, as tables: next[state][symbol] and the
 * output (label) of each state; the start is state 0 except for modular
 * arithmetic (dfa->start). Fixed tasks are
 * literal tables; D_n and modular arithmetic are built from their state
 * meaning (a depth; a partial sum and product), which the comments give.
 * Minimality is checked in tests/unit/test_tasks.c by partition refinement. */
#include <string.h>

#include "engine/tasks/task_rules.h"

static void from_table(gs_dfa *dfa, int n_states, int n_symbols, const int (*next)[2], const int *output) {
    memset(dfa, 0, sizeof *dfa);
    dfa->n_states = n_states;
    dfa->n_symbols = n_symbols;
    for (int q = 0; q < n_states; q++) {
        for (int s = 0; s < n_symbols; s++) dfa->next[q][s] = next[q][s];
        dfa->output[q] = output[q];
    }
}

/* binary tables: {next on 0, next on 1} per state */
#define BINARY_DFA(id, ...)                                                         \
    void id##_dfa(gs_dfa *dfa) {                                                    \
        static const struct { int next[GS_DFA_MAX_STATES][2]; int output[GS_DFA_MAX_STATES]; int n; } t = __VA_ARGS__; \
        from_table(dfa, t.n, 2, t.next, t.output);                                  \
    }

/* the parity so far */
BINARY_DFA(parity, {{{0, 1}, {1, 0}}, {0, 1}, 2})
/* start; then (first symbol, last symbol): 00, 01, 11, 10; odd iff they differ */
BINARY_DFA(even_pairs, {{{1, 3}, {1, 2}, {1, 2}, {4, 3}, {4, 3}}, {0, 0, 1, 0, 1}, 5})
/* 0: no odd 1-run pending; 1: in an odd 1-run; 2: odd 0-run after it
 * (reject unless it grows even); 3: even 0-run after it; 4: dead */
BINARY_DFA(tomita3, {{{0, 1}, {2, 0}, {3, 4}, {2, 1}, {4, 4}}, {1, 1, 0, 1, 0}, 5})
/* trailing 0s: 0, 1, 2; 3: saw 000 */
BINARY_DFA(tomita4, {{{1, 0}, {2, 0}, {3, 0}, {3, 3}}, {1, 1, 1, 0}, 4})
/* (parity of 0s) + 2 (parity of 1s) */
BINARY_DFA(tomita5, {{{1, 2}, {0, 3}, {3, 0}, {2, 1}}, {1, 0, 0, 0}, 4})
/* (#0 - #1) mod 3 */
BINARY_DFA(tomita6, {{{1, 2}, {2, 0}, {0, 1}}, {1, 0, 0}, 3})
/* which block of 0*1*0*1* we are in; 4: dead */
BINARY_DFA(tomita7, {{{0, 1}, {2, 1}, {2, 3}, {4, 3}, {4, 4}}, {1, 1, 1, 1, 0}, 5})

/* the position on the cycle; symbol a moves a-1 */
void cycle_navigation_dfa(gs_dfa *dfa) {
    memset(dfa, 0, sizeof *dfa);
    dfa->n_states = 5;
    dfa->n_symbols = 3;
    for (int p = 0; p < 5; p++) {
        for (int a = 0; a < 3; a++) dfa->next[p][a] = (p + a - 1 + 5) % 5;
        dfa->output[p] = p;
    }
}

/* States 0..n: the depth; n+1: dead. D_n accepts depth 0, its prefix
 * language every live state. */
static void dyck_dfa(gs_dfa *dfa, int max_depth, int prefix) {
    memset(dfa, 0, sizeof *dfa);
    int dead = max_depth + 1;
    dfa->n_states = max_depth + 2;
    dfa->n_symbols = 2;
    for (int d = 0; d <= max_depth; d++) {
        dfa->next[d][0] = d < max_depth ? d + 1 : dead;
        dfa->next[d][1] = d > 0 ? d - 1 : dead;
        dfa->output[d] = prefix ? 1 : d == 0;
    }
    dfa->next[dead][0] = dfa->next[dead][1] = dead;
    dfa->output[dead] = 0;
}

void d2_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 2, 0); }
void d3_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 3, 0); }
void d4_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 4, 0); }
void d2_prefix_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 2, 1); }
void d3_prefix_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 3, 1); }
void d4_prefix_dfa(gs_dfa *dfa) { dyck_dfa(dfa, 4, 1); }

/* Modular arithmetic mod 5 with precedence. After a number the state is
 * (S, T): the sum of the finished products and the signed product being
 * built (value S+T); 25 states. After '+' or '-' it is the sum a = S+T
 * with the sign of the next number (10 states); after '*' it is (S, T)
 * waiting for a factor, except that T = 1 behaves as '+' after S and
 * T = 4 (= -1) as '-' after S, so only T in {0, 2, 3} are states of their
 * own (15). The start behaves as '+' after 0. One dead state: 51 in all. */
enum { MA_NUM = 0, MA_ADD = 25, MA_SUB = 30, MA_MUL = 35, MA_DEAD = 50, MA_STATES = 51 };
enum { SYM_PLUS = 5, SYM_MINUS = 6, SYM_TIMES = 7 };

static int ma_num(int sum, int term) { return MA_NUM + sum * 5 + term; }

static int ma_after_times(int sum, int term) {
    if (term == 1) return MA_ADD + sum;
    if (term == 4) return MA_SUB + sum;
    return MA_MUL + sum * 3 + (term == 0 ? 0 : term - 1); /* T 0, 2, 3 -> 0, 1, 2 */
}

void modular_arithmetic_dfa(gs_dfa *dfa) {
    memset(dfa, 0, sizeof *dfa);
    dfa->n_states = MA_STATES;
    dfa->n_symbols = 8;
    dfa->start = MA_ADD + 0;
    for (int q = 0; q < MA_STATES; q++) {
        dfa->output[q] = GS_TASK_NO_LABEL;
        for (int s = 0; s < 8; s++) dfa->next[q][s] = MA_DEAD;
    }
    for (int sum = 0; sum < 5; sum++)
        for (int term = 0; term < 5; term++) {
            int q = ma_num(sum, term), value = (sum + term) % 5;
            dfa->output[q] = value;
            dfa->next[q][SYM_PLUS] = MA_ADD + value;
            dfa->next[q][SYM_MINUS] = MA_SUB + value;
            dfa->next[q][SYM_TIMES] = ma_after_times(sum, term);
        }
    for (int a = 0; a < 5; a++)
        for (int n = 0; n < 5; n++) {
            dfa->next[MA_ADD + a][n] = ma_num(a, n);
            dfa->next[MA_SUB + a][n] = ma_num(a, (5 - n) % 5);
            for (int k = 0; k < 3; k++) {
                int term = k == 0 ? 0 : k + 1;
                dfa->next[MA_MUL + a * 3 + k][n] = ma_num(a, term * n % 5);
            }
        }
}
