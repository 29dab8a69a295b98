/* Tokenizer throughput: our encoder against llama-tokenizer-js (node), on the
 * same generated text (tests/tokenizer/textgen.h), in the same run, line by
 * line as `gpnscope tokenize` does. Only the encode calls are timed on both
 * sides (not start-up, reading or UTF-8 decoding).
 *   bench_tokenize [--mb N] [--tokenizer FILE] [--package DIR] [--repeat R]
 * Defaults come from the source tree's third_party/ (scripts/fetch-tokenizer.sh). */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "io/tokenizer/tokenizer.h"
#include "tests/tokenizer/textgen.h"

/* The source tree: $GPNSCOPE_SOURCE, else where this file was compiled from
 * (CMake passes absolute paths). */
static const char *source_dir(void) {
    const char *env = getenv("GPNSCOPE_SOURCE");
    if (env) return env;
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", __FILE__);
    char *cut = strstr(buf, "/bench/tokenize.c");
    if (!cut) return ".";
    *cut = 0;
    return buf;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const char *src = source_dir();
    char tok_path[4096], pkg[4096];
    snprintf(tok_path, sizeof tok_path, "%s/third_party/llama2-tokenizer.json", src);
    snprintf(pkg, sizeof pkg, "%s/third_party/node_modules/llama-tokenizer-js", src);
    double mb = 4;
    int repeat = 3;
    static const struct option opts[] = {{"mb", required_argument, 0, 'm'}, {"tokenizer", required_argument, 0, 't'},
                                         {"package", required_argument, 0, 'p'}, {"repeat", required_argument, 0, 'r'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (ch == 'm') mb = atof(optarg);
        else if (ch == 't') snprintf(tok_path, sizeof tok_path, "%s", optarg);
        else if (ch == 'p') snprintf(pkg, sizeof pkg, "%s", optarg);
        else if (ch == 'r') repeat = atoi(optarg);
        else {
            printf("usage: bench_tokenize [--mb N (4)] [--tokenizer FILE] [--package DIR] [--repeat R (3, best of)]\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    gs_tokenizer *t = tokenizer_load(tok_path);
    if (!t) { fprintf(stderr, "bench_tokenize: %s (run scripts/fetch-tokenizer.sh)\n", gs_error()); return 1; }
    size_t len;
    char *text = textgen(7, (size_t)(mb * 1e6), &len);

    /* ours: best of `repeat` passes */
    double best = 1e30;
    size_t tokens = 0, lines = 0;
    for (int r = 0; r < repeat; r++) {
        tokens = lines = 0;
        double t0 = now();
        for (size_t s = 0; s < len;) {
            const char *nl = memchr(text + s, '\n', len - s);
            size_t e = nl ? (size_t)(nl - text) : len;
            int32_t *ids;
            size_t n;
            if (tokenizer_encode(t, text + s, e - s, &ids, &n)) { fprintf(stderr, "bench_tokenize: %s\n", gs_error()); return 1; }
            tokens += n;
            lines++;
            free(ids);
            s = e + 1;
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }

    /* llama-tokenizer-js on the same bytes */
    double js_secs = 0;
    size_t js_tokens = 0;
    int have_js = 0;
    char path[] = "/tmp/bench_tokenize_XXXXXX";
    int fd = mkstemp(path);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/llama-tokenizer.js", pkg);
    if (fd >= 0 && access(probe, R_OK) == 0 && system("command -v node >/dev/null 2>&1") == 0) {
        FILE *f = fdopen(fd, "wb");
        fwrite(text, 1, len, f);
        fclose(f);
        char cmd[16384];
        snprintf(cmd, sizeof cmd, "node '%s/tests/tokenizer/encode.mjs' '%s' --time < '%s'", src, pkg, path);
        FILE *p = popen(cmd, "r");
        double bytes;
        if (p && fscanf(p, "%lf %lf %zu", &js_secs, &bytes, &js_tokens) == 3) have_js = 1;
        if (p) pclose(p);
    } else if (fd >= 0) {
        close(fd);
    }
    unlink(path);

    printf("tokenizer encode: %.2f MB of generated text, %zu lines, line by line (best of %d for C)\n", len / 1e6, lines, repeat);
    printf("%-22s %10s %10s %12s\n", "encoder", "seconds", "MB/s", "tokens");
    printf("%-22s %10.3f %10.2f %12zu\n", "gpnscope (C)", best, len / 1e6 / best, tokens);
    if (have_js) {
        printf("%-22s %10.3f %10.2f %12zu\n", "llama-tokenizer-js", js_secs, len / 1e6 / js_secs, js_tokens);
        printf("%-22s %10s %9.1fx %12s\n", "ratio (C / js)", "", js_secs / best, js_tokens == tokens ? "same count" : "COUNTS DIFFER");
    } else {
        printf("llama-tokenizer-js: not run (needs node and scripts/fetch-tokenizer.sh)\n");
    }
    free(text);
    tokenizer_free(t);
    return 0;
}
