/* Fuzz target: a PyTorch checkpoint, as `gpnscope convert checkpoint.pt`
 * reads it. An input starting with "PK\3\4" is the whole .pt (a zip);
 * any other is the archive's entries separated by FUZZ_PART_SEP (data.pkl,
 * byteorder (empty: none), then storages data/0, data/1, ...), zipped here
 * with valid CRCs so mutations reach the pickle and storage checks rather
 * than stopping at the zip's checksums. One that opens must give uniquely
 * named tensors whose bytes are exactly numel x itemsize, all readable;
 * small ones must also convert, and the output must load with the same
 * tensors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/convert.h"
#include "io/checkpoint/torch_zip.h"
#include "io/checkpoint/safetensors.h"
#include "fuzz.h"
#include <zip.h>

/* The parts as a stored zip under f/; the path, or NULL when libzip refuses. */
static const char *zip_parts(const uint8_t *data, size_t size) {
    const char *path = fuzz_path("parts.pt");
    int err;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z) return NULL;
    const uint8_t *p;
    size_t n;
    for (int k = 0; k < 64 && fuzz_part(data, size, k, &p, &n); k++) {
        char name[32];
        if (k == 0) snprintf(name, sizeof name, "f/data.pkl");
        else if (k == 1) { if (!n) continue; snprintf(name, sizeof name, "f/byteorder"); }
        else snprintf(name, sizeof name, "f/data/%d", k - 2);
        zip_source_t *src = zip_source_buffer(z, p, n, 0);
        zip_int64_t i = src ? zip_file_add(z, name, src, 0) : -1;
        if (i < 0) { zip_source_free(src); break; }
        zip_set_file_compression(z, (zip_uint64_t)i, ZIP_CM_STORE, 0);
    }
    if (zip_close(z) != 0) { zip_discard(z); return NULL; }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = size >= 4 && !memcmp(data, "PK\3\4", 4) ? fuzz_write("in.pt", data, size) : zip_parts(data, size);
    if (!path) return 0;
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
    if (size <= (1 << 14)) {
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
