/* Text and JSONL corpora: read every file (a file, or a directory's files in
 * name order), cut it into documents, tokenize each as
 * [BOS] + encode(text) + [EOS] and keep the token stream in memory.
 * Text: a whole file is one document, or the file is split on a separator
 * string (empty pieces are skipped). JSONL: one JSON object per line, the
 * text in a field; blank lines are ignored; a bad line is a one-line error
 * "FILE:LINE: ..." or, with skip_bad, counted and skipped. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/fs.h"
#include "io/corpora/corpus_impl.h"

/* a text or JSONL file whole (no size limit: a corpus may be large) */
static char *read_file(const char *path, size_t *len) { return gs_read_file(path, "", 1 << 16, 0, len); }

static const char *find(const char *hay, size_t n, const char *needle, size_t k) {
    for (size_t i = 0; i + k <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, k) == 0) return hay + i;
    return NULL;
}

/* Tokenize one document and append it. */
static int add_doc(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *o, const char *text, size_t len) {
    int32_t *ids;
    size_t n;
    if (tokenizer_encode(tok, text, len, &ids, &n)) return -1;
    int32_t *doc = malloc((n + 2) * sizeof *doc);
    if (!doc) { free(ids); return gs_fail("out of memory"); }
    size_t k = 0;
    if (o->add_bos) doc[k++] = tokenizer_bos(tok);
    memcpy(doc + k, ids, n * sizeof *ids);
    k += n;
    doc[k++] = tokenizer_eos(tok);
    free(ids);
    int rc = corpus_push_doc(c, doc, k);
    free(doc);
    return rc;
}

static int load_text_file(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *o, const char *path) {
    size_t len;
    char *data = read_file(path, &len);
    if (!data) return -1;
    int rc = 0;
    const char *sep = o->separator;
    size_t sl = sep ? strlen(sep) : 0;
    if (!sl) {
        if (len) rc = add_doc(c, tok, o, data, len);
    } else {
        const char *p = data, *end = data + len;
        while (rc == 0 && p <= end) {
            const char *q = find(p, (size_t)(end - p), sep, sl);
            const char *stop = q ? q : end;
            if (stop > p) rc = add_doc(c, tok, o, p, (size_t)(stop - p));
            if (!q) break;
            p = q + sl;
        }
    }
    free(data);
    if (rc) gs_fail_context("%s: ", path);
    return rc;
}

/* Where the JSON text s[0..n) holds the escape \uXXXX of code point cp (hex
 * in either case), from offset `from` on; n when nowhere. Only strings hold
 * backslashes, so one scan that skips each escape whole ("\\u0000" is a
 * backslash, then text) finds them. */
static size_t next_escape(const char *s, size_t n, size_t from, unsigned cp) {
    for (size_t i = from; i + 1 < n; i++) {
        if (s[i] != '\\') continue;
        if (s[i + 1] == 'u' && i + 5 < n) {
            char hex[5] = {s[i + 2], s[i + 3], s[i + 4], s[i + 5], 0};
            char *end;
            if (strtoul(hex, &end, 16) == cp && end == hex + 4) return i;
            i += 5;
        } else {
            i++;
        }
    }
    return n;
}

static int has_escape(const char *s, size_t n, unsigned cp) { return next_escape(s, n, 0, cp) < n; }

/* A private-use code point the line holds neither raw nor escaped, to stand
 * for U+0000 (0 when the line holds all 6400 of them). */
static unsigned free_marker(const char *s, size_t n, char utf8[3]) {
    for (unsigned cp = 0xE000; cp <= 0xF8FF; cp++) {
        utf8[0] = (char)(0xE0 | cp >> 12);
        utf8[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        utf8[2] = (char)(0x80 | (cp & 0x3F));
        if (!find(s, n, utf8, 3) && !has_escape(s, n, cp)) return cp;
    }
    return 0;
}

/* The field's text and length into *text and *len: v's own string, or (when
 * the line holds a \u0000) a copy that *owned holds for the caller to free.
 * cJSON ends a string at its first NUL, so a JSON "\u0000" would silently cut
 * the document there; where the line holds one, it is parsed again with every
 * "\u0000" made the escape of a private-use code point the line does not
 * hold, which is then made a NUL again (the tokenizer takes the NUL as the
 * byte it is, as a text file's NULs). Returns 0; 1 with *problem set when the
 * line cannot be read so; -1 when out of memory (gs_error set). */
static int field_text(const char *line, size_t n, const cJSON *v, const char *field, const char **text, size_t *len,
                      char **owned, char *problem, size_t problem_size) {
    *owned = NULL;
    if (memchr(line, 0, n)) {
        snprintf(problem, problem_size, "holds a raw NUL byte (JSON writes it \\u0000)");
        return 1;
    }
    if (!has_escape(line, n, 0)) { /* the common case: cJSON's string is the whole text */
        *text = v->valuestring;
        *len = strlen(v->valuestring);
        return 0;
    }
    char mark[3];
    unsigned cp = free_marker(line, n, mark);
    if (!cp) {
        snprintf(problem, problem_size, "holds U+0000 and every private-use character: it cannot be read here");
        return 1;
    }
    char *copy = malloc(n + 1);
    if (!copy) return gs_fail("out of memory");
    memcpy(copy, line, n);
    copy[n] = 0;
    char hex[5];
    snprintf(hex, sizeof hex, "%04X", cp);
    for (size_t i = next_escape(copy, n, 0, 0); i < n; i = next_escape(copy, n, i + 6, 0)) memcpy(copy + i + 2, hex, 4);
    cJSON *obj = cJSON_ParseWithLength(copy, n);
    const cJSON *w = obj ? cJSON_GetObjectItemCaseSensitive(obj, field) : NULL;
    int rc = 0;
    if (!cJSON_IsString(w)) { /* the first parse found it: the key held a \u0000 that cJSON cut off */
        snprintf(problem, problem_size, "a key holds U+0000: the field \"%.100s\" cannot be told from it", field);
        rc = 1;
    } else {
        const char *src = w->valuestring;
        size_t m = strlen(src), k = 0;
        char *t = malloc(m + 1);
        if (!t) {
            rc = gs_fail("out of memory");
        } else {
            for (size_t i = 0; i < m; i++) {
                if (i + 3 <= m && !memcmp(src + i, mark, 3)) {
                    t[k++] = 0;
                    i += 2;
                } else {
                    t[k++] = src[i];
                }
            }
            t[k] = 0;
            *text = *owned = t;
            *len = k;
        }
    }
    cJSON_Delete(obj);
    free(copy);
    return rc;
}

static int load_jsonl_file(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *o, const char *path) {
    size_t len;
    char *data = read_file(path, &len);
    if (!data) return -1;
    const char *field = o->field ? o->field : "text";
    int rc = 0;
    size_t lineno = 0;
    for (const char *p = data, *end = data + len; rc == 0 && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        lineno++;
        const char *s = p;
        while (s < stop && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
        p = nl ? nl + 1 : end;
        if (s == stop) continue; /* blank line */
        char problem[256] = "";
        const char *after = NULL;
        cJSON *obj = cJSON_ParseWithLengthOpts(s, (size_t)(stop - s), &after, 0);
        while (obj && after < stop && (*after == ' ' || *after == '\t' || *after == '\r')) after++;
        const cJSON *v = NULL;
        if (!obj) snprintf(problem, sizeof problem, "not valid JSON");
        else if (after != stop) snprintf(problem, sizeof problem, "not valid JSON (text after the object)");
        else if (!cJSON_IsObject(obj)) snprintf(problem, sizeof problem, "not a JSON object");
        else if (!(v = cJSON_GetObjectItemCaseSensitive(obj, field)))
            snprintf(problem, sizeof problem, "no \"%.100s\" field (--field names another)", field);
        else if (!cJSON_IsString(v)) snprintf(problem, sizeof problem, "field \"%.100s\" is not a string", field);
        size_t text_len = 0;
        const char *text = NULL;
        char *owned = NULL;
        if (!problem[0] &&
            field_text(s, (size_t)(stop - s), v, field, &text, &text_len, &owned, problem, sizeof problem) < 0) {
            cJSON_Delete(obj);
            rc = -1;
            break;
        }
        if (problem[0]) {
            if (o->skip_bad) c->n_bad++;
            else rc = gs_fail("%s:%zu: %s (--skip-bad skips bad lines)", path, lineno, problem);
        } else {
            rc = add_doc(c, tok, o, text, text_len);
            if (rc) gs_fail_context("%s:%zu: ", path, lineno);
        }
        free(owned);
        cJSON_Delete(obj);
    }
    free(data);
    return rc;
}

int corpus_load_text(gs_corpus *c, const gs_tokenizer *tok, const corpus_options *o, int jsonl) {
    if (tokenizer_eos(tok) < 0) return gs_fail("the tokenizer has no EOS piece (</s>) to end documents with");
    if (o->add_bos && tokenizer_bos(tok) < 0) return gs_fail("the tokenizer has no BOS piece (<s>); use --no-bos");
    c->vocab = tokenizer_vocab_size(tok);
    struct stat st;
    if (stat(c->path, &st) != 0) return gs_fail("cannot open corpus %s: %s", c->path, strerror(errno));
    char **files = NULL;
    int n = 1;
    if (S_ISDIR(st.st_mode)) {
        n = corpus_list_dir(c->path, NULL, &files);
        if (n < 0) return -1;
        if (n == 0) { free(files); return gs_fail("%s: empty corpus (no files in the directory)", c->path); }
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *f = files ? files[i] : c->path;
        rc = jsonl ? load_jsonl_file(c, tok, o, f) : load_text_file(c, tok, o, f);
    }
    if (files) corpus_free_list(files, n);
    return rc;
}
