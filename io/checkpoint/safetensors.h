/* Safetensors reader (memory-mapped) and writer.
 *
 * safetensors_open() validates everything before anything is trusted: the
 * header length lies inside the file, the header is a JSON object (parsed with
 * cJSON), every tensor has a known dtype, a shape of non-negative integers and
 * data_offsets that lie inside the data section, do not overlap and hold
 * exactly dtype-size x prod(shape) bytes. Any violation is a one-line error
 * naming the file, the tensor and the problem. */
#ifndef GS_IO_SAFETENSORS_H
#define GS_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8
/* A checkpoint with more tensors is refused (the largest models have a few
 * thousand; docs/reliability.md). */
#define ST_MAX_TENSORS (1 << 20)

typedef enum { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I32, ST_I64, ST_U32, ST_U8, ST_I8, ST_I16, ST_U16, ST_BOOL, ST_U64 } st_dtype;

typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    int64_t numel;
    const void *data; /* into the mapping; little-endian, maybe unaligned */
    size_t nbytes;
} st_tensor;

typedef struct {
    char *path;
    void *map;
    size_t map_size;
    st_tensor *tensors;
    int n_tensors;
    char **meta_keys, **meta_values; /* __metadata__ (string -> string) */
    int n_meta;
    void *index; /* name -> tensor (a hsearch_r table) */
} st_file;

st_file *safetensors_open(const char *path);
void safetensors_close(st_file *f);
const st_tensor *safetensors_find(const st_file *f, const char *name);
const char *safetensors_meta(const st_file *f, const char *key);
const char *st_dtype_name(st_dtype t);
size_t st_dtype_size(st_dtype t);
/* Copy a floating tensor (F32/F16/BF16/F64) into float32 `out` (numel floats). */
int st_tensor_to_f32(const st_tensor *t, float *out);

/* Writer: collect tensors (data is copied at write time), then write. */
typedef struct st_writer st_writer;
st_writer *st_writer_new(void);
int st_writer_add(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape, const void *data);
int st_writer_meta(st_writer *w, const char *key, const char *value);
/* Writes to path.tmp then renames, so a crash never leaves a half file. */
int st_writer_save(st_writer *w, const char *path);
void st_writer_free(st_writer *w);

#endif
