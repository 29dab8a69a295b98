#include "analyses/probe.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/linalg.h"
#include "analyses/stats.h"
#include "base/error.h"

#define PB_BLOCK 256

void gs_probe_opts_default(gs_probe_opts *o) {
    o->max_lag = 256;
    o->test_frac = 0.2;
    o->ridge = 1e-2;
    o->max_test = 2048;
    o->z = 2.0;
    o->seed = 1;
}

void gs_probe_free(gs_probe *p) {
    free(p->lags); free(p->acc); free(p->baseline); free(p->se); free(p->n_train); free(p->n_test);
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

int gs_probe_run(const gs_states *s, const gs_tokens *tok, const float *E, int V, int e, const gs_probe_opts *o,
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
    float *yf = NULL, *scores = NULL, *einv = NULL;
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
    wh = malloc((size_t)nw * sizeof *wh);
    if (!wh) { gs_fail("out of memory"); goto done; }
    for (int64_t i = 0, k = 0; i < n; i++)
        if (i == 0 || s->window[i] != s->window[i - 1]) { wh[k].w = s->window[i]; wh[k].h = gs_hash2(o->seed, (uint64_t)s->window[i]); k++; }
    qsort(wh, (size_t)nw, sizeof *wh, cmp_hash);
    int64_t ntw = (int64_t)llround(o->test_frac * (double)nw);
    if (ntw < 1) ntw = 1;
    if (ntw > nw - 1) ntw = nw - 1;
    p->n_test_windows = ntw;
    p->n_train_windows = nw - ntw;
    /* held-out windows: the first ntw by hash; sort those ids for lookup */
    {
        int64_t *tw = malloc((size_t)ntw * sizeof *tw);
        if (!tw) { gs_fail("out of memory"); goto done; }
        for (int64_t i = 0; i < ntw; i++) tw[i] = wh[i].w;
        for (int64_t i = 1; i < ntw; i++) /* insertion sort: ntw is small */
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
    p->lags = gs_probe_lags(o->max_lag > 0 ? o->max_lag : 256, &p->n_lags);
    if (!p->lags) goto done;
    const int L = p->n_lags;
    p->acc = calloc((size_t)L, sizeof(double));
    p->baseline = calloc((size_t)L, sizeof(double));
    p->se = calloc((size_t)L, sizeof(double));
    p->n_train = calloc((size_t)L, sizeof(int64_t));
    p->n_test = calloc((size_t)L, sizeof(int64_t));
    p->majority = calloc((size_t)L, sizeof(int));
    p->measured = calloc((size_t)L, sizeof(int));
    p->pass = calloc((size_t)L, sizeof(int));
    p->z = o->z > 0 ? o->z : 2.0;

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
    yf = malloc((size_t)PB_BLOCK * e * sizeof *yf);
    scores = malloc((size_t)PB_BLOCK * V * sizeof *scores);
    einv = malloc((size_t)V * sizeof *einv);
    cnt = calloc((size_t)V, sizeof *cnt);
    if (!p->acc || !p->baseline || !p->se || !p->n_train || !p->n_test || !p->majority || !p->measured || !p->pass ||
        !train_desc || !test_rows || !kr || !c || !G || !blk || !sumx || !mu || !XtY || !Eblk || !ybar || !yf ||
        !scores || !einv || !cnt) {
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
    for (int v = 0; v < V; v++) {
        double nn = 0;
        for (int j = 0; j < e; j++) nn += (double)E[(int64_t)v * e + j] * E[(int64_t)v * e + j];
        einv[v] = nn > 0 ? (float)(1.0 / sqrt(nn)) : 0.0f;
    }

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

        /* centered Gram and ridge */
        double tr = 0;
        for (int j = 0; j < d; j++) mu[j] = sumx[j] / (double)nk;
        double *Gc = calloc((size_t)d * d, sizeof *Gc);
        if (!Gc) { gs_fail("out of memory"); goto done; }
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) Gc[(int64_t)i * d + j] = G[(int64_t)i * d + j] - (double)nk * mu[i] * mu[j];
        for (int j = 0; j < d; j++) tr += Gc[(int64_t)j * d + j];
        double lambda = o->ridge * (tr > 0 ? tr / d : 1.0);
        if (!(lambda > 0)) lambda = 1e-12;

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
        for (int j = 0; j < e; j++) ybar[j] /= (double)nk;
        cblas_dger(CblasRowMajor, d, e, -(double)nk, mu, 1, ybar, 1, XtY, e);
        int src = gs_ridge_solve(Gc, d, lambda, XtY, e); /* XtY becomes W */
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
        for (int64_t i0 = 0; i0 < want; i0 += PB_BLOCK) {
            int b = (int)(want - i0 < PB_BLOCK ? want - i0 : PB_BLOCK);
            for (int r = 0; r < b; r++) {
                const float *x = s->x + sel[i0 + r] * d;
                for (int j = 0; j < d; j++) blk[(int64_t)r * d + j] = (double)x[j] - c[j] - mu[j];
            }
            for (int r = 0; r < b; r++) memcpy(Eblk + (int64_t)r * e, ybar, (size_t)e * sizeof *ybar);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, e, d, 1.0, blk, d, XtY, e, 1.0, Eblk, e);
            for (int64_t q = 0; q < (int64_t)b * e; q++) yf[q] = (float)Eblk[q];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, V, e, 1.0f, yf, e, E, e, 0.0f, scores, V);
            for (int r = 0; r < b; r++) {
                const float *sc = scores + (int64_t)r * V;
                int best = -1;
                float bv = 0;
                for (int v = 0; v < V; v++) {
                    if (einv[v] == 0) continue;
                    float val = sc[v] * einv[v];
                    if (best < 0 || val > bv) { best = v; bv = val; }
                }
                int64_t row = sel[i0 + r];
                int32_t y = rtok[row][s->pos[row] - k];
                hit += best == y;
                cnt[y]++;
            }
        }
        free(sel);
        int maj = 0;
        for (int v = 1; v < V; v++)
            if (cnt[v] > cnt[maj]) maj = v;
        p->n_test[li] = want;
        p->acc[li] = (double)hit / (double)want;
        p->baseline[li] = (double)cnt[maj] / (double)want;
        p->majority[li] = maj;
        p->se[li] = sqrt(p->baseline[li] * (1.0 - p->baseline[li]) / (double)want);
        p->pass[li] = p->acc[li] > p->baseline[li] && p->acc[li] - p->baseline[li] > p->z * p->se[li];
    }

    /* ---- the rule ---- */
    p->horizon = 0;
    p->censored = 1;
    for (int li = 0; li < L; li++) {
        if (!p->measured[li]) break;          /* ran out of positions: a lower bound */
        if (!p->pass[li]) { p->censored = 0; break; }
        p->horizon = p->lags[li];
    }
    snprintf(p->rule, sizeof p->rule,
             "largest lag before the first failing lag; a lag passes when top-1 accuracy exceeds the held-out "
             "majority baseline b by more than %.3g binomial standard errors sqrt(b(1-b)/n)",
             p->z);
    rc = 0;
done:
    free(map); free(is_test); free(rtok); free(wh); free(G); free(blk); free(sumx); free(c);
    free(XtY); free(Eblk); free(ybar); free(yf); free(scores); free(einv); free(kr); free(train_desc);
    free(test_rows); free(cnt); free(mu);
    if (rc != 0) gs_probe_free(p);
    return rc;
}
