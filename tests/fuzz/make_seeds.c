/* Seed corpora for the fuzz targets, made by the library's own writers (or
 * by hand where gpnscope only reads a format) and each checked to be
 * accepted by the real reader, so fuzzing starts from inputs that reach deep
 * into every parser:
 *
 *   make_seeds OUT_DIR   writes OUT_DIR/<target>/<name> for every target
 *
 * ctest runs it first (the fuzz_seeds fixture) so that every fuzz_<target>
 * test replays the seeds; scripts/fuzz.sh runs it before fuzzing. Nothing
 * here is committed: seeds are rebuilt from the code that defines the
 * formats. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "analyses/causal/patching.h"
#include "base/error.h"
#include "base/json.h"
#include "base/half.h"
#include "io/checkpoint/convert.h"
#include "io/checkpoint/pickle.h"
#include "io/checkpoint/torch_zip.h"
#include "io/corpora/corpus.h"
#include "engine/model.h"
#include "../unit/pb_writer.h"
#include "../unit/pickle_writer.h"
#include "io/checkpoint/safetensors.h"
#include "io/tokenizer/tokenizer.h"
#include "train/train.h"
#include "fuzz.h"
#include "fuzz_vec.h"
#include "store/npy.h"
#include "store/vec_sql.h"
#include "../unit/testlib.h"

static char out_dir[4096];

static const char *seed_path(const char *target, const char *name) {
    static char buf[4][8192];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s/%s", out_dir, target, name);
    return p;
}

static const char *put(const char *target, const char *name, const void *data, size_t n) {
    const char *p = seed_path(target, name);
    FILE *f = fopen(p, "wb");
    CHECK(f && (n == 0 || fwrite(data, 1, n, f) == n) && fclose(f) == 0, "cannot write %s", p);
    return p;
}

static const char *put_str(const char *target, const char *name, const char *s) { return put(target, name, s, strlen(s)); }

/* A fresh, empty OUT_DIR/target. */
static void fresh(const char *target) {
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/%s' && mkdir -p '%s/%s'", out_dir, target, out_dir, target);
    if (system(cmd) != 0) { fprintf(stderr, "cannot create %s/%s\n", out_dir, target); exit(1); }
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static float rnd(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
}

/* ---------------------------------------------------------------- safetensors */

static void model_seed(const char *name, const gs_config *c, int bf16) {
    gs_model *m = gs_model_new(c);
    CHECK(m != NULL, "%s: %s", name, gs_error());
    if (!m) return;
    for (size_t i = 0; i < m->n_params; i++) m->block[i] = rnd();
    const char *p = seed_path("safetensors", name);
    CHECK(gs_model_save(m, p, bf16) == 0, "%s: %s", name, gs_error());
    gs_model_free(m);
    gs_model *back = gs_model_load(p);
    CHECK(back != NULL, "seed %s does not load: %s", name, gs_error());
    gs_model_free(back);
}

static void seeds_safetensors(void) {
    fresh("safetensors");
    model_seed("gpn_f32.safetensors", &(gs_config){.arch = GS_ARCH_GPN, .n_layers = 1, .d = 3, .e = 2, .f = 2, .V = 5, .decoder_bias = 1}, 0);
    model_seed("gpnm_bf16.safetensors",
               &(gs_config){.arch = GS_ARCH_GPN_M, .n_layers = 2, .d = 2, .e = 2, .f = 2, .H = 1, .dk = 1, .dv = 2, .V = 4}, 1);
    /* the companion's own writer (Python safetensors): other header layout */
    size_t n = 0;
    char *ref = read_whole_file(fixture("reference/gpn.weights.safetensors"), &n);
    if (ref) {
        const char *p = put("safetensors", "reference_gpn.safetensors", ref, n);
        gs_model *m = gs_model_load(p);
        CHECK(m != NULL, "reference fixture does not load: %s", gs_error());
        gs_model_free(m);
        free(ref);
    }
    /* every dtype, metadata, an empty tensor: a file that opens but is no model */
    st_writer *w = st_writer_new();
    int32_t i32[4] = {1, -2, 3, INT32_MAX};
    uint8_t u8[3] = {0, 7, 255};
    uint16_t f16[2] = {f32_to_f16(1.5f), f32_to_f16(-0.25f)};
    double f64[1] = {2.5};
    int64_t s22[2] = {2, 2}, s3[1] = {3}, s2[1] = {2}, s1[1] = {1}, s0[1] = {0};
    st_writer_add(w, "ints", ST_I32, 2, s22, i32);
    st_writer_add(w, "bytes", ST_U8, 1, s3, u8);
    st_writer_add(w, "half", ST_F16, 1, s2, f16);
    st_writer_add(w, "double", ST_F64, 1, s1, f64);
    st_writer_add(w, "empty", ST_BOOL, 1, s0, u8);
    st_writer_meta(w, "arch", "gpn");
    st_writer_meta(w, "note", "fuzz seed");
    const char *p = seed_path("safetensors", "dtypes.safetensors");
    CHECK(st_writer_save(w, p) == 0, "dtypes seed: %s", gs_error());
    st_writer_free(w);
    st_file *f = safetensors_open(p);
    CHECK(f && f->n_tensors == 5 && f->n_meta == 2, "dtypes seed does not open: %s", gs_error());
    safetensors_close(f);
}

/* ---------------------------------------------------------------- tokenizers */

static void check_tokenizer(const char *path) {
    gs_tokenizer *t = tokenizer_load(path);
    CHECK(t != NULL, "seed %s does not load: %s", path, gs_error());
    tokenizer_free(t);
}

static void seeds_tokenizer_json(void) {
    fresh("tokenizer_json");
    for (int v = 0; v < 2; v++) {
        char *json = fuzz_tiny_tokenizer_json(!v, v);
        check_tokenizer(put_str("tokenizer_json", v ? "tiny_unk_metaspace.json" : "tiny_bytes.json", json));
        free(json);
    }
}


static void spm_piece(pbw *m, const char *s, float score, int type) {
    pbw p = {0};
    pb_bytes(&p, 1, s, strlen(s));
    pb_float(&p, 2, score);
    if (type != 1) pb_int(&p, 3, type);
    pb_bytes(m, 1, p.p, p.n);
    free(p.p);
}

/* A SentencePiece BPE model: <unk> <s> </s>, 256 byte pieces, normal pieces
 * scored in merge order, and (user) a user-defined piece. */
static void spm_seed(const char *name, int remove_extra_ws, int user) {
    static const char *const normal[] = {"\xE2\x96\x81", "a", "b", "c", "\xC3\xA9", "ab", "\xE2\x96\x81" "a", "bc", "abc",
                                         "\xE2\x96\x81\xE2\x96\x81", "\xE2\x96\x81" "ab"};
    pbw m = {0};
    spm_piece(&m, "<unk>", 0, 2);
    spm_piece(&m, "<s>", 0, 3);
    spm_piece(&m, "</s>", 0, 3);
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        spm_piece(&m, s, 0, 6);
    }
    for (size_t i = 0; i < sizeof normal / sizeof *normal; i++) spm_piece(&m, normal[i], -(float)i, 1);
    if (user) spm_piece(&m, "<sep>", 0, 4);
    pbw t = {0};
    pb_bytes(&t, 1, "corpus.txt", 10);
    pb_int(&t, 3, 2); /* BPE */
    pb_int(&t, 35, 1);
    pb_int(&t, 40, 0);
    pb_int(&t, 41, 1);
    pb_int(&t, 42, 2);
    pb_int(&t, 43, -1);
    pb_bytes(&m, 2, t.p, t.n);
    pbw n = {0};
    pb_bytes(&n, 1, "identity", 8);
    pb_int(&n, 3, 1);
    pb_int(&n, 4, remove_extra_ws);
    pb_int(&n, 5, 1);
    pb_bytes(&m, 3, n.p, n.n);
    check_tokenizer(put("tokenizer_spm", name, m.p, m.n));
    free(m.p);
    free(t.p);
    free(n.p);
}

static void seeds_tokenizer_spm(void) {
    fresh("tokenizer_spm");
    spm_seed("tiny.model", 0, 0);
    spm_seed("tiny_user_ws.model", 1, 1);
}

static void seeds_tokenizer_encode(void) {
    fresh("tokenizer_encode");
    static const struct { const char *name, *text; size_t len; } texts[] = {
        {"english.txt", "The quick brown fox jumps over the lazy dog.\nIt's 3.14, isn't it?", 0},
        {"unicode.txt", "\xC3\xA9t\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80 \xD0\xBF\xD1\x80\xD0\xB8", 0},
        {"invalid.txt", "a\xFF\xC0\x80 \xED\xA0\x80 \xF4\x90\x80\x80 \xE2\x96", 0},
        {"specials.txt", "<s> </s> <unk> <0x41> <sep>ab\xE2\x96\x81 x", 0},
        {"spaces.txt", "   a  \t b   \n\n c ", 0},
        {"nul.txt", "a\0b\0\0c", 6},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        put("tokenizer_encode", texts[i].name, texts[i].text, texts[i].len ? texts[i].len : strlen(texts[i].text));
}

/* ---------------------------------------------------------------- corpora */

/* The tiny tokenizer of fuzz.h, as the corpus targets use it (its seed file). */
static gs_tokenizer *tiny_tokenizer(void) { return tokenizer_load(seed_path("tokenizer_json", "tiny_bytes.json")); }

static void seeds_corpus_jsonl(void) {
    fresh("corpus_jsonl");
    gs_tokenizer *tok = tiny_tokenizer();
    static const struct { const char *name, *text; int bad; } files[] = {
        {"plain.jsonl", "{\"text\": \"ab abc ca\"}\n{\"text\": \"b\\u00e9 \\ud83d\\ude00 c\", \"id\": 2}\n", 0},
        {"blank_lines.jsonl", "\n{\"text\": \"a\"}\r\n   \n{\"meta\": {\"x\": [1, 2]}, \"text\": \"<sep> a  b\"}\n\n", 0},
        {"paragraphs.jsonl", "{\"text\": \"one\\n\\ntwo\"}\n\n{\"text\": \"three\"}\n", 0},
        {"bad_line.jsonl", "{\"text\": \"ok\"}\n{\"text\": 5}\nnot json\n{\"body\": \"x\"}\n[1]\n{\"text\": \"ok\"} trailing\n", 1},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const char *p = put_str("corpus_jsonl", files[i].name, files[i].text);
        corpus_options o;
        corpus_options_default(&o);
        o.format = CORPUS_JSONL;
        o.seq_len = 2;
        o.skip_bad = files[i].bad;
        gs_corpus *c = tok ? corpus_open(p, tok, &o) : NULL;
        CHECK(c != NULL, "seed %s does not open: %s", p, gs_error());
        CHECK(!c || corpus_n_bad(c) == (files[i].bad ? 5 : 0), "seed %s: %lld bad lines", p, c ? (long long)corpus_n_bad(c) : -1LL);
        corpus_free(c);
    }
    tokenizer_free(tok);
}

/* Pack a shard folder's files into one input (fuzz_corpus_shards.c's layout). */
static void pack_shards(const char *dir, const char *name, int n_parts) {
    static const char *const parts[] = {"data_0000.bin", "data_0000.index.json", "meta.json", "data_0001.bin", "data_0001.index.json"};
    pbw w = {0};
    for (int k = 0; k < n_parts; k++) {
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, parts[k]);
        size_t n = 0;
        char *data = read_whole_file(p, &n);
        if (k) pb_raw(&w, FUZZ_PART_SEP, sizeof FUZZ_PART_SEP - 1);
        if (data) pb_raw(&w, data, n);
        free(data);
    }
    put("corpus_shards", name, w.p, w.n);
    free(w.p);
}

static void seeds_corpus_shards(const char *scratch) {
    fresh("corpus_shards");
    for (int two = 0; two < 2; two++) {
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/shards%d", scratch, two);
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) exit(1);
        shard_writer *w = shard_writer_open(dir, 20, "fuzz", two ? 6 : 0);
        CHECK(w != NULL, "shard writer: %s", gs_error());
        if (!w) return;
        int32_t docs[3][5] = {{1, 5, 6, 7, 2}, {1, 19, 2, 0, 0}, {1, 3, 4, 9, 2}};
        int lens[3] = {5, 3, 5};
        for (int d = 0; d < 3; d++) CHECK(shard_writer_add(w, docs[d], (size_t)lens[d]) == 0, "shard doc: %s", gs_error());
        CHECK(shard_writer_close(w) == 0, "shard close: %s", gs_error());
        corpus_options o;
        corpus_options_default(&o);
        o.seq_len = 3;
        gs_corpus *c = corpus_open(dir, NULL, &o);
        CHECK(c && corpus_n_docs(c) == 3 && corpus_total_tokens(c) == 13, "seed shards %s do not open: %s", dir, gs_error());
        corpus_free(c);
        pack_shards(dir, two ? "two_shards" : "one_shard", two ? 5 : 3);
        if (!two) pack_shards(dir, "bin_only", 1);
    }
}

/* ---------------------------------------------------------------- vec_sql */

static void fv_blob(pbw *w, const float *v, int n) {
    unsigned char h[2] = {FV_BLOB, (unsigned char)(4 * n)};
    pb_raw(w, h, 2);
    pb_raw(w, v, (size_t)n * 4);
}
static void fv_text(pbw *w, const char *s) {
    unsigned char h[2] = {FV_TEXT, (unsigned char)strlen(s)};
    pb_raw(w, h, 2);
    pb_raw(w, s, strlen(s));
}
static void fv_small(pbw *w, int8_t v) {
    unsigned char h[2] = {FV_SMALL, (unsigned char)v};
    pb_raw(w, h, 2);
}
static void fv_real(pbw *w, double d) {
    unsigned char h = FV_REAL;
    pb_raw(w, &h, 1);
    pb_raw(w, &d, 8);
}

static void seeds_vec_sql(void) {
    fresh("vec_sql");
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || store_register_vec_functions(db) != SQLITE_OK) exit(1);
    const float a[3] = {1.0f, -2.5f, 3.25f}, b[3] = {0.5f, 0.0f, -1e-3f};
    for (int f = 0; f < FUZZ_VEC_N_FNS; f++) {
        const fuzz_vec_fn *fn = &fuzz_vec_fns[f];
        pbw w = {0};
        unsigned char idx = (unsigned char)f;
        pb_raw(&w, &idx, 1);
        if (!strcmp(fn->name, "vec_avg")) {
            for (int r = 0; r < 3; r++) fv_blob(&w, r == 1 ? b : a, 3);
        } else if (!strcmp(fn->name, "vec_f32") && fn->nargs == 2) {
            uint16_t h[3] = {f32_to_f16(1.0f), f32_to_f16(-2.0f), f32_to_f16(0.5f)};
            unsigned char hd[2] = {FV_BLOB, 6};
            pb_raw(&w, hd, 2);
            pb_raw(&w, h, 6);
            fv_text(&w, "f16");
        } else if (!strcmp(fn->name, "vec_at")) {
            fv_blob(&w, a, 3);
            fv_small(&w, 2);
        } else if (!strcmp(fn->name, "vec_slice")) {
            fv_text(&w, "[1, 2.5e0, -3, 4]");
            fv_small(&w, 1);
            fv_small(&w, 3);
        } else if (!strcmp(fn->name, "vec_scale")) {
            fv_blob(&w, a, 3);
            fv_real(&w, -0.5);
        } else {
            fv_blob(&w, a, 3);
            if (fn->nargs == 2) fv_text(&w, " [0.5, 0, -0.001] ");
        }
        char name[64];
        snprintf(name, sizeof name, "%02d_%s_%d", f, fn->name, fn->nargs);
        put("vec_sql", name, w.p, w.n);
        CHECK(fuzz_vec_run(db, w.p, w.n) == 0, "seed %s gives an SQL error: %s", name, sqlite3_errmsg(db));
        free(w.p);
    }
    sqlite3_close(db);
}

/* ---------------------------------------------------------------- npy */

static void npy_seed(const char *name, int version, const char *descr, const char *shape, int count, int item) {
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t prefix = version == 1 ? 10 : 12, total = prefix + (size_t)dl + 1;
    size_t pad = (64 - total % 64) % 64, hlen = (size_t)dl + pad + 1;
    pbw w = {0};
    pb_raw(&w, "\x93NUMPY", 6);
    unsigned char ver[2] = {(unsigned char)version, 0};
    pb_raw(&w, ver, 2);
    unsigned char len[4] = {(unsigned char)hlen, (unsigned char)(hlen >> 8), (unsigned char)(hlen >> 16), (unsigned char)(hlen >> 24)};
    pb_raw(&w, len, version == 1 ? 2 : 4);
    pb_raw(&w, dict, (size_t)dl);
    for (size_t i = 0; i < pad; i++) pb_raw(&w, " ", 1);
    pb_raw(&w, "\n", 1);
    uint32_t x = 12345;
    for (int i = 0; i < count * item; i++) {
        x = x * 1103515245u + 12345u;
        unsigned char byte = (unsigned char)(x >> 16);
        if (descr[1] == 'f' && i % item == item - 1) byte &= 0x3F; /* small finite floats */
        pb_raw(&w, &byte, 1);
    }
    const char *p = put("npy", name, w.p, w.n);
    free(w.p);
    npy_file *f = npy_open(p);
    CHECK(f && f->count == count, "seed %s does not open: %s", p, gs_error());
    npy_close(f);
}

static void seeds_npy(void) {
    fresh("npy");
    static const struct { const char *descr; int item; } dt[] = {
        {"<f2", 2}, {"<f4", 4}, {"<f8", 8}, {"<i2", 2}, {"<i4", 4}, {"<i8", 8}, {"|u1", 1}, {"<u2", 2}, {"<u4", 4},
    };
    for (size_t i = 0; i < sizeof dt / sizeof *dt; i++) {
        char name[64];
        snprintf(name, sizeof name, "v1_%c%c_2x3.npy", dt[i].descr[1], dt[i].descr[2]);
        npy_seed(name, 1, dt[i].descr, "(2, 3)", 6, dt[i].item);
    }
    npy_seed("v2_f4_1d.npy", 2, "<f4", "(5,)", 5, 4);
    npy_seed("v3_i4_scalar.npy", 3, "<i4", "()", 1, 4);
    npy_seed("v1_f4_empty.npy", 1, "<f4", "(0, 4)", 0, 4);
    npy_seed("v1_u1_3d.npy", 1, "|u1", "(2, 1, 3)", 6, 1);
}

/* ---- pickles (the companion's checkpoint layout, numpy as each protocol
 * writes arrays) and torch.save archives ---- */

static void pickle_seed(const char *name, pkw *w, int companion) {
    const char *p = put("pickle", name, w->p, w->n);
    pk_doc *d = pk_load(w->p, w->n, NULL);
    CHECK(d != NULL, "seed %s does not load: %s", p, gs_error());
    if (d && companion) {
        ck_companion c;
        CHECK(ck_companion_read(pk_root(d), name, w->n, &c) == 0, "seed %s: %s", p, gs_error());
        ck_companion_free(&c);
    }
    pk_close(d);
    pkw_free(w);
}

/* {step, data_position, params: {embedding, decode_norm_w, ffn_w2_k, nested}, opt_state} */
static void companion_pickle(pkw *w, int proto, const char *core, int fortran) {
    float f[12];
    for (int i = 0; i < 12; i++) f[i] = (float)i - 3.5f;
    int64_t s43[2] = {4, 3}, s5[1] = {5}, s32[2] = {3, 2};
    pkw_proto(w, proto);
    pkw_op(w, '}');
    pkw_op(w, '(');
    pkw_str(w, "step"); pkw_int(w, 7);
    pkw_str(w, "data_position"); pkw_int(w, 1234);
    pkw_str(w, "params");
    pkw_op(w, '}'); pkw_op(w, '(');
    pkw_str(w, "embedding"); pkw_np_array(w, core, "f4", "<", 2, s43, fortran, f, 48);
    pkw_op(w, 'q'); pkw_op(w, 1);
    pkw_str(w, "decode_norm_w"); pkw_np_array(w, core, "f4", ">", 1, s5, 0, f, 20);
    pkw_str(w, "ffn_w2_k"); pkw_np_array(w, core, "f2", "<", 2, s32, 0, f, 12);
    pkw_str(w, "L0"); pkw_op(w, '}'); pkw_str(w, "w"); pkw_op(w, 'h'); pkw_op(w, 1); pkw_op(w, 's');
    pkw_op(w, 'u');
    pkw_str(w, "opt_state");
    pkw_global(w, "optax._src.transform", "ScaleByAdamState"); pkw_op(w, ')'); pkw_op(w, 0x81);
    pkw_op(w, '}'); pkw_str(w, "count"); pkw_int(w, 7); pkw_op(w, 's'); pkw_op(w, 'b');
    pkw_op(w, 0x85);
    pkw_op(w, 'u');
    pkw_op(w, '.');
}

static void seeds_pickle(void) {
    fresh("pickle");
    pkw w = {0};
    companion_pickle(&w, 2, "numpy.core", 0);
    pickle_seed("companion_p2.pkl", &w, 1);
    companion_pickle(&w, 3, "numpy._core", 1);
    pickle_seed("companion_p3_numpy2_fortran.pkl", &w, 1);
    /* protocol 4: FRAME, MEMOIZE, STACK_GLOBAL, flax's nesting */
    pkw_proto(&w, 4);
    pkw_op(&w, 0x95); pkw_le(&w, 0, 8);
    pkw_op(&w, '}'); pkw_memoize(&w);
    pkw_str(&w, "params"); pkw_op(&w, '}'); pkw_memoize(&w);
    pkw_str(&w, "params"); pkw_op(&w, '}'); pkw_memoize(&w);
    pkw_op(&w, '(');
    static const char *const names[] = {"embedding", "decode_norm_w", "ffn_w2_k"};
    for (int k = 0; k < 3; k++) {
        pkw_str(&w, names[k]);
        if (k == 0) { pkw_stack_global(&w, "numpy.core.numeric", "_frombuffer"); pkw_memoize(&w); /* memo 3 */ }
        else pkw_binget(&w, 3);
        pkw_op(&w, '('); pkw_op(&w, 0x96); pkw_le(&w, 8, 8); pkw_raw(&w, "\0\0\x80?\0\0\0@", 8);
        if (k == 0) { pkw_np_dtype(&w, "f4", "<", 0); pkw_memoize(&w); /* memo 4: the dtype, shared */ }
        else pkw_binget(&w, 4);
        pkw_int(&w, 1); pkw_int(&w, 2); pkw_op(&w, 0x86); pkw_str(&w, "C"); pkw_op(&w, 't'); pkw_op(&w, 'R');
    }
    pkw_op(&w, 'u'); pkw_op(&w, 's'); pkw_op(&w, 's');
    pkw_op(&w, '.');
    pickle_seed("flax_p4.pkl", &w, 1);
    /* protocol 0: text opcodes */
    pkw_text(&w, "(dp0\nVstep\np1\nI3\nsVlr\np2\nF0.001\nsVname\np3\nS'gpn\\n'\np4\nsVbig\np5\nL123456789012345678901234567890L\ns.");
    pickle_seed("text_p0.pkl", &w, 0);
    /* torch.save's data.pkl of each reference fixture */
    static const char *const pts[] = {"tpp2", "gdn2", "rt2"};
    for (int k = 0; k < 3; k++) {
        char rel[128], ent[128], name[64];
        snprintf(rel, sizeof rel, "reference/%s.checkpoint.pt", pts[k]);
        snprintf(ent, sizeof ent, "%s.checkpoint/data.pkl", pts[k]);
        snprintf(name, sizeof name, "%s_data.pkl", pts[k]);
        int err;
        zip_t *z = zip_open(fixture(rel), ZIP_RDONLY, &err);
        zip_stat_t st;
        CHECK(z && zip_stat(z, ent, 0, &st) == 0, "cannot read %s from %s", ent, fixture(rel));
        if (!z) continue;
        unsigned char *buf = malloc((size_t)st.size);
        zip_file_t *f = zip_fopen(z, ent, 0);
        CHECK(f && zip_fread(f, buf, st.size) == (zip_int64_t)st.size, "reading %s", ent);
        if (f) zip_fclose(f);
        zip_discard(z);
        pkw_raw(&w, buf, (size_t)st.size);
        free(buf);
        pickle_seed(name, &w, 0);
    }
}

static void seeds_torch_zip(void) {
    fresh("torch_zip");
    static const char *const pts[] = {"tpp2", "gdn2", "rt2"};
    for (int k = 0; k < 3; k++) {
        char rel[128], name[64];
        snprintf(rel, sizeof rel, "reference/%s.checkpoint.pt", pts[k]);
        snprintf(name, sizeof name, "%s.pt", pts[k]);
        size_t n;
        char *b = read_whole_file(fixture(rel), &n);
        CHECK(b != NULL, "cannot read %s", fixture(rel));
        if (!b) continue;
        const char *p = put("torch_zip", name, b, n);
        free(b);
        torch_ckpt *c = torch_ckpt_open(p, NULL);
        CHECK(c != NULL, "seed %s does not open: %s", p, gs_error());
        torch_ckpt_close(c);
    }
    /* the same archives as parts (data.pkl, byteorder, data/0, ...): see fuzz_torch_zip.c */
    for (int k = 0; k < 3; k++) {
        char rel[128], name[64];
        snprintf(rel, sizeof rel, "reference/%s.checkpoint.pt", pts[k]);
        snprintf(name, sizeof name, "%s.parts", pts[k]);
        int err;
        zip_t *z = zip_open(fixture(rel), ZIP_RDONLY, &err);
        CHECK(z != NULL, "cannot open %s", fixture(rel));
        if (!z) continue;
        pkw w = {0};
        for (int part = -2;; part++) {
            char ent[128];
            if (part == -2) snprintf(ent, sizeof ent, "%s.checkpoint/data.pkl", pts[k]);
            else if (part == -1) snprintf(ent, sizeof ent, "%s.checkpoint/byteorder", pts[k]);
            else snprintf(ent, sizeof ent, "%s.checkpoint/data/%d", pts[k], part);
            zip_stat_t st;
            int have = zip_stat(z, ent, 0, &st) == 0;
            if (!have && part >= 0) break;
            if (part > -2) pkw_text(&w, FUZZ_PART_SEP);
            if (!have) continue;
            unsigned char *buf = malloc((size_t)st.size + 1);
            zip_file_t *f = zip_fopen(z, ent, 0);
            CHECK(f && zip_fread(f, buf, st.size) == (zip_int64_t)st.size, "reading %s", ent);
            if (f) zip_fclose(f);
            pkw_raw(&w, buf, (size_t)st.size);
            free(buf);
        }
        zip_discard(z);
        put("torch_zip", name, w.p, w.n);
        pkw_free(&w);
    }
    /* a small one: a strided int32 tensor of a big-endian storage, written by libzip */
    pkw w = {0};
    int64_t size[2] = {2, 2}, stride[2] = {1, 2};
    pkw_proto(&w, 2);
    pkw_op(&w, '}'); pkw_str(&w, "model"); pkw_op(&w, '}'); pkw_str(&w, "t");
    pkw_torch_tensor(&w, "IntStorage", "0", 5, 1, 2, size, stride);
    pkw_op(&w, 's'); pkw_op(&w, 's'); pkw_str(&w, "step"); pkw_int(&w, 3); pkw_op(&w, 's'); pkw_op(&w, '.');
    static const unsigned char be[20] = {0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};
    const char *p = seed_path("torch_zip", "small_strided_big.pt");
    int err;
    zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &err);
    zip_file_add(z, "small/data.pkl", zip_source_buffer(z, w.p, w.n, 0), 0);
    zip_file_add(z, "small/byteorder", zip_source_buffer(z, "big", 3, 0), 0);
    zip_int64_t i = zip_file_add(z, "small/data/0", zip_source_buffer(z, be, sizeof be, 0), 0);
    for (zip_int64_t k = 0; k <= i; k++) zip_set_file_compression(z, (zip_uint64_t)k, ZIP_CM_STORE, 0);
    CHECK(zip_close(z) == 0, "writing %s", p);
    pkw_free(&w);
    torch_ckpt *c = torch_ckpt_open(p, NULL);
    CHECK(c && c->n_tensors == 1, "seed %s does not open: %s", p, gs_error());
    torch_ckpt_close(c);
}

/* ---------------------------------------------------------------- config_json */

static void seeds_config_json(void) {
    fresh("config_json");
    /* the trainer's defaults, as it writes them */
    train_config c;
    train_config_defaults(&c);
    char *train = train_config_to_json(&c);
    CHECK(train != NULL, "train_config_to_json: %s", gs_error());
    if (train) {
        cJSON *j = gs_json_parse_strict(train, strlen(train), "train seed");
        CHECK(j != NULL, "the train seed is refused: %s", gs_error());
        cJSON_Delete(j);
        put_str("config_json", "train_defaults.json", train);
        free(train);
    }
    /* a companion model config, as `convert --config` takes it, and OLMo's */
    const char *models[] = {"{\"vocab_size\": 89, \"hidden_dim\": 32, \"n_layers\": 2, \"n_heads\": 2, \"ffn_dim\": 64}",
                            "{\"d_model\": 32, \"n_heads\": 2, \"layer_norm_eps\": 1e-05, \"clip_qkv\": null, \"alibi\": true, "
                            "\"activation_type\": \"swiglu\", \"rope\": false}"};
    for (int i = 0; i < 2; i++) {
        cJSON *j = gs_json_parse_strict(models[i], strlen(models[i]), "model seed");
        CHECK(j != NULL, "model seed %d is refused: %s", i, gs_error());
        cJSON_Delete(j);
        put_str("config_json", i ? "olmo_model.json" : "tpp_model.json", models[i]);
    }
    /* prompt pairs of token ids, with a comment and a blank line */
    const char *pairs = "# ids\n{\"clean\": [5, 6, 7], \"corrupted\": [5, 8, 7], \"answer\": 9, \"foil\": 10}\n\n"
                        "{\"clean\": [1, 2, 3], \"corrupted\": [4, 2, 3], \"answer\": 11, \"foil\": 12}\n";
    gs_patch_pairs p;
    CHECK(gs_patch_pairs_load(put_str("config_json", "pairs.jsonl", pairs), NULL, 1000, &p) == 0 && p.n == 2,
          "the pairs seed does not load: %s", gs_error());
    gs_patch_pairs_free(&p);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    snprintf(out_dir, sizeof out_dir, "%s", argv[1]);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", out_dir);
    if (system(cmd) != 0) return 1;
    seeds_safetensors();
    seeds_tokenizer_json();
    seeds_tokenizer_spm();
    seeds_tokenizer_encode();
    seeds_corpus_jsonl();
    seeds_corpus_shards(out_dir);
    seeds_vec_sql();
    seeds_npy();
    seeds_pickle();
    seeds_torch_zip();
    seeds_config_json();
    char tmp[8300];
    snprintf(tmp, sizeof tmp, "rm -rf '%s/shards0' '%s/shards1'", out_dir, out_dir);
    if (system(tmp) != 0) return 1;
    printf("seeds written to %s\n", out_dir);
    return test_summary();
}
