/* Parity with llama-tokenizer-js (run with node) on >= 1 MB of generated
 * varied text, line by line: our encoder in process and `gpnscope tokenize`
 * must both print exactly what the package gives. Also decode round trips
 * on the same text. Skipped, with the reason, when node or the package
 * (scripts/fetch-tokenizer.sh) is missing. */
#include <stdint.h>
#include <unistd.h>

#include "base/error.h"
#include "io/tokenizer/tokenizer.h"
#include "io/tokenizer/utf8.h"
#include "testlib.h"
#include "tests/tokenizer/textgen.h"

static int write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Format ids as `gpnscope tokenize` does. */
static size_t format_ids(const int32_t *ids, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) o += (size_t)sprintf(out + o, i ? " %d" : "%d", ids[i]);
    return o;
}

/* A literal U+2581 in the text decodes as a space, as in SentencePiece:
 * such lines cannot round trip. */
static int has_escape(const char *s, size_t n) {
    for (size_t i = 0; i + 2 < n; i++)
        if (!memcmp(s + i, "\xE2\x96\x81", 3)) return 1;
    return 0;
}

static void show_line(const char *what, const char *s, size_t n) {
    fprintf(stderr, "  %s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 80; i++) fprintf(stderr, " %02x", (unsigned char)s[i]);
    fprintf(stderr, "%s\n", n > 80 ? " ..." : "");
}

int main(void) {
    const char *src = getenv("GPNSCOPE_SOURCE");
    if (!src) src = ".";
    if (system("command -v node >/dev/null 2>&1") != 0) return test_skip("node is not installed (Debian package nodejs)");
    char pkg[4096], json[4096], helper[4096];
    snprintf(pkg, sizeof pkg, "%s/third_party/node_modules/llama-tokenizer-js", src);
    snprintf(json, sizeof json, "%s/third_party/llama2-tokenizer.json", src);
    snprintf(helper, sizeof helper, "%s/tests/tokenizer/encode.mjs", src);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/llama-tokenizer.js", pkg);
    if (access(probe, R_OK) != 0) return test_skip("llama-tokenizer-js is not installed: run scripts/fetch-tokenizer.sh");
    const char *dir = scratch_dir("tokenizer_parity");
    char cmd[16384], in_path[4200], js_path[4200], cli_path[4200];
    if (access(json, R_OK) != 0) { /* package there but tokenizer.json not built yet: build it here */
        snprintf(json, sizeof json, "%s/llama2-tokenizer.json", dir);
        snprintf(cmd, sizeof cmd, "node '%s/scripts/fetch-tokenizer.mjs' '%s' > '%s'", src, pkg, json);
        if (system(cmd) != 0) { fprintf(stderr, "cannot build %s\n", json); return 1; }
    }
    gs_tokenizer *t = tokenizer_load(json);
    CHECK(t != NULL, "load %s: %s", json, gs_error());
    if (!t) return test_summary();

    size_t len;
    char *text = textgen(20240601, 1100000, &len);
    snprintf(in_path, sizeof in_path, "%s/in.txt", dir);
    snprintf(js_path, sizeof js_path, "%s/js.txt", dir);
    snprintf(cli_path, sizeof cli_path, "%s/cli.txt", dir);
    CHECK(write_file(in_path, text, len) == 0, "write %s", in_path);
    snprintf(cmd, sizeof cmd, "node '%s' '%s' < '%s' > '%s'", helper, pkg, in_path, js_path);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    size_t js_len = 0;
    char *js = read_whole_file(js_path, &js_len);
    CHECK(js != NULL, "read %s", js_path);
    if (!js) return test_summary();

    /* in process, line by line */
    size_t lines = 0, mismatches = 0, invalid_lines = 0, roundtrip_bad = 0, tokens = 0;
    char *fmt = malloc(12 * len + 16);
    const char *jp = js, *jend = js + js_len;
    for (size_t s = 0; s < len;) {
        const char *nl = memchr(text + s, '\n', len - s);
        size_t e = nl ? (size_t)(nl - text) : len;
        const char *jnl = memchr(jp, '\n', (size_t)(jend - jp));
        size_t jl = jnl ? (size_t)(jnl - jp) : (size_t)(jend - jp);
        int32_t *ids;
        size_t n;
        if (tokenizer_encode(t, text + s, e - s, &ids, &n) != 0) { CHECK(0, "encode line %zu: %s", lines + 1, gs_error()); break; }
        tokens += n;
        size_t fl = format_ids(ids, n, fmt);
        if (fl != jl || memcmp(fmt, jp, fl) != 0) {
            if (++mismatches <= 5) {
                fprintf(stderr, "mismatch on line %zu\n", lines + 1);
                show_line("input", text + s, e - s);
                fprintf(stderr, "  ours: %.300s\n  js:   %.*s\n", fmt, (int)(jl < 300 ? jl : 300), jp);
            }
        }
        /* decoding gives the line back when it is valid UTF-8 */
        if (!utf8_valid((const unsigned char *)text + s, e - s)) {
            invalid_lines++;
        } else if (!has_escape(text + s, e - s)) {
            size_t dl;
            char *d = tokenizer_decode(t, ids, n, &dl);
            if (!d || dl != e - s || memcmp(d, text + s, dl) != 0) roundtrip_bad++;
            free(d);
        }
        free(ids);
        lines++;
        jp = jnl ? jnl + 1 : jend;
        s = e + 1;
    }
    printf("  %zu bytes, %zu lines (%zu with invalid UTF-8), %zu tokens; %zu mismatches with llama-tokenizer-js\n", len, lines,
           invalid_lines, tokens, mismatches);
    CHECK(len >= 1000000, "only %zu bytes of text", len);
    CHECK(invalid_lines > 100, "only %zu lines with invalid UTF-8", invalid_lines);
    CHECK(mismatches == 0, "%zu of %zu lines differ from llama-tokenizer-js", mismatches, lines);
    CHECK(jp == jend, "llama-tokenizer-js printed more lines than the input has");
    CHECK(roundtrip_bad == 0, "%zu valid lines do not decode back to themselves", roundtrip_bad);

    /* One long text (> 2 MB, encoded in segments): lines that start with
     * neither a space nor U+2581, joined by "\n ", must encode as the lines
     * do alone (checked above against llama-tokenizer-js) with <0x0A>
     * between: "\n" is a byte that merges with nothing, and " " + line is
     * the line with its dummy prefix. */
    {
        size_t cap = 3000000, jl = 0, ne = 0, ecap = 1 << 20;
        char *joined = malloc(cap + 65536);
        int32_t *expect = malloc(ecap * sizeof *expect);
        int32_t nl_id = tokenizer_piece_id(t, "<0x0A>");
        for (size_t s = 0; jl < cap - 65536;) {
            const char *nl = memchr(text + s, '\n', len - s);
            size_t e = nl ? (size_t)(nl - text) : len;
            if (e > s && text[s] != ' ' && !(e - s >= 3 && !memcmp(text + s, "\xE2\x96\x81", 3)) && e - s < 60000) {
                int32_t *ids;
                size_t n;
                if (tokenizer_encode(t, text + s, e - s, &ids, &n) == 0) {
                    if (jl) { memcpy(joined + jl, "\n ", 2); jl += 2; expect[ne++] = nl_id; }
                    memcpy(joined + jl, text + s, e - s);
                    jl += e - s;
                    while (ne + n + 1 > ecap) expect = realloc(expect, (ecap *= 2) * sizeof *expect);
                    memcpy(expect + ne, ids, n * sizeof *ids);
                    ne += n;
                    free(ids);
                }
            }
            s = e + 1;
            if (s >= len) s = 0; /* go round again until the text is long enough */
        }
        int32_t *ids;
        size_t n;
        int rc = tokenizer_encode(t, joined, jl, &ids, &n);
        CHECK(rc == 0 && n == ne && !memcmp(ids, expect, n * sizeof *ids), "a %zu-byte text encodes as its lines do (%zu vs %zu ids)", jl, rc ? 0 : n, ne);
        if (rc == 0) free(ids);
        free(joined);
        free(expect);
    }

    /* lossless mode: every line decodes back to its bytes */
    tokenizer_set_invalid_utf8(t, TOKENIZER_INVALID_BYTES);
    size_t lossless_bad = 0;
    for (size_t s = 0; s < len;) {
        const char *nl = memchr(text + s, '\n', len - s);
        size_t e = nl ? (size_t)(nl - text) : len;
        int32_t *ids;
        size_t n, dl;
        if (has_escape(text + s, e - s)) {
            /* cannot round trip, see has_escape */
        } else if (tokenizer_encode(t, text + s, e - s, &ids, &n) == 0) {
            char *d = tokenizer_decode(t, ids, n, &dl);
            if (!d || dl != e - s || memcmp(d, text + s, dl) != 0) lossless_bad++;
            free(d);
            free(ids);
        } else {
            lossless_bad++;
        }
        s = e + 1;
    }
    CHECK(lossless_bad == 0, "--invalid-utf8 bytes: %zu lines do not decode back to their bytes", lossless_bad);

    /* the command line prints the same bytes */
    const char *bin = getenv("GPNSCOPE_BIN");
    if (bin) {
        snprintf(cmd, sizeof cmd, "'%s' tokenize --tokenizer '%s' < '%s' > '%s'", bin, json, in_path, cli_path);
        CHECK(system(cmd) == 0, "%s failed", cmd);
        size_t cl = 0;
        char *cli = read_whole_file(cli_path, &cl);
        CHECK(cli && cl == js_len && memcmp(cli, js, cl) == 0, "gpnscope tokenize output differs from llama-tokenizer-js (%zu vs %zu bytes)",
              cl, js_len);
        free(cli);
    }
    free(fmt);
    free(js);
    free(text);
    tokenizer_free(t);
    return test_summary();
}
