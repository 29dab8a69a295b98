#include "cli/option_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"

/* enough for the command with the most options (record's 20), and room */
#define MAX_OPTIONS 48
/* getopt's value of a row without a short name: past every char */
#define ROW_VAL(i) (256 + (i))

int cli_bad_option(const char *cmd, const struct option *opts, char **argv) {
    /* getopt leaves the offending word at argv[optind - 1] (a value-less
     * option at the end too); optopt is its character, or a long option's
     * val when it lacks a value, or 0 for an unknown long option */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    if (optopt) {
        for (const struct option *o = opts; o && o->name; o++)
            if (o->val == optopt && o->has_arg == required_argument &&
                (!strncmp(word, "--", 2) ? !strncmp(word + 2, o->name, strlen(word + 2)) : 1)) {
                fprintf(stderr, "gpnscope %s: --%s needs a value (see gpnscope %s --help)\n", cmd, o->name, cmd);
                return 2;
            }
        if (strncmp(word, "--", 2)) {
            fprintf(stderr, "gpnscope %s: unknown option '-%c' (see gpnscope %s --help)\n", cmd, optopt, cmd);
            return 2;
        }
    }
    /* a long option one or two keystrokes from a real one: say which ("--seqlen": --seq-len) */
    const char *near = NULL;
    if (!strncmp(word, "--", 2)) {
        char typed[64];
        snprintf(typed, sizeof typed, "%.*s", (int)strcspn(word + 2, "="), word + 2);
        const char *names[MAX_OPTIONS];
        size_t n = 0;
        for (const struct option *o = opts; o && o->name && n < MAX_OPTIONS; o++) names[n++] = o->name;
        near = gs_closest_word(typed, names, n);
    }
    if (near)
        fprintf(stderr, "gpnscope %s: unknown option '%s': did you mean --%s? (see gpnscope %s --help)\n", cmd, word,
                near, cmd);
    else fprintf(stderr, "gpnscope %s: unknown option '%s' (see gpnscope %s --help)\n", cmd, word, cmd);
    return 2;
}

/* a whole decimal integer in [lo, hi] (no sign of overflow): 0, else -1 */
static int parse_integer(const char *text, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_int_option(const char *cmd, const char *name, const char *text, long long lo, long long hi, const char *what,
                   long long *out) {
    if (!parse_integer(text, lo, hi, out)) return 0;
    fprintf(stderr, "gpnscope %s: --%s wants %s, got '%s'\n", cmd, name, what, text);
    return 2;
}

const char *cli_one_store_file(int argc, int first) {
    return first >= argc ? "no store FILE given" : first < argc - 1 ? "one store FILE only" : NULL;
}

/* An integer row's value into its destination: 0, or 2 after the message. */
static int set_integer(const cli_command_opts *c, const cli_opt *r, const char *text) {
    long long v;
    if (r->zero_word && !strcmp(text, r->zero_word)) v = 0;
    else if (parse_integer(text, r->lo, r->hi, &v)) {
        if (c->bad_integer) c->bad_integer(c->cmd, r, text);
        else fprintf(stderr, "gpnscope %s: --%s wants %s, got '%s'\n", c->cmd, r->name, r->what, text);
        return 2;
    }
    switch (r->kind) {
    case CLI_OPT_INT: *(int *)r->dest = (int)v; break;
    case CLI_OPT_LONG: *(long *)r->dest = (long)v; break;
    case CLI_OPT_LLONG: *(long long *)r->dest = v; break;
    case CLI_OPT_ULONG: *(unsigned long *)r->dest = (unsigned long)v; break;
    default: *(unsigned long long *)r->dest = (unsigned long long)v; break;
    }
    return 0;
}

void cli_say_takes(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: --%s takes %s, not '%s'\n", cmd, row->name, row->what, text);
}

static int set_choice(const cli_command_opts *c, const cli_opt *r, const char *text) {
    for (int i = 0; r->choices[i]; i++)
        if (!strcmp(text, r->choices[i])) {
            *(int *)r->dest = i;
            return 0;
        }
    cli_say_takes(c->cmd, r, text);
    return 2;
}

/* One row given with its value (NULL for the kinds without): 0 or the exit status. */
static int take(const cli_command_opts *c, const cli_opt *r, const char *value) {
    int rc = 0;
    switch (r->kind) {
    case CLI_OPT_FLAG: *(int *)r->dest = 1; break;
    case CLI_OPT_CLEAR: *(int *)r->dest = 0; break;
    case CLI_OPT_STRING: *(const char **)r->dest = value; break;
    case CLI_OPT_CHOICE: rc = set_choice(c, r, value); break;
    case CLI_OPT_LIST:
        if (r->parse_list(value, r->dest)) {
            fprintf(stderr, "gpnscope %s: %s%s\n", c->cmd, r->what, gs_error());
            rc = 2;
        }
        break;
    case CLI_OPT_CALL:
    case CLI_OPT_CALL_FLAG: rc = r->call(c->cmd, value, r->dest); break;
    default: rc = set_integer(c, r, value); break;
    }
    if (!rc && r->seen) *r->seen = 1;
    return rc;
}

int cli_parse_options(const cli_command_opts *c, const cli_opt *rows, int argc, char **argv) {
    struct option opts[MAX_OPTIONS + 2];
    char shorts[2 * MAX_OPTIONS + 3] = "h";
    size_t ns = 1;
    int n = 0;
    for (; rows[n].name; n++) {
        if (n == MAX_OPTIONS) { /* a programming error, not a user's */
            fprintf(stderr, "gpnscope %s: more than %d options in its table\n", c->cmd, MAX_OPTIONS);
            return 2;
        }
        const cli_opt *r = &rows[n];
        int takes_value = r->kind != CLI_OPT_FLAG && r->kind != CLI_OPT_CLEAR && r->kind != CLI_OPT_CALL_FLAG;
        opts[n] = (struct option){r->name, takes_value ? required_argument : no_argument, 0,
                                  r->short_name ? r->short_name : ROW_VAL(n)};
        if (r->short_name) {
            shorts[ns++] = r->short_name;
            if (takes_value) shorts[ns++] = ':';
        }
    }
    shorts[ns] = 0;
    opts[n] = (struct option){"help", no_argument, 0, 'h'};
    opts[n + 1] = (struct option){0, 0, 0, 0};
    /* from argv[1] again (the demo runs commands one after another in one
     * process), and quiet: cli_bad_option prints the one line */
    optind = 1;
    opterr = 0;
    for (int ch; (ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1;) {
        if (ch == 'h') {
            fputs(c->help, stdout);
            return 0;
        }
        int i = 0;
        while (i < n && opts[i].val != ch) i++;
        if (i == n) return cli_bad_option(c->cmd, opts, argv);
        int rc = take(c, &rows[i], optarg);
        if (rc) return rc;
    }
    return CLI_GO_ON;
}
