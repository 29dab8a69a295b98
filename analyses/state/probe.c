#include "analyses/state/probe.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/documents.h"
#include "analyses/math/linalg.h"
#include "analyses/math/stats.h"
#include "base/error.h"

#define PB_BLOCK 256

void gs_probe_opts_default(gs_probe_opts *o) {
    o->max_lag = 256;
    o->test_frac = 0.2;
    o->ridge = 1e-2;
    o->max_test = 2048;
    o->z = 2.0;
    o->block = 64;
    o->splits = 5;
    o->bos = o->eos = -1;
    o->seed = 1;
}

void gs_probe_free(gs_probe *p) {
    free(p->lags); free(p->acc); free(p->baseline); free(p->se); free(p->se_binomial); free(p->se_block); free(p->sd_splits); free(p->n_train); free(p->n_test);
    free(p->majority); free(p->measured); free(p->pass);
    memset(p, 0, sizeof *p);
}

int *gs_probe_lags(int max_lag, int *n_out) {
    *n_out = 0;
    if (max_lag < 1) { gs_fail("probe lags up to %d: the largest lag must be at least 1", max_lag); return NULL; }
    int *l = malloc(80 * sizeof *l);
    if (!l) { gs_fail("out of memory"); return NULL; }
    int n = 0;
    l[n++] = 1;
    /* 1 2 3 4 6 8 12 16 ...: powers of two and 1.5 x powers of two */
    for (int64_t p = 2; p <= max_lag && n < 76; p *= 2) {
        l[n++] = (int)p;
        if (p + p / 2 <= max_lag && p >= 2) l[n++] = (int)(p + p / 2);
    }
    if (l[n - 1] != max_lag) l[n++] = max_lag;
    *n_out = n;
    return l;
}

/* the horizon from the pass flags */
static void apply_rule(gs_probe *p) {
    p->horizon = 0;
    p->censored = 1;
    for (int li = 0; li < p->n_lags; li++) {
        if (!p->measured[li]) break;          /* ran out of positions: a lower bound */
        if (!p->pass[li]) { p->censored = 0; break; }
        p->horizon = p->lags[li];
    }
}


int gs_probe_begin(gs_probe *p, const gs_probe_opts *o) {
    p->lags = gs_probe_lags(o->max_lag > 0 ? o->max_lag : 256, &p->n_lags);
    if (!p->lags) return -1;
    const size_t L = (size_t)p->n_lags;
    p->acc = calloc(L, sizeof(double));
    p->baseline = calloc(L, sizeof(double));
    p->se = calloc(L, sizeof(double));
    p->se_binomial = calloc(L, sizeof(double));
    p->n_train = calloc(L, sizeof(int64_t));
    p->n_test = calloc(L, sizeof(int64_t));
    p->majority = calloc(L, sizeof(int));
    p->measured = calloc(L, sizeof(int));
    p->pass = calloc(L, sizeof(int));
    p->z = o->z > 0 ? o->z : 2.0;
    if (!p->acc || !p->baseline || !p->se || !p->se_binomial || !p->n_train || !p->n_test || !p->majority ||
        !p->measured || !p->pass)
        return gs_fail("out of memory for the probe's %d lags", p->n_lags);
    return 0;
}

int gs_probe_fit(double *G, const double *sumx, int64_t nk, int d, int e, double ridge, double *XtY, double *ysum,
                 double *mu) {
    double tr = 0;
    for (int j = 0; j < d; j++) mu[j] = sumx[j] / (double)nk;
    for (int i = 0; i < d; i++)
        for (int j = i; j < d; j++) G[(int64_t)i * d + j] -= (double)nk * mu[i] * mu[j];
    for (int j = 0; j < d; j++) tr += G[(int64_t)j * d + j];
    double lambda = ridge * (tr > 0 ? tr / d : 1.0);
    if (!(lambda > 0)) lambda = 1e-12;
    for (int j = 0; j < e; j++) ysum[j] /= (double)nk;
    cblas_dger(CblasRowMajor, d, e, -(double)nk, mu, 1, ysum, 1, XtY, e);
    return gs_ridge_solve(G, d, lambda, XtY, e); /* XtY becomes W */
}

int gs_probe_decoder_init(gs_probe_decoder *dc, const float *E, int V, int e, int d, int cap) {
    *dc = (gs_probe_decoder){.d = d, .e = e, .V = V, .E = E, .cap = cap};
    dc->einv = malloc((size_t)V * sizeof *dc->einv);
    dc->y = malloc((size_t)cap * e * sizeof *dc->y);
    dc->yf = malloc((size_t)cap * e * sizeof *dc->yf);
    dc->scores = malloc((size_t)cap * V * sizeof *dc->scores);
    if (!dc->einv || !dc->y || !dc->yf || !dc->scores) {
        gs_probe_decoder_free(dc);
        return gs_fail("out of memory for the probe's decoder (V = %d, d_emb = %d)", V, e);
    }
    for (int v = 0; v < V; v++) {
        double nn = 0;
        for (int j = 0; j < e; j++) nn += (double)E[(int64_t)v * e + j] * E[(int64_t)v * e + j];
        dc->einv[v] = nn > 0 ? (float)(1.0 / sqrt(nn)) : 0.0f;
    }
    return 0;
}

void gs_probe_decoder_free(gs_probe_decoder *dc) {
    free(dc->einv); free(dc->y); free(dc->yf); free(dc->scores);
    memset(dc, 0, sizeof *dc);
}

void gs_probe_decode(gs_probe_decoder *dc, const double *rows, int b, const double *W, const double *ybar, int *best) {
    const int d = dc->d, e = dc->e, V = dc->V;
    for (int r = 0; r < b; r++) memcpy(dc->y + (int64_t)r * e, ybar, (size_t)e * sizeof *ybar);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, e, d, 1.0, rows, d, W, e, 1.0, dc->y, e);
    for (int64_t q = 0; q < (int64_t)b * e; q++) dc->yf[q] = (float)dc->y[q];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, V, e, 1.0f, dc->yf, e, dc->E, e, 0.0f, dc->scores, V);
    for (int r = 0; r < b; r++) {
        const float *sc = dc->scores + (int64_t)r * V;
        int bi = -1;
        float bv = 0;
        for (int v = 0; v < V; v++) {
            if (dc->einv[v] == 0) continue;
            float val = sc[v] * dc->einv[v];
            if (bi < 0 || val > bv) { bi = v; bv = val; }
        }
        best[r] = bi;
    }
}

void gs_probe_lag_result(gs_probe *p, int li, int64_t hit, int64_t n_test, int64_t n_majority, int maj,
                         const double *bs, const double *bn, int64_t nb) {
    gs_interval iv = gs_cluster_t_interval(bs, bn, nb, 0.95);
    p->se[li] = iv.se;
    p->n_test[li] = n_test;
    p->acc[li] = (double)hit / (double)n_test;
    p->baseline[li] = (double)n_majority / (double)n_test;
    p->majority[li] = maj;
    p->se_binomial[li] = sqrt(p->baseline[li] * (1.0 - p->baseline[li]) / (double)n_test);
    if (!(p->se[li] >= p->se_binomial[li])) p->se[li] = p->se_binomial[li]; /* also when NaN (one block) */
    p->pass[li] = p->acc[li] > p->baseline[li] && p->acc[li] - p->baseline[li] > p->z * p->se[li];
}

void gs_probe_end(gs_probe *p, const gs_probe_opts *o) {
    apply_rule(p);
    snprintf(p->rule, sizeof p->rule,
             "largest lag before the first failing lag; a lag passes when top-1 accuracy exceeds the held-out "
             "majority baseline b by more than %.3g standard errors of acc - b (cluster-robust over blocks of %d "
             "positions, at least sqrt(b(1-b)/n)); split by %s",
             p->z, o->block > 0 ? o->block : 64, p->by_document ? "document" : "window");
}

typedef struct { int64_t w; int64_t i; } win_idx;
static int cmp_win(const void *a, const void *b) {
    const win_idx *x = a, *y = b;
    return (x->w > y->w) - (x->w < y->w);
}
typedef struct { uint64_t h; int64_t w; } win_hash;
static int cmp_hash(const void *a, const void *b) {
    const win_hash *x = a, *y = b;
    if (x->h != y->h) return (x->h > y->h) - (x->h < y->h);
    return (x->w > y->w) - (x->w < y->w);
}
typedef struct { int32_t key; int64_t row; } key_row;
static int cmp_key_row(const void *a, const void *b) {
    const key_row *x = a, *y = b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    return (x->row > y->row) - (x->row < y->row);
}

/* tokens of the window of row i, or NULL */
static const int32_t *window_tokens(const win_idx *map, int64_t nmap, const gs_tokens *tok, int64_t w, int64_t *len) {
    int64_t lo = 0, hi = nmap - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (map[mid].w == w) {
            int64_t i = map[mid].i;
            *len = tok->start[i + 1] - tok->start[i];
            return tok->tokens + tok->start[i];
        }
        if (map[mid].w < w) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

static int probe_one(const gs_states *s, const gs_tokens *tok, const float *E, int V, int e, const gs_probe_opts *o,
                     gs_probe *p) {
    memset(p, 0, sizeof *p);
    gs_probe_opts dflt;
    if (!o) { gs_probe_opts_default(&dflt); o = &dflt; }
    if (!s || s->n < 1 || s->d < 1) return gs_fail("probe: no states");
    if (!tok || tok->n_windows < 1) return gs_fail("probe: no token sequences for the windows");
    if (!E || V < 2 || e < 1) return gs_fail("probe: no embedding (V = %d, d_emb = %d)", V, e);
    const int d = s->d;
    const int64_t n = s->n;
    if (gs_check_rows(s->x, s->window, s->pos, n, d) != 0) return -1;

    /* ---- windows, their tokens, the split ---- */
    win_idx *map = malloc((size_t)tok->n_windows * sizeof *map);
    unsigned char *is_test = malloc((size_t)n);
    const int32_t **rtok = malloc((size_t)n * sizeof *rtok);
    win_hash *wh = NULL;
    double *G = NULL, *blk = NULL, *sumx = NULL, *c = NULL, *XtY = NULL, *Eblk = NULL, *ybar = NULL, *mu = NULL;
    int *best = NULL;
    gs_probe_decoder dec = {0};
    key_row *kr = NULL;
    int64_t *train_desc = NULL, *test_rows = NULL, *cnt = NULL;
    int rc = -1;
    if (!map || !is_test || !rtok) { gs_fail("out of memory"); goto done; }
    for (int64_t i = 0; i < tok->n_windows; i++) { map[i].w = tok->window[i]; map[i].i = i; }
    qsort(map, (size_t)tok->n_windows, sizeof *map, cmp_win);
    int64_t nw = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || s->window[i] != s->window[i - 1]) nw++;
        int64_t len = 0;
        rtok[i] = window_tokens(map, tok->n_windows, tok, s->window[i], &len);
        if (!rtok[i]) { gs_fail("probe: no tokens for window %lld", (long long)s->window[i]); goto done; }
        if (s->pos[i] < 0 || s->pos[i] > len) { /* the state at t has read tokens 0 .. t-1 */
            gs_fail("probe: window %lld has %lld tokens but a state at position %d (which has read %d tokens)",
                    (long long)s->window[i], (long long)len, (int)s->pos[i], (int)s->pos[i]);
            goto done;
        }
    }
    for (int64_t i = 0; i < tok->n_windows; i++)
        for (int64_t q = tok->start[i]; q < tok->start[i + 1]; q++)
            if (tok->tokens[q] < 0 || tok->tokens[q] >= V) {
                gs_fail("probe: token id %d at window %lld, position %lld is outside the vocabulary (%d)",
                        (int)tok->tokens[q], (long long)tok->window[i], (long long)(q - tok->start[i]), V);
                goto done;
            }
    if (nw < 2) { gs_fail("probe: needs at least 2 windows to hold some out (got %lld)", (long long)nw); goto done; }
    /* documents of the windows (in window-id order, as the corpus cut them) */
    int64_t *wdoc = NULL, ndoc = 0;
    {
        int64_t Tm = 1;
        for (int64_t i = 0; i < tok->n_windows; i++)
            if (tok->start[i + 1] - tok->start[i] > Tm) Tm = tok->start[i + 1] - tok->start[i];
        int32_t *dense = malloc((size_t)tok->n_windows * Tm * sizeof *dense);
        wdoc = malloc((size_t)tok->n_windows * sizeof *wdoc);
        if (!dense || !wdoc) { free(dense); free(wdoc); gs_fail("out of memory"); goto done; }
        for (int64_t k = 0; k < tok->n_windows; k++) {
            int64_t i = map[k].i, len = tok->start[i + 1] - tok->start[i];
            for (int64_t t = 0; t < Tm; t++) dense[k * Tm + t] = t < len ? tok->tokens[tok->start[i] + t] : -1;
        }
        ndoc = gs_window_documents(dense, tok->n_windows, (int)Tm, o->bos, o->eos, wdoc); /* wdoc[k]: map order */
        free(dense);
    }
    /* units of the split: documents, or windows when fewer than 2 documents
     * have states; a unit is named by its first window id */
    wh = malloc((size_t)nw * sizeof *wh);
    if (!wh) { free(wdoc); gs_fail("out of memory"); goto done; }
    int64_t *unit_of = malloc((size_t)nw * sizeof *unit_of); /* per distinct state window: unit id */
    if (!unit_of) { free(wdoc); gs_fail("out of memory"); goto done; }
    int64_t nunit = 0;
    {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            if (i == 0 || s->window[i] != s->window[i - 1]) {
                int64_t lo = 0, hi = tok->n_windows - 1, at = 0;
                while (lo <= hi) {
                    int64_t mid = (lo + hi) / 2;
                    if (map[mid].w == s->window[i]) { at = mid; break; }
                    if (map[mid].w < s->window[i]) lo = mid + 1;
                    else hi = mid - 1;
                }
                /* the unit's name: the first window id of its document */
                int64_t first = at;
                while (ndoc > 0 && first > 0 && wdoc[first - 1] == wdoc[at]) first--;
                unit_of[k++] = ndoc > 0 ? map[first].w : s->window[i];
            }
        /* distinct units (state windows come in window order, documents too) */
        for (int64_t j = 0; j < nw; j++) {
            int seen = 0;
            for (int64_t q = 0; q < nunit && !seen; q++) seen = wh[q].w == unit_of[j];
            if (!seen) { wh[nunit].w = unit_of[j]; wh[nunit].h = gs_hash2(o->seed, (uint64_t)unit_of[j]); nunit++; }
        }
    }
    free(wdoc);
    p->by_document = ndoc > 0 && nunit >= 2;
    if (!p->by_document) { /* by window */
        nunit = 0;
        for (int64_t i = 0; i < n; i++)
            if (i == 0 || s->window[i] != s->window[i - 1]) {
                unit_of[nunit] = s->window[i];
                wh[nunit].w = s->window[i];
                wh[nunit].h = gs_hash2(o->seed, (uint64_t)s->window[i]);
                nunit++;
            }
    }
    qsort(wh, (size_t)nunit, sizeof *wh, cmp_hash);
    int64_t ntu = (int64_t)llround(o->test_frac * (double)nunit);
    if (ntu < 1) ntu = 1;
    if (ntu > nunit - 1) ntu = nunit - 1;
    /* held-out windows: those of the first ntu units by hash */
    {
        int64_t *tw = malloc((size_t)nw * sizeof *tw), ntw = 0;
        if (!tw) { free(unit_of); gs_fail("out of memory"); goto done; }
        for (int64_t i = 0, k = 0; i < n; i++)
            if (i == 0 || s->window[i] != s->window[i - 1]) {
                int held = 0;
                for (int64_t q = 0; q < ntu && !held; q++) held = wh[q].w == unit_of[k];
                if (held) tw[ntw++] = s->window[i];
                k++;
            }
        free(unit_of);
        p->n_test_windows = ntw;
        p->n_train_windows = nw - ntw;
        p->n_test_docs = p->by_document ? ntu : 0;
        p->n_train_docs = p->by_document ? nunit - ntu : 0;
        for (int64_t i = 1; i < ntw; i++) /* insertion sort: few held-out windows */
            for (int64_t j = i; j > 0 && tw[j - 1] > tw[j]; j--) { int64_t t = tw[j]; tw[j] = tw[j - 1]; tw[j - 1] = t; }
        for (int64_t i = 0; i < n; i++) {
            int64_t lo = 0, hi = ntw - 1, found = 0;
            while (lo <= hi && !found) {
                int64_t mid = (lo + hi) / 2;
                if (tw[mid] == s->window[i]) found = 1;
                else if (tw[mid] < s->window[i]) lo = mid + 1;
                else hi = mid - 1;
            }
            is_test[i] = (unsigned char)found;
        }
        free(tw);
    }

    /* ---- lag grid and results ---- */
    if (gs_probe_begin(p, o)) goto done;
    const int L = p->n_lags;

    /* ---- training rows by position, descending; centering point c ---- */
    int64_t ntr = 0, nte = 0;
    for (int64_t i = 0; i < n; i++) { if (is_test[i]) nte++; else ntr++; }
    train_desc = malloc((size_t)ntr * sizeof *train_desc);
    test_rows = malloc((size_t)(nte ? nte : 1) * sizeof *test_rows);
    kr = malloc((size_t)(ntr > nte ? ntr : nte) * sizeof *kr + sizeof *kr);
    c = calloc((size_t)d, sizeof *c);
    G = calloc((size_t)d * d, sizeof *G);
    blk = malloc((size_t)PB_BLOCK * d * sizeof *blk);
    sumx = calloc((size_t)d, sizeof *sumx);
    mu = malloc((size_t)d * sizeof *mu);
    XtY = malloc((size_t)d * e * sizeof *XtY);
    Eblk = malloc((size_t)PB_BLOCK * e * sizeof *Eblk);
    ybar = malloc((size_t)e * sizeof *ybar);
    best = malloc(PB_BLOCK * sizeof *best);
    cnt = calloc((size_t)V, sizeof *cnt);
    if (gs_probe_decoder_init(&dec, E, V, e, d, PB_BLOCK) || !train_desc || !test_rows || !kr || !c || !G || !blk ||
        !sumx || !mu || !XtY || !Eblk || !ybar || !best || !cnt) {
        gs_fail("out of memory for the probes (d = %d, d_emb = %d, V = %d)", d, e, V);
        goto done;
    }
    for (int64_t i = 0, a = 0, b = 0; i < n; i++) {
        if (is_test[i]) test_rows[b++] = i;
        else { kr[a].key = -s->pos[i]; kr[a].row = i; a++; }
    }
    qsort(kr, (size_t)ntr, sizeof *kr, cmp_key_row);
    for (int64_t i = 0; i < ntr; i++) train_desc[i] = kr[i].row;
    for (int64_t i = 0; i < ntr; i++)
        for (int j = 0; j < d; j++) c[j] += s->x[train_desc[i] * d + j];
    for (int j = 0; j < d; j++) c[j] /= (double)(ntr ? ntr : 1);

    /* ---- lags, largest first, so the Gram of positions >= k only grows ---- */
    int64_t added = 0;
    for (int li = L - 1; li >= 0; li--) {
        const int k = p->lags[li];
        while (added < ntr) {
            int b = 0;
            while (b < PB_BLOCK && added + b < ntr && s->pos[train_desc[added + b]] >= k) b++;
            if (b == 0) break;
            for (int r = 0; r < b; r++) {
                const float *x = s->x + train_desc[added + r] * d;
                for (int j = 0; j < d; j++) {
                    blk[(int64_t)r * d + j] = (double)x[j] - c[j];
                    sumx[j] += blk[(int64_t)r * d + j];
                }
            }
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, d, b, 1.0, blk, d, 1.0, G, d);
            added += b;
        }
        const int64_t nk = added;
        /* held-out positions with t >= k, evenly subsampled */
        int64_t nt = 0;
        for (int64_t i = 0; i < nte; i++) nt += s->pos[test_rows[i]] >= k;
        if (nk < 2 || nt < 1) continue; /* not measured */
        p->measured[li] = 1;
        p->n_train[li] = nk;

        /* X^T Y over training rows, aggregated per target token: sum of rows
         * per token, then one GEMM with those tokens' embeddings */
        for (int64_t i = 0; i < nk; i++) {
            int64_t r = train_desc[i];
            kr[i].key = rtok[r][s->pos[r] - k];
            kr[i].row = r;
        }
        qsort(kr, (size_t)nk, sizeof *kr, cmp_key_row);
        memset(XtY, 0, (size_t)d * e * sizeof *XtY);
        memset(ybar, 0, (size_t)e * sizeof *ybar);
        for (int64_t i = 0; i < nk;) {
            int b = 0;
            while (b < PB_BLOCK && i < nk) {
                int32_t v = kr[i].key;
                double *a = blk + (int64_t)b * d;
                memset(a, 0, (size_t)d * sizeof *a);
                int64_t cv = 0;
                for (; i < nk && kr[i].key == v; i++, cv++) {
                    const float *x = s->x + kr[i].row * d;
                    for (int j = 0; j < d; j++) a[j] += (double)x[j] - c[j];
                }
                for (int j = 0; j < e; j++) {
                    Eblk[(int64_t)b * e + j] = E[(int64_t)v * e + j];
                    ybar[j] += (double)cv * E[(int64_t)v * e + j];
                }
                b++;
            }
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, e, b, 1.0, blk, d, Eblk, e, 1.0, XtY, e);
        }
        double *Gc = malloc((size_t)d * d * sizeof *Gc); /* the fit centers its copy of the growing Gram */
        if (!Gc) { gs_fail("out of memory"); goto done; }
        memcpy(Gc, G, (size_t)d * d * sizeof *Gc);
        int src = gs_probe_fit(Gc, sumx, nk, d, e, o->ridge, XtY, ybar, mu); /* XtY becomes W */
        free(Gc);
        if (src != 0) goto done;

        /* score held-out positions: y = ybar + (x - c - mu) W, nearest row of E by cosine */
        int64_t want = o->max_test > 0 && nt > o->max_test ? o->max_test : nt;
        int64_t *sel = malloc((size_t)nt * sizeof *sel);
        if (!sel) { gs_fail("out of memory"); goto done; }
        for (int64_t i = 0, q = 0; i < nte; i++)
            if (s->pos[test_rows[i]] >= k) sel[q++] = test_rows[i];
        for (int64_t q = 0; q < want; q++) sel[q] = sel[q * nt / want]; /* q * nt / want >= q: in place */
        memset(cnt, 0, (size_t)V * sizeof *cnt);
        int64_t hit = 0;
        unsigned char *hitv = malloc((size_t)(want ? want : 1));
        int32_t *yv = malloc((size_t)(want ? want : 1) * sizeof *yv);
        if (!hitv || !yv) { free(hitv); free(yv); free(sel); gs_fail("out of memory"); goto done; }
        for (int64_t i0 = 0; i0 < want; i0 += PB_BLOCK) {
            int b = (int)(want - i0 < PB_BLOCK ? want - i0 : PB_BLOCK);
            for (int r = 0; r < b; r++) {
                const float *x = s->x + sel[i0 + r] * d;
                for (int j = 0; j < d; j++) blk[(int64_t)r * d + j] = (double)x[j] - c[j] - mu[j];
            }
            gs_probe_decode(&dec, blk, b, XtY, ybar, best);
            for (int r = 0; r < b; r++) {
                int64_t row = sel[i0 + r];
                int32_t y = rtok[row][s->pos[row] - k];
                hit += best[r] == y;
                hitv[i0 + r] = best[r] == y;
                yv[i0 + r] = y;
                cnt[y]++;
            }
        }
        int maj = 0;
        for (int v = 1; v < V; v++)
            if (cnt[v] > cnt[maj]) maj = v;
        /* block standard error of acc - b: units are runs of `block`
         * consecutive positions of one window (sel ascends by row, i.e. by
         * window and position), each contributing sum(hit - [y == maj]) */
        {
            const int blen = o->block > 0 ? o->block : 64;
            double *bs = malloc((size_t)(want ? want : 1) * sizeof *bs), *bn = malloc((size_t)(want ? want : 1) * sizeof *bn);
            if (!bs || !bn) { free(bs); free(bn); free(hitv); free(yv); free(sel); gs_fail("out of memory"); goto done; }
            int64_t nb = 0, prev_w = -1, prev_b = -1;
            for (int64_t q = 0; q < want; q++) {
                int64_t row = sel[q], bw = s->window[row], bb = s->pos[row] / blen;
                if (nb == 0 || bw != prev_w || bb != prev_b) { bs[nb] = bn[nb] = 0; nb++; prev_w = bw; prev_b = bb; }
                bs[nb - 1] += (double)hitv[q] - (double)(yv[q] == maj);
                bn[nb - 1] += 1;
            }
            gs_probe_lag_result(p, li, hit, want, cnt[maj], maj, bs, bn, nb);
            free(bs);
            free(bn);
        }
        free(hitv);
        free(yv);
        free(sel);
    }

    gs_probe_end(p, o);
    rc = 0;
done:
    free(map); free(is_test); free(rtok); free(wh); free(G); free(blk); free(sumx); free(c);
    free(XtY); free(Eblk); free(ybar); free(best); gs_probe_decoder_free(&dec); free(kr); free(train_desc);
    free(test_rows); free(cnt); free(mu);
    if (rc != 0) gs_probe_free(p);
    return rc;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const gs_states *s;
    const gs_tokens *tok;
    const float *E;
    int V, e;
} in_memory;

static int in_memory_split(void *ctx, const gs_probe_opts *o, gs_probe *p) {
    const in_memory *m = ctx;
    return probe_one(m->s, m->tok, m->E, m->V, m->e, o, p);
}

int gs_probe_run(const gs_states *s, const gs_tokens *tok, const float *E, int V, int e, const gs_probe_opts *o,
                 gs_probe *p) {
    in_memory m = {s, tok, E, V, e};
    return gs_probe_over_splits(in_memory_split, &m, o, p);
}

int gs_probe_over_splits(gs_probe_split_fn split, void *ctx, const gs_probe_opts *o, gs_probe *p) {
    gs_probe_opts dflt;
    if (!o) { gs_probe_opts_default(&dflt); o = &dflt; }
    gs_probe_opts one = *o;
    int K = o->splits < 1 ? 1 : o->splits > 64 ? 64 : o->splits;
    if (split(ctx, &one, p) != 0) return -1;
    const int L = p->n_lags;
    p->se_block = malloc((size_t)L * sizeof(double));
    p->sd_splits = malloc((size_t)L * sizeof(double));
    double *sum = calloc((size_t)L, sizeof(double)), *sq = calloc((size_t)L, sizeof(double));
    int *cnt = calloc((size_t)L, sizeof(int));
    if (!p->se_block || !p->sd_splits || !sum || !sq || !cnt) {
        free(sum); free(sq); free(cnt);
        gs_probe_free(p);
        return gs_fail("out of memory");
    }
    memcpy(p->se_block, p->se, (size_t)L * sizeof(double));
    p->n_splits = 1;
    p->split_horizon[0] = p->horizon;
    for (int li = 0; li < L; li++)
        if (p->measured[li]) { double x = p->acc[li] - p->baseline[li]; sum[li] += x; sq[li] += x * x; cnt[li]++; }
    for (int k = 1; k < K; k++) {
        gs_probe q;
        one.seed = o->seed + (uint64_t)k;
        if (split(ctx, &one, &q) != 0) {
            free(sum); free(sq); free(cnt);
            gs_probe_free(p);
            return gs_fail_context("split %d (seed %llu): ", k + 1, (unsigned long long)one.seed);
        }
        p->split_horizon[p->n_splits++] = q.horizon;
        for (int li = 0; li < L && li < q.n_lags; li++)
            if (q.measured[li]) { double x = q.acc[li] - q.baseline[li]; sum[li] += x; sq[li] += x * x; cnt[li]++; }
        gs_probe_free(&q);
    }
    /* the rule again, with the variance over splits added */
    for (int li = 0; li < L; li++) {
        double m = cnt[li] ? sum[li] / cnt[li] : 0;
        p->sd_splits[li] = cnt[li] > 1 ? sqrt(fmax(0, (sq[li] - cnt[li] * m * m) / (cnt[li] - 1))) : NAN;
        if (!p->measured[li]) continue;
        if (cnt[li] > 1) p->se[li] = sqrt(p->se_block[li] * p->se_block[li] + p->sd_splits[li] * p->sd_splits[li]);
        p->pass[li] = p->acc[li] > p->baseline[li] && p->acc[li] - p->baseline[li] > p->z * p->se[li];
    }
    free(sum); free(sq); free(cnt);
    apply_rule(p);
    int h[64];
    memcpy(h, p->split_horizon, (size_t)p->n_splits * sizeof *h);
    qsort(h, (size_t)p->n_splits, sizeof *h, cmp_int);
    p->horizon_min = h[0];
    p->horizon_max = h[p->n_splits - 1];
    p->horizon_median = h[(p->n_splits - 1) / 2]; /* the lower median: a lag of the grid */
    if (p->n_splits > 1) {
        size_t used = strlen(p->rule);
        snprintf(p->rule + used, sizeof p->rule - used, "; se includes the sd of acc - b over %d splits", p->n_splits);
    }
    return 0;
}
