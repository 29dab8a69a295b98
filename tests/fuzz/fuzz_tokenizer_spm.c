/* Fuzz target: a SentencePiece tokenizer.model (protobuf), as `--tokenizer
 * FILE` reads it. The input is the file, handed to the protobuf reader in
 * memory (tokenizer_load reads the file, sees no JSON and calls it). A
 * tokenizer that loads must encode and decode anything: a few fixed texts
 * and the input's own first bytes, in both invalid-UTF-8 modes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy: the reader must not look past the end */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    gs_tokenizer *t = tok_load_spm("fuzz.model", copy, size);
    free(copy);
    if (!t) return 0;
    fuzz_exercise_tokenizer(t, data, size);
    return 0;
}
