/* Prompt pairs for patching, read from JSONL (analyses/causal/patching.h,
 * docs/causal.md): every error names the file and the line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/causal/patching.h"
#include "base/error.h"
#include "base/json.h"

typedef struct {
    const char *path;
    int line;
    const gs_tokenizer *tok;
    int V;
} reader;

/* A prompt: a string (tokenized) or an array of ids. *ids malloc'd. */
static int prompt_ids(const reader *r, const cJSON *j, const char *key, int32_t **ids, int *n) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x) return gs_fail("%s:%d: no \"%s\" (a text, or an array of token ids)", r->path, r->line, key);
    if (cJSON_IsString(x)) {
        if (!r->tok) return gs_fail("%s:%d: \"%s\" is text and no tokenizer was given (--tokenizer), or give token ids", r->path, r->line, key);
        size_t len;
        if (tokenizer_encode(r->tok, x->valuestring, strlen(x->valuestring), ids, &len))
            return gs_fail_context("%s:%d: \"%s\": ", r->path, r->line, key);
        *n = (int)len;
    } else if (cJSON_IsArray(x)) {
        *n = cJSON_GetArraySize(x);
        if (!(*ids = malloc((size_t)(*n > 0 ? *n : 1) * sizeof **ids))) return gs_fail("out of memory");
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, x) {
            char name[64];
            int64_t id;
            snprintf(name, sizeof name, "\"%s\"[%d]", key, i);
            if (gs_json_int(e, name, 0, INT32_MAX, &id) != 0) { /* checked before the cast: 2^31 is no int32 */
                free(*ids);
                *ids = NULL;
                return gs_fail_context("%s:%d: a token id: ", r->path, r->line);
            }
            (*ids)[i++] = (int32_t)id;
        }
    } else {
        return gs_fail("%s:%d: \"%s\" must be a text or an array of token ids", r->path, r->line, key);
    }
    if (*n < 1) {
        free(*ids);
        *ids = NULL;
        return gs_fail("%s:%d: \"%s\" has no tokens", r->path, r->line, key);
    }
    for (int i = 0; i < *n; i++)
        if ((*ids)[i] >= r->V) {
            int32_t bad = (*ids)[i];
            free(*ids);
            *ids = NULL;
            return gs_fail("%s:%d: \"%s\": token %d is outside the model's vocabulary of %d", r->path, r->line, key, (int)bad, r->V);
        }
    return 0;
}

/* An answer or foil: an id, a piece of the vocabulary, or a text of one token. */
static int one_token(const reader *r, const cJSON *j, const char *key, int32_t *id) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!x) return gs_fail("%s:%d: no \"%s\" (one token: an id, a piece, or a text of one token)", r->path, r->line, key);
    if (cJSON_IsNumber(x)) {
        int64_t v;
        if (gs_json_int(x, NULL, 0, r->V - 1, &v) != 0) return gs_fail_context("%s:%d: a token id: ", r->path, r->line);
        *id = (int32_t)v;
        return 0;
    }
    if (!cJSON_IsString(x)) return gs_fail("%s:%d: \"%s\" must be a token id or a text", r->path, r->line, key);
    if (!r->tok) return gs_fail("%s:%d: \"%s\" is text and no tokenizer was given (--tokenizer), or give a token id", r->path, r->line, key);
    int32_t p = tokenizer_piece_id(r->tok, x->valuestring);
    if (p >= 0) {
        *id = p;
    } else {
        int32_t *ids = NULL;
        size_t n = 0;
        if (tokenizer_encode(r->tok, x->valuestring, strlen(x->valuestring), &ids, &n)) return gs_fail_context("%s:%d: ", r->path, r->line);
        if (n != 1) {
            free(ids);
            return gs_fail("%s:%d: \"%s\": '%s' is %zu tokens, not one", r->path, r->line, key, x->valuestring, n);
        }
        *id = ids[0];
        free(ids);
    }
    if (*id >= r->V) return gs_fail("%s:%d: \"%s\": token %d is outside the model's vocabulary of %d", r->path, r->line, key, (int)*id, r->V);
    return 0;
}

static int grow(gs_patch_pairs *p, int *cap) {
    if (p->n < *cap) return 0;
    int c = *cap ? 2 * *cap : 16;
    int32_t *a = realloc(p->clean, (size_t)c * p->T * sizeof *a);
    if (a) p->clean = a;
    int32_t *b = a ? realloc(p->corrupted, (size_t)c * p->T * sizeof *b) : NULL;
    if (b) p->corrupted = b;
    int32_t *x = b ? realloc(p->answer, (size_t)c * sizeof *x) : NULL;
    if (x) p->answer = x;
    int32_t *y = x ? realloc(p->foil, (size_t)c * sizeof *y) : NULL;
    if (y) p->foil = y;
    if (!y) return gs_fail("out of memory for %d prompt pairs", c);
    *cap = c;
    return 0;
}

static int add_line(const reader *r, const char *text, gs_patch_pairs *p, int *cap, int *first_line) {
    char what[4200];
    snprintf(what, sizeof what, "%s:%d", r->path, r->line);
    cJSON *j = gs_json_parse_strict(text, strlen(text), what);
    if (!j) return -1;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return gs_fail("%s:%d: not a JSON object", r->path, r->line);
    }
    int32_t *clean = NULL, *corrupted = NULL, answer = 0, foil = 0;
    int nc = 0, nk = 0, rc = prompt_ids(r, j, "clean", &clean, &nc);
    if (!rc) rc = prompt_ids(r, j, "corrupted", &corrupted, &nk);
    if (!rc) rc = one_token(r, j, "answer", &answer);
    if (!rc) rc = one_token(r, j, "foil", &foil);
    cJSON_Delete(j);
    if (!rc && nc != nk)
        rc = gs_fail("%s:%d: the clean prompt has %d tokens and the corrupted one %d: they must be as long", r->path, r->line, nc, nk);
    if (!rc && answer == foil) rc = gs_fail("%s:%d: the answer and the foil are the same token (%d)", r->path, r->line, (int)answer);
    if (!rc && p->n > 0 && nc != p->T)
        rc = gs_fail("%s:%d: %d tokens, where line %d's prompts have %d: every pair must be as long", r->path, r->line, nc,
                     *first_line, p->T);
    if (!rc && p->n == 0) {
        p->T = nc;
        *first_line = r->line;
    }
    if (!rc) rc = grow(p, cap);
    if (!rc) {
        memcpy(p->clean + (size_t)p->n * p->T, clean, (size_t)p->T * sizeof *clean);
        memcpy(p->corrupted + (size_t)p->n * p->T, corrupted, (size_t)p->T * sizeof *corrupted);
        p->answer[p->n] = answer;
        p->foil[p->n] = foil;
        p->n++;
    }
    free(clean);
    free(corrupted);
    return rc;
}

int gs_patch_pairs_load(const char *path, const gs_tokenizer *tok, int V, gs_patch_pairs *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return gs_fail("%s: cannot open the prompt pairs", path);
    reader r = {path, 0, tok, V};
    char *line = NULL;
    size_t size = 0;
    ssize_t len;
    int rc = 0, cap = 0, first_line = 0;
    while (rc == 0 && (len = getline(&line, &size, f)) >= 0) {
        r.line++;
        if ((size_t)len != strlen(line)) { rc = gs_fail("%s:%d: a NUL byte in the line", path, r.line); break; }
        const char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
        if (!*s || *s == '#') continue;
        rc = add_line(&r, s, out, &cap, &first_line);
    }
    if (!rc && ferror(f)) rc = gs_fail("%s: a read error", path);
    free(line);
    fclose(f);
    if (!rc && out->n == 0) rc = gs_fail("%s: no prompt pairs (one JSON object per line)", path);
    if (rc) gs_patch_pairs_free(out);
    return rc;
}

void gs_patch_pairs_free(gs_patch_pairs *p) {
    free(p->clean);
    free(p->corrupted);
    free(p->answer);
    free(p->foil);
    memset(p, 0, sizeof *p);
}
