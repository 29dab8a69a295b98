/* Fuzz target: a NumPy .npy file, as `gpnscope import` reads it. The input
 * is the file. One that opens must hold exactly the data its header
 * promises: reading it all in chunks (as floats or as integers, by dtype)
 * succeeds and one element more fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "fuzz.h"
#include "store/npy.h"

#define CHUNK 1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("in.npy", data, size);
    npy_file *f = npy_open(path);
    if (!f) return 0;
    char shape[8], longer[200];
    npy_shape_str(f, shape, sizeof shape); /* truncated, never overrun */
    npy_shape_str(f, longer, sizeof longer);
    FUZZ_ASSERT(f->count >= 0 && f->count * f->item_size <= (int64_t)size, "%lld elements of %d bytes in a %zu-byte file",
                (long long)f->count, f->item_size, size);
    float fb[CHUNK];
    int64_t ib[CHUNK];
    for (int64_t done = 0; done < f->count;) {
        int64_t n = f->count - done < CHUNK ? f->count - done : CHUNK;
        int rc = f->is_float ? npy_read_f32(f, fb, n) : npy_read_i64(f, ib, n);
        FUZZ_ASSERT(rc == 0, "reading elements %lld.. of %lld failed: %s", (long long)done, (long long)f->count, gs_error());
        done += n;
    }
    FUZZ_ASSERT((f->is_float ? npy_read_f32(f, fb, 1) : npy_read_i64(f, ib, 1)) != 0, "read past the end of the array");
    FUZZ_ASSERT((f->is_float ? npy_read_i64(f, ib, 1) : npy_read_f32(f, fb, 1)) != 0, "read with the wrong kind of dtype");
    npy_close(f);
    return 0;
}
