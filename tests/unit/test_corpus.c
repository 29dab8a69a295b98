/* Corpora: text (file, directory, separator), JSONL (field, bad lines,
 * skip_bad), token shards (writer round trip, windows across shards, index
 * and meta.json checks, hostile files), window selection, unigram counts,
 * hashes, export to shards, windows by document. Windows are checked against
 * the stream built here by hand: [BOS] + encode(doc) + [EOS] per document,
 * concatenated, window i = tokens [i*L, (i+1)*L); by document, window i is
 * document i cut at L and padded with its last token. */
#include <stdint.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/hash.h"
#include "io/corpora/corpus.h"
#include "io/tokenizer/tokenizer.h"
#include "testlib.h"

static const char *dir;
static char pathbuf[8][4200];
static int slot;

static const char *path_of(const char *name) {
    char *p = pathbuf[slot++ % 8];
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const void *data, size_t n) {
    const char *p = path_of(name);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", p);
    *strrchr(parent, '/') = 0;
    for (char *q = parent + 1; *q; q++) /* mkdir -p without a shell */
        if (*q == '/') { *q = 0; mkdir(parent, 0777); *q = '/'; }
    mkdir(parent, 0777);
    FILE *f = fopen(p, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}
static void put_s(const char *name, const char *s) { put(name, s, strlen(s)); }

/* A small SentencePiece-style tokenizer with byte fallback. */
static gs_tokenizer *small_tokenizer(void) {
    FILE *f = fopen(path_of("tok.json"), "w");
    fprintf(f, "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, {\"id\": 1, \"content\": \"<s>\", \"special\": true},"
               "{\"id\": 2, \"content\": \"</s>\", \"special\": true}],"
               "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\xE2\x96\x81\"},"
               "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\xE2\x96\x81\"}]},"
               "\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
    for (int b = 0; b < 256; b++) fprintf(f, ", \"<0x%02X>\": %d", b, 3 + b);
    fprintf(f, ", \"\xE2\x96\x81\": 259, \"o\": 260, \"n\": 261, \"e\": 262, \"on\": 263, \"one\": 264, \"\xE2\x96\x81one\": 265},"
               "\"merges\": [\"o n\", \"on e\", \"\xE2\x96\x81 one\"]}}");
    fclose(f);
    gs_tokenizer *t = tokenizer_load(path_of("tok.json"));
    if (!t) { fprintf(stderr, "small tokenizer: %s\n", gs_error()); exit(1); }
    return t;
}

/* The expected stream of a list of documents. */
typedef struct { int32_t *v; int64_t n; } stream;
static void add_doc(stream *s, const gs_tokenizer *t, const char *text, size_t len, int bos) {
    int32_t *ids;
    size_t n;
    if (tokenizer_encode(t, text, len, &ids, &n)) exit(1);
    s->v = realloc(s->v, (size_t)(s->n + (int64_t)n + 2) * sizeof *s->v);
    if (bos) s->v[s->n++] = tokenizer_bos(t);
    memcpy(s->v + s->n, ids, n * sizeof *ids);
    s->n += (int64_t)n;
    s->v[s->n++] = tokenizer_eos(t);
    free(ids);
}

/* Every selected window equals the stream's slice. */
static void check_windows(gs_corpus *c, const stream *s, const char *label) {
    int64_t L = corpus_seq_len(c);
    CHECK(corpus_total_tokens(c) == s->n, "%s: %lld tokens, expected %lld", label, (long long)corpus_total_tokens(c), (long long)s->n);
    CHECK(corpus_n_windows_total(c) == s->n / L, "%s: %lld windows, expected %lld", label, (long long)corpus_n_windows_total(c), (long long)(s->n / L));
    int32_t *w = malloc((size_t)L * sizeof *w);
    int bad = 0;
    for (int64_t i = 0; i < corpus_n_windows(c); i++) {
        int64_t k = corpus_window_index(c, i);
        if (corpus_window(c, i, w) != 0 || memcmp(w, s->v + k * L, (size_t)L * sizeof *w) != 0) bad++;
    }
    CHECK(bad == 0, "%s: %d windows differ from the stream", label, bad);
    free(w);
}

static gs_corpus *open_with(const char *name, const gs_tokenizer *t, corpus_options o) {
    gs_clear_error();
    return corpus_open(path_of(name), t, &o);
}

static void expect_error(const char *name, const gs_tokenizer *t, corpus_options o, const char *needle) {
    gs_corpus *c = open_with(name, t, o);
    CHECK(c == NULL, "%s opened, expected an error about '%s'", name, needle);
    corpus_free(c);
    CHECK(strstr(gs_error(), needle) != NULL, "%s: error '%s' does not mention '%s'", name, gs_error(), needle);
    CHECK(strchr(gs_error(), '\n') == NULL, "error is not one line");
}

/* One document's text and its length (it may hold NUL bytes). */
typedef struct {
    const char *text;
    size_t len;
} doc;

/* `name` opened with o is of `format` (CORPUS_AUTO: any) and holds the n
 * documents docs, in order (each with BOS when o.add_bos): its windows are
 * those of the stream built from them here. */
static void expect_docs(const char *name, const gs_tokenizer *t, corpus_options o, corpus_format format, const doc *docs,
                        int n, const char *label) {
    stream s = {0};
    for (int i = 0; i < n; i++) add_doc(&s, t, docs[i].text, docs[i].len, o.add_bos);
    gs_corpus *c = open_with(name, t, o);
    CHECK(c && (format == CORPUS_AUTO || corpus_get_format(c) == format) && corpus_n_docs(c) == n,
          "%s: %s (%lld docs)", label, gs_error(), c ? (long long)corpus_n_docs(c) : -1LL);
    if (c) check_windows(c, &s, label);
    corpus_free(c);
    free(s.v);
}

static corpus_options opts(int64_t L) {
    corpus_options o;
    corpus_options_default(&o);
    o.seq_len = L;
    return o;
}

static void write_u32(const char *name, const uint32_t *v, size_t n) { put(name, v, n * 4); }

/* By document: c's selected windows are the documents of the stream s whose
 * lengths are lens (doc[i] = window i's document), each cut at L and padded
 * with its last token, at its offset in the stream. */
static void check_documents(gs_corpus *c, const stream *s, const int64_t *lens, int n_docs, const int64_t *doc,
                            int n_sel, const char *label) {
    int64_t L = corpus_seq_len(c), cut = 0, cut_tokens = 0, got_tokens = -1;
    CHECK(corpus_by_document(c) && corpus_n_windows_total(c) == n_docs && corpus_n_windows(c) == n_sel,
          "%s: %lld of %lld windows, expected %d of %d", label, (long long)corpus_n_windows(c),
          (long long)corpus_n_windows_total(c), n_sel, n_docs);
    int32_t *w = malloc((size_t)L * sizeof *w);
    int bad = 0;
    for (int i = 0; i < n_sel && i < corpus_n_windows(c); i++) {
        int64_t at = 0, n = lens[doc[i]] < L ? lens[doc[i]] : L;
        for (int64_t d = 0; d < doc[i]; d++) at += lens[d];
        if (lens[doc[i]] > L) cut++, cut_tokens += lens[doc[i]] - L;
        int ok = corpus_window_index(c, i) == doc[i] && corpus_window_len(c, i) == n && corpus_window_offset(c, i) == at &&
                 corpus_window(c, i, w) == 0 && !memcmp(w, s->v + at, (size_t)n * sizeof *w);
        for (int64_t t = n; ok && t < L; t++) ok = w[t] == w[n - 1];
        bad += !ok;
    }
    CHECK(bad == 0, "%s: %d windows are not their documents", label, bad);
    CHECK(corpus_n_cut(c, &got_tokens) == cut && got_tokens == cut_tokens, "%s: %lld documents cut (%lld tokens), expected %lld (%lld)",
          label, (long long)corpus_n_cut(c, NULL), (long long)got_tokens, (long long)cut, (long long)cut_tokens);
    CHECK(corpus_window_len(c, n_sel) == -1 && corpus_window_offset(c, -1) == -1, "%s: outside the selection", label);
    free(w);
}

/* Windows by document: text pieces, JSONL lines, shards' index entries; the
 * window length chosen (the longest selected, capped) or given (cutting);
 * the selection picks documents; shards need their index files. */
static void test_by_document(const gs_tokenizer *t) {
    static const char *const docs[] = {"one", "none one one on e", "on e", "one one"};
    put_s("docs.txt", "one\n\nnone one one on e\n\non e\n\none one");
    stream s = {0};
    int64_t lens[4];
    for (int i = 0; i < 4; i++) {
        int64_t before = s.n;
        add_doc(&s, t, docs[i], strlen(docs[i]), 1);
        lens[i] = s.n - before;
    }
    corpus_options o = opts(0);
    o.separator = "\n\n";
    o.by_document = 1;
    gs_corpus *c = open_with("docs.txt", t, o);
    CHECK(c && corpus_seq_len(c) == lens[1], "by document, seq_len 0: the longest document (%lld tokens): %s",
          (long long)lens[1], c ? "" : gs_error());
    if (c) check_documents(c, &s, lens, 4, (int64_t[]){0, 1, 2, 3}, 4, "by document");
    corpus_free(c);
    o.seq_len = 3; /* cut: every document longer than 3 */
    c = open_with("docs.txt", t, o);
    if (c) check_documents(c, &s, lens, 4, (int64_t[]){0, 1, 2, 3}, 4, "by document, cut at 3");
    CHECK(c && corpus_n_cut(c, NULL) == 3, "3 documents cut at 3 (\"one\" is <s> one </s>): %s", c ? "" : gs_error());
    corpus_free(c);
    o.seq_len = 0; /* the selection picks documents; L is the longest selected */
    o.skip = 2;
    c = open_with("docs.txt", t, o);
    CHECK(c && corpus_seq_len(c) == (lens[2] > lens[3] ? lens[2] : lens[3]), "skip 2: the longest of the last two: %s",
          c ? "" : gs_error());
    if (c) check_documents(c, &s, lens, 4, (int64_t[]){2, 3}, 2, "by document, skip 2");
    corpus_free(c);
    o.skip = 0;
    o.sample = 2;
    o.seed = 7;
    c = open_with("docs.txt", t, o);
    if (c) {
        int64_t picked[2] = {corpus_window_index(c, 0), corpus_window_index(c, 1)};
        check_documents(c, &s, lens, 4, picked, 2, "by document, sample 2");
    }
    corpus_free(c);
    o.sample = 0;
    o.windows = 5;
    expect_error("docs.txt", t, o, "asked for 5 documents");
    o.windows = 0;
    o.skip = 4;
    expect_error("docs.txt", t, o, "skipping 4 documents leaves none");

    /* a document longer than CORPUS_DOC_MAX_LEN caps the chosen length */
    char *big = malloc(4 * 3000 + 1);
    for (int i = 0; i < 3000; i++) memcpy(big + 4 * i, "one ", 4);
    big[4 * 3000] = 0;
    put_s("long.txt", big);
    free(big);
    o = opts(0);
    o.by_document = 1;
    c = open_with("long.txt", t, o);
    CHECK(c && corpus_seq_len(c) == CORPUS_DOC_MAX_LEN && corpus_n_cut(c, NULL) == 1 &&
              corpus_window_len(c, 0) == CORPUS_DOC_MAX_LEN, "a long document: windows of %d, one cut: %s",
          CORPUS_DOC_MAX_LEN, c ? "" : gs_error());
    corpus_free(c);

    /* JSONL: a line a document, an empty text too (BOS and EOS) */
    put_s("docs.jsonl", "{\"text\": \"one\"}\n{\"text\": \"\"}\n{\"text\": \"none one\"}\n");
    stream j = {0};
    int64_t jl[3];
    const char *jd[] = {"one", "", "none one"};
    for (int i = 0; i < 3; i++) {
        int64_t before = j.n;
        add_doc(&j, t, jd[i], strlen(jd[i]), 1);
        jl[i] = j.n - before;
    }
    c = open_with("docs.jsonl", t, o);
    if (c) check_documents(c, &j, jl, 3, (int64_t[]){0, 1, 2}, 3, "JSONL by document");
    CHECK(c != NULL, "JSONL by document: %s", gs_error());
    corpus_free(c);

    /* shards: the index files' documents, across shards; none without them */
    uint32_t ids[30];
    for (int i = 0; i < 30; i++) ids[i] = (uint32_t)(i * 11 % 100);
    write_u32("dsh/data_0000.bin", ids, 12);
    put_s("dsh/data_0000.index.json", "[5, 7]");
    write_u32("dsh/data_0001.bin", ids + 12, 18);
    put_s("dsh/data_0001.index.json", "[1, 17]");
    put_s("dsh/meta.json", "{\"vocab_size\": 100}");
    stream sh = {malloc(30 * sizeof(int32_t)), 30};
    for (int i = 0; i < 30; i++) sh.v[i] = (int32_t)ids[i];
    o = opts(8);
    o.by_document = 1;
    c = open_with("dsh", NULL, o);
    if (c) check_documents(c, &sh, (int64_t[]){5, 7, 1, 17}, 4, (int64_t[]){0, 1, 2, 3}, 4, "shards by document");
    CHECK(c && corpus_n_docs(c) == 4, "shards by document: %s", gs_error());
    corpus_free(c);
    remove(path_of("dsh/data_0001.index.json"));
    expect_error("dsh", NULL, o, "data_0001.bin has no data_0001.index.json beside it");
    c = open_with("dsh", NULL, opts(8)); /* windows of the stream do without */
    CHECK(c && corpus_n_docs(c) == -1 && !corpus_by_document(c) && corpus_window_len(c, 2) == 8 &&
              corpus_window_offset(c, 2) == 16, "stream windows: length L, offset i*L: %s", c ? "" : gs_error());
    corpus_free(c);
    free(s.v);
    free(j.v);
    free(sh.v);
}

int main(void) {
    dir = scratch_dir("corpus");
    gs_tokenizer *t = small_tokenizer();

    /* ---- text: one file, one document; without BOS */
    const char *doc1 = "one one\nnone, on e\n";
    put_s("one.txt", doc1);
    expect_docs("one.txt", t, opts(5), CORPUS_TEXT, (doc[]){{doc1, strlen(doc1)}}, 1, "text file");
    corpus_options o = opts(3);
    o.add_bos = 0;
    expect_docs("one.txt", t, o, CORPUS_AUTO, (doc[]){{doc1, strlen(doc1)}}, 1, "text without BOS");

    /* ---- a directory: files in name order; hidden files and subdirectories ignored */
    put_s("dir/b.txt", "b one");
    put_s("dir/a.txt", "a\xFFone"); /* invalid UTF-8 is fine */
    put_s("dir/c.txt", "");         /* empty file: no document */
    put_s("dir/.hidden", "zzz");
    put_s("dir/sub/d.txt", "ddd");
    expect_docs("dir", t, opts(4), CORPUS_AUTO, (doc[]){{"a\xFFone", 5}, {"b one", 5}}, 2, "directory");

    /* ---- separator: empty pieces are skipped */
    put_s("sep.txt", "one\n\nnone\n\n\n\non e\n\n");
    o = opts(2);
    o.separator = "\n\n";
    expect_docs("sep.txt", t, o, CORPUS_AUTO, (doc[]){{"one", 3}, {"none", 4}, {"on e", 4}}, 3, "separator");

    /* ---- JSONL: the field, blank lines, other fields ignored, escapes */
    put_s("a.jsonl", "{\"text\": \"one one\", \"id\": 1}\n\n  \n{\"id\": 2, \"text\": \"n\\u00e9 \\\"on\\\"\\n\"}\r\n{\"text\": \"\"}\n");
    expect_docs("a.jsonl", t, opts(3), CORPUS_JSONL, (doc[]){{"one one", 7}, {"n\xC3\xA9 \"on\"\n", 9}, {"", 0}}, 3, "jsonl");
    put_s("body.jsonl", "{\"body\": \"one\"}\n{\"body\": \"one\"}\n");
    o = opts(2);
    o.field = "body";
    gs_corpus *c = open_with("body.jsonl", t, o);
    CHECK(c && corpus_total_tokens(c) == 2 * 3, "jsonl --field: %s", gs_error());
    corpus_free(c);

    /* U+0000 in JSONL ("\u0000") is a NUL byte of the document, as in a text
     * file, not its end; "\\u0000" is a backslash and text */
    put_s("nul.jsonl", "{\"text\": \"one\\u0000one\", \"id\": \"\\u0000\"}\n{\"text\": \"on\\\\u0000e\"}\n");
    expect_docs("nul.jsonl", t, opts(3), CORPUS_AUTO, (doc[]){{"one\0one", 7}, {"on\\u0000e", 9}}, 2, "jsonl with U+0000");
    /* with U+0001 and the first private-use characters on the line too */
    put_s("nul1.jsonl", "{\"text\": \"one\\u0000 \\u0001\\ue000\xEE\x80\x81\\u0000\"}\n");
    expect_docs("nul1.jsonl", t, opts(2), CORPUS_AUTO, (doc[]){{"one\0 \x01\xEE\x80\x80\xEE\x80\x81\0", 13}}, 1,
                "jsonl with U+0000 among others");
    /* U+0000 where it cannot be read: in a key (cJSON would cut "text\u0000"
     * to "text"), or raw (not JSON) */
    put_s("nulkey.jsonl", "{\"text\\u0000\": \"one\"}\n");
    expect_error("nulkey.jsonl", t, opts(2), "nulkey.jsonl:1: a key holds U+0000");
    put("nulraw.jsonl", "{\"text\": \"o\0ne\"}\n", 17);
    expect_error("nulraw.jsonl", t, opts(2), "nulraw.jsonl:1: holds a raw NUL byte");
    o = opts(2);
    o.skip_bad = 1;
    put_s("nulskip.jsonl", "{\"text\\u0000\": \"one\"}\n{\"text\": \"one one\"}\n");
    c = open_with("nulskip.jsonl", t, o);
    CHECK(c && corpus_n_bad(c) == 1 && corpus_n_docs(c) == 1, "--skip-bad skips a key with U+0000: %s", gs_error());
    corpus_free(c);

    /* bad JSONL lines: file and line in a one-line error, or skipped and counted */
    static const struct { const char *line, *needle; } bad[] = {
        {"{\"text\": \"one\"", "not valid JSON"},
        {"[\"one\"]", "not a JSON object"},
        {"{\"txt\": \"one\"}", "no \"text\" field"},
        {"{\"text\": 5}", "not a string"},
        {"{\"text\": \"one\"} trailing", "text after"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char body[512], name[64], where[64];
        snprintf(body, sizeof body, "{\"text\": \"one\"}\n{\"text\": \"one\"}\n%s\n{\"text\": \"one\"}\n", bad[i].line);
        snprintf(name, sizeof name, "bad%zu.jsonl", i);
        put_s(name, body);
        snprintf(where, sizeof where, "bad%zu.jsonl:3: ", i);
        expect_error(name, t, opts(2), where);
        expect_error(name, t, opts(2), bad[i].needle);
        o = opts(2);
        o.skip_bad = 1;
        c = open_with(name, t, o);
        CHECK(c && corpus_n_bad(c) == 1 && corpus_n_docs(c) == 3, "skip_bad on %s: %s", name, gs_error());
        corpus_free(c);
    }

    /* ---- empty and too-short corpora, missing things */
    put_s("empty.txt", "");
    expect_error("empty.txt", t, opts(2), "empty corpus");
    put_s("empty.jsonl", "\n\n");
    expect_error("empty.jsonl", t, opts(2), "empty corpus");
    put_s("short.txt", "one");
    expect_error("short.txt", t, opts(50), "fewer than one window");
    expect_error("nonexistent.txt", t, opts(2), "cannot open");
    expect_error("one.txt", NULL, opts(2), "needs a tokenizer");

    /* ---- selection */
    stream s = {0};
    {
        char big[4000];
        size_t n = 0;
        for (int i = 0; i < 300; i++) n += (size_t)snprintf(big + n, sizeof big - n, i % 7 ? "one " : "none\n");
        put("big.txt", big, n);
        add_doc(&s, t, big, n, 1);
    }
    o = opts(7);
    o.skip = 3;
    o.windows = 5;
    c = open_with("big.txt", t, o);
    CHECK(c && corpus_n_windows(c) == 5 && corpus_window_index(c, 0) == 3 && corpus_window_index(c, 4) == 7, "skip/windows: %s", gs_error());
    if (c) check_windows(c, &s, "skip 3, windows 5");
    int64_t n_total = c ? corpus_n_windows_total(c) : 0;
    corpus_free(c);
    o = opts(7);
    o.skip = 2;
    o.sample = 10;
    o.seed = 42;
    gs_corpus *c1 = open_with("big.txt", t, o), *c2 = open_with("big.txt", t, o);
    o.seed = 43;
    gs_corpus *c3 = open_with("big.txt", t, o);
    CHECK(c1 && c2 && c3, "sample: %s", gs_error());
    if (c1 && c2 && c3) {
        int same = 1, differs = 0, ordered = 1;
        for (int64_t i = 0; i < 10; i++) {
            same &= corpus_window_index(c1, i) == corpus_window_index(c2, i);
            differs |= corpus_window_index(c1, i) != corpus_window_index(c3, i);
            if (i) ordered &= corpus_window_index(c1, i) > corpus_window_index(c1, i - 1);
            ordered &= corpus_window_index(c1, i) >= 2 && corpus_window_index(c1, i) < n_total;
        }
        CHECK(corpus_n_windows(c1) == 10 && same && differs && ordered, "sampling: 10 distinct in-range windows in order, same seed same choice");
        check_windows(c1, &s, "sampled");
    }
    corpus_free(c1); corpus_free(c2); corpus_free(c3);
    o = opts(7); o.skip = n_total;
    expect_error("big.txt", t, o, "leaves none");
    o = opts(7); o.skip = 1; o.windows = n_total;
    expect_error("big.txt", t, o, "has only");
    o = opts(7); o.windows = 3; o.sample = 4;
    expect_error("big.txt", t, o, "cannot sample");

    /* ---- unigram counts */
    c = open_with("big.txt", t, opts(7));
    if (c) {
        int64_t V = tokenizer_vocab_size(t), *counts = calloc((size_t)V, sizeof *counts), *want = calloc((size_t)V, sizeof *want), sum = 0;
        for (int64_t i = 0; i < s.n; i++) want[s.v[i]]++;
        CHECK(corpus_unigram_counts(c, V, counts) == 0 && !memcmp(counts, want, (size_t)V * sizeof *counts), "unigram counts");
        for (int64_t i = 0; i < V; i++) sum += counts[i];
        CHECK(sum == s.n, "counts add up to the tokens");
        CHECK(corpus_unigram_counts(c, 100, counts) != 0 && strstr(gs_error(), ">= 100"), "id >= V in counts: %s", gs_error());
        free(counts); free(want);

        /* ---- export to shards, read back: same stream, same hash */
        const char *sh = path_of("exported");
        CHECK(corpus_export_shards(c, sh, "small", 100) == 0, "export: %s", gs_error());
        gs_corpus *e = corpus_open(sh, NULL, &(corpus_options){.seq_len = 7});
        CHECK(e && corpus_get_format(e) == CORPUS_SHARDS && corpus_n_docs(e) == corpus_n_docs(c), "reopen exported: %s", gs_error());
        if (e) {
            check_windows(e, &s, "exported shards");
            const char *h1 = corpus_hash(c), *h2 = corpus_hash(e);
            CHECK(h1 && h2 && !strcmp(h1, h2), "hash of text corpus %s == hash of its shards %s", h1, h2);
        }
        corpus_free(e);
        CHECK(corpus_export_shards(c, sh, "small", 100) != 0 && strstr(gs_error(), "already holds"), "export into a used directory");
    }
    corpus_free(c);

    /* ---- shards: hash of one shard is sha256sum of it; windows across shards */
    uint32_t ids[50];
    for (int i = 0; i < 50; i++) ids[i] = (uint32_t)(i * 7 % 100);
    write_u32("sh1/data_0000.bin", ids, 50);
    put_s("sh1/data_0000.index.json", "[20, 30]");
    put_s("sh1/meta.json", "{\"tokenizer\": \"x\", \"vocab_size\": 100, \"total_tokens\": 50, \"total_docs\": 2, \"num_shards\": 1}");
    c = open_with("sh1", NULL, opts(8));
    CHECK(c && corpus_n_docs(c) == 2 && corpus_n_windows(c) == 6 && corpus_vocab_size(c) == 100, "one shard: %s", gs_error());
    if (c) {
        char h[GS_HASH_HEX];
        gs_hash_file(path_of("sh1/data_0000.bin"), h);
        const char *ch = corpus_hash(c);
        CHECK(ch && !strcmp(ch, h), "corpus hash %s == sha256sum data_0000.bin %s", ch, h);
    }
    corpus_free(c);
    /* a single .bin path works too, with meta.json beside it */
    c = open_with("sh1/data_0000.bin", NULL, opts(8));
    CHECK(c && corpus_total_tokens(c) == 50, "single shard file: %s", gs_error());
    corpus_free(c);

    write_u32("sh2/data_0000.bin", ids, 13);
    write_u32("sh2/data_0001.bin", ids + 13, 0); /* an empty shard is legal */
    write_u32("sh2/data_0002.bin", ids + 13, 37);
    put_s("sh2/meta.json", "{\"vocab_size\": 100}");
    free(s.v);
    s.n = 50;
    s.v = malloc(50 * sizeof *s.v);
    for (int i = 0; i < 50; i++) s.v[i] = (int32_t)ids[i];
    c = open_with("sh2", NULL, opts(6));
    CHECK(c && corpus_n_docs(c) == -1, "three shards without index files: %s", gs_error());
    if (c) check_windows(c, &s, "windows across shards");
    corpus_free(c);

    /* ---- hostile shards */
    write_u32("odd/data_0000.bin", ids, 10);
    put("odd/data_0001.bin", ids, 6); /* 6 bytes */
    put_s("odd/meta.json", "{\"vocab_size\": 100}");
    expect_error("odd", NULL, opts(2), "not a multiple of 4");
    expect_error("odd", NULL, opts(2), "data_0001.bin");

    uint32_t big_ids[20];
    for (int i = 0; i < 20; i++) big_ids[i] = (uint32_t)i;
    big_ids[13] = 5000;
    write_u32("bigid/data_0000.bin", big_ids, 20);
    put_s("bigid/meta.json", "{\"vocab_size\": 100}");
    c = open_with("bigid", NULL, opts(5));
    CHECK(c != NULL, "open bigid: %s", gs_error());
    if (c) {
        int32_t w[5];
        CHECK(corpus_window(c, 0, w) == 0, "window 0 is clean");
        gs_clear_error();
        CHECK(corpus_window(c, 2, w) != 0 && strstr(gs_error(), "token id 5000 at token 13 (byte offset 52)") &&
                  strstr(gs_error(), "data_0000.bin"), "id >= vocab: '%s'", gs_error());
    }
    corpus_free(c);
    o = opts(5);
    o.vocab_size = 6000; /* a larger vocabulary accepts it */
    c = open_with("bigid", NULL, o);
    int32_t w5[5];
    CHECK(c && corpus_window(c, 2, w5) == 0 && w5[3] == 5000, "vocab_size option");
    corpus_free(c);

    write_u32("nometa/data_0000.bin", ids, 20);
    expect_error("nometa", NULL, opts(5), "meta.json is missing");
    c = open_with("nometa", t, opts(5)); /* a tokenizer gives the vocabulary size */
    CHECK(c && corpus_vocab_size(c) == tokenizer_vocab_size(t), "no meta.json but a tokenizer: %s", gs_error());
    corpus_free(c);

    write_u32("badindex/data_0000.bin", ids, 20);
    put_s("badindex/data_0000.index.json", "[5, 10]");
    put_s("badindex/meta.json", "{\"vocab_size\": 100}");
    expect_error("badindex", NULL, opts(5), "add up to 15 tokens but");
    put_s("badindex/data_0000.index.json", "{\"a\": 1}");
    expect_error("badindex", NULL, opts(5), "not a JSON array");
    put_s("badindex/data_0000.index.json", "[5, -3]");
    expect_error("badindex", NULL, opts(5), "not a document length");
    /* found by fuzzing: numbers beyond int64 (an undefined cast) and lengths
     * whose sum overflows */
    put_s("badindex/data_0000.index.json", "[1e19, 5]");
    expect_error("badindex", NULL, opts(5), "not a document length");
    put_s("badindex/data_0000.index.json", "[9000000000000000, 9000000000000000, 9000000000000000]");
    expect_error("badindex", NULL, opts(5), "add up to more than the 20 tokens");

    write_u32("badmeta/data_0000.bin", ids, 20);
    put_s("badmeta/meta.json", "{\"vocab_size\": 100, \"total_tokens\": 999}");
    expect_error("badmeta", NULL, opts(5), "total_tokens is 999");
    put_s("badmeta/meta.json", "{\"vocab_size\": 100, \"total_tokens\": 1e300}");
    expect_error("badmeta", NULL, opts(5), "total_tokens is 1e+300");
    put_s("badmeta/meta.json", "{\"vocab_size\": 1e300}");
    expect_error("badmeta", NULL, opts(5), "vocab_size is not an integer");
    put_s("badmeta/meta.json", "{\"vocab_size\": 32000}");
    expect_error("badmeta", t, opts(5), "another tokenizer");
    put_s("badmeta/meta.json", "{\"vocab_size\": \"many\"}");
    expect_error("badmeta", NULL, opts(5), "vocab_size is not");
    put_s("badmeta/meta.json", "{\"vocab_size\": 1");
    expect_error("badmeta", NULL, opts(5), "not valid JSON");

    mkdir(path_of("noshards"), 0777);
    o = opts(5);
    o.format = CORPUS_SHARDS;
    expect_error("noshards", NULL, o, "no data_*.bin");
    write_u32("zero/data_0000.bin", ids, 0);
    put_s("zero/meta.json", "{\"vocab_size\": 100}");
    expect_error("zero", NULL, opts(5), "empty corpus");

    /* ---- hostile: random index.json, meta.json and JSONL bytes never crash */
    {
        uint64_t r = 0x2545F4914F6CDD1DULL;
        int opened = 0, refused = 0;
        write_u32("fuzz/data_0000.bin", ids, 40);
        for (int iter = 0; iter < 200; iter++) {
            char junk[96];
            size_t n = 1 + (size_t)(r % 90);
            const char *seed = iter % 3 == 0 ? "[10, 30]" : iter % 3 == 1 ? "{\"vocab_size\": 100, \"total_tokens\": 40}" : "{\"text\": \"one one\"}";
            snprintf(junk, sizeof junk, "%s", seed);
            size_t len = strlen(junk);
            for (size_t k = 0; k < n % 5 + 1; k++) {
                r ^= r << 13; r ^= r >> 7; r ^= r << 17;
                junk[r % len] = (char)(r >> 32);
            }
            const char *name = iter % 3 == 0 ? "fuzz/data_0000.index.json" : iter % 3 == 1 ? "fuzz/meta.json" : "fuzz.jsonl";
            put(name, junk, len);
            o = opts(4);
            o.skip_bad = iter % 2;
            gs_corpus *f = open_with(iter % 3 == 2 ? "fuzz.jsonl" : "fuzz", iter % 3 == 2 ? t : NULL, o);
            if (f) {
                int32_t w4[4];
                for (int64_t i = 0; i < corpus_n_windows(f); i++) (void)corpus_window(f, i, w4);
                opened++;
            } else {
                refused++;
                CHECK(strchr(gs_error(), '\n') == NULL && strlen(gs_error()) > 10, "fuzz error '%s'", gs_error());
            }
            corpus_free(f);
            remove(path_of("fuzz/meta.json"));
            remove(path_of("fuzz/data_0000.index.json"));
        }
        printf("  mutated index/meta/JSONL: %d opened, %d refused with an error\n", opened, refused);
    }

    /* ---- the writer refuses ids outside the vocabulary */
    shard_writer *wr = shard_writer_open(path_of("w"), 10, "t", 0);
    int32_t okids[] = {1, 2, 3}, badids[] = {1, 10};
    CHECK(wr && shard_writer_add(wr, okids, 3) == 0, "writer add");
    CHECK(wr && shard_writer_add(wr, badids, 2) != 0 && strstr(gs_error(), "outside the vocabulary"), "writer refuses id 10: %s", gs_error());
    shard_writer_abort(wr);

    free(s.v);
    test_by_document(t);
    tokenizer_free(t);
    return test_summary();
}
