/* Fuzz target: a JSON file a user writes by hand, as the strict JSON reader
 * (base/json.h) takes it for `convert --config`, `train CONFIG.json` and
 * `patch --pairs FILE.jsonl` read it. The input is the file's text. What
 * the strict reader accepts prints and reads back the same; a training
 * config that loads passes or fails its validation in one line; prompt
 * pairs that load hold only token ids inside the vocabulary, prompts of one
 * length, and answers that differ from their foils. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/patching.h"
#include "base/error.h"
#include "base/json.h"
#include "train/train.h"
#include "fuzz.h"

#define FUZZ_VOCAB 1000

static void strict(const uint8_t *data, size_t size) {
    cJSON *j = gs_json_parse_strict((const char *)data, size, "fuzz");
    if (!j) {
        FUZZ_ASSERT(!strchr(gs_error(), '\n'), "a refusal of two lines: %s", gs_error());
        return;
    }
    char *text = cJSON_PrintUnformatted(j);
    FUZZ_ASSERT(text != NULL, "an accepted value does not print");
    cJSON *back = gs_json_parse_strict(text, strlen(text), "fuzz (printed)");
    FUZZ_ASSERT(back && cJSON_Compare(j, back, 1), "what was accepted does not read back: %s", gs_error());
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(j);
}

static void training_config(const uint8_t *data, size_t size) {
    train_config c;
    train_config_defaults(&c);
    if (train_config_load(fuzz_write("config.json", data, size), &c) == 0) train_config_validate(&c);
    FUZZ_ASSERT(!strchr(gs_error(), '\n'), "a message of two lines: %s", gs_error());
}

static void patch_pairs(const uint8_t *data, size_t size) {
    gs_patch_pairs p;
    if (gs_patch_pairs_load(fuzz_write("pairs.jsonl", data, size), NULL, FUZZ_VOCAB, &p) != 0) return;
    FUZZ_ASSERT(p.n >= 1 && p.T >= 1, "%d pairs of %d tokens", p.n, p.T);
    for (size_t i = 0; i < (size_t)p.n * (size_t)p.T; i++)
        FUZZ_ASSERT(p.clean[i] >= 0 && p.clean[i] < FUZZ_VOCAB && p.corrupted[i] >= 0 && p.corrupted[i] < FUZZ_VOCAB,
                    "token %zu outside the vocabulary", i);
    for (int i = 0; i < p.n; i++)
        FUZZ_ASSERT(p.answer[i] != p.foil[i] && p.answer[i] >= 0 && p.answer[i] < FUZZ_VOCAB && p.foil[i] >= 0 &&
                        p.foil[i] < FUZZ_VOCAB,
                    "pair %d: answer %d, foil %d", i, (int)p.answer[i], (int)p.foil[i]);
    gs_patch_pairs_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    strict(data, size);
    training_config(data, size);
    patch_pairs(data, size);
    return 0;
}
