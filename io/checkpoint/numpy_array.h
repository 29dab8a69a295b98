/* numpy arrays and scalars in a decoded pickle (pickle.h) as ck_arrays.
 * Accepts the three ways numpy pickles an array: _reconstruct + BUILD state
 * (protocols 0-4), _frombuffer (protocol 5) and scalar (0-d). The dtype must
 * be one that pickle_globals.c let through (plain numeric); the data must be
 * bytes of exactly numel x itemsize. Big-endian and Fortran-order data are
 * converted into an owned little-endian C-order copy. */
#ifndef GS_IO_CHECKPOINT_NUMPY_ARRAY_H
#define GS_IO_CHECKPOINT_NUMPY_ARRAY_H

#include "io/checkpoint/pickle.h"
#include "io/checkpoint/tensor.h"

/* 1 if v is a numpy array (not a scalar) object. */
int pk_is_numpy_array(const pk_value *v);
/* 1 if v is a numpy scalar object. */
int pk_is_numpy_scalar(const pk_value *v);
/* Interpret v (array or scalar); -1 with gs_fail when it is not a valid one. */
int pk_numpy_array(const pk_value *v, ck_array *out);

#endif
