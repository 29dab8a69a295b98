/* Strict JSON on top of cJSON; see json.h. */
#include "base/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* A string's raw text (between its quotes) for a message: at most 60 bytes,
 * control characters as '?', so a hostile key cannot reach the terminal. */
static void shown(const char *s, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 60; i++) out[k++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
    if (n > 60 && k + 4 < cap) { memcpy(out + k, "...", 3); k += 3; }
    out[k] = 0;
}

/* Every string of valid JSON text: none may hold a NUL, escaped or raw
 * (cJSON keeps C strings, so it would cut the string there). */
static int no_nul(const char *text, size_t len, const char *what) {
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '"') continue;
        size_t start = ++i, nul = 0;
        int has_nul = 0;
        for (; i < len && text[i] != '"'; i++) {
            if (!text[i] && !has_nul) has_nul = 1, nul = i;
            if (text[i] != '\\' || i + 1 >= len) continue;
            if (text[i + 1] == 'u' && i + 6 <= len && !memcmp(text + i + 2, "0000", 4) && !has_nul) has_nul = 1, nul = i;
            i++; /* the escaped character */
        }
        if (!has_nul) continue;
        size_t j = i + 1;
        while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) j++;
        char s[80];
        shown(text + start, i - start, s, sizeof s);
        return gs_fail("%s: the %s \"%s\" holds a NUL (U+0000) at byte %zu, which would cut it short", what,
                       j < len && text[j] == ':' ? "key" : "string", s, nul);
    }
    return 0;
}

/* 1 when v or a value inside it is a number that is not finite (1e999
 * reads as infinity); its path ("model"."vocab"[3]) is then written into
 * path on the way out, so only the one found pays for it. */
static int infinite_at(const cJSON *v, char *path, size_t cap) {
    if (cJSON_IsNumber(v)) return !isfinite(v->valuedouble);
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        if (!infinite_at(c, path, cap)) continue;
        char seg[96], rest[256];
        if (cJSON_IsArray(v)) snprintf(seg, sizeof seg, "[%d]", i);
        else {
            char k[80];
            shown(c->string ? c->string : "", c->string ? strlen(c->string) : 0, k, sizeof k);
            snprintf(seg, sizeof seg, "\"%s\"", k);
        }
        snprintf(rest, sizeof rest, "%s", path);
        snprintf(path, cap, "%s%s%s", seg, *rest && *rest != '[' ? "." : "", rest);
        return 1;
    }
    return 0;
}

static int by_key(const void *a, const void *b) {
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* A key that appears twice in one object (cJSON keeps both, and every
 * reader takes the first): the first such key, or NULL; -1 in *oom when
 * out of memory. Sorting the keys keeps a 32000-key vocabulary linear-ish. */
static const char *repeated_key(const cJSON *v, int *oom) {
    int n = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        if (c->child) {
            const char *inner = repeated_key(c, oom);
            if (inner || *oom) return inner;
        }
        n++;
    }
    if (!cJSON_IsObject(v) || n < 2) return NULL;
    const cJSON **keys = malloc((size_t)n * sizeof *keys);
    if (!keys) { *oom = 1; return NULL; }
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next) keys[k++] = c;
    qsort(keys, (size_t)n, sizeof *keys, by_key);
    const char *dup = NULL;
    for (int i = 1; i < n && !dup; i++)
        if (!strcmp(keys[i]->string, keys[i - 1]->string)) dup = keys[i]->string;
    free(keys);
    return dup;
}

cJSON *gs_json_parse_strict(const char *text, size_t len, const char *what) {
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j) {
        size_t at = end ? (size_t)(end - text) : 0;
        gs_fail("%s: not valid JSON (near byte %zu)", what, at);
        return NULL;
    }
    size_t at = (size_t)(end - text);
    while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) at++;
    char path[256] = "";
    int bad = at < len ? gs_fail("%s: text after the JSON value, at byte %zu", what, at) : no_nul(text, len, what);
    if (!bad && infinite_at(j, path, sizeof path))
        bad = gs_fail("%s: %s is a number too large for a double (it reads as infinity)", what, *path ? path : "the value");
    int oom = 0;
    const char *dup = bad ? NULL : repeated_key(j, &oom);
    if (oom) bad = gs_fail("%s: out of memory", what);
    else if (dup) {
        char k[80];
        shown(dup, strlen(dup), k, sizeof k);
        bad = gs_fail("%s: the key \"%s\" appears twice in one object: keep one", what, k);
    }
    if (!bad) return j;
    cJSON_Delete(j);
    return NULL;
}

/* "key" of an object's member, for a message */
static const char *key_name(const cJSON *item, char *buf, size_t cap) {
    char s[80];
    if (!item || !item->string) return "the value";
    shown(item->string, strlen(item->string), s, sizeof s);
    snprintf(buf, cap, "\"%s\"", s);
    return buf;
}

int gs_json_int(const cJSON *item, const char *name, int64_t lo, int64_t hi, int64_t *out) {
    char quoted[160];
    if (!name) name = key_name(item, quoted, sizeof quoted);
    if (!cJSON_IsNumber(item)) return gs_fail("%s is not a number", name);
    double x = item->valuedouble;
    /* compared as doubles, exact for bounds within 2^53: nothing is cast before */
    if (!(x >= (double)lo && x <= (double)hi) || x != floor(x))
        return gs_fail("%s = %.15g is not an integer from %lld to %lld", name, x, (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return 0;
}

int gs_json_real(const cJSON *item, const char *name, double lo, double hi, double *out) {
    char quoted[160];
    if (!name) name = key_name(item, quoted, sizeof quoted);
    if (!cJSON_IsNumber(item)) return gs_fail("%s is not a number", name);
    double x = item->valuedouble;
    if (!(x >= lo && x <= hi)) return gs_fail("%s = %.15g is out of range [%g, %g]", name, x, lo, hi);
    *out = x;
    return 0;
}
