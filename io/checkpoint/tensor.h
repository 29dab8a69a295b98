/* A named array taken out of a checkpoint (numpy array or torch tensor):
 * C order, little-endian, in safetensors' dtypes. `data` points either into
 * the source (a pickle's bytes, a zip entry) or into `owned` when the source
 * had to be converted (big-endian, Fortran order, strided); ck_array_free
 * releases only `owned`. */
#ifndef GS_IO_CHECKPOINT_TENSOR_H
#define GS_IO_CHECKPOINT_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "io/checkpoint/safetensors.h"

typedef struct {
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    int64_t numel;
    const void *data;
    size_t nbytes;
    void *owned;
} ck_array;

void ck_array_free(ck_array *a);

/* Set a->ndim, shape, numel and nbytes from shape[ndim] (dtype already set);
 * -1 with gs_fail when a dimension is negative or the size overflows. */
int ck_array_shape(ck_array *a, int ndim, const int64_t *shape);

/* The elements a (shape set) reaches in a storage of elems elements:
 * [offset, *end) holds every one (*end = 0 when a is empty); *contiguous
 * when they are a's C-order run. -1 with gs_fail when one lies outside. */
int ck_array_reach(const ck_array *a, uint64_t elems, int64_t offset, const int64_t *stride, uint64_t *end, int *contiguous);

/* Fill a (shape set) from src: element i of the array is at element
 * offset + sum(index_k * stride_k) of src, which holds src_bytes bytes;
 * swap = byte-swap each element. Zero-copy when the layout is already C
 * order and little-endian. -1 with gs_fail when an element lies outside src. */
int ck_array_gather(ck_array *a, const unsigned char *src, size_t src_bytes, int64_t offset, const int64_t *stride, int swap);

/* How many of a floating array's elements are NaN or infinite (0 for integers). */
int64_t ck_array_nonfinite(const ck_array *a);

/* Cast a floating (or, for the companion's converter, any numeric) array to
 * F32 or BF16 (round to nearest even) into a new owned buffer. */
int ck_array_cast(ck_array *a, st_dtype to);

#endif
