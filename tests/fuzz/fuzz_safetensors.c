/* Fuzz target: a checkpoint file, as `gpnscope info/record --model` reads it.
 * The input is the whole .safetensors file. It goes through
 * safetensors_open (header, dtypes, shapes, offsets), every accessor, the
 * float widening of each floating tensor, and gs_model_load (configuration
 * inferred from shapes and checked against __metadata__). A model that
 * loads must survive a save/load round trip bit for bit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/model.h"
#include "io/checkpoint/safetensors.h"
#include "fuzz.h"

/* Widen at most this many elements per tensor (the data is in the input,
 * so this only bounds the time spent on one input). */
#define MAX_WIDEN (1 << 20)

static void check_file(const char *path) {
    st_file *f = safetensors_open(path);
    if (!f) return;
    for (int i = 0; i < f->n_tensors; i++) {
        const st_tensor *t = &f->tensors[i];
        FUZZ_ASSERT(safetensors_find(f, t->name) == t, "tensor '%s' is not found by its own name", t->name);
        FUZZ_ASSERT(t->nbytes == (size_t)t->numel * st_dtype_size(t->dtype), "tensor '%s': %zu bytes for %lld elements", t->name,
                    t->nbytes, (long long)t->numel);
        FUZZ_ASSERT((const char *)t->data >= (const char *)f->map &&
                        (const char *)t->data + t->nbytes <= (const char *)f->map + f->map_size,
                    "tensor '%s' points outside the file", t->name);
        if (t->numel > MAX_WIDEN) continue;
        float *out = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *out);
        if (out) st_tensor_to_f32(t, out);
        free(out);
    }
    for (int i = 0; i < f->n_meta; i++)
        FUZZ_ASSERT(safetensors_meta(f, f->meta_keys[i]) != NULL, "metadata key '%s' not found", f->meta_keys[i]);
    safetensors_close(f);
}

static void check_model(const char *path) {
    gs_model *m = gs_model_load(path);
    if (!m) return;
    if (m->n_params <= (1 << 16)) {
        const char *copy = fuzz_path("copy.safetensors");
        FUZZ_ASSERT(gs_model_save(m, copy, 0) == 0, "saving a loaded model failed: %s", gs_error());
        gs_model *m2 = gs_model_load(copy);
        FUZZ_ASSERT(m2 != NULL, "a saved model does not load: %s", gs_error());
        FUZZ_ASSERT(!memcmp(&m->cfg, &m2->cfg, sizeof m->cfg) && m->n_params == m2->n_params &&
                        !memcmp(m->block, m2->block, m->n_params * sizeof *m->block),
                    "save/load round trip changed the model");
        gs_model_free(m2);
        fuzz_unlink("copy.safetensors");
    }
    gs_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("in.safetensors", data, size);
    check_file(path);
    check_model(path);
    return 0;
}
