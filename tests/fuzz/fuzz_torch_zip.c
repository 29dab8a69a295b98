/* Fuzz target: a PyTorch checkpoint, as `gpnscope convert checkpoint.pt`
 * reads it. The input is the whole .pt (a zip). One that opens must give
 * uniquely named tensors whose bytes are exactly numel x itemsize, all
 * readable; small ones must also convert, and the output must load with
 * the same tensors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/checkpoint/convert.h"
#include "engine/checkpoint/torch_zip.h"
#include "engine/safetensors.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("in.pt", data, size);
    torch_limits lim;
    torch_default_limits(&lim);
    lim.pickle.max_values = 1 << 18;
    lim.max_inflated = 1 << 22;
    gs_clear_error();
    torch_ckpt *c = torch_ckpt_open(path, &lim);
    if (!c) {
        FUZZ_ASSERT(*gs_error() && !strchr(gs_error(), '\n'), "a refusal that is not one line: %s", gs_error());
        return 0;
    }
    for (int i = 0; i < c->n_tensors; i++) {
        const ck_named *t = &c->tensors[i];
        FUZZ_ASSERT(t->name && t->a.nbytes == (size_t)t->a.numel * st_dtype_size(t->a.dtype), "tensor '%s': %zu bytes for %lld elements",
                    t->name, t->a.nbytes, (long long)t->a.numel);
        for (int j = 0; j < i; j++) FUZZ_ASSERT(strcmp(t->name, c->tensors[j].name) != 0, "tensor '%s' twice", t->name);
        volatile uint8_t sum = 0;
        for (size_t k = 0; k < t->a.nbytes; k++) sum ^= ((const uint8_t *)t->a.data)[k];
        (void)sum;
    }
    int n = c->n_tensors;
    torch_ckpt_close(c);
    if (size <= (1 << 16)) {
        ck_convert_opts o = {.dtype = CK_KEEP, .force = 1};
        char summary[256];
        const char *out = fuzz_path("out.safetensors");
        if (ck_convert(path, out, &o, summary, sizeof summary) == 0) {
            st_file *f = safetensors_open(out);
            FUZZ_ASSERT(f && f->n_tensors == n, "the converted file does not load with %d tensors: %s", n, gs_error());
            safetensors_close(f);
        }
        fuzz_unlink("out.safetensors");
    }
    return 0;
}
