/* A small, strict reader of NumPy .npy files (format versions 1, 2 and 3):
 * little-endian '<f2' '<f4' '<f8' '<i2' '<i4' '<i8' '<u2' '<u4' '|u1', C
 * order only. The header is parsed and the file size checked against the
 * shape before any data is read; the data is then streamed in chunks, so
 * arrays larger than memory can be imported. Every refusal is one line naming
 * the file and what is wrong with it. */
#ifndef GS_STORE_NPY_H
#define GS_STORE_NPY_H

#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_DIMS 8

typedef enum { NPY_F2, NPY_F4, NPY_F8, NPY_I2, NPY_I4, NPY_I8, NPY_U1, NPY_U2, NPY_U4 } npy_dtype;

typedef struct {
    FILE *f;
    char *path;
    npy_dtype dtype;
    int item_size, is_float;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    int64_t count; /* elements (product of the shape) */
    int64_t done;  /* elements read so far */
} npy_file;

npy_file *npy_open(const char *path);
void npy_close(npy_file *f);
/* The next n elements, widened to float (float dtypes only) or to int64
 * (integer dtypes only). */
int npy_read_f32(npy_file *f, float *out, int64_t n);
int npy_read_i64(npy_file *f, int64_t *out, int64_t n);
const char *npy_dtype_name(npy_dtype t); /* "<f4" ... */
/* "(2, 3, 4)" into buf. */
void npy_shape_str(const npy_file *f, char *buf, size_t size);

#endif
