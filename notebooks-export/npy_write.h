/* Writing NumPy .npy files (format version 1.0), streamed: the shape is
 * given first, the elements follow in C order in any number of pieces, and
 * the file is only moved into place when exactly shape's product of
 * elements was written. numpy.load reads the result.
 *
 * dtypes: "<f4" (float), "<f8" (double), "<i4" (int32), "<i8" (int64);
 * data is passed in the host's layout and written little-endian. The
 * header is padded so that the data starts at a multiple of 64 bytes, as
 * numpy's own writer does. */
#ifndef GS_NOTEBOOKS_NPY_WRITE_H
#define GS_NOTEBOOKS_NPY_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "notebooks-export/outfile.h"

#define GS_NPY_MAX_DIMS 8

typedef struct {
    gs_outfile out;
    int item_size;
    int64_t expected, written;
} gs_npy_writer;

/* The header text, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
 * padded with spaces and a final newline; returns the whole header length
 * (magic and length field included), or -1 when it does not fit size. */
int gs_npy_header(char *buf, size_t size, const char *descr, int ndim, const int64_t *shape);

int gs_npy_begin(gs_npy_writer *w, const char *path, const char *descr, int ndim, const int64_t *shape);
/* The next n elements (n * item size bytes). Writing more than the shape
 * holds is an error. */
int gs_npy_write(gs_npy_writer *w, const void *data, int64_t n);
/* Checks the count and moves the file into place. */
int gs_npy_end(gs_npy_writer *w);
void gs_npy_abort(gs_npy_writer *w);

#endif
