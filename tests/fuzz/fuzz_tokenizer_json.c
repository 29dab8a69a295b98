/* Fuzz target: a Hugging Face tokenizer.json, as `--tokenizer FILE` reads
 * it. The input is the file's text, handed to the JSON reader in memory
 * (tokenizer_load reads the file, detects JSON and calls it). A tokenizer
 * that loads must encode and decode anything: a few fixed texts and the
 * input's own first bytes, in both invalid-UTF-8 modes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenizer_impl.h"
#include "fuzz_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* tokenizer_load NUL-terminates what it read */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    gpn_tokenizer *t = tok_load_json("fuzz.json", text, size);
    free(text);
    if (!t) return 0;
    static const char *const samples[] = {"", "hello world", "  a  b\tc\n", "\xC3\xA9\xFF\xE2\x96\x81<sep><s>ab", "\xF0\x9F\x98\x80 \x80\xC0"};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        fuzz_encode_decode(t, (const uint8_t *)samples[i], strlen(samples[i]), 0);
    fuzz_encode_decode(t, data, size < 512 ? size : 512, 0);
    fuzz_decode_bytes(t, data, size < 256 ? size : 256);
    tokenizer_free(t);
    return 0;
}
