/* gpnscope eval: perplexity of a model on a corpus's windows (tokens, mean
 * NLL, perplexity, tokens/s), with a progress bar when stderr is a terminal. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "io/corpora/corpus.h"
#include "probes/corpus_eval.h"
#include "engine/model.h"
#include "io/tokenizer/tokenizer.h"

static const char *help =
    "usage: gpnscope eval --model M --corpus C [--tokenizer T] [--seq-len 2048]\n"
    "                     [--windows N] [--skip M] [--sample N --seed S] [--batch B]\n"
    "                     [--device cpu|cuda[:N]] [--precision P] [--json]\n\n"
    "Perplexity of a GPN / GPN+M checkpoint on a corpus. Documents are tokenized,\n"
    "each begun with BOS and ended with EOS, concatenated and cut into\n"
    "non-overlapping windows of --seq-len tokens, exactly as the companion's\n"
    "TokenDataset does; each window is one sequence from the zero state. Prints\n"
    "tokens, mean NLL (nats/token), perplexity = exp(mean NLL), and tokens/s.\n"
    "Where the engine has a window path (GDN and the Transformer++ on the CPU)\n"
    "it runs whole windows at once (docs/engine.md, \"Whole windows\");\n"
    "GPNSCOPE_EVAL_STEP=1 steps token by token instead (the same perplexity up\n"
    "to rounding, for comparison).\n\n"
    "  --model FILE       checkpoint (safetensors)\n"
    "  --corpus PATH      a text file, a directory of text files, a .jsonl file (or a\n"
    "                     directory of them), or a directory of token shards\n"
    "                     (data_XXXX.bin + index.json + meta.json) or one shard file\n"
    "  --format F         auto (default), text, jsonl or shards\n"
    "  --tokenizer FILE   tokenizer.json or tokenizer.model; needed for text and JSONL\n"
    "                     (default $GPNSCOPE_TOKENIZER, else the source tree's\n"
    "                     third_party/llama2-tokenizer.json); shards need none\n"
    "  --seq-len L        tokens per window (default 2048, as the paper)\n"
    "  --skip M           skip the first M windows (default 0)\n"
    "  --windows N|all    then use N windows (default all: every one that remains)\n"
    "  --sample N         of those, use N chosen at random (in corpus order)\n"
    "  --seed S           seed for --sample (default 0)\n"
    "  --batch B          windows run together (default 8)\n"
    "  --field NAME       JSONL: the field holding the text (default \"text\")\n"
    "  --skip-bad         JSONL: skip lines that are not JSON or lack the field\n"
    "                     (their count is reported) instead of failing\n"
    "  --separator S      text: split files into documents on S (C escapes such as\n"
    "                     \\n are understood, e.g. '\\n\\n'); default one per file\n"
    "  --no-bos           do not begin documents with BOS (text and JSONL)\n"
    "  --device DEV       cpu (default), cuda or cuda:N (docs/cuda.md)\n"
    "  --precision P      CUDA GEMMs: auto (bf16 for a BF16 checkpoint, else f32), f32,\n"
    "                     tf32 or bf16\n"
    "  --json             print one JSON object instead of a table\n"
    "See docs/corpora.md.\n";

/* Interpret \n, \t, \r, \\ and \0xx-free escapes in place. */
static void unescape(char *s) {
    char *o = s;
    for (; *s; s++) {
        if (*s != '\\' || !s[1]) { *o++ = *s; continue; }
        s++;
        *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : *s;
    }
    *o = 0;
}

static int progress_bar(void *ctx, int64_t done, int64_t total, int64_t tokens, double secs) {
    double *last = ctx; /* redraw at most 10 times a second */
    if (done < total && secs - *last < 0.1) return 0;
    *last = secs;
    int width = 30, fill = total ? (int)(width * done / total) : width;
    double rate = secs > 0 ? tokens / secs : 0, eta = done ? secs * (double)(total - done) / (double)done : 0;
    fprintf(stderr, "\r  [%.*s%*s] %" PRId64 "/%" PRId64 " windows  %.0f tokens/s  ETA %.0f s ", fill,
            "##############################", width - fill, "", done, total, rate, eta);
    if (done == total) fprintf(stderr, "\r\033[K");
    fflush(stderr);
    return 0;
}

int cmd_eval(int argc, char **argv) {
    const char *model_path = NULL, *corpus_path = NULL, *tok_path = NULL;
    corpus_options o;
    corpus_options_default(&o);
    int64_t batch = 8;
    int json = 0;
    const char *separator = NULL;
    const char *device = "cpu", *precision = NULL;
    static const char *const formats[] = {"auto", "text", "jsonl", "shards", NULL}; /* corpus_format's order */
    int format = CORPUS_AUTO, no_bos = 0;
    const cli_opt opts[] = {
        {CLI_STRING("model", &model_path)},
        {CLI_STRING("corpus", &corpus_path)},
        {CLI_STRING("tokenizer", &tok_path)},
        {CLI_CHOICE("format", &format, formats, "auto, text, jsonl or shards")},
        {CLI_INTEGER("seq-len", &o.seq_len, 0, INT64_MAX, "a non-negative integer")},
        {CLI_INTEGER("skip", &o.skip, 0, INT64_MAX, "a non-negative integer")},
        {CLI_WINDOWS(&o.windows, 0, "a non-negative integer or all")},
        {CLI_INTEGER("sample", &o.sample, 0, INT64_MAX, "a non-negative integer")},
        {CLI_INTEGER("seed", &o.seed, 0, INT64_MAX, "a non-negative integer")},
        {CLI_INTEGER("batch", &batch, 0, INT64_MAX, "a non-negative integer")},
        {CLI_STRING("field", &o.field)},
        {CLI_FLAG("skip-bad", &o.skip_bad)},
        {CLI_STRING("separator", &separator)},
        {CLI_FLAG("no-bos", &no_bos)},
        {CLI_FLAG("json", &json)},
        {CLI_STRING("device", &device)},
        {CLI_STRING("precision", &precision)},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"eval", help, cli_say_takes}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    o.format = (corpus_format)format;
    if (no_bos) o.add_bos = 0;
    if (optind != argc || !model_path || !corpus_path) {
        fprintf(stderr, "gpnscope eval: --model and --corpus are required\n\n");
        fputs(help, stderr);
        return 2;
    }
    if (o.seq_len < 1 || batch < 1 || batch > 4096) {
        fprintf(stderr, "gpnscope eval: --seq-len must be >= 1 and --batch 1..4096\n");
        return 2;
    }
    if (separator) { /* in place: argv's words are the program's to change */
        unescape((char *)separator);
        o.separator = separator;
    }
    gs_device dev;
    if (gs_device_parse(device, precision, &dev)) {
        fprintf(stderr, "gpnscope eval: %s\n", gs_error());
        return 2;
    }

    gs_model *m = NULL;
    gs_tokenizer *tok = NULL;
    gs_corpus *c = NULL;
    int rc = 1;
    if (access(corpus_path, R_OK) != 0) {
        fprintf(stderr, "gpnscope eval: cannot open corpus %s: %s\n", corpus_path, strerror(errno));
        return 1;
    }
    corpus_format fmt = o.format == CORPUS_AUTO ? corpus_detect(corpus_path) : o.format;
    if (!tok_path && fmt != CORPUS_SHARDS) {
        tok_path = cli_default_tokenizer();
        if (!tok_path) {
            fprintf(stderr, "gpnscope eval: %s is a %s corpus and needs a tokenizer: pass --tokenizer, set GPNSCOPE_TOKENIZER, or run "
                            "scripts/fetch-tokenizer.sh\n", corpus_path, corpus_format_name(fmt));
            return 2;
        }
    }
    if (!(m = gs_model_load(model_path)) || gs_family_require_lm(&m->cfg, model_path, "eval")) goto fail;
    if (tok_path) {
        if (!(tok = tokenizer_load(tok_path))) goto fail;
        if (tokenizer_vocab_size(tok) > m->cfg.V) {
            gs_fail("the tokenizer has %d pieces but the model's vocabulary is %d: they do not belong together", tokenizer_vocab_size(tok),
                    m->cfg.V);
            goto fail;
        }
    }
    o.vocab_size = m->cfg.V;
    if (!(c = corpus_open(corpus_path, tok, &o))) goto fail;
    const char *chash = corpus_hash(c);
    if (!chash) goto fail;
    corpus_eval_result r;
    double last_draw = -1;
    int er = corpus_eval(m, c, (int)batch, &dev, isatty(2) ? progress_bar : NULL, &last_draw, &r);
    if (er < 0) goto fail;
    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", model_path);
        cJSON_AddStringToObject(j, "model_sha256", m->hash);
        cJSON_AddStringToObject(j, "corpus", corpus_path);
        cJSON_AddStringToObject(j, "format", corpus_format_name(corpus_get_format(c)));
        cJSON_AddStringToObject(j, "corpus_sha256", chash);
        if (tok) cJSON_AddStringToObject(j, "tokenizer_sha256", tokenizer_hash(tok));
        cJSON_AddNumberToObject(j, "seq_len", (double)corpus_seq_len(c));
        cJSON_AddNumberToObject(j, "windows", (double)r.windows);
        cJSON_AddNumberToObject(j, "windows_total", (double)corpus_n_windows_total(c));
        cJSON_AddNumberToObject(j, "skip", (double)o.skip);
        cJSON_AddNumberToObject(j, "sample", (double)o.sample);
        cJSON_AddNumberToObject(j, "seed", (double)o.seed);
        cJSON_AddNumberToObject(j, "batch", (double)batch);
        cJSON_AddNumberToObject(j, "skipped_bad_lines", (double)corpus_n_bad(c));
        cJSON_AddNumberToObject(j, "tokens", (double)r.tokens);
        cJSON_AddNumberToObject(j, "mean_nll", r.mean_nll);
        cJSON_AddNumberToObject(j, "perplexity", r.perplexity);
        cJSON_AddNumberToObject(j, "seconds", r.seconds);
        cJSON_AddNumberToObject(j, "tokens_per_s", r.tokens_per_s);
        cJSON_AddStringToObject(j, "path", r.windowed ? "window" : "step");
        char *s = cJSON_Print(j);
        puts(s);
        cJSON_free(s);
        cJSON_Delete(j);
    } else {
        printf("model       %s (%s, V=%d, sha256 %.16s...)\n", model_path, gs_arch_name(m->cfg.arch), m->cfg.V, m->hash);
        printf("corpus      %s (%s, %" PRId64 " tokens", corpus_path, corpus_format_name(corpus_get_format(c)), corpus_total_tokens(c));
        if (corpus_n_docs(c) >= 0) printf(", %" PRId64 " documents", corpus_n_docs(c));
        if (corpus_n_bad(c)) printf(", %" PRId64 " bad lines skipped", corpus_n_bad(c));
        printf(", sha256 %.16s...)\n", chash);
        printf("windows     %" PRId64 " of %" PRId64 " (skip %" PRId64 "%s), %" PRId64 " tokens each\n", r.windows, corpus_n_windows_total(c), o.skip,
               o.sample ? ", sampled" : "", corpus_seq_len(c));
        printf("tokens      %" PRId64 "\n", r.tokens);
        printf("mean NLL    %.6f nats/token\n", r.mean_nll);
        printf("perplexity  %.4f\n", r.perplexity);
        printf("speed       %.0f tokens/s (batch %" PRId64 ", %.2f s, %s)\n", r.tokens_per_s, batch, r.seconds,
               r.windowed ? "whole windows" : "token by token");
    }
    rc = 0;
fail:
    if (rc) fprintf(stderr, "gpnscope eval: %s\n", gs_error());
    corpus_free(c);
    tokenizer_free(tok);
    gs_model_free(m);
    return rc;
}
