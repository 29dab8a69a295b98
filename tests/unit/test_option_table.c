/* cli/option_table.h, the one option parser of the commands: each kind
 * stores its value, bounds are kept at both ends, a bad integer, a missing
 * value and an unknown option are refused with the same lines as before the
 * table (cli_bad_option's and cli_int_option's), --help prints the help on
 * stdout and returns 0, --name=value and --name value are the same, a
 * repeated option's last value wins, and the positional arguments are left
 * after optind. stderr and stdout are caught in temporary files. */
#include <stdint.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/option_table.h"
#include "testlib.h"

typedef struct {
    int flag, clear, small, seen, choice, calls, bits_seen;
    unsigned bits;
    const char *str, *called_with;
    long lng;
    long long ll;
    uint64_t u64;
    int64_t i64;
} dests;

static const char *const colours[] = {"red", "green", NULL};

/* "a,b": bit 0 for each a, bit 1 for each b */
static int parse_bits(const char *list, unsigned *bits) {
    *bits = 0;
    for (const char *p = list; *p; p++)
        if (*p == 'a' || *p == 'b') *bits |= *p == 'a' ? 1u : 2u;
        else if (*p != ',') return gs_fail("unknown part '%c'", *p);
    return 0;
}

static int count_call(const char *cmd, const char *value, void *dest) {
    dests *d = dest;
    d->calls++;
    d->called_with = value;
    if (value && !strcmp(value, "refuse")) {
        fprintf(stderr, "gpnscope %s: --call refused\n", cmd);
        return 2;
    }
    return 0;
}

static void worded(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: bad value '%s' for --%s\n", cmd, text, row->name);
}

static char out_text[4096], err_text[4096];
static int last_optind;

/* parse the words (NULL-ended, the command's name first) against the test
 * table into *d; the status, with what was printed in out_text / err_text */
static int parse(dests *d, int own_wording, const char *const *words) {
    char *argv[32];
    int argc = 0;
    while (words[argc]) argv[argc] = (char *)words[argc], argc++;
    argv[argc] = NULL;
    memset(d, 0, sizeof *d);
    d->clear = 1;
    const cli_opt rows[] = {
        {CLI_FLAG("flag", &d->flag)},
        {CLI_CLEAR("no-clear", &d->clear)},
        {CLI_STRING("str", &d->str), .short_name = 'o'},
        {CLI_INTEGER("small", &d->small, -3, 7, "a number from -3 to 7"), .seen = &d->seen},
        {CLI_INTEGER("long", &d->lng, 0, 1000000, "a count")},
        {CLI_INTEGER("ll", &d->ll, 1, INT64_MAX, "a run id (a positive integer)")},
        {CLI_INTEGER("u64", &d->u64, 0, INT64_MAX, "a seed >= 0")},
        {CLI_INTEGER("i64", &d->i64, INT64_MIN, 0, "a number <= 0")},
        {CLI_LIST("bits", &d->bits, parse_bits, "--bits: "), .seen = &d->bits_seen},
        {CLI_CHOICE("colour", &d->choice, colours, "red or green")},
        {CLI_CALL("call", count_call, d)},
        {CLI_CALL_FLAG("call-flag", count_call, d)},
        {0}};
    const cli_command_opts c = {"t", "usage: gpnscope t\n", own_wording ? worded : NULL};
    fflush(stdout);
    fflush(stderr);
    FILE *o = tmpfile(), *e = tmpfile();
    int so = dup(1), se = dup(2);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    int rc = cli_parse_options(&c, rows, argc, argv);
    last_optind = optind;
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    FILE *f[2] = {o, e};
    char *buf[2] = {out_text, err_text};
    for (int k = 0; k < 2; k++) {
        rewind(f[k]);
        size_t n = fread(buf[k], 1, sizeof out_text - 1, f[k]);
        buf[k][n] = 0;
        fclose(f[k]);
    }
    return rc;
}

#define WORDS(...) ((const char *const[]){"t", __VA_ARGS__, NULL})

int main(void) {
    dests d;
    int rc = parse(&d, 0, WORDS("--flag", "--str", "x", "--small=7", "--long", "1000000", "--ll", "9223372036854775807",
                                "--u64=0", "--i64", "-9223372036854775808", "--colour", "green", "--call", "v",
                                "--call-flag", "--no-clear", "--bits=b,a", "FILE"));
    CHECK(rc == CLI_GO_ON, "every kind: status %d, stderr '%s'", rc, err_text);
    CHECK(d.clear == 0, "--no-clear left %d", d.clear);
    CHECK(d.bits == 3 && d.bits_seen == 1, "list bits %u (seen %d)", d.bits, d.bits_seen);
    CHECK(d.flag == 1 && d.str && !strcmp(d.str, "x"), "flag %d, string '%s'", d.flag, d.str ? d.str : "(null)");
    CHECK(d.small == 7 && d.seen == 1, "int %d (seen %d)", d.small, d.seen);
    CHECK(d.lng == 1000000 && d.ll == INT64_MAX && d.u64 == 0 && d.i64 == INT64_MIN, "long %ld, ll %lld, u64 %llu, i64 %lld",
          d.lng, d.ll, (unsigned long long)d.u64, (long long)d.i64);
    CHECK(d.choice == 1, "choice index %d", d.choice);
    CHECK(d.calls == 2 && d.called_with == NULL, "calls %d, the flag's value %s", d.calls, d.called_with ? d.called_with : "NULL");
    CHECK(last_optind == 19 && !out_text[0] && !err_text[0], "optind %d, printed '%s' '%s'", last_optind, out_text, err_text);

    /* positional arguments anywhere end up after optind (getopt permutes) */
    rc = parse(&d, 0, WORDS("A", "-o", "y", "B", "--small", "-3"));
    CHECK(rc == CLI_GO_ON && d.small == -3 && !strcmp(d.str, "y") && last_optind == 5, "permuted: status %d, optind %d",
          rc, last_optind);
    CHECK(d.clear == 1, "cleared without --no-clear");

    /* the last of a repeated option wins; an abbreviation is getopt's */
    rc = parse(&d, 0, WORDS("--small", "1", "--small=2", "--sm", "3", "--str", "a", "--str=b"));
    CHECK(rc == CLI_GO_ON && d.small == 3 && !strcmp(d.str, "b"), "repeated: small %d, str %s", d.small, d.str);

    /* bounds: one past each end, not a number, trailing text, overflow */
    const char *bad[] = {"8", "-4", "x", "3x", "", "99999999999999999999"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char want[128];
        snprintf(want, sizeof want, "gpnscope t: --small wants a number from -3 to 7, got '%s'\n", bad[k]);
        rc = parse(&d, 0, WORDS("--small", bad[k]));
        CHECK(rc == 2 && !strcmp(err_text, want) && d.seen == 0, "--small %s: status %d, '%s'", bad[k], rc, err_text);
    }
    rc = parse(&d, 0, WORDS("--ll=0"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --ll wants a run id (a positive integer), got '0'\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("--u64", "-1"));
    CHECK(rc == 2 && d.u64 == 0, "a negative seed: status %d", rc);
    /* a command's own wording of a bad integer */
    rc = parse(&d, 1, WORDS("--long", "-1"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: bad value '-1' for --long\n"), "%s", err_text);

    rc = parse(&d, 0, WORDS("--colour", "blue"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --colour takes red or green, not 'blue'\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("--bits", "a,c"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --bits: unknown part 'c'\n") && !d.bits_seen, "%s", err_text);
    rc = parse(&d, 0, WORDS("--call", "refuse", "--flag"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --call refused\n") && d.flag == 0, "a refusing call: %d '%s'", rc,
          err_text);

    /* missing values, long and short, and unknown options */
    rc = parse(&d, 0, WORDS("--str"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --str needs a value (see gpnscope t --help)\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("-o"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --str needs a value (see gpnscope t --help)\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("--small"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: --small needs a value (see gpnscope t --help)\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("--nope"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: unknown option '--nope' (see gpnscope t --help)\n"), "%s", err_text);
    /* a near miss names the option meant; --stx is one letter from --str */
    rc = parse(&d, 0, WORDS("--stx", "v"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: unknown option '--stx': did you mean --str? (see gpnscope t --help)\n"),
          "%s", err_text);
    rc = parse(&d, 0, WORDS("--smll=3"));
    CHECK(rc == 2 && strstr(err_text, "did you mean --small?"), "%s", err_text);
    rc = parse(&d, 0, WORDS("-z"));
    CHECK(rc == 2 && !strcmp(err_text, "gpnscope t: unknown option '-z' (see gpnscope t --help)\n"), "%s", err_text);
    rc = parse(&d, 0, WORDS("--flag=1"));
    CHECK(rc == 2 && strstr(err_text, "gpnscope t: ") == err_text, "a flag with a value: %d '%s'", rc, err_text);

    /* --help and -h: the help on stdout, status 0, nothing after it parsed */
    rc = parse(&d, 0, WORDS("--help", "--flag"));
    CHECK(rc == 0 && !strcmp(out_text, "usage: gpnscope t\n") && !err_text[0] && d.flag == 0, "--help: %d '%s'", rc,
          out_text);
    rc = parse(&d, 0, WORDS("-h"));
    CHECK(rc == 0 && !strcmp(out_text, "usage: gpnscope t\n"), "-h: %d '%s'", rc, out_text);

    CHECK(!strcmp(cli_one_store_file(3, 3), "no store FILE given") && !strcmp(cli_one_store_file(3, 1), "one store FILE only") &&
              cli_one_store_file(3, 2) == NULL, "the one-store-FILE check");
    return test_summary();
}
