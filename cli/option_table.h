/* A command's options described once, as data, and parsed in one place
 * (cli_parse_options): a row per option says its name, what kind of value it
 * takes, where the value goes and what a bad value is told. The parser builds
 * getopt_long's table from the rows, so abbreviations, `--name=value` and
 * `--name value`, and argument permutation are getopt's, and the messages for
 * an unknown option, a missing value and a bad integer are the same in every
 * command. */
#ifndef GS_CLI_OPTION_TABLE_H
#define GS_CLI_OPTION_TABLE_H

#include <getopt.h>
#include <stdint.h>

typedef enum {
    CLI_OPT_FLAG,      /* no value: *(int *)dest = 1 */
    CLI_OPT_CLEAR,     /* no value: *(int *)dest = 0 (--no-bos, --no-render) */
    CLI_OPT_STRING,    /* *(const char **)dest = the value */
    CLI_OPT_INT,       /* an integer in [lo, hi] into an int */
    CLI_OPT_LONG,      /* ... into a long (int64_t on LP64) */
    CLI_OPT_LLONG,     /* ... into a long long */
    CLI_OPT_ULONG,     /* ... into an unsigned long (uint64_t on LP64) */
    CLI_OPT_ULLONG,    /* ... into an unsigned long long */
    CLI_OPT_CHOICE,    /* one of choices[] (NULL-terminated): its index into an int */
    CLI_OPT_LIST,      /* parse_list(value, (unsigned *)dest): a list of names as bits, or gs_error */
    CLI_OPT_CALL,      /* a value handed to call(), for bespoke logic */
    CLI_OPT_CALL_FLAG, /* no value; call() with NULL */
} cli_opt_kind;

typedef struct cli_opt {
    const char *name; /* the long name, without "--"; NULL ends the table */
    cli_opt_kind kind;
    void *dest;
    long long lo, hi; /* the integer kinds' bounds */
    const char *what; /* "a batch between 1 and 4096": the integer kinds' and choices' message;
                       * a list's prefix to gs_error ("--what: " or "") */
    const char *const *choices;
    int (*parse_list)(const char *list, unsigned *bits);
    /* CLI_OPT_CALL*: 0 to go on, or the exit status after printing one line */
    int (*call)(const char *cmd, const char *value, void *dest);
    int *seen;  /* set to 1 when the option is given, if not NULL */
    const char *zero_word; /* an integer row's word for 0, e.g. "all" (--windows all); NULL: none */
    char short_name; /* also -x, if not 0 */
} cli_opt;

/* Row makers, so that a table reads one option a line: {CLI_STRING("out",
 * &out)}, {CLI_INTEGER("batch", &batch, 1, 4096, "a batch between 1 and
 * 4096"), .seen = &batch_given}. An integer's destination type picks its
 * kind; any other type is a compile error. */
#define CLI_FLAG(n, p) .name = (n), .kind = CLI_OPT_FLAG, .dest = (int *){p}
#define CLI_CLEAR(n, p) .name = (n), .kind = CLI_OPT_CLEAR, .dest = (int *){p}
#define CLI_STRING(n, p) .name = (n), .kind = CLI_OPT_STRING, .dest = (const char **){p}
#define CLI_INTEGER(n, p, lo_, hi_, what_)                                                                            \
    .name = (n),                                                                                                       \
    .kind = _Generic((p), int *: CLI_OPT_INT, long *: CLI_OPT_LONG, long long *: CLI_OPT_LLONG,                       \
                     unsigned long *: CLI_OPT_ULONG, unsigned long long *: CLI_OPT_ULLONG),                          \
    .dest = (p), .lo = (lo_), .hi = (hi_), .what = (what_)
/* --windows N or --windows all: the count, or 0 for every window (what 0 has always meant) */
#define CLI_WINDOWS(p, lo_, what_) CLI_INTEGER("windows", p, lo_, INT64_MAX, what_), .zero_word = "all"
#define CLI_CHOICE(n, p, list, what_) .name = (n), .kind = CLI_OPT_CHOICE, .dest = (int *){p}, .choices = (list), .what = (what_)
#define CLI_LIST(n, p, fn, prefix) .name = (n), .kind = CLI_OPT_LIST, .dest = (unsigned *){p}, .parse_list = (fn), .what = (prefix)
#define CLI_CALL(n, fn, p) .name = (n), .kind = CLI_OPT_CALL, .call = (fn), .dest = (p)
#define CLI_CALL_FLAG(n, fn, p) .name = (n), .kind = CLI_OPT_CALL_FLAG, .call = (fn), .dest = (p)

typedef struct {
    const char *cmd;  /* "ablate": the messages say "gpnscope ablate: ..." */
    const char *help; /* printed on stdout for --help (or -h) */
    /* How the command words a bad integer; NULL: "gpnscope CMD: --NAME wants
     * WHAT, got 'TEXT'". */
    void (*bad_integer)(const char *cmd, const cli_opt *row, const char *text);
} cli_command_opts;

/* The other wording of a bad value, a choice's always: "gpnscope CMD: --NAME
 * takes WHAT, not 'TEXT'" (a command's bad_integer may be this). */
void cli_say_takes(const char *cmd, const cli_opt *row, const char *text);

/* What cli_parse_options returns when the command should go on. */
#define CLI_GO_ON (-1)

/* Parses argv[1..] against rows (ended by a row with a NULL name), in order,
 * the last of a repeated option winning. Returns CLI_GO_ON with optind at the
 * first argument that is not an option (getopt moves them all to the end), or
 * the status to exit with: 0 after printing the help for --help, 2 after one
 * line on stderr for an unknown option, a missing value, a bad integer or
 * choice, or what a CLI_OPT_CALL row returned. */
int cli_parse_options(const cli_command_opts *c, const cli_opt *rows, int argc, char **argv);

/* Call on getopt_long's '?' or ':': prints one line naming the option that
 * is unknown or lacks its value ("gpnscope CMD: unknown option '--x' (see
 * gpnscope CMD --help)") and returns 2, the usage exit status. */
int cli_bad_option(const char *cmd, const struct option *opts, char **argv);

/* An integer option's value in [lo, hi]: 0, or prints "gpnscope CMD: --NAME
 * wants WHAT, got 'TEXT'" and returns 2. */
int cli_int_option(const char *cmd, const char *name, const char *text, long long lo, long long hi, const char *what,
                   long long *out);

/* The check of a command that takes one store FILE as its only argument:
 * NULL when argv[first..] is one word, else "no store FILE given" or "one
 * store FILE only". */
const char *cli_one_store_file(int argc, int first);

#endif
