/* ck_convert: sniff, read, write to a temporary file, check it loads,
 * rename into place. See convert.h. */
#include "io/checkpoint/convert.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hash.h"
#include "io/checkpoint/torch_zip.h"

typedef struct { const char *name; ck_array *a; } entry;

static int entry_cmp(const void *x, const void *y) { return strcmp(((const entry *)x)->name, ((const entry *)y)->name); }

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int is_float(st_dtype t) { return t == ST_F32 || t == ST_F16 || t == ST_BF16 || t == ST_F64; }

/* tools/convert_checkpoint.py's dtype rules for the companion's arrays. */
static int companion_dtype(const char *name, ck_array *a, ck_dtype_mode mode) {
    if (mode == CK_BF16) return ck_array_cast(a, ST_BF16);
    if (mode == CK_F32 || a->dtype == ST_F64) return ck_array_cast(a, ST_F32);
    if (a->dtype == ST_F32 || a->dtype == ST_F16 || a->dtype == ST_BF16) return 0;
    return gs_fail("parameter %s has dtype %s; a floating dtype is needed", name, st_dtype_name(a->dtype));
}

/* Sorted by name into w; NaN or Inf refused unless allowed. */
static int add_sorted(st_writer *w, entry *e, int n, int allow_nonfinite) {
    qsort(e, (size_t)n, sizeof *e, entry_cmp);
    for (int i = 0; i < n; i++) {
        if (i && !strcmp(e[i].name, e[i - 1].name)) return gs_fail("tensor '%s' appears twice", e[i].name);
        if (!strcmp(e[i].name, "__metadata__"))
            return gs_fail("a tensor is named '__metadata__', the key safetensors keeps for metadata: it cannot be written (rename it)");
        int64_t bad = allow_nonfinite ? 0 : ck_array_nonfinite(e[i].a);
        if (bad)
            return gs_fail("tensor '%s' holds %" PRId64 " of %" PRId64 " values that are NaN or infinite (a diverged run?); "
                           "--allow-nonfinite converts it anyway", e[i].name, bad, e[i].a->numel);
        if (st_writer_add(w, e[i].name, e[i].a->dtype, e[i].a->ndim, e[i].a->shape, e[i].a->data) != 0) return -1;
    }
    return 0;
}

/* Write w to a fresh temporary file next to out; its name in tmp. */
static int save_temp(st_writer *w, const char *out, char *tmp, size_t cap) {
    snprintf(tmp, cap, "%s.convert-XXXXXX", out);
    int fd = mkstemp(tmp);
    if (fd < 0) return gs_fail("cannot create a temporary file next to %s: %s", out, strerror(errno));
    close(fd);
    if (st_writer_save(w, tmp) != 0) { unlink(tmp); return -1; }
    return 0;
}

/* Move tmp to out: atomically, and without replacing an existing out unless force. */
static int place(const char *tmp, const char *out, int force) {
    if (!force) {
        if (link(tmp, out) == 0) { unlink(tmp); return 0; }
        if (errno == EEXIST) { unlink(tmp); return gs_fail("%s exists (use --force to replace it)", out); }
        /* no hard links on this filesystem: check, then rename */
        struct stat sb;
        if (lstat(out, &sb) == 0) { unlink(tmp); return gs_fail("%s exists (use --force to replace it)", out); }
    }
    if (rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        return gs_fail("cannot rename %s to %s: %s", tmp, out, strerror(e));
    }
    return 0;
}

/* Everything the writer points into, alive until the output is saved. */
typedef struct {
    const char *in;
    unsigned char *map;
    size_t map_size;
    pk_doc *doc;
    ck_companion comp;
    int have_comp;
    torch_ckpt *torch;
    entry *e;
    int n;
    int gpn; /* a companion model: check the output with the caller's load_model */
} source;

static int read_pickle(source *s, st_writer *w, const ck_convert_opts *o, char *summary, size_t cap) {
    ck_dtype_mode mode = o->dtype;
    if (!(s->doc = pk_load(s->map, s->map_size, NULL))) return -1;
    if (ck_companion_read(pk_root(s->doc), base_name(s->in), s->map_size, &s->comp) != 0) { s->have_comp = 1; return -1; }
    s->have_comp = 1;
    ck_companion *c = &s->comp;
    if (!(s->e = calloc((size_t)c->n + 1, sizeof *s->e))) return gs_fail("out of memory");
    for (int i = 0; i < c->n; i++) {
        if (companion_dtype(c->names[i], &c->arrays[i], mode) != 0) return -1;
        s->e[i] = (entry){c->names[i], &c->arrays[i]};
    }
    s->n = c->n;
    if (add_sorted(w, s->e, s->n, o->allow_nonfinite) != 0) return -1;
    for (int i = 0; i < c->n_meta; i++)
        if (st_writer_meta(w, c->meta_keys[i], c->meta_values[i]) != 0) return -1;
    snprintf(summary, cap, "%s, %d tensors%s", c->arch, c->n, c->optimizer_skipped ? ", optimizer state skipped" : "");
    s->gpn = 1;
    return 0;
}

static int read_torch(source *s, st_writer *w, const ck_convert_opts *o, char *summary, size_t cap) {
    ck_dtype_mode mode = o->dtype;
    if (!(s->torch = torch_ckpt_open(s->in, NULL))) return -1;
    torch_ckpt *t = s->torch;
    if (!(s->e = calloc((size_t)t->n_tensors + 1, sizeof *s->e))) return gs_fail("out of memory");
    for (int i = 0; i < t->n_tensors; i++) {
        ck_array *a = &t->tensors[i].a;
        if (mode != CK_KEEP && is_float(a->dtype) && ck_array_cast(a, mode == CK_F32 ? ST_F32 : ST_BF16) != 0)
            return gs_fail_context("tensor '%s': ", t->tensors[i].name);
        s->e[i] = (entry){t->tensors[i].name, a};
    }
    s->n = t->n_tensors;
    if (add_sorted(w, s->e, s->n, o->allow_nonfinite) != 0) return gs_fail_context("%s: ", s->in);
    char sha[GS_HASH_HEX], step[32];
    if (gs_hash_file(s->in, sha) != 0) return -1;
    if (st_writer_meta(w, "format", "pytorch") != 0 || st_writer_meta(w, "source", base_name(s->in)) != 0 ||
        st_writer_meta(w, "source_sha256", sha) != 0)
        return -1;
    if (t->has_step) {
        snprintf(step, sizeof step, "%lld", (long long)t->step);
        if (st_writer_meta(w, "source_step", step) != 0) return -1;
    }
    snprintf(summary, cap, "pytorch %s, %d tensors%s%s", t->companion_layout ? "checkpoint" : "state dict", t->n_tensors,
             t->n_skipped ? ", non-tensor entries skipped" : "", t->companion_layout ? ", optimizer state skipped" : "");
    return 0;
}

static void source_free(source *s) {
    free(s->e);
    if (s->have_comp) ck_companion_free(&s->comp);
    pk_close(s->doc);
    torch_ckpt_close(s->torch);
    if (s->map) munmap(s->map, s->map_size);
}

/* The output must load: as a model for the companion's checkpoints, as
 * safetensors with every tensor otherwise. */
static int check_output(const char *tmp, const source *s, const ck_convert_opts *o) {
    if (s->gpn && o->load_model) return o->load_model(tmp) == 0 ? 0 : gs_fail_context("the output does not load: ");
    st_file *f = safetensors_open(tmp);
    if (!f) return gs_fail_context("the output does not load: ");
    int ok = f->n_tensors == s->n;
    safetensors_close(f);
    return ok ? 0 : gs_fail("the output holds a different number of tensors than the checkpoint");
}

/* A pickle starts with PROTO (protocol 2+) or, in protocols 0-1, with
 * the opcode of its outermost container or global. */
static int pickle_sniff(const unsigned char *p, size_t n) {
    return n >= 2 && (p[0] == 0x80 || (p[0] && strchr("(}])cdlN", p[0]) != NULL));
}

int ck_convert(const char *in, const char *out, const ck_convert_opts *o, char *summary, size_t cap) {
    source s = {.in = in};
    st_writer *w = NULL;
    char tmp[4200] = "";
    int rc = -1;
    struct stat si, so;
    int fd = open(in, O_RDONLY);
    if (fd < 0) { gs_fail("cannot open %s: %s", in, strerror(errno)); return -1; }
    if (fstat(fd, &si) != 0 || !S_ISREG(si.st_mode)) { close(fd); gs_fail("%s: not a regular file", in); return -1; }
    if (stat(out, &so) == 0) {
        if (so.st_dev == si.st_dev && so.st_ino == si.st_ino) { close(fd); gs_fail("%s: the output is the input; refusing to overwrite it", in); return -1; }
        if (!o->force) { close(fd); gs_fail("%s exists (use --force to replace it)", out); return -1; }
    }
    s.map_size = (size_t)si.st_size;
    if (s.map_size) {
        s.map = mmap(NULL, s.map_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (s.map == MAP_FAILED) { s.map = NULL; close(fd); gs_fail("cannot map %s: %s", in, strerror(errno)); return -1; }
    }
    close(fd);
    if (!(w = st_writer_new())) goto done;
    if (torch_legacy_sniff(s.map, s.map_size)) {
        gs_fail("%s: a PyTorch checkpoint in the legacy format (torch.save before PyTorch 1.6, or with "
                "_use_new_zipfile_serialization=False), which is not read: save it again with torch.save in PyTorch 1.6 or "
                "later (the zip format), then convert that", in);
        goto done;
    }
    if (torch_zip_sniff(s.map, s.map_size)) {
        if (read_torch(&s, w, o, summary, cap) != 0) goto done;
    } else if (pickle_sniff(s.map, s.map_size)) {
        if (read_pickle(&s, w, o, summary, cap) != 0) { gs_fail_context("%s: ", in); goto done; }
    } else {
        gs_fail("%s: not a checkpoint: neither a zip archive (torch.save) nor a pickle (%zu bytes, first byte 0x%02x)", in, s.map_size,
                s.map_size ? s.map[0] : 0);
        goto done;
    }
    for (int i = 0; i < o->n_meta; i++) {
        const char *eq = strchr(o->meta[i], '=');
        if (!eq || eq == o->meta[i]) { gs_fail("--meta '%s' is not KEY=VALUE", o->meta[i]); goto done; }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->meta[i]), o->meta[i]);
        if (st_writer_meta(w, key, eq + 1) != 0) goto done;
    }
    if (save_temp(w, out, tmp, sizeof tmp) != 0) goto done;
    if (check_output(tmp, &s, o) != 0) { unlink(tmp); gs_fail_context("%s: ", in); goto done; }
    rc = place(tmp, out, o->force);
done:
    st_writer_free(w);
    source_free(&s);
    return rc;
}
