/* PyTorch checkpoints (torch.save's zip format) as named tensors.
 *
 * The archive holds <top>/data.pkl (the pickled object, read by the
 * restricted VM of pickle.h), one entry <top>/data/<key> per storage and,
 * from PyTorch 1.10 on, <top>/byteorder; <top> is whatever folder torch.save
 * chose (the file's name without extension, or "archive"). The zip is read
 * with libzip; on top of it every entry name must lie inside <top> (no
 * absolute path, no "..", no backslash), entries must be stored, or deflated
 * to at most max_inflated bytes (torch.save never compresses; a bigger
 * deflated entry is a zip bomb until proven otherwise), every storage's
 * directory size must be exactly the elements its persistent id declares
 * and hold every element its tensors' (offset, size, stride) reach. These
 * are checked before anything is inflated; then each storage is read only as
 * far as its tensors reach (an entry read whole yields exactly its declared
 * size), those prefixes in all at most 4 x the archive + 1 MiB, and deflated
 * storages may hold at most 1 MiB no tensor uses (docs/engine.md). At most
 * ST_MAX_TENSORS entries in the state dict.
 *
 * The pickled object is either a state dict (name -> tensor; OLMo's model.pt)
 * or the companion trainer's {"model": state_dict, "optimizer", "scheduler",
 * "step"}, of which only "model" (and "step") is used; entries of the state
 * dict that are not tensors are counted in n_skipped. */
#ifndef GS_IO_CHECKPOINT_TORCH_ZIP_H
#define GS_IO_CHECKPOINT_TORCH_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "io/checkpoint/pickle.h"
#include "io/checkpoint/tensor.h"

typedef struct {
    pk_limits pickle;
    uint64_t max_entries;  /* zip entries (default 1 << 20) */
    uint64_t max_pickle;   /* bytes of data.pkl (default 1 << 30) */
    uint64_t max_inflated; /* bytes of one deflated entry (default 64 MiB) */
} torch_limits;

void torch_default_limits(torch_limits *lim);

typedef struct { char *name; ck_array a; } ck_named;

typedef struct torch_storage torch_storage;

typedef struct {
    char *path;
    ck_named *tensors;    /* in the state dict's order */
    int n_tensors;
    int n_skipped;        /* non-tensor entries of the state dict */
    int has_step;
    int64_t step;         /* the companion layout's "step" */
    int companion_layout; /* {"model": ...} rather than a bare state dict */
    /* internals */
    void *zip;
    torch_storage *storages; /* by zip entry index */
    uint64_t n_entries;
    char *top;
    int big_endian;
    unsigned char *pkl;
    pk_doc *doc;
} torch_ckpt;

/* Open and fully validate path; NULL with gs_error() ("PATH: problem"). */
torch_ckpt *torch_ckpt_open(const char *path, const torch_limits *lim);
void torch_ckpt_close(torch_ckpt *c);

/* 1 if the first bytes are a zip local file header ("PK\3\4"). */
int torch_zip_sniff(const void *head, size_t n);
/* 1 if they are the legacy (non-zip) torch.save format: a pickle of its magic number. */
int torch_legacy_sniff(const void *head, size_t n);

#endif
