/* gpnscope tasks: list the regular-language tasks, or print examples of
 * one (input string and label), as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "engine/tasks/tasks.h"

static const char *help =
    "usage: gpnscope tasks [--list] [--json]\n"
    "       gpnscope tasks NAME [--length N] [--count K] [--seed S] [--json]\n\n"
    "The regular-language tasks of MLP-LDRU (parity, even pairs, cycle navigation,\n"
    "modular arithmetic, Tomita 3-7, D_n and its prefix languages), each with its\n"
    "minimal DFA. Without NAME (or with --list) print one line per task: name,\n"
    "alphabet, number of labels, DFA states, what the label says. With NAME print\n"
    "K examples, one per line: the input string, a tab, the label.\n\n"
    "  --list       list the tasks (the default without NAME)\n"
    "  --length N   symbols per example, 1..1000 (default 12; modular_arithmetic\n"
    "               wants an odd N)\n"
    "  --count K    how many examples, 1..100000 (default 10)\n"
    "  --seed S     the generator's seed (default 0); the same seed gives the\n"
    "               same examples\n"
    "  --json       JSON instead of text: the list as an array of objects, the\n"
    "               examples as {task, alphabet, length, seed, examples: [{input, label}]}\n"
    "Membership tasks (Tomita, D_n, prefixes) draw each label uniformly among the\n"
    "labels that occur at this length, then the string uniformly among those with\n"
    "it; the others draw every symbol uniformly. See docs/tasks.md.\n";

static void list_tasks(int json) {
    int n;
    const gs_task *t = gs_tasks(&n);
    if (json) printf("[");
    for (int i = 0; i < n; i++) {
        gs_dfa dfa;
        gs_task_dfa(&t[i], &dfa);
        if (json)
            printf("%s\n {\"name\": \"%s\", \"alphabet\": \"%s\", \"labels\": %d, \"dfa_states\": %d, "
                   "\"summary\": \"%s\", \"source\": \"%s\"}",
                   i ? "," : "", t[i].name, t[i].alphabet, t[i].n_classes, dfa.n_states, t[i].summary, t[i].source);
        else
            printf("%-20s %-9s %d labels %3d states  %s\n", t[i].name, t[i].alphabet, t[i].n_classes, dfa.n_states,
                   t[i].summary);
    }
    if (json) printf("\n]\n");
}

static int print_examples(const gs_task *task, int length, int count, unsigned long long seed, int json) {
    if ((long long)length * count > 10000000) { /* all examples are held at once */
        fprintf(stderr, "gpnscope tasks: --length times --count is over 10000000 symbols; ask for fewer\n");
        return 2;
    }
    int *symbols = malloc((size_t)length * count * sizeof *symbols), *labels = malloc((size_t)count * sizeof *labels);
    char *line = malloc((size_t)length + 1);
    if (!symbols || !labels || !line) {
        free(symbols), free(labels), free(line);
        fprintf(stderr, "gpnscope tasks: out of memory for %d examples of length %d\n", count, length);
        return 1;
    }
    if (gs_task_generate(task, length, count, seed, symbols, labels) != 0) {
        free(symbols), free(labels), free(line);
        fprintf(stderr, "gpnscope tasks: %s\n", gs_error());
        return 1;
    }
    if (json) printf("{\"task\": \"%s\", \"alphabet\": \"%s\", \"length\": %d, \"seed\": %llu, \"examples\": [", task->name,
                     task->alphabet, length, seed);
    for (int i = 0; i < count; i++) {
        for (int t = 0; t < length; t++) line[t] = task->alphabet[symbols[(size_t)i * length + t]];
        line[length] = 0;
        if (json) printf("%s\n {\"input\": \"%s\", \"label\": %d}", i ? "," : "", line, labels[i]);
        else printf("%s\t%d\n", line, labels[i]);
    }
    if (json) printf("\n]}\n");
    free(symbols), free(labels), free(line);
    return 0;
}

int cmd_tasks(int argc, char **argv) {
    int list = 0, json = 0, example_options = 0;
    long long length = 12, count = 10, seed = 0;
    const cli_opt opts[] = {
        {CLI_FLAG("list", &list)},
        {CLI_FLAG("json", &json)},
        /* range checked by the task, which knows its own rule */
        {CLI_INTEGER("length", &length, -1000000, 1000000, "a length"), .seen = &example_options},
        {CLI_INTEGER("count", &count, 1, 100000, "a count in 1..100000"), .seen = &example_options},
        {CLI_INTEGER("seed", &seed, 0, 9007199254740992LL, "a seed >= 0"), .seen = &example_options},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"tasks", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind < argc - 1) {
        fprintf(stderr, "gpnscope tasks: one task name at most, got '%s' and '%s'\n", argv[optind], argv[optind + 1]);
        return 2;
    }
    if (list || optind == argc) {
        if (example_options) {
            fprintf(stderr, "gpnscope tasks: --length, --count and --seed need a task NAME (see gpnscope tasks --list)\n");
            return 2;
        }
        list_tasks(json);
        return 0;
    }
    const gs_task *task = gs_task_find(argv[optind]);
    if (!task || gs_task_check_length(task, length) != 0) {
        fprintf(stderr, "gpnscope tasks: %s\n", gs_error());
        return 2;
    }
    return print_examples(task, (int)length, (int)count, (unsigned long long)seed, json);
}
