/* Fuzz target: encoding arbitrary bytes, as `gpnscope tokenize` and every
 * text or JSONL corpus do. The input is the text. Two fixed tokenizers
 * encode it in both invalid-UTF-8 modes: the real LLaMA-2 tokenizer.json
 * (third_party/, made by scripts/setup.sh; skipped when absent) and the tiny
 * one of fuzz.h (a user-defined piece, so the other code path). Both have
 * byte fallback, so decoding must give the text back exactly (U+2581 as a
 * space, invalid bytes as U+FFFD in REPLACE mode). The input read as int32
 * ids is decoded too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tokenizer/tokenizer_impl.h"
#include "fuzz_tokenizer.h"

#ifndef GPNSCOPE_SOURCE_DIR
#define GPNSCOPE_SOURCE_DIR "."
#endif

static gs_tokenizer *llama, *tiny;
static int loaded;

static void load(void) {
    loaded = 1;
    const char *src = getenv("GPNSCOPE_SOURCE");
    char path[4096];
    snprintf(path, sizeof path, "%s/third_party/llama2-tokenizer.json", src && *src ? src : GPNSCOPE_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        llama = tokenizer_load(path);
        if (!llama) { fprintf(stderr, "fuzz_tokenizer_encode: %s\n", gs_error()); abort(); }
    } else {
        fprintf(stderr, "fuzz_tokenizer_encode: %s not found; only the tiny tokenizer is used\n", path);
    }
    char *json = fuzz_tiny_tokenizer_json(1, 0);
    tiny = tok_load_json("tiny.json", json, strlen(json));
    free(json);
    if (!tiny) { fprintf(stderr, "fuzz_tokenizer_encode: tiny tokenizer: %s\n", gs_error()); abort(); }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!loaded) load();
    if (llama) {
        fuzz_encode_decode(llama, data, size, 1);
        fuzz_decode_bytes(llama, data, size);
    }
    fuzz_encode_decode(tiny, data, size, 1);
    fuzz_decode_bytes(tiny, data, size);
    return 0;
}
