#include "notebooks-export/npy_write.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

static int item_size(const char *descr) {
    if (!descr) return 0;
    if (!strcmp(descr, "<f4") || !strcmp(descr, "<i4")) return 4;
    if (!strcmp(descr, "<f8") || !strcmp(descr, "<i8")) return 8;
    return 0;
}

int gs_npy_header(char *buf, size_t size, const char *descr, int ndim, const int64_t *shape) {
    char dict[512];
    size_t k = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim && k < sizeof dict; i++)
        k += (size_t)snprintf(dict + k, sizeof dict - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < sizeof dict) k += (size_t)snprintf(dict + k, sizeof dict - k, "%s), }", ndim == 1 ? "," : "");
    if (k >= sizeof dict) return -1;
    /* magic (6) + version (2) + length (2) + dict + padding + '\n' = multiple of 64 */
    size_t total = 10 + k + 1;
    total = (total + 63) / 64 * 64;
    if (total > size || total - 10 > 65535) return -1;
    size_t hlen = total - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, k);
    memset(buf + 10 + k, ' ', hlen - k - 1);
    buf[total - 1] = '\n';
    return (int)total;
}

int gs_npy_begin(gs_npy_writer *w, const char *path, const char *descr, int ndim, const int64_t *shape) {
    memset(w, 0, sizeof *w);
    w->item_size = item_size(descr);
    if (!w->item_size) return gs_fail("%s: unsupported .npy dtype '%s'", path, descr ? descr : "(none)");
    if (ndim < 0 || ndim > GS_NPY_MAX_DIMS) return gs_fail("%s: %d dimensions is too many for .npy", path, ndim);
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] > 0 && count > INT64_MAX / shape[i] / w->item_size))
            return gs_fail("%s: invalid shape (dimension %d is %lld)", path, i, (long long)shape[i]);
        count *= shape[i];
    }
    char header[640];
    int hl = gs_npy_header(header, sizeof header, descr, ndim, shape);
    if (hl < 0) return gs_fail("%s: the .npy header does not fit", path);
    if (gs_outfile_open(&w->out, path) != 0) return -1;
    if (fwrite(header, 1, (size_t)hl, w->out.f) != (size_t)hl) {
        int rc = gs_outfile_write_failed(&w->out);
        gs_outfile_abort(&w->out);
        return rc;
    }
    w->expected = count;
    return 0;
}

static int host_little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

int gs_npy_write(gs_npy_writer *w, const void *data, int64_t n) {
    if (!w->out.f) return gs_fail("npy writer: not open");
    if (n < 0 || n > w->expected - w->written)
        return gs_fail("%s: %lld more elements than the shape holds", w->out.path,
                       (long long)(n - (w->expected - w->written)));
    if (n == 0) return 0;
    size_t bytes = (size_t)n * (size_t)w->item_size;
    if (host_little_endian()) {
        if (fwrite(data, 1, bytes, w->out.f) != bytes) return gs_outfile_write_failed(&w->out);
    } else {
        const unsigned char *p = data;
        unsigned char tmp[8];
        for (int64_t i = 0; i < n; i++, p += w->item_size) {
            for (int b = 0; b < w->item_size; b++) tmp[b] = p[w->item_size - 1 - b];
            if (fwrite(tmp, 1, (size_t)w->item_size, w->out.f) != (size_t)w->item_size)
                return gs_outfile_write_failed(&w->out);
        }
    }
    w->written += n;
    return 0;
}

int gs_npy_end(gs_npy_writer *w) {
    if (!w->out.f) return gs_fail("npy writer: not open");
    if (w->written != w->expected) {
        int rc = gs_fail("%s: %lld elements written, the shape holds %lld", w->out.path, (long long)w->written,
                         (long long)w->expected);
        gs_outfile_abort(&w->out);
        return rc;
    }
    return gs_outfile_commit(&w->out);
}

void gs_npy_abort(gs_npy_writer *w) { gs_outfile_abort(&w->out); }
