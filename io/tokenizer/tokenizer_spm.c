/* Reader for SentencePiece's tokenizer.model: a protobuf ModelProto, of
 * which we parse the few fields that encoding needs (field numbers from
 * sentencepiece_model.proto):
 *   ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
 *   SentencePiece   1 piece (string), 2 score (float), 3 type (enum, default NORMAL)
 *   TrainerSpec     3 model_type (1 UNIGRAM default, 2 BPE), 35 byte_fallback,
 *                   40 unk_id (default 0), 41 bos_id (1), 42 eos_id (2), 43 pad_id (-1)
 *   NormalizerSpec  1 name, 2 precompiled_charsmap, 3 add_dummy_prefix (default true),
 *                   4 remove_extra_whitespaces (default true), 5 escape_whitespaces (default true)
 * Every other field is skipped by its wire type. Only BPE models with an
 * empty normalization table (LLaMA's "identity") are accepted: other tables
 * (nmt_nfkc, ...) would change the text before encoding. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/tokenizer/tokenizer_impl.h"

typedef struct {
    const unsigned char *p, *end;
} pb;

static int pb_varint(pb *b, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end) return gs_fail("truncated varint");
        unsigned char c = *b->p++;
        x |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) { *v = x; return 0; }
    }
    return gs_fail("varint longer than 10 bytes");
}

/* Read the next field: its number, wire type, and (for wire type 2) the
 * payload; scalar values land in *v. */
static int pb_field(pb *b, uint32_t *field, int *wire, uint64_t *v, pb *sub) {
    uint64_t key = 0; /* set by pb_varint; GCC -O3 cannot see that */
    if (pb_varint(b, &key)) return -1;
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    if (*field == 0) return gs_fail("field number 0");
    switch (*wire) {
    case 0: return pb_varint(b, v);
    case 1:
        if (b->end - b->p < 8) return gs_fail("truncated 64-bit field %u", *field);
        memcpy(v, b->p, 8); /* little-endian host assumed, as everywhere in gpnscope */
        b->p += 8;
        return 0;
    case 5: {
        if (b->end - b->p < 4) return gs_fail("truncated 32-bit field %u", *field);
        uint32_t x;
        memcpy(&x, b->p, 4);
        *v = x;
        b->p += 4;
        return 0;
    }
    case 2: {
        uint64_t n = 0;
        if (pb_varint(b, &n)) return -1;
        if (n > (uint64_t)(b->end - b->p)) return gs_fail("field %u claims %llu bytes, only %zu left", *field, (unsigned long long)n, (size_t)(b->end - b->p));
        sub->p = b->p;
        sub->end = b->p + n;
        b->p += n;
        return 0;
    }
    default: return gs_fail("unsupported wire type %d (field %u)", *wire, *field);
    }
}

typedef struct {
    int model_type, byte_fallback;
    int64_t unk_id, bos_id, eos_id, pad_id;
    int add_dummy_prefix, remove_extra_ws, escape_ws;
    size_t charsmap_len;
} spm_spec;

static int parse_trainer(pb b, spm_spec *s) {
    while (b.p < b.end) {
        uint32_t f; int w; uint64_t v = 0; pb sub;
        if (pb_field(&b, &f, &w, &v, &sub)) return gs_fail_context("trainer_spec: ");
        if (w != 0) continue;
        switch (f) {
        case 3: s->model_type = (int)v; break;
        case 35: s->byte_fallback = v != 0; break;
        case 40: s->unk_id = (int32_t)(uint32_t)v; break; /* int32: negatives are sign-extended varints */
        case 41: s->bos_id = (int32_t)(uint32_t)v; break;
        case 42: s->eos_id = (int32_t)(uint32_t)v; break;
        case 43: s->pad_id = (int32_t)(uint32_t)v; break;
        }
    }
    return 0;
}

static int parse_normalizer(pb b, spm_spec *s) {
    while (b.p < b.end) {
        uint32_t f; int w; uint64_t v = 0; pb sub = {0};
        if (pb_field(&b, &f, &w, &v, &sub)) return gs_fail_context("normalizer_spec: ");
        if (f == 2 && w == 2) s->charsmap_len = (size_t)(sub.end - sub.p);
        if (w != 0) continue;
        if (f == 3) s->add_dummy_prefix = v != 0;
        if (f == 4) s->remove_extra_ws = v != 0;
        if (f == 5) s->escape_ws = v != 0;
    }
    return 0;
}

/* One SentencePiece message: piece, score, type. */
static int parse_piece(pb b, const unsigned char **s, size_t *len, float *score, int *type) {
    *s = NULL;
    *len = 0;
    *score = 0;
    *type = PIECE_NORMAL;
    while (b.p < b.end) {
        uint32_t f; int w; uint64_t v = 0; pb sub = {0};
        if (pb_field(&b, &f, &w, &v, &sub)) return -1;
        if (f == 1 && w == 2) { *s = sub.p; *len = (size_t)(sub.end - sub.p); }
        else if (f == 2 && w == 5) { uint32_t x = (uint32_t)v; memcpy(score, &x, 4); }
        else if (f == 3 && w == 0) {
            if (v < 1 || v > 6) return gs_fail("piece type %llu is not 1..6", (unsigned long long)v);
            *type = (int)v;
        }
    }
    if (!*s) return gs_fail("a piece without its string");
    return 0;
}

gs_tokenizer *tok_load_spm(const char *path, const unsigned char *data, size_t size) {
    spm_spec spec = {.model_type = 1, .unk_id = 0, .bos_id = 1, .eos_id = 2, .pad_id = -1,
                     .add_dummy_prefix = 1, .remove_extra_ws = 1, .escape_ws = 1};
    pb b = {data, data + size};
    int32_t n = 0;
    gs_tokenizer *t = NULL;
    /* first pass: count pieces and read the specs */
    while (b.p < b.end) {
        uint32_t f; int w; uint64_t v = 0; pb sub = {0};
        if (pb_field(&b, &f, &w, &v, &sub)) goto bad;
        if (f == 1 && w == 2) n++;
        else if (f == 2 && w == 2) { if (parse_trainer(sub, &spec)) goto bad; }
        else if (f == 3 && w == 2) { if (parse_normalizer(sub, &spec)) goto bad; }
    }
    if (n == 0) { gs_fail("no pieces"); goto bad; }
    if (spec.model_type != 2) {
        gs_fail("model type %s is not supported (only BPE, as LLaMA-2 uses)",
                spec.model_type == 1 ? "UNIGRAM" : spec.model_type == 3 ? "WORD" : spec.model_type == 4 ? "CHAR" : "unknown");
        goto bad;
    }
    if (spec.charsmap_len) {
        gs_fail("the normalizer has a %zu-byte normalization table (e.g. nmt_nfkc); only the identity normalizer is supported",
                spec.charsmap_len);
        goto bad;
    }
    t = tok_alloc(n);
    if (!t) goto bad;
    t->format = "tokenizer.model";
    t->byte_fallback = spec.byte_fallback;
    t->fuse_unk = 1;
    t->dummy_prefix = spec.add_dummy_prefix;
    t->remove_extra_ws = spec.remove_extra_ws;
    t->escape_ws = spec.escape_ws;
    b.p = data;
    int32_t id = 0;
    while (b.p < b.end) {
        uint32_t f; int w; uint64_t v = 0; pb sub = {0};
        if (pb_field(&b, &f, &w, &v, &sub)) goto bad;
        if (f != 1 || w != 2) continue;
        const unsigned char *s; size_t len; float score; int type;
        if (parse_piece(sub, &s, &len, &score, &type)) { gs_fail_context("piece %d: ", id); goto bad; }
        if (tok_set_piece(t, id, (const char *)s, len, score, type)) goto bad;
        id++;
    }
    if (tok_index(t)) goto bad;
    int64_t specials[4] = {spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id};
    for (int k = 0; k < 4; k++)
        if (specials[k] >= n) { gs_fail("special id %lld is outside the %d pieces", (long long)specials[k], n); goto bad; }
    t->unk = (int32_t)spec.unk_id;
    t->bos = (int32_t)spec.bos_id;
    t->eos = (int32_t)spec.eos_id;
    t->pad = (int32_t)spec.pad_id;
    if (t->unk >= 0 && t->type[t->unk] != PIECE_UNKNOWN) { gs_fail("unk_id %d is not the UNKNOWN piece", t->unk); goto bad; }
    if (tok_merges_from_scores(t) || tok_finish(t)) goto bad;
    return t;
bad:
    tokenizer_free(t);
    gs_fail_context("tokenizer %s: ", path);
    return NULL;
}
