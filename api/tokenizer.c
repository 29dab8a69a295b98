/* Tokenizer handles (api/gpnscope.h) over io/tokenizer/. */
#include <stdlib.h>

#include "api/gpnscope.h"
#include "base/error.h"
#include "io/tokenizer/tokenizer.h"

/* The handle is the tokenizer itself, under the opaque name of the API. */

int gs_api_tokenizer_open(const char *path, gs_api_tokenizer **out) {
    if (!path) return *out = NULL, gs_fail("no tokenizer path");
    *out = (gs_api_tokenizer *)tokenizer_load(path);
    return *out ? 0 : -1;
}

void gs_api_tokenizer_close(gs_api_tokenizer *t) { tokenizer_free((gs_tokenizer *)t); }

int gs_api_tokenizer_vocab(const gs_api_tokenizer *t) { return tokenizer_vocab_size((const gs_tokenizer *)t); }

int64_t gs_api_tokenize(const gs_api_tokenizer *t, const char *text, size_t len, int32_t **ids) {
    size_t n = 0;
    *ids = NULL;
    if (!text && len) return gs_fail("no text");
    return tokenizer_encode((const gs_tokenizer *)t, text ? text : "", len, ids, &n) ? -1 : (int64_t)n;
}

int64_t gs_api_detokenize(const gs_api_tokenizer *t, const int32_t *ids, size_t n, char **text) {
    size_t len = 0;
    *text = tokenizer_decode((const gs_tokenizer *)t, ids, n, &len);
    return *text ? (int64_t)len : -1;
}
