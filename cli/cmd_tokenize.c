/* gpnscope tokenize: text on stdin -> token ids (or pieces), one output line
 * per input line. This exact format is what other tools compare against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "io/tokenizer/tokenizer.h"

static const char *help =
    "usage: gpnscope tokenize [--tokenizer FILE] [--pieces | --decode] [--invalid-utf8 replace|bytes]\n\n"
    "Read text on stdin and print, for each input line (its newline removed), the\n"
    "token ids of that line separated by single spaces, without BOS, one output line\n"
    "per input line (an empty line gives an empty line).\n\n"
    "  --tokenizer FILE     a Hugging Face tokenizer.json (BPE) or a SentencePiece\n"
    "                       tokenizer.model; default $GPNSCOPE_TOKENIZER, else\n"
    "                       third_party/llama2-tokenizer.json of the source tree\n"
    "                       (built by scripts/fetch-tokenizer.sh)\n"
    "  --pieces             print the pieces (\xE2\x96\x81the, <0x0A>, ...) instead of the ids\n"
    "  --decode             the reverse: read ids (space separated) per line, print text\n"
    "  --invalid-utf8 MODE  bytes that are not valid UTF-8: 'replace' (default) makes\n"
    "                       each one U+FFFD, as SentencePiece does; 'bytes' keeps each\n"
    "                       as its <0xXX> piece (lossless, not SentencePiece)\n"
    "See docs/tokenizer.md.\n";

static void put_int(FILE *out, int32_t v) {
    char buf[16];
    int n = 0;
    uint32_t u = v < 0 ? (uint32_t)(-(int64_t)v) : (uint32_t)v;
    do { buf[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) buf[n++] = '-';
    while (n) putc_unlocked(buf[--n], out);
}

static int decode_line(const gs_tokenizer *t, char *line, size_t lineno) {
    size_t n = 0, cap = 64;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return gs_fail("out of memory");
    char *p = line, *end;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) break;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > INT32_MAX) { free(ids); return gs_fail("line %zu: '%.40s' is not a token id", lineno, p); }
        if (n == cap) {
            int32_t *q = realloc(ids, (cap *= 2) * sizeof *ids);
            if (!q) { free(ids); return gs_fail("out of memory"); }
            ids = q;
        }
        ids[n++] = (int32_t)v;
        p = end;
    }
    size_t len;
    char *text = tokenizer_decode(t, ids, n, &len);
    free(ids);
    if (!text) return gs_fail_context("line %zu: ", lineno);
    fwrite(text, 1, len, stdout);
    putchar('\n');
    free(text);
    return 0;
}

int cmd_tokenize(int argc, char **argv) {
    const char *tok_path = NULL;
    int pieces = 0, decode = 0;
    static const char *const modes[] = {"replace", "bytes", NULL};
    int mode_index = 0;
    const cli_opt opts[] = {
        {CLI_STRING("tokenizer", &tok_path)}, {CLI_FLAG("pieces", &pieces)}, {CLI_FLAG("decode", &decode)},
        {CLI_CHOICE("invalid-utf8", &mode_index, modes, "'replace' or 'bytes'")},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"tokenize", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    tokenizer_invalid_utf8 mode = mode_index ? TOKENIZER_INVALID_BYTES : TOKENIZER_INVALID_REPLACE;
    if (optind != argc || (pieces && decode)) { fputs(help, stderr); return 2; }
    if (!tok_path) tok_path = cli_default_tokenizer();
    if (!tok_path) {
        fprintf(stderr, "gpnscope tokenize: no tokenizer: pass --tokenizer FILE, set GPNSCOPE_TOKENIZER, or run scripts/fetch-tokenizer.sh\n");
        return 2;
    }
    gs_tokenizer *t = tokenizer_load(tok_path);
    if (!t) { fprintf(stderr, "gpnscope tokenize: %s\n", gs_error()); return 1; }
    tokenizer_set_invalid_utf8(t, mode);
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        size_t len = (size_t)got;
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (decode) {
            if (decode_line(t, line, lineno)) rc = 1;
            continue;
        }
        int32_t *ids;
        size_t n;
        if (tokenizer_encode(t, line, len, &ids, &n)) { gs_fail_context("line %zu: ", lineno); rc = 1; break; }
        for (size_t i = 0; i < n; i++) {
            if (i) putc_unlocked(' ', stdout);
            if (pieces) fputs(tokenizer_piece(t, ids[i]), stdout);
            else put_int(stdout, ids[i]);
        }
        putc_unlocked('\n', stdout);
        free(ids);
    }
    free(line);
    if (rc == 0 && ferror(stdin)) { gs_fail("error reading stdin"); rc = 1; }
    if (fflush(stdout) != 0 && rc == 0) { gs_fail("error writing stdout"); rc = 1; }
    if (rc) fprintf(stderr, "gpnscope tokenize: %s\n", gs_error());
    tokenizer_free(t);
    return rc;
}
