/* Reader for Hugging Face tokenizer.json files of the BPE kind LLaMA-2 uses:
 * model.vocab (piece -> id), model.merges ("a b" strings or ["a", "b"]
 * pairs, rank = position), model.byte_fallback, model.unk_token, the
 * SentencePiece-style normalizer (Prepend U+2581, Replace " " -> U+2581) or
 * the equivalent Metaspace pre-tokenizer without splitting, and added_tokens
 * (special ones become control pieces). Anything that would make encoding
 * differ from SentencePiece (other normalizers, splitting pre-tokenizers,
 * other model types) is refused with a message naming it. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "io/tokenizer/tokenizer_impl.h"

static const char SPACE_ESC[] = "\xE2\x96\x81";

static int is_byte_piece(const char *s) {
    unsigned v;
    char end;
    return strlen(s) == 6 && sscanf(s, "<0x%2X%c", &v, &end) == 2 && end == '>';
}

static int str_is(const cJSON *o, const char *key, const char *want) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

static const char *type_of(const cJSON *o) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "type");
    return cJSON_IsString(v) ? v->valuestring : "(no type)";
}

/* One normalizer step; sets the tokenizer's flags or refuses. */
static int normalizer_step(gs_tokenizer *t, const cJSON *n) {
    if (!n || cJSON_IsNull(n)) return 0;
    if (!cJSON_IsObject(n)) return gs_fail("normalizer is not an object");
    const char *type = type_of(n);
    if (!strcmp(type, "Sequence")) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers"), *x;
        if (!cJSON_IsArray(list)) return gs_fail("normalizer Sequence without a normalizers array");
        cJSON_ArrayForEach(x, list) if (normalizer_step(t, x)) return -1;
        return 0;
    }
    if (!strcmp(type, "Prepend") && str_is(n, "prepend", SPACE_ESC)) { t->dummy_prefix = 1; return 0; }
    if (!strcmp(type, "Replace") && str_is(n, "content", SPACE_ESC)) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(n, "pattern");
        if (cJSON_IsObject(pat) && str_is(pat, "String", " ")) { t->escape_ws = 1; return 0; }
    }
    char *s = cJSON_PrintUnformatted(n);
    gs_fail("normalizer %.200s is not supported (only SentencePiece's: Prepend \"\xE2\x96\x81\" and Replace \" \" with \"\xE2\x96\x81\")",
            s ? s : type);
    cJSON_free(s);
    return -1;
}

static int pre_tokenizer(gs_tokenizer *t, const cJSON *p) {
    if (!p || cJSON_IsNull(p)) return 0;
    const char *type = type_of(p);
    if (!strcmp(type, "Metaspace") && str_is(p, "replacement", SPACE_ESC)) {
        const cJSON *split = cJSON_GetObjectItemCaseSensitive(p, "split");
        if (!cJSON_IsFalse(split))
            return gs_fail("pre_tokenizer Metaspace with split (words merged separately) is not supported; LLaMA-2 does not split");
        const cJSON *add = cJSON_GetObjectItemCaseSensitive(p, "add_prefix_space");
        const cJSON *scheme = cJSON_GetObjectItemCaseSensitive(p, "prepend_scheme");
        if (cJSON_IsTrue(add) || (cJSON_IsString(scheme) && strcmp(scheme->valuestring, "never") != 0)) t->dummy_prefix = 1;
        t->escape_ws = 1;
        return 0;
    }
    return gs_fail("pre_tokenizer %s is not supported (only none, or Metaspace without split)", type);
}

/* Split a merge entry into its two pieces. */
static int merge_parts(const cJSON *m, char *buf, size_t cap, const char **a, const char **b) {
    if (cJSON_IsString(m)) {
        size_t n = strlen(m->valuestring);
        if (n + 1 > cap) return -1;
        memcpy(buf, m->valuestring, n + 1);
        char *sp = strchr(buf, ' ');
        if (!sp || strchr(sp + 1, ' ')) return -1;
        *sp = 0;
        *a = buf;
        *b = sp + 1;
        return 0;
    }
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2) {
        const cJSON *x = cJSON_GetArrayItem(m, 0), *y = cJSON_GetArrayItem(m, 1);
        if (!cJSON_IsString(x) || !cJSON_IsString(y)) return -1;
        *a = x->valuestring;
        *b = y->valuestring;
        return 0;
    }
    return -1;
}

static gs_tokenizer *load(const cJSON *root) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) { gs_fail("no \"model\" object"); return NULL; }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (type && !(cJSON_IsString(type) && !strcmp(type->valuestring, "BPE"))) {
        gs_fail("model type %s is not supported (only BPE, as LLaMA-2 uses)", cJSON_IsString(type) ? type->valuestring : "?");
        return NULL;
    }
    /* BPE options that change the result away from SentencePiece's */
    static const char *refused[] = {"dropout", "continuing_subword_prefix", "end_of_word_suffix", "ignore_merges"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(model, refused[i]);
        if (o && !cJSON_IsNull(o) && !cJSON_IsFalse(o) && !(cJSON_IsNumber(o) && o->valuedouble == 0) &&
            !(cJSON_IsString(o) && !o->valuestring[0])) {
            gs_fail("model.%s is set; it is not supported (LLaMA-2 leaves it unset)", refused[i]);
            return NULL;
        }
    }
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsObject(vocab)) { gs_fail("model.vocab is not an object of piece: id"); return NULL; }
    if (!cJSON_IsArray(merges)) { gs_fail("model.merges is not an array"); return NULL; }
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), *x;
    if (added && !cJSON_IsArray(added) && !cJSON_IsNull(added)) { gs_fail("added_tokens is not an array"); return NULL; }

    /* vocabulary size: the largest id + 1 over vocab and added tokens */
    double max_id = -1;
    cJSON_ArrayForEach(x, vocab) {
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > (1 << 24) || x->valuedouble != (int)x->valuedouble) {
            gs_fail("model.vocab[\"%.100s\"] is not an id (an integer 0..16M)", x->string);
            return NULL;
        }
        if (x->valuedouble > max_id) max_id = x->valuedouble;
    }
    if (cJSON_IsArray(added)) cJSON_ArrayForEach(x, added) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id"), *content = cJSON_GetObjectItemCaseSensitive(x, "content");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > (1 << 24) || !cJSON_IsString(content)) {
            gs_fail("an added_tokens entry lacks an integer id or a content string");
            return NULL;
        }
        if (id->valuedouble > max_id) max_id = id->valuedouble;
    }
    /* ids are 0..n-1 without gaps, so n cannot exceed the entries (checked
     * before allocating: a hostile id of 16M must not cost memory) */
    int entries = cJSON_GetArraySize(vocab) + (cJSON_IsArray(added) ? cJSON_GetArraySize(added) : 0);
    if (max_id + 1 > entries) {
        gs_fail("ids go up to %.0f but there are only %d pieces: ids must be 0..n-1 without gaps", max_id, entries);
        return NULL;
    }
    gs_tokenizer *t = tok_alloc((int32_t)max_id + 1);
    if (!t) return NULL;
    t->format = "tokenizer.json";
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(model, "byte_fallback");
    t->byte_fallback = cJSON_IsTrue(bf);
    t->fuse_unk = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "fuse_unk"));
    if (normalizer_step(t, cJSON_GetObjectItemCaseSensitive(root, "normalizer")) ||
        pre_tokenizer(t, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer")))
        goto fail;
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    const char *unk_s = cJSON_IsString(unk) ? unk->valuestring : NULL;

    if (cJSON_IsArray(added)) cJSON_ArrayForEach(x, added) {
        int32_t id = (int32_t)cJSON_GetObjectItemCaseSensitive(x, "id")->valuedouble;
        const char *s = cJSON_GetObjectItemCaseSensitive(x, "content")->valuestring;
        int special = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "special"));
        int kind = unk_s && !strcmp(s, unk_s) ? PIECE_UNKNOWN : special ? PIECE_CONTROL : PIECE_USER;
        if (tok_set_piece(t, id, s, strlen(s), 0, kind)) {
            /* an added token usually repeats its vocab entry: same piece, fine */
            if (t->type[id] && !strcmp(t->text + t->off[id], s)) continue;
            goto fail;
        }
    }
    cJSON_ArrayForEach(x, vocab) {
        int32_t id = (int32_t)x->valuedouble;
        const char *s = x->string;
        if (t->type[id]) {
            if (!strcmp(t->text + t->off[id], s)) continue; /* already an added token */
            gs_fail("id %d is given to both \"%.100s\" and \"%.100s\"", id, t->text + t->off[id], s);
            goto fail;
        }
        int kind = unk_s && !strcmp(s, unk_s) ? PIECE_UNKNOWN : t->byte_fallback && is_byte_piece(s) ? PIECE_BYTE : PIECE_NORMAL;
        if (tok_set_piece(t, id, s, strlen(s), -(float)id, kind)) goto fail;
    }
    if (tok_index(t)) goto fail;
    if (unk_s) {
        t->unk = tok_lookup(t, unk_s, strlen(unk_s));
        if (t->unk < 0) { gs_fail("unk_token \"%.100s\" is not in the vocabulary", unk_s); goto fail; }
    }
    t->bos = tok_lookup(t, "<s>", 3);
    t->eos = tok_lookup(t, "</s>", 4);
    t->pad = tok_lookup(t, "<pad>", 5);
    int rank = 0;
    char buf[8200];
    cJSON_ArrayForEach(x, merges) {
        const char *a, *b;
        if (merge_parts(x, buf, sizeof buf, &a, &b)) { gs_fail("model.merges[%d] is not \"left right\" or [left, right]", rank); goto fail; }
        int32_t l = tok_lookup(t, a, strlen(a)), r = tok_lookup(t, b, strlen(b));
        if (l < 0 || r < 0) { gs_fail("model.merges[%d] \"%.100s %.100s\" names a piece not in the vocabulary", rank, a, b); goto fail; }
        if (tok_add_merge(t, l, r, rank)) { gs_fail_context("model.merges[%d]: ", rank); goto fail; }
        rank++;
    }
    if (tok_finish(t)) goto fail;
    return t;
fail:
    tokenizer_free(t);
    return NULL;
}

gs_tokenizer *tok_load_json(const char *path, const char *data, size_t size) {
    char what[4200];
    snprintf(what, sizeof what, "tokenizer %s", path);
    cJSON *root = gs_json_parse_strict(data, size, what);
    if (!root) return NULL;
    gs_tokenizer *t = cJSON_IsObject(root) ? load(root) : (gs_fail("the top level is not an object"), NULL);
    cJSON_Delete(root);
    if (!t) gs_fail_context("tokenizer %s: ", path);
    return t;
}
