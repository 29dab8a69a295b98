/* The probe over shards (analyses/state/probe_shards.h). */
#include "analyses/state/probe_shards.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h" /* the store source */
#include "analyses/documents.h"
#include "analyses/shards.h"  /* gs_shards_agree */
#include "analyses/math/stats.h"
#include "base/error.h"

#define PS_BLOCK 256

/* one of this rank's state windows */
typedef struct {
    int64_t w, unit, rows;
    int shard;
    unsigned char test;
} pwin;

/* one selected held-out position of a lag */
typedef struct {
    int shard;
    int32_t block; /* position / block length */
    int64_t w;
    int32_t y;
    unsigned char hit;
} tally;

typedef struct {
    gs_job *job;
    const gs_probe_shards_in *in;
    const float *E;
    int V, e, d, L;
    int *lags;
    pwin *win;
    int64_t nwin;  /* this rank's */
    int64_t *ge;   /* nwin x L: the window's rows at positions >= lags[li] */
    int64_t *unit; /* the job's units (document or window ids), sorted */
    int64_t nunit, nw_job;
    int by_document;
} ctx;

/* ---------- reading one shard: its states window by window, with the window's tokens ---------- */

typedef struct {
    store *st;
    gs_state_source *src;
    gs_window_reader *rd;
    gs_probe_tokens tk;
    int64_t at; /* token window looked up last */
} shard_reader;

static void reader_close(shard_reader *r) {
    gs_window_reader_free(r->rd);
    gs_store_source_close(r->src);
    store_close(r->st);
    gs_probe_tokens_free(&r->tk);
    memset(r, 0, sizeof *r);
}

static int reader_open(const ctx *c, int i, int states, shard_reader *r) {
    memset(r, 0, sizeof *r);
    const store_shard *s = &c->in->shards[i];
    if (!(r->st = store_open(s->path, STORE_READ)) || gs_probe_read_tokens(r->st, s->run, &r->tk)) goto fail;
    for (int64_t w = 1; w < r->tk.t.n_windows; w++)
        if (r->tk.win[w] <= r->tk.win[w - 1]) { gs_fail("token windows out of order"); goto fail; }
    if (states && !(r->src = gs_store_source_open(r->st, s->run, c->in->kind, c->in->skip, c->in->take[i]))) goto fail;
    if (states) gs_store_source_limit(r->src, c->in->limit);
    if (states && !(r->rd = gs_window_reader_new(r->src))) goto fail;
    return 0;
fail:
    gs_fail_context("%s: ", s->path);
    reader_close(r);
    return -1;
}

/* the tokens of window w (windows come in ascending order) */
static const int32_t *window_tokens(shard_reader *r, int64_t w, int64_t *len) {
    const gs_tokens *t = &r->tk.t;
    while (r->at < t->n_windows && t->window[r->at] < w) r->at++;
    if (r->at >= t->n_windows || t->window[r->at] != w) return NULL;
    *len = t->start[r->at + 1] - t->start[r->at];
    return t->tokens + t->start[r->at];
}

/* ---------- the units of the split ---------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t sort_unique(int64_t *x, int64_t n) {
    qsort(x, (size_t)n, sizeof *x, cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!m || x[i] != x[m - 1]) x[m++] = x[i];
    return m;
}

/* Every rank's ids into one sorted list without repeats (a document may be
 * in two shards): each rank fills its slots, the rest zeros, and a sum. */
static int gather_unique(gs_job *job, const int64_t *mine, int64_t n_mine, int64_t **all, int64_t *n_all) {
    int64_t *counts = calloc((size_t)job->size, sizeof *counts), *x = NULL;
    int rc = -1;
    if (!counts) return gs_fail("out of memory");
    counts[job->rank] = n_mine;
    if (gs_job_sum_i64(job, counts, job->size)) goto out;
    int64_t total = 0, off = 0;
    for (int r = 0; r < job->size; r++) { if (r < job->rank) off += counts[r]; total += counts[r]; }
    if (!(x = calloc((size_t)(total ? total : 1), sizeof *x))) { gs_fail("out of memory for %lld ids", (long long)total); goto out; }
    memcpy(x + off, mine, (size_t)n_mine * sizeof *x);
    if (gs_job_sum_i64(job, x, total)) goto out;
    *n_all = sort_unique(x, total);
    *all = x;
    x = NULL;
    rc = 0;
out:
    free(counts);
    free(x);
    return rc;
}

/* A shard's windows and their units. */
typedef struct {
    int64_t n_windows;
    int64_t *window, *unit; /* ascending window ids; each one's unit */
} shard_units;

static int64_t max_window_tokens(const gs_tokens *t) {
    int64_t T = 1;
    for (int64_t w = 0; w < t->n_windows; w++)
        if (t->start[w + 1] - t->start[w] > T) T = t->start[w + 1] - t->start[w];
    return T;
}

/* window w's tokens into row of T ids (-1: no token), offset by add */
static void dense_row(const gs_tokens *t, int64_t w, int64_t T, int add, int64_t *row) {
    int64_t a = t->start[w], len = t->start[w + 1] - a;
    for (int64_t q = 0; q < T; q++) row[q] = (q < len ? t->tokens[a + q] : -1) + add;
}

/* Units of the split, the merged store's (analyses/state/probe.c): with BOS/EOS
 * known, a window's unit is the first window id of its document over the
 * whole run (gs_window_documents). A shard's documents are its own but for
 * its first, which may continue the previous shard's last: whether it does
 * is gs_window_documents on the pair (that shard's last window, this one's
 * first), whose rule reads those two windows alone (a document starts at a
 * BOS or after an EOS; a window goes to the document holding most of its
 * tokens); the names then carry over the shards in rank order. Without
 * BOS/EOS, units are windows. Every rank reads the tokens of its own shards
 * (up to the last shard the job reads states from). */
static int find_units(ctx *c, int32_t bos, int32_t eos, shard_units *su) {
    gs_job *job = c->job;
    const int n = c->in->n, me = job->rank, K = job->size;
    int last = -1;
    for (int i = 0; i < n; i++)
        if (c->in->all_take[i] > 0) last = i;
    const int docs = bos >= 0 || eos >= 0;
    enum { HAS, FIRST_W, LAST_DOC_FIRST_W, ONE_DOC, CONTINUES, NI };
    int64_t *info = calloc((size_t)n * NI, sizeof *info), T = 1, *edge = NULL;
    int64_t **dense_first = calloc((size_t)n, sizeof *dense_first); /* each shard's first window (width T) */
    int ok = info && dense_first, rc = -1;
    if (!ok) gs_fail("out of memory");
    /* 1: each shard's windows, documents, and the window widths */
    gs_probe_tokens *tks = calloc((size_t)n, sizeof *tks);
    if (!tks) ok = 0, gs_fail("out of memory");
    for (int i = me; ok && i <= last; i += K) {
        if (c->in->shards[i].begin >= c->in->shards[i].end) continue; /* recorded no windows */
        shard_reader r;
        if (reader_open(c, i, 0, &r)) { ok = 0; break; }
        tks[i] = r.tk; /* kept until the pair test */
        memset(&r.tk, 0, sizeof r.tk);
        reader_close(&r);
        int64_t Tm = max_window_tokens(&tks[i].t);
        if (Tm > T) T = Tm;
    }
    if (gs_shards_agree(job, ok) || gs_job_max_i64(job, &T, 1)) goto out;
    edge = calloc((size_t)n * T, sizeof *edge); /* each shard's last window, +1 (0: no token), shared */
    if (!edge) ok = 0, gs_fail("out of memory");
    for (int i = me; ok && i <= last; i += K) {
        const gs_tokens *t = &tks[i].t;
        const int64_t W = t->n_windows;
        if (!W) continue;
        su[i].n_windows = W;
        su[i].window = malloc((size_t)W * sizeof *su[i].window);
        su[i].unit = malloc((size_t)W * sizeof *su[i].unit);
        int64_t *dn = malloc((size_t)W * sizeof *dn), *fo = malloc((size_t)W * sizeof *fo);
        int32_t *x = malloc((size_t)W * T * sizeof *x);
        dense_first[i] = malloc((size_t)T * sizeof **dense_first);
        if (!su[i].window || !su[i].unit || !dn || !fo || !x || !dense_first[i]) {
            free(dn); free(fo); free(x);
            ok = 0, gs_fail("out of memory");
            break;
        }
        int64_t *row = dense_first[i];
        for (int64_t w = 0; w < W; w++) {
            dense_row(t, w, T, 0, row);
            for (int64_t q = 0; q < T; q++) x[w * T + q] = (int32_t)row[q];
        }
        dense_row(t, 0, T, 0, row);
        dense_row(t, W - 1, T, 1, edge + (int64_t)i * T);
        if (docs) gs_window_documents(x, W, (int)T, bos, eos, dn);
        for (int64_t w = W - 1; w >= 0; w--) {
            su[i].window[w] = t->window[w];
            if (docs) fo[dn[w]] = t->window[w]; /* ends as the first window of each document */
        }
        for (int64_t w = 0; w < W; w++) su[i].unit[w] = docs ? (dn[w] ? fo[dn[w]] : -1) : t->window[w]; /* -1: the first document */
        info[i * NI + HAS] = 1;
        info[i * NI + FIRST_W] = t->window[0];
        info[i * NI + LAST_DOC_FIRST_W] = docs ? fo[dn[W - 1]] : t->window[W - 1];
        info[i * NI + ONE_DOC] = docs && dn[W - 1] == 0;
        free(dn); free(fo); free(x);
    }
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, edge, (int64_t)n * T) || gs_job_sum_i64(job, info, (int64_t)n * NI))
        goto out;
    /* 2: does a shard's first document continue the previous shard's last? */
    int32_t *pair = malloc((size_t)T * 2 * sizeof *pair);
    if (!pair) ok = 0, gs_fail("out of memory");
    for (int i = me; ok && docs && i <= last; i += K) {
        if (!info[i * NI + HAS]) continue;
        int j = i - 1;
        while (j >= 0 && !info[j * NI + HAS]) j--;
        if (j < 0) continue;
        int64_t d2[2];
        for (int64_t q = 0; q < T; q++) pair[q] = (int32_t)(edge[(int64_t)j * T + q] - 1), pair[T + q] = (int32_t)dense_first[i][q];
        gs_window_documents(pair, 2, (int)T, bos, eos, d2);
        info[i * NI + CONTINUES] = d2[0] == d2[1];
    }
    free(pair);
    {
        int64_t *cont = calloc((size_t)n, sizeof *cont);
        if (!cont) { ok = 0; gs_fail("out of memory"); }
        for (int i = 0; ok && i < n; i++) cont[i] = i % K == me ? info[i * NI + CONTINUES] : 0;
        if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, cont, n)) { free(cont); goto out; }
        /* 3: the name of each shard's first and last document, in rank order */
        int64_t prev_last = -1;
        for (int i = 0; i < n; i++) {
            if (!info[i * NI + HAS]) continue;
            int64_t first = cont[i] && prev_last >= 0 ? prev_last : info[i * NI + FIRST_W];
            if (i % K == me)
                for (int64_t w = 0; w < su[i].n_windows; w++)
                    if (su[i].unit[w] < 0) su[i].unit[w] = first;
            prev_last = info[i * NI + ONE_DOC] ? first : info[i * NI + LAST_DOC_FIRST_W];
        }
        free(cont);
    }
    rc = 0;
out:
    for (int i = 0; i < n; i++) {
        if (tks) gs_probe_tokens_free(&tks[i]);
        if (dense_first) free(dense_first[i]);
    }
    free(tks);
    free(dense_first);
    free(info);
    free(edge);
    return rc;
}

static void units_free(shard_units *su, int n) {
    for (int i = 0; su && i < n; i++) free(su[i].window), free(su[i].unit);
    free(su);
}

/* the unit of window w of shard i (-1: not among its token windows) */
static int64_t unit_of(const shard_units *su, int64_t w) {
    int64_t lo = 0, hi = su->n_windows - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (su->window[mid] == w) return su->unit[mid];
        if (su->window[mid] < w) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* The scan: this rank's state windows, their units and their rows per lag
 * (positions >= each grid lag), with every state and token checked as the
 * in-memory probe checks them. */
static int scan(ctx *c, const shard_units *su) {
    const int n = c->in->n, me = c->job->rank, K = c->job->size;
    int64_t cap = 0;
    for (int i = me; i < n; i += K) {
        if (c->in->take[i] <= 0) continue;
        shard_reader r;
        if (reader_open(c, i, 1, &r)) return -1;
        if (r.src->d != c->d) { reader_close(&r); return gs_fail("%s: states of width %d, not %d", c->in->shards[i].path, r.src->d, c->d); }
        for (int64_t q = 0; q < r.tk.t.n_windows; q++)
            for (int64_t a = r.tk.t.start[q]; a < r.tk.t.start[q + 1]; a++)
                if (r.tk.t.tokens[a] < 0 || r.tk.t.tokens[a] >= c->V) {
                    gs_fail("%s: probe: token id %d at window %lld, position %lld is outside the vocabulary (%d)",
                            c->in->shards[i].path, (int)r.tk.t.tokens[a], (long long)r.tk.t.window[q],
                            (long long)(a - r.tk.t.start[q]), c->V);
                    reader_close(&r);
                    return -1;
                }
        for (;;) {
            gs_window cur;
            int64_t len = 0;
            int64_t k = gs_window_reader_read(r.rd, &cur);
            if (k < 0) { gs_fail_context("%s: ", c->in->shards[i].path); reader_close(&r); return -1; }
            if (k == 0) break;
            const int32_t *tok = window_tokens(&r, cur.window, &len);
            int64_t u = unit_of(&su[i], cur.window);
            if (!tok || u < 0) { reader_close(&r); return gs_fail("%s: probe: no tokens for window %lld", c->in->shards[i].path, (long long)cur.window); }
            int64_t *wins = malloc((size_t)k * sizeof *wins);
            if (!wins) { reader_close(&r); return gs_fail("out of memory"); }
            for (int64_t q = 0; q < k; q++) wins[q] = cur.window;
            int bad = gs_check_rows(cur.rows, wins, cur.pos, k, c->d);
            free(wins);
            for (int64_t q = 0; !bad && q < k; q++)
                if (cur.pos[q] < 0 || cur.pos[q] > len)
                    bad = gs_fail("probe: window %lld has %lld tokens but a state at position %d (which has read %d tokens)",
                                  (long long)cur.window, (long long)len, (int)cur.pos[q], (int)cur.pos[q]);
            if (!bad && c->nwin == cap) {
                cap = cap ? 2 * cap : 256;
                pwin *nw = realloc(c->win, (size_t)cap * sizeof *nw);
                int64_t *ng = nw ? realloc(c->ge, (size_t)cap * c->L * sizeof *ng) : NULL;
                if (nw) c->win = nw;
                if (ng) c->ge = ng;
                if (!nw || !ng) bad = gs_fail("out of memory");
            }
            if (bad) { gs_fail_context("%s: ", c->in->shards[i].path); reader_close(&r); return -1; }
            c->win[c->nwin] = (pwin){.w = cur.window, .unit = u, .rows = k, .shard = i};
            int64_t *ge = c->ge + c->nwin * c->L;
            for (int li = 0; li < c->L; li++) {
                ge[li] = 0;
                for (int64_t q = 0; q < k; q++) ge[li] += cur.pos[q] >= c->lags[li];
            }
            c->nwin++;
        }
        reader_close(&r);
    }
    return 0;
}

typedef struct { uint64_t h; int64_t u; } unit_hash;
static int cmp_hash(const void *a, const void *b) {
    const unit_hash *x = a, *y = b;
    if (x->h != y->h) return (x->h > y->h) - (x->h < y->h);
    return (x->u > y->u) - (x->u < y->u);
}

/* The held-out windows of a split: the units' first round(test_frac x
 * units) by a seeded hash, exactly as the in-memory probe takes them. */
static int mark_split(ctx *c, const gs_probe_opts *o, gs_probe *p) {
    unit_hash *uh = malloc((size_t)c->nunit * sizeof *uh);
    if (!uh) gs_fail("out of memory");
    if (gs_shards_agree(c->job, uh != NULL)) { free(uh); return -1; }
    for (int64_t q = 0; q < c->nunit; q++) uh[q] = (unit_hash){gs_hash2(o->seed, (uint64_t)c->unit[q]), c->unit[q]};
    qsort(uh, (size_t)c->nunit, sizeof *uh, cmp_hash);
    int64_t ntu = (int64_t)llround(o->test_frac * (double)c->nunit);
    if (ntu < 1) ntu = 1;
    if (ntu > c->nunit - 1) ntu = c->nunit - 1;
    int64_t *held = malloc((size_t)ntu * sizeof *held);
    if (!held) gs_fail("out of memory");
    if (gs_shards_agree(c->job, held != NULL)) { free(uh); free(held); return -1; }
    for (int64_t q = 0; q < ntu; q++) held[q] = uh[q].u;
    free(uh);
    qsort(held, (size_t)ntu, sizeof *held, cmp_i64);
    int64_t ntw = 0;
    for (int64_t k = 0; k < c->nwin; k++) {
        c->win[k].test = bsearch(&c->win[k].unit, held, (size_t)ntu, sizeof *held, cmp_i64) != NULL;
        ntw += c->win[k].test;
    }
    free(held);
    if (gs_job_sum_i64(c->job, &ntw, 1)) return -1;
    p->n_test_windows = ntw;
    p->n_train_windows = c->nw_job - ntw;
    p->by_document = c->by_document;
    p->n_test_docs = c->by_document ? ntu : 0;
    p->n_train_docs = c->by_document ? c->nunit - ntu : 0;
    return 0;
}

/* One pass over this rank's states, window by window, in the scan's order;
 * visit gets the window (its scan entry), its rows and its tokens. */
typedef int (*visit_fn)(void *arg, const pwin *pw, const float *rows, const int32_t *pos, int64_t k, const int32_t *tok);

static int pass(const ctx *c, visit_fn visit, void *arg) {
    const int n = c->in->n, me = c->job->rank, K = c->job->size;
    int64_t at = 0;
    for (int i = me; i < n; i += K) {
        if (c->in->take[i] <= 0) continue;
        shard_reader r;
        if (reader_open(c, i, 1, &r)) return -1;
        for (;;) {
            gs_window cur;
            int64_t len;
            int64_t k = gs_window_reader_read(r.rd, &cur);
            if (k == 0) break;
            const int32_t *tok = k > 0 ? window_tokens(&r, cur.window, &len) : NULL;
            if (k < 0 || at >= c->nwin || c->win[at].w != cur.window || c->win[at].rows != k || !tok) {
                if (k >= 0) gs_fail("the states changed while being read");
                gs_fail_context("%s: ", c->in->shards[i].path);
                reader_close(&r);
                return -1;
            }
            if (visit(arg, &c->win[at++], cur.rows, cur.pos, k, tok)) { reader_close(&r); return -1; }
        }
        reader_close(&r);
    }
    return 0;
}

/* one split's sums and buffers */
typedef struct {
    const ctx *c;
    int d, e, kk, k_above, fit; /* the lag; the previous (larger) lag (INT32_MAX: none); 1: gather X^T Y */
    double *cpt, *G, *sumx, *XtY, *ysum, *mu, *blk, *blk2, *Eb;
    int nb, nb2;
    /* scoring */
    int64_t *next_index;  /* per shard: the next held-out row's index in the job (at positions >= kk) */
    int64_t nt, want;
    gs_probe_decoder dec;
    int *best;
    tally *tl, *stage;    /* the selected rows: tallied / waiting for the decode */
    int64_t ntl, captl;
    int nst;
    int64_t hit, *cnt;
    int blen;
} split_sums;

static int visit_center(void *arg, const pwin *pw, const float *rows, const int32_t *pos, int64_t k, const int32_t *tok) {
    split_sums *s = arg;
    (void)pos, (void)tok;
    if (pw->test) return 0;
    for (int64_t q = 0; q < k; q++)
        for (int j = 0; j < s->d; j++) s->cpt[j] += rows[q * s->d + j];
    return 0;
}

static void flush_band(split_sums *s) {
    if (!s->nb) return;
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, s->d, s->nb, 1.0, s->blk, s->d, 1.0, s->G, s->d);
    s->nb = 0;
}

static void flush_xy(split_sums *s) {
    if (!s->nb2) return;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, s->d, s->e, s->nb2, 1.0, s->blk2, s->d, s->Eb, s->e, 1.0, s->XtY, s->e);
    s->nb2 = 0;
}

/* training rows: those at positions [kk, k_above) join the Gram (it only
 * grows as the lags fall, as in the in-memory pass); every one at >= kk
 * adds (x - c) E[x_{t-kk}]^T */
static int visit_train(void *arg, const pwin *pw, const float *rows, const int32_t *pos, int64_t k, const int32_t *tok) {
    split_sums *s = arg;
    if (pw->test) return 0;
    const int d = s->d, e = s->e;
    const float *E = s->c->E;
    for (int64_t q = 0; q < k; q++) {
        if (pos[q] < s->kk) continue;
        const float *x = rows + q * d;
        if (pos[q] < s->k_above) {
            double *b = s->blk + (int64_t)s->nb * d;
            for (int j = 0; j < d; j++) { b[j] = (double)x[j] - s->cpt[j]; s->sumx[j] += b[j]; }
            if (++s->nb == PS_BLOCK) flush_band(s);
        }
        if (!s->fit) continue;
        const float *ey = E + (int64_t)tok[pos[q] - s->kk] * e;
        double *b = s->blk2 + (int64_t)s->nb2 * d, *y = s->Eb + (int64_t)s->nb2 * e;
        for (int j = 0; j < d; j++) b[j] = (double)x[j] - s->cpt[j];
        for (int j = 0; j < e; j++) { y[j] = ey[j]; s->ysum[j] += ey[j]; }
        if (++s->nb2 == PS_BLOCK) flush_xy(s);
    }
    return 0;
}

static void flush_score(split_sums *s, const double *W, const double *ybar) {
    if (!s->nst) return;
    gs_probe_decode(&s->dec, s->blk, s->nst, W, ybar, s->best);
    for (int r = 0; r < s->nst; r++) {
        tally t = s->stage[r];
        t.hit = s->best[r] == t.y;
        s->hit += t.hit;
        s->cnt[t.y]++;
        s->tl[s->ntl++] = t;
    }
    s->nst = 0;
}

/* held-out rows at positions >= kk: the in-memory pass scores `want` of the
 * job's nt of them, the ones at indices q nt / want (q < want) in (window,
 * position) order; a row knows its index from the rows before its shard */
static int visit_score(void *arg, const pwin *pw, const float *rows, const int32_t *pos, int64_t k, const int32_t *tok) {
    split_sums *s = arg;
    if (!pw->test) return 0;
    const int d = s->d;
    for (int64_t q = 0; q < k; q++) {
        if (pos[q] < s->kk) continue;
        int64_t g = s->next_index[pw->shard]++;
        int64_t sel = (g * s->want + s->nt - 1) / s->nt; /* the first q' with q' nt / want >= g */
        if (sel >= s->want || sel * s->nt / s->want != g) continue;
        if (s->ntl + s->nst >= s->captl) {
            s->captl = s->captl ? 2 * s->captl : 1024;
            tally *nt = realloc(s->tl, (size_t)s->captl * sizeof *nt);
            if (!nt) return gs_fail("out of memory");
            s->tl = nt;
        }
        const float *x = rows + q * d;
        double *b = s->blk + (int64_t)s->nst * d;
        for (int j = 0; j < d; j++) b[j] = (double)x[j] - s->cpt[j] - s->mu[j];
        s->stage[s->nst++] = (tally){.shard = pw->shard, .block = pos[q] / s->blen, .w = pw->w, .y = tok[pos[q] - s->kk]};
        if (s->nst == PS_BLOCK) flush_score(s, s->XtY, s->ysum);
    }
    return 0;
}

static void split_sums_free(split_sums *s) {
    free(s->cpt); free(s->G); free(s->sumx); free(s->XtY); free(s->ysum); free(s->mu); free(s->blk); free(s->blk2);
    free(s->Eb); free(s->next_index); free(s->best); free(s->tl); free(s->stage); free(s->cnt);
    gs_probe_decoder_free(&s->dec);
}

/* The blocks of the standard error (runs of `blen` positions of one
 * held-out window) of this rank's tallies, placed at their shards' places
 * in the job's list and added up: every rank gets the job's list in
 * (window, position) order, as the in-memory pass builds it. */
static int gather_blocks(const ctx *c, const split_sums *s, int maj, double **bs, double **bn, int64_t *nb) {
    const int n = c->in->n;
    int64_t *per = calloc((size_t)n, sizeof *per), total = 0;
    double *a = NULL, *b = NULL;
    if (!per) return gs_fail("out of memory");
    for (int64_t q = 0; q < s->ntl; q++)
        if (!q || s->tl[q].w != s->tl[q - 1].w || s->tl[q].block != s->tl[q - 1].block) per[s->tl[q].shard]++;
    if (gs_job_sum_i64(c->job, per, n)) { free(per); return -1; }
    for (int i = 0; i < n; i++) { int64_t m = per[i]; per[i] = total; total += m; } /* each shard's first block */
    a = calloc((size_t)(total ? total : 1), sizeof *a);
    b = calloc((size_t)(total ? total : 1), sizeof *b);
    if (!a || !b) { free(per); free(a); free(b); return gs_fail("out of memory"); }
    for (int64_t q = 0, at = -1; q < s->ntl; q++) {
        const tally *t = &s->tl[q];
        if (!q || t->w != s->tl[q - 1].w || t->block != s->tl[q - 1].block) at = per[t->shard]++;
        a[at] += (double)t->hit - (double)(t->y == maj);
        b[at] += 1;
    }
    free(per);
    if (gs_job_sum_f64(c->job, a, total) || gs_job_sum_f64(c->job, b, total)) { free(a); free(b); return -1; }
    *bs = a, *bn = b, *nb = total;
    return 0;
}

/* the fit of one lag: sums added up, rank 0 solves, W, ybar and mu sent to every rank */
static int fit_lag(const ctx *c, split_sums *s, int64_t nk, const gs_probe_opts *o) {
    const int d = s->d, e = s->e;
    double *Gt = malloc((size_t)d * d * sizeof *Gt), *st = malloc((size_t)d * sizeof *st);
    int ok = Gt && st, rc = -1;
    if (!ok) gs_fail("out of memory for a %d x %d matrix", d, d);
    if (gs_shards_agree(c->job, ok)) goto out;
    memcpy(Gt, s->G, (size_t)d * d * sizeof *Gt);
    memcpy(st, s->sumx, (size_t)d * sizeof *st);
    if (gs_job_sum_f64(c->job, Gt, (int64_t)d * d) || gs_job_sum_f64(c->job, st, d) ||
        gs_job_sum_f64(c->job, s->XtY, (int64_t)d * e) || gs_job_sum_f64(c->job, s->ysum, e))
        goto out;
    if (c->job->rank == 0) ok = gs_probe_fit(Gt, st, nk, d, e, o->ridge, s->XtY, s->ysum, s->mu) == 0;
    else {
        memset(s->XtY, 0, (size_t)d * e * sizeof *s->XtY);
        memset(s->ysum, 0, (size_t)e * sizeof *s->ysum);
        memset(s->mu, 0, (size_t)d * sizeof *s->mu);
    }
    /* a sum with zeros elsewhere: rank 0's W exactly, so every rank decodes alike */
    if (gs_shards_agree(c->job, ok) || gs_job_sum_f64(c->job, s->XtY, (int64_t)d * e) ||
        gs_job_sum_f64(c->job, s->ysum, e) || gs_job_sum_f64(c->job, s->mu, d))
        goto out;
    rc = 0;
out:
    free(Gt);
    free(st);
    return rc;
}

/* One split of the probe over the shards (gs_probe_split_fn). */
static int probe_split(void *arg, const gs_probe_opts *o, gs_probe *p) {
    ctx *c = arg;
    gs_job *job = c->job;
    const int n = c->in->n, d = c->d, e = c->e, L = c->L;
    split_sums s = {.c = c, .d = d, .e = e, .blen = o->block > 0 ? o->block : 64};
    int64_t *nts = calloc((size_t)n * L + L + 1, sizeof *nts), *trk = nts ? nts + (size_t)n * L : NULL;
    int rc = -1, ok;
    memset(p, 0, sizeof *p);
    ok = nts && gs_probe_begin(p, o) == 0 && p->n_lags == L;
    if (!nts) gs_fail("out of memory");
    if (gs_shards_agree(job, ok) || mark_split(c, o, p)) goto out;
    /* held-out rows per shard and lag, training rows per lag and in all */
    for (int64_t k = 0; k < c->nwin; k++) {
        const int64_t *ge = c->ge + k * L;
        for (int li = 0; li < L; li++)
            if (c->win[k].test) nts[(int64_t)c->win[k].shard * L + li] += ge[li];
            else trk[li] += ge[li];
        if (!c->win[k].test) trk[L] += c->win[k].rows;
    }
    if (gs_job_sum_i64(job, nts, (int64_t)n * L + L + 1)) goto out;
    s.cpt = calloc((size_t)d, sizeof *s.cpt);
    s.G = calloc((size_t)d * d, sizeof *s.G);
    s.sumx = calloc((size_t)d, sizeof *s.sumx);
    s.XtY = malloc((size_t)d * e * sizeof *s.XtY);
    s.ysum = malloc((size_t)e * sizeof *s.ysum);
    s.mu = malloc((size_t)d * sizeof *s.mu);
    s.blk = malloc((size_t)PS_BLOCK * d * sizeof *s.blk);
    s.blk2 = malloc((size_t)PS_BLOCK * d * sizeof *s.blk2);
    s.Eb = malloc((size_t)PS_BLOCK * e * sizeof *s.Eb);
    s.next_index = malloc((size_t)n * sizeof *s.next_index);
    s.best = malloc(PS_BLOCK * sizeof *s.best);
    s.stage = malloc(PS_BLOCK * sizeof *s.stage);
    s.cnt = malloc((size_t)c->V * sizeof *s.cnt);
    ok = gs_probe_decoder_init(&s.dec, c->E, c->V, e, d, PS_BLOCK) == 0;
    ok = ok && s.cpt && s.G && s.sumx && s.XtY && s.ysum && s.mu && s.blk && s.blk2 && s.Eb && s.next_index && s.best &&
         s.stage && s.cnt;
    if (!ok) gs_fail("out of memory for the probe (d = %d, d_emb = %d, V = %d)", d, e, c->V);
    /* the centering point: the training rows' mean, as the in-memory pass takes it */
    if (gs_shards_agree(job, ok) || gs_shards_agree(job, pass(c, visit_center, &s) == 0) || gs_job_sum_f64(job, s.cpt, d))
        goto out;
    for (int j = 0; j < d; j++) s.cpt[j] /= (double)(trk[L] ? trk[L] : 1);

    for (int li = L - 1; li >= 0; li--) {
        const int64_t nk = trk[li];
        int64_t nt = 0;
        for (int i = 0; i < n; i++) nt += nts[(int64_t)i * L + li];
        s.kk = p->lags[li];
        s.k_above = li + 1 < L ? p->lags[li + 1] : INT32_MAX;
        if (nk == 0) continue;      /* no training state reads this far back: no pass */
        s.fit = nk >= 2 && nt >= 1; /* else not measured, but its rows still join the Gram */
        if (s.fit) {
            memset(s.XtY, 0, (size_t)d * e * sizeof *s.XtY);
            memset(s.ysum, 0, (size_t)e * sizeof *s.ysum);
        }
        ok = pass(c, visit_train, &s) == 0;
        if (ok) flush_band(&s), flush_xy(&s);
        if (gs_shards_agree(job, ok)) goto out;
        if (!s.fit) continue;
        p->measured[li] = 1;
        p->n_train[li] = nk;
        if (fit_lag(c, &s, nk, o)) goto out;
        /* score the held-out rows: the same selection, decode and tallies */
        s.nt = nt;
        s.want = o->max_test > 0 && nt > o->max_test ? o->max_test : nt;
        int64_t before = 0;
        for (int i = 0; i < n; i++) { /* the held-out rows of the shards before */
            s.next_index[i] = before;
            before += nts[(int64_t)i * L + li];
        }
        s.hit = 0;
        s.ntl = 0;
        memset(s.cnt, 0, (size_t)c->V * sizeof *s.cnt);
        ok = pass(c, visit_score, &s) == 0;
        if (ok) flush_score(&s, s.XtY, s.ysum);
        if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, &s.hit, 1) || gs_job_sum_i64(job, s.cnt, c->V)) goto out;
        int maj = 0;
        for (int v = 1; v < c->V; v++)
            if (s.cnt[v] > s.cnt[maj]) maj = v;
        double *bs = NULL, *bn = NULL;
        int64_t nb = 0;
        if (gs_shards_agree(job, gather_blocks(c, &s, maj, &bs, &bn, &nb) == 0)) goto out;
        gs_probe_lag_result(p, li, s.hit, s.want, s.cnt[maj], maj, bs, bn, nb);
        free(bs);
        free(bn);
    }
    gs_probe_end(p, o);
    rc = 0;
out:
    split_sums_free(&s);
    free(nts);
    if (rc) gs_probe_free(p);
    return rc;
}

int gs_probe_shards(gs_job *job, const gs_probe_shards_in *in, const float *E, int V, int e, const gs_probe_opts *o,
                    gs_probe *p) {
    memset(p, 0, sizeof *p);
    ctx c = {.job = job, .in = in, .E = E, .V = V, .e = e, .d = in->d};
    shard_units *su = calloc((size_t)in->n, sizeof *su);
    int64_t *mine = NULL;
    int rc = -1, ok = su != NULL;
    if (!ok) gs_fail("out of memory");
    if (ok && !(c.lags = gs_probe_lags(o->max_lag > 0 ? o->max_lag : 256, &c.L))) ok = 0;
    if (gs_shards_agree(job, ok) || find_units(&c, o->bos, o->eos, su)) goto out;
    if (gs_shards_agree(job, scan(&c, su) == 0)) goto out;
    c.nw_job = c.nwin;
    if (gs_job_sum_i64(job, &c.nw_job, 1)) goto out;
    if (c.nw_job < 2) { gs_fail("probe: needs at least 2 windows to hold some out (got %lld)", (long long)c.nw_job); goto out; }
    /* the job's units: documents when BOS/EOS are known and the states cover 2 or more, else windows */
    ok = (mine = malloc((size_t)(c.nwin ? c.nwin : 1) * sizeof *mine)) != NULL;
    if (!ok) gs_fail("out of memory");
    for (int64_t k = 0; ok && k < c.nwin; k++) mine[k] = c.win[k].unit;
    int64_t nm = ok ? sort_unique(mine, c.nwin) : 0;
    if (gs_shards_agree(job, ok) || gather_unique(job, mine, nm, &c.unit, &c.nunit)) goto out;
    c.by_document = (o->bos >= 0 || o->eos >= 0) && c.nunit >= 2;
    if (!c.by_document && (o->bos >= 0 || o->eos >= 0)) { /* one document: split by window */
        free(c.unit);
        c.unit = NULL;
        for (int64_t k = 0; k < c.nwin; k++) mine[k] = c.win[k].unit = c.win[k].w;
        if (gather_unique(job, mine, c.nwin, &c.unit, &c.nunit)) goto out;
    }
    rc = gs_probe_over_splits(probe_split, &c, o, p);
out:
    units_free(su, in->n);
    free(mine);
    free(c.lags);
    free(c.win);
    free(c.ge);
    free(c.unit);
    return rc;
}
