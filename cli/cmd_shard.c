/* gpnscope shard: tokenize a text or JSONL corpus once into the companion's
 * token-shard format (data_XXXX.bin + index + meta.json), which the trainer,
 * record and eval read memory-mapped with no tokenizer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "io/corpora/corpus.h"
#include "io/tokenizer/tokenizer.h"

static const char *help =
    "usage: gpnscope shard --corpus C --out DIR [--tokenizer T] [--field NAME] [--separator STR]\n"
    "                      [--no-bos] [--shard-tokens N]\n\n"
    "Tokenize a text or JSONL corpus into token shards in the companion code's format:\n"
    "DIR/data_XXXX.bin (little-endian uint32 ids; each document is BOS ... EOS),\n"
    "DIR/data_XXXX.index.json (document lengths) and DIR/meta.json. The trainer reads\n"
    "shards; record and eval read them without a tokenizer.\n\n"
    "  --tokenizer FILE   tokenizer.json or tokenizer.model (default $GPNSCOPE_TOKENIZER, else the\n"
    "                     source tree's third_party/llama2-tokenizer.json)\n"
    "  --corpus PATH      text file or folder, or .jsonl file\n"
    "  --out DIR          output folder (created)\n"
    "  --field NAME       JSONL text field (default text)\n"
    "  --separator STR    text: split files into documents on STR\n"
    "  --no-bos           do not start documents with BOS\n"
    "  --shard-tokens N   start a new shard after N tokens (default 500000000)\n";

static void shard_bad_integer(const char *cmd, const cli_opt *row, const char *text) {
    fprintf(stderr, "gpnscope %s: --%s '%s': %s\n", cmd, row->name, text, row->what);
}

int cmd_shard(int argc, char **argv) {
    const char *tok_path = NULL, *corpus_path = NULL, *out = NULL;
    corpus_options co;
    corpus_options_default(&co);
    long long shard_tokens = 0;
    int no_bos = 0;
    const cli_opt opts[] = {
        {CLI_STRING("tokenizer", &tok_path)}, {CLI_STRING("corpus", &corpus_path)}, {CLI_STRING("out", &out)},
        {CLI_STRING("field", &co.field)},     {CLI_STRING("separator", &co.separator)}, {CLI_FLAG("no-bos", &no_bos)},
        {CLI_INTEGER("shard-tokens", &shard_tokens, 1, INT64_MAX, "a positive integer")},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"shard", help, shard_bad_integer}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (no_bos) co.add_bos = 0;
    if (!corpus_path || !out || optind != argc) { fputs(help, stderr); return 2; }
    /* the tokenizer default of record, eval, tokenize, lens, patch and steer */
    if (!tok_path && !(tok_path = cli_default_tokenizer())) {
        fprintf(stderr, "gpnscope shard: no tokenizer: pass --tokenizer FILE, set GPNSCOPE_TOKENIZER, or run "
                        "scripts/fetch-tokenizer.sh\n");
        return 2;
    }
    co.seq_len = 2; /* every window is irrelevant here; any corpus of >= 2 tokens opens */
    gs_tokenizer *tok = tokenizer_load(tok_path);
    gs_corpus *c = tok ? corpus_open(corpus_path, tok, &co) : NULL;
    int rc = 1;
    if (c && corpus_export_shards(c, out, tok_path, shard_tokens) == 0) {
        printf("wrote %lld tokens in %lld documents to %s (vocabulary %d)\n", (long long)corpus_total_tokens(c),
               (long long)corpus_n_docs(c), out, tokenizer_vocab_size(tok));
        rc = 0;
    } else {
        fprintf(stderr, "gpnscope shard: %s\n", gs_error());
    }
    corpus_free(c);
    tokenizer_free(tok);
    return rc;
}
