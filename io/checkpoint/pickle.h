/* A restricted pickle reader: it decodes the opcodes of protocols 0-5 into a
 * tree of plain values and never runs or instantiates anything.
 *
 * Globals are looked up in a fixed table (pickle_globals.c): the numpy
 * functions that rebuild arrays, dtypes and scalars, collections.OrderedDict,
 * _codecs.encode (how protocol 2 spells bytes), bytes/bytearray/set/frozenset
 * (how protocols 0-3 spell b'', bytearrays and sets), torch's tensor rebuild and
 * storage type names; anything under optax./flax./jax./jaxlib./chex./
 * ml_collections. becomes an opaque PK_SKIPPED node whose arguments are
 * dropped. Any other global (os.system, builtins.eval, ...) is refused with
 * one line naming it. A numpy.dtype is checked when it is built: plain
 * numeric types only (no fields, no object dtype, flags 0).
 *
 * Hostile input cannot make it allocate more than the input warrants: every
 * length is checked against the bytes present before anything is allocated;
 * the memo is a hash table (its indices are not array offsets); the tree is
 * built with an explicit stack, and every value records its nesting depth and
 * the size of its fully expanded tree (a value shared through the memo counts
 * each time it is used), both bounded by pk_limits. A container cannot change
 * once it has been put into another one, so these sizes are final and no
 * cycle can form (a self-referencing list is refused).
 *
 * Ownership: pk_load returns a document that owns every value; strings and
 * bytes may point into the input, which must outlive the document. */
#ifndef GS_IO_CHECKPOINT_PICKLE_H
#define GS_IO_CHECKPOINT_PICKLE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_BYTES,
    PK_LIST, PK_TUPLE, PK_DICT, PK_SET,
    PK_GLOBAL,  /* a recognised global name, not applied */
    PK_OBJECT,  /* a recognised global applied to args (+ BUILD state) */
    PK_PERSID,  /* a persistent id (torch storages); u.pid is the id */
    PK_SKIPPED, /* an optax/flax/jax object: contents not kept */
} pk_kind;

/* The recognised globals. */
typedef enum {
    PK_G_NP_RECONSTRUCT, /* numpy.core.multiarray._reconstruct (numpy._core in numpy 2) */
    PK_G_NP_NDARRAY,
    PK_G_NP_DTYPE,
    PK_G_NP_SCALAR,      /* numpy.core.multiarray.scalar */
    PK_G_NP_FROMBUFFER,  /* numpy.core.numeric._frombuffer (protocol 5) */
    PK_G_ORDERED_DICT,   /* collections.OrderedDict: becomes a PK_DICT */
    PK_G_CODECS_ENCODE,  /* _codecs.encode(str, "latin1"): becomes PK_BYTES */
    PK_G_TORCH_REBUILD,  /* torch._utils._rebuild_tensor_v2 */
    PK_G_TORCH_PARAMETER,/* torch._utils._rebuild_parameter: the tensor itself */
    PK_G_TORCH_STORAGE,  /* torch.FloatStorage, ... (u.glob.dtype says which) */
    PK_G_TORCH_SIZE,     /* torch.Size(tuple): the tuple */
    PK_G_BYTES,          /* builtins.bytes()/bytearray(b): protocols 0-2 spell b'' so */
    PK_G_SET,            /* builtins.set(list) / frozenset(list) (u.glob.dtype 1: frozen) */
    PK_G_RECONSTRUCTOR,  /* copyreg._reconstructor: protocols 0-1 objects; only of skipped classes */
    PK_G_BASE_TYPE,      /* builtins.object/tuple/list/dict: only as _reconstructor's base */
    PK_G_SKIP,           /* optax., flax., jax., ... */
} pk_global;

typedef struct pk_value pk_value;
struct pk_value {
    pk_kind kind;
    unsigned sealed : 1;  /* inside another value: may no longer change */
    unsigned big : 1;     /* PK_INT beyond int64 (value not kept) */
    unsigned frozen : 1;  /* PK_SET that is a frozenset (hashable) */
    uint32_t depth;       /* 1 + the deepest child */
    uint64_t weight;      /* values in the expanded tree (saturating) */
    uint64_t wbytes;      /* string/bytes bytes in the expanded tree (saturating) */
    union {
        int64_t i;        /* PK_BOOL, PK_INT */
        double f;
        struct { const unsigned char *p; size_t n; } s;   /* PK_STR (UTF-8), PK_BYTES */
        struct { pk_value **v; size_t n, cap; } seq;      /* list, tuple, set; dict: 2n (key, value) */
        struct { pk_global g; int dtype; const char *module, *name; } glob; /* dtype: st_dtype of a storage */
        struct { pk_global g; int dtype; pk_value *args, *state; } obj;
        pk_value *pid;
    } u;
};

typedef struct {
    uint64_t max_values; /* values in the expanded tree (default 1 << 24) */
    uint64_t max_bytes;  /* string/bytes bytes in the expanded tree (default 1 << 38) */
    uint32_t max_depth;  /* nesting of values (default 128; at most 4096) */
    uint32_t max_memo;   /* memo entries (default 1 << 22) */
    uint32_t max_stack;  /* stack values and marks (default 1 << 22) */
} pk_limits;

void pk_default_limits(pk_limits *lim);

typedef struct pk_doc pk_doc;

/* Decode one pickle (data..data+n, ending with STOP and nothing after it).
 * lim may be NULL (defaults). NULL on any error, with gs_error() naming the
 * byte offset and the problem. */
pk_doc *pk_load(const void *data, size_t n, const pk_limits *lim);
void pk_close(pk_doc *d);
const pk_value *pk_root(const pk_doc *d);

/* The value of the last entry whose key is the string `key`; NULL if none or
 * if d is not a dict. */
const pk_value *pk_dict_get(const pk_value *d, const char *key);
/* 1 if v is a PK_STR equal to s. */
int pk_str_eq(const pk_value *v, const char *s);
/* A short name of v's kind for messages ("dict", "numpy.dtype object", ...). */
const char *pk_kind_name(const pk_value *v);
/* Integer value of a PK_INT or PK_BOOL that fits int64: 0, else -1 (no error set). */
int pk_int(const pk_value *v, int64_t *out);

#endif
