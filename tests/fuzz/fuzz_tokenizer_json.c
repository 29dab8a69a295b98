/* Fuzz target: a Hugging Face tokenizer.json, as `--tokenizer FILE` reads
 * it. The input is the file's text, handed to the JSON reader in memory
 * (tokenizer_load reads the file, detects JSON and calls it). A tokenizer
 * that loads must encode and decode anything: a few fixed texts and the
 * input's own first bytes, in both invalid-UTF-8 modes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* tokenizer_load NUL-terminates what it read */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    gs_tokenizer *t = tok_load_json("fuzz.json", text, size);
    free(text);
    if (!t) return 0;
    fuzz_exercise_tokenizer(t, data, size);
    return 0;
}
