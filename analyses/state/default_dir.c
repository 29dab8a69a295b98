#include "analyses/state/default_dir.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/cpu/ops.h"

void gs_default_opts_default(gs_default_opts *o) {
    o->n_batches = 8;
    o->seed = 1;
    o->train_unigram = NULL;
    o->train_unigram_len = 0;
    o->boot = 200;
    o->docs = NULL;
}

void gs_default_dir_free(gs_default_dir *r) {
    free(r->batch_cos); free(r->logits_bar); free(r->logits_emb); free(r->emergence); free(r->emergence_n);
    memset(r, 0, sizeof *r);
}

/* through the model's family (engine/arch/family.h: GPN's decode, a transformer's logit lens) */
int gs_decode_logits(const gs_model *m, const double *s, float *logits) {
    const gs_family *f = gs_family_of(&m->cfg);
    if (!f || !f->decode) return gs_fail("the %s family has no decode of its state", f ? f->name : "model's");
    float *sf = malloc((size_t)m->cfg.d * sizeof *sf);
    if (!sf) return gs_fail("out of memory");
    for (int j = 0; j < m->cfg.d; j++) sf[j] = (float)s[j];
    int rc = f->decode(m, sf, logits);
    free(sf);
    return rc;
}

static int spearman_of(const gs_default_dir *r, const double *counts, double *rho, int *defined) {
    double *lb = malloc((size_t)r->V * sizeof *lb);
    if (!lb) return gs_fail("out of memory");
    for (int v = 0; v < r->V; v++) lb[v] = r->logits_bar[v];
    int rc = gs_spearman(lb, counts, r->V, rho, defined);
    free(lb);
    return rc;
}

static int decode_part(const gs_geometry *g, const gs_model *m, const double *unigram, int64_t unigram_len,
                       const gs_default_opts *o, gs_default_dir *r) {
    const gs_config *c = &m->cfg;
    if (c->d != g->d)
        return gs_fail("the model has d_state = %d but the states have %d dimensions: analyze with the model that "
                       "recorded them",
                       c->d, g->d);
    if (unigram && unigram_len != c->V)
        return gs_fail("unigram counts cover %lld tokens but the model's vocabulary has %d", (long long)unigram_len, c->V);
    if (o->train_unigram && o->train_unigram_len != c->V)
        return gs_fail("the training corpus's unigram counts cover %lld tokens but the model's vocabulary has %d",
                       (long long)o->train_unigram_len, c->V);
    const gs_family *fam = gs_family_of(c);
    int e = 0;
    const float *E = fam && fam->embedding ? fam->embedding(m, &e) : NULL;
    if (!E || !fam->decode) return gs_fail("the %s family has no decode of its state", fam ? fam->name : "model's");
    const int V = c->V;
    r->V = V;
    r->logits_bar = malloc((size_t)V * sizeof(float));
    r->logits_emb = malloc((size_t)V * sizeof(float));
    float *ebar = malloc((size_t)e * sizeof *ebar);
    double *acc = calloc((size_t)e, sizeof *acc);
    if (!r->logits_bar || !r->logits_emb || !ebar || !acc) { free(ebar); free(acc); return gs_fail("out of memory"); }
    if (gs_decode_logits(m, g->mean, r->logits_bar) != 0) { free(ebar); free(acc); return -1; }
    for (int v = 0; v < V; v++) {
        const float *row = E + (int64_t)v * e;
        for (int j = 0; j < e; j++) acc[j] += row[j];
    }
    for (int j = 0; j < e; j++) ebar[j] = (float)(acc[j] / V);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, V, e, 1.0f, E, e, ebar, 1, 0.0f, r->logits_emb, 1);
    free(ebar);
    free(acc);
    for (int v = 0; v < V; v++)
        if (!isfinite(r->logits_bar[v]) || !isfinite(r->logits_emb[v]))
            return gs_fail("decoding s_bar gave a non-finite logit for token %d: the model's decode or embedding "
                           "weights hold NaN or infinity",
                           v);
    gs_top_k(r->logits_bar, V, GS_TOPK, r->top);
    gs_top_k(r->logits_emb, V, GS_TOPK, r->top_emb);
    for (int i = 0; i < GS_TOPK; i++)
        for (int j = 0; j < GS_TOPK; j++)
            if (r->top[i] >= 0 && r->top[i] == r->top_emb[j]) r->emb_overlap++;
    r->emb_cos = gs_cosine_f(r->logits_emb, r->logits_bar, V);
    r->has_decode = 1;
    if (unigram) {
        if (spearman_of(r, unigram, &r->spearman, &r->spearman_defined) != 0) return -1;
        r->has_unigram = 1;
    }
    if (o->train_unigram) {
        if (spearman_of(r, o->train_unigram, &r->spearman_train, &r->spearman_train_defined) != 0) return -1;
        r->has_train_unigram = 1;
    }
    return 0;
}

void gs_default_sums_free(gs_default_sums *s) {
    free(s->bsum); free(s->rsum); free(s->bcount); free(s->rcount); free(s->emergence); free(s->emergence_n);
    free(s->wsum); free(s->wnorm); free(s->wgram); free(s->xbuf); free(s->wid);
    memset(s, 0, sizeof *s);
}

static int check_geometry(const gs_state_source *src, const gs_geometry *g) {
    if (!g || !g->mean || g->n < 1) return gs_fail("the default direction needs the geometry result (run geometry first)");
    if (!src || src->d != g->d)
        return gs_fail("the state source has %d dimensions but the geometry was computed on %d", src ? src->d : 0, g->d);
    if (!(g->mean_norm > 0)) return gs_fail("the mean state s_bar is zero: the default direction is undefined");
    return 0;
}

/* the most per-window sums kept for the bootstrap (doubles: 256 MiB), and per-window second moments
 * (128 MiB: 16 windows of d = 1024, 2048 windows of d = 64) */
#define MAX_WINDOW_SUMS (INT64_C(1) << 25)
#define MAX_WINDOW_GRAMS (INT64_C(1) << 24)

int gs_default_sums_init(gs_default_sums *s, int d, int64_t n_windows, const gs_default_opts *o) {
    memset(s, 0, sizeof *s);
    const int nb = o && o->n_batches > 1 ? o->n_batches : 8;
    const int boot = o ? o->boot : 200;
    /* the per-window sums serve the intervals and the batches by document */
    if ((boot > 0 || (o && o->docs)) && n_windows >= 2 * nb && n_windows * (d + 1) <= MAX_WINDOW_SUMS) {
        s->win_total = n_windows;
        s->wsum = calloc((size_t)(n_windows * d), sizeof *s->wsum);
        s->wnorm = calloc((size_t)n_windows, sizeof *s->wnorm);
        s->wid = calloc((size_t)n_windows, sizeof *s->wid);
        if (!s->wsum || !s->wnorm || !s->wid) { gs_default_sums_free(s); return gs_fail("out of memory"); }
        if (boot > 0 && n_windows * d * d <= MAX_WINDOW_GRAMS &&
            !(s->wgram = calloc((size_t)(n_windows * d * d), sizeof *s->wgram))) {
            gs_default_sums_free(s);
            return gs_fail("out of memory");
        }
    }
    s->d = d;
    s->n_batches = nb;
    s->bsum = calloc((size_t)nb * d, sizeof *s->bsum);
    s->rsum = calloc((size_t)nb * d, sizeof *s->rsum);
    s->bcount = calloc((size_t)nb, sizeof *s->bcount);
    s->rcount = calloc((size_t)nb, sizeof *s->rcount);
    if (!s->bsum || !s->rsum || !s->bcount || !s->rcount) { gs_default_sums_free(s); return gs_fail("out of memory"); }
    return 0;
}

/* One pass: batch sums and the emergence curve's sums. The batches are
 * assigned by the states' places in the whole job (win0 + the window's
 * ordinal here, row0 + the row's), so a piece read on its own adds what it
 * adds in the one pass over everything. */
int gs_default_dir_accumulate(gs_state_source *src, const gs_geometry *g, const gs_default_opts *o, int64_t win0,
                              int64_t row0, gs_default_sums *s) {
    gs_default_opts dflt;
    if (!o) { gs_default_opts_default(&dflt); o = &dflt; }
    if (check_geometry(src, g)) return -1;
    const int d = g->d, nb = s->n_batches;
    const int by_window = g->n_windows >= nb;
    double *run = malloc((size_t)d * sizeof *run);
    if (!run) return gs_fail("out of memory");
    gs_window_reader *wr = gs_window_reader_new(src);
    if (!wr) { free(run); return -1; }
    int64_t win_i = win0, row_i = row0;
    int rc = -1;
    for (;;) {
        gs_window cur;
        int64_t k = gs_window_reader_read(wr, &cur);
        if (k < 0) goto out;
        if (k == 0) break;
        if (k > s->cap) {
            int64_t nc = k;
            if (s->wgram) {
                double *xb = realloc(s->xbuf, (size_t)(nc * d) * sizeof *xb);
                if (!xb) { gs_fail("out of memory"); goto out; }
                s->xbuf = xb;
            }
            double *ne = realloc(s->emergence, (size_t)nc * sizeof *ne);
            if (!ne) { gs_fail("out of memory"); goto out; }
            s->emergence = ne;
            int64_t *nn = realloc(s->emergence_n, (size_t)nc * sizeof *nn);
            if (!nn) { gs_fail("out of memory"); goto out; }
            s->emergence_n = nn;
            for (int64_t t = s->cap; t < nc; t++) { s->emergence[t] = 0; s->emergence_n[t] = 0; }
            s->cap = nc;
        }
        memset(run, 0, (size_t)d * sizeof *run);
        for (int64_t t = 0; t < k; t++, row_i++) {
            const float *x = cur.rows + t * d;
            int b = by_window ? (int)(win_i * nb / g->n_windows) : (int)(row_i * nb / g->n);
            if (b >= nb) b = nb - 1;
            double *bs = s->bsum + (int64_t)b * d;
            int rb = (int)(gs_hash2(o->seed, (uint64_t)row_i) % (uint64_t)nb); /* a random batch of rows */
            double *rs = s->rsum + (int64_t)rb * d;
            s->rcount[rb]++;
            double *ws = s->wsum && win_i < s->win_total ? s->wsum + win_i * d : NULL, x2 = 0;
            double dot = 0, nn = 0;
            for (int j = 0; j < d; j++) {
                if (ws) ws[j] += x[j];
                x2 += (double)x[j] * x[j];
                bs[j] += x[j];
                rs[j] += x[j];
                run[j] += x[j];
                dot += run[j] * g->mean[j];
                nn += run[j] * run[j];
            }
            s->bcount[b]++;
            if (ws) s->wnorm[win_i] += sqrt(x2);
            if (nn > 0) { /* a zero running sum (e.g. a window starting at the zero state) has no direction */
                s->emergence[t] += dot / (sqrt(nn) * g->mean_norm);
                s->emergence_n[t]++;
            }
        }
        if (s->wid && win_i < s->win_total) s->wid[win_i] = cur.window;
        if (s->wgram && win_i < s->win_total) { /* the window's second moment: sum of x x^T, upper triangle */
            for (int64_t i = 0; i < k * d; i++) s->xbuf[i] = cur.rows[i];
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, d, (int)k, 1.0, s->xbuf, d, 1.0,
                        s->wgram + win_i * d * d, d);
        }
        win_i++;
    }
    s->n += row_i - row0;
    s->n_windows += win_i - win0;
    rc = 0;
out:
    gs_window_reader_free(wr);
    free(run);
    return rc;
}

/* mean cosine over the pairs of nb batch sums (nb x d) */
static double mean_pair_cos(const double *b, int nb, int d) {
    double sum = 0;
    for (int i = 0; i < nb; i++)
        for (int j = i + 1; j < nb; j++) sum += gs_cosine(b + (int64_t)i * d, b + (int64_t)j * d, d);
    return sum / (nb * (nb - 1) / 2);
}

/* The intervals from the per-window sums: the norm ratio and the top-SV
 * cosine over resamples of all windows (one draw serves both), the 8-batch
 * cosine over resamples of each batch's windows. A resample's top singular
 * vector is the top eigenvector of its second moment sum_w c_w G_w (G_w a
 * window's sum of x x^T), found from the whole run's (start). */
static int window_intervals(const gs_default_sums *s, int boot, uint64_t seed, const double *start, gs_default_dir *r) {
    const int64_t W = s->win_total;
    const int d = s->d, nb = s->n_batches;
    const int64_t dd = (int64_t)d * d;
    double *wt = malloc((size_t)W * sizeof *wt), *S = malloc((size_t)nb * d * sizeof *S);
    double *ratio = malloc((size_t)boot * sizeof *ratio), *cos8 = malloc((size_t)boot * sizeof *cos8);
    double *top = s->wgram ? malloc((size_t)boot * sizeof *top) : NULL;
    double *M = s->wgram ? malloc((size_t)dd * sizeof *M) : NULL, *v = s->wgram ? malloc((size_t)d * sizeof *v) : NULL;
    int64_t *first = malloc((size_t)(nb + 1) * sizeof *first);
    int rc = -1;
    if (!wt || !S || !ratio || !cos8 || !first || (s->wgram && (!top || !M || !v))) {
        gs_fail("out of memory for the bootstrap");
        goto out;
    }
    /* batch b holds windows first[b] .. first[b+1]-1, as the pass assigned them (win * nb / W) */
    for (int b = 0, w = 0; b <= nb; b++) {
        while (w < W && w * nb / W < b) w++;
        first[b] = w;
    }
    gs_rng all = {gs_hash2(seed, 0xC0A1)}, within = {gs_hash2(seed, 0xBA7C)};
    for (int k = 0; k < boot; k++) {
        gs_resample_counts(&all, wt, W);
        double nsum = 0, n2 = 0;
        memset(S, 0, (size_t)d * sizeof *S);
        if (M) memset(M, 0, (size_t)dd * sizeof *M);
        for (int64_t w = 0; w < W; w++) {
            if (!wt[w]) continue;
            nsum += wt[w] * s->wnorm[w];
            for (int j = 0; j < d; j++) S[j] += wt[w] * s->wsum[w * d + j];
            if (M) cblas_daxpy((int)dd, wt[w], s->wgram + w * dd, 1, M, 1);
        }
        for (int j = 0; j < d; j++) n2 += S[j] * S[j];
        ratio[k] = nsum > 0 ? sqrt(n2) / nsum : NAN;
        if (M) {
            double val;
            if (gs_top_eigvec(M, NULL, start, d, v, &val, NULL) != 0) goto out;
            top[k] = n2 > 0 ? fabs(cblas_ddot(d, S, 1, v, 1)) / (sqrt(n2) * cblas_dnrm2(d, v, 1)) : NAN;
        }
        memset(S, 0, (size_t)nb * d * sizeof *S);
        for (int b = 0; b < nb; b++) {
            const int64_t n = first[b + 1] - first[b];
            for (int64_t i = 0; i < n; i++) {
                const double *x = s->wsum + (first[b] + (int64_t)(gs_rng_uniform(&within) * (double)n)) * d;
                for (int j = 0; j < d; j++) S[(int64_t)b * d + j] += x[j];
            }
        }
        cos8[k] = mean_pair_cos(S, nb, d);
    }
    gs_percentile_interval(ratio, boot, &r->norm_ratio_lo, &r->norm_ratio_hi);
    gs_percentile_interval(cos8, boot, &r->stab_lo, &r->stab_hi);
    if (top) gs_percentile_interval(top, boot, &r->top_sv_lo, &r->top_sv_hi);
    else
        snprintf(r->top_sv_note, sizeof r->top_sv_note, "no top-SV interval: %lld windows' %d x %d second moments "
                 "are too many to keep", (long long)W, d, d);
    r->boot = boot;
    rc = 0;
out:
    free(wt); free(S); free(ratio); free(cos8); free(first); free(top); free(M); free(v);
    return rc;
}

/* The 8-batch cosine over batches that share no document: the i-th document
 * of the pass's windows in batch i mod nb, from the per-window sums; its
 * interval resamples each batch's documents (as the consecutive one resamples
 * each batch's windows). Fills doc_* and the one line doc_note whether or not
 * it can be measured. */
static int doc_batches(const gs_default_sums *s, const gs_doc_map *docs, int boot, uint64_t seed, int64_t n_windows,
                       gs_default_dir *r) {
    const int nb = s->n_batches, d = s->d;
    const int64_t W = s->win_total;
    if (!docs) {
        snprintf(r->doc_note, sizeof r->doc_note, "batches by document: the windows' documents are unknown (no token "
                 "rows): the consecutive windows decide");
        return 0;
    }
    if (docs->n_docs == 0) {
        snprintf(r->doc_note, sizeof r->doc_note, "batches by document: the run's vocabulary names no BOS or EOS token, so the "
                 "documents are unknown: the consecutive windows decide");
        return 0;
    }
    if (!s->wsum) {
        snprintf(r->doc_note, sizeof r->doc_note, "batches by document: not possible with %lld windows (%d documents "
                 "needed, 2 a batch%s): the consecutive windows decide", (long long)n_windows, 2 * nb,
                 n_windows >= 2 * nb ? "; too many windows to keep" : "");
        return 0;
    }
    int64_t *g = malloc((size_t)W * sizeof *g), G = 0, last = -1;
    if (!g) return gs_fail("out of memory");
    for (int64_t w = 0; w < W; w++) { /* the pass's documents, numbered in window order */
        const int64_t doc = gs_doc_map_find(docs, s->wid[w]);
        if (doc < 0) {
            snprintf(r->doc_note, sizeof r->doc_note, "batches by document: window %lld has no token rows, so the "
                     "documents are unknown: the consecutive windows decide", (long long)s->wid[w]);
            free(g);
            return 0;
        }
        if (doc != last) G++, last = doc;
        g[w] = G - 1;
    }
    r->n_docs = G;
    if (G < 2 * nb) {
        snprintf(r->doc_note, sizeof r->doc_note, "batches by document: not possible: %lld documents in %lld windows "
                 "(%d needed, 2 a batch): the consecutive windows decide", (long long)G, (long long)W, 2 * nb);
        free(g);
        return 0;
    }
    double *D = calloc((size_t)(G * d), sizeof *D), *B = calloc((size_t)nb * d, sizeof *B);
    double *cos8 = boot > 0 ? malloc((size_t)boot * sizeof *cos8) : NULL;
    if (!D || !B || (boot > 0 && !cos8)) {
        free(g); free(D); free(B); free(cos8);
        return gs_fail("out of memory");
    }
    for (int64_t w = 0; w < W; w++) /* each document's sum of states */
        for (int j = 0; j < d; j++) D[g[w] * d + j] += s->wsum[w * d + j];
    for (int64_t i = 0; i < G; i++)
        for (int j = 0; j < d; j++) B[(i % nb) * d + j] += D[i * d + j];
    r->doc_mean = mean_pair_cos(B, nb, d);
    gs_rng rng = {gs_hash2(seed, 0xD0C5)};
    for (int k = 0; k < boot; k++) {
        memset(B, 0, (size_t)nb * d * sizeof *B);
        for (int b = 0; b < nb; b++) {
            const int64_t n = (G - b + nb - 1) / nb; /* batch b's documents: b, b + nb, ... */
            for (int64_t i = 0; i < n; i++) {
                const double *x = D + (b + nb * (int64_t)(gs_rng_uniform(&rng) * (double)n)) * d;
                for (int j = 0; j < d; j++) B[(int64_t)b * d + j] += x[j];
            }
        }
        cos8[k] = mean_pair_cos(B, nb, d);
    }
    if (boot > 0) gs_percentile_interval(cos8, boot, &r->doc_lo, &r->doc_hi);
    r->doc_valid = 1;
    snprintf(r->doc_note, sizeof r->doc_note, "batches by document: %lld documents in %lld windows, document i in "
             "batch i mod %d: they decide", (long long)G, (long long)W, nb);
    free(g); free(D); free(B); free(cos8);
    return 0;
}

int gs_default_dir_finish(gs_default_sums *s, const gs_geometry *g, const gs_model *m, const double *unigram,
                          int64_t unigram_len, const gs_default_opts *o, gs_default_dir *r) {
    memset(r, 0, sizeof *r);
    gs_default_opts dflt;
    if (!o) { gs_default_opts_default(&dflt); o = &dflt; }
    const int d = g->d, nb = s->n_batches;
    r->d = d;
    r->n = g->n;
    r->n_windows = g->n_windows;
    r->mean_norm = g->mean_norm;
    r->norm_ratio = g->norm_mean > 0 ? g->mean_norm / g->norm_mean : 0.0;
    r->top_sv_cos = g->top_sv ? gs_cosine(g->mean, g->top_sv, d) : 0.0;
    r->pc1_cos = g->pc1 ? fabs(gs_cosine(g->mean, g->pc1, d)) : NAN;
    r->mean_norm2_over_lambda1 = g->pc1_lambda > 0 ? g->mean_norm * g->mean_norm / g->pc1_lambda : NAN;
    r->n_batches = nb;
    r->batches_by_window = g->n_windows >= nb;
    r->stab_lo = r->stab_hi = r->norm_ratio_lo = r->norm_ratio_hi = r->top_sv_lo = r->top_sv_hi = NAN;
    r->doc_mean = r->doc_lo = r->doc_hi = NAN;
    if (s->n != g->n || s->n_windows != g->n_windows) {
        gs_fail("the state source changed between passes (%lld states in %lld windows, geometry saw %lld in %lld)",
                (long long)s->n, (long long)s->n_windows, (long long)g->n, (long long)g->n_windows);
        goto fail;
    }
    /* the emergence curve: the sums become means (taken over, not copied) */
    r->emerg_len = s->cap;
    r->emergence = s->emergence;
    r->emergence_n = s->emergence_n;
    s->emergence = NULL;
    s->emergence_n = NULL;
    for (int64_t t = 0; t < r->emerg_len; t++)
        if (r->emergence_n[t]) r->emergence[t] /= (double)r->emergence_n[t];
    if (r->emerg_len >= 10 && r->emergence_n[9]) { r->has_t10 = 1; r->emerg_t10 = r->emergence[9]; }
    if (r->emerg_len >= 100 && r->emergence_n[99]) { r->has_t100 = 1; r->emerg_t100 = r->emergence[99]; }

    /* ---- the same over random batches of rows ---- */
    {
        int rfull = 1;
        for (int b = 0; b < nb; b++) rfull &= s->rcount[b] > 0;
        if (rfull) {
            double sum = 0, v = 0, c[64 * 63 / 2];
            int np = 0;
            for (int a = 0; a < nb && nb <= 64; a++)
                for (int b = a + 1; b < nb; b++)
                    sum += c[np++] = gs_cosine(s->rsum + (int64_t)a * d, s->rsum + (int64_t)b * d, d);
            if (np > 0) {
                r->rand_mean = sum / np;
                for (int i = 0; i < np; i++) v += (c[i] - r->rand_mean) * (c[i] - r->rand_mean);
                r->rand_std = np > 1 ? sqrt(v / (np - 1)) : 0.0;
                r->random_valid = 1;
            }
        }
    }
    /* ---- stability: cosines between every pair of batch means ---- */
    int full = 1;
    for (int b = 0; b < nb; b++) full &= s->bcount[b] > 0;
    if (full) {
        r->n_pairs = nb * (nb - 1) / 2;
        r->batch_cos = malloc((size_t)r->n_pairs * sizeof *r->batch_cos);
        if (!r->batch_cos) { gs_fail("out of memory"); goto fail; }
        int p = 0;
        double sum = 0;
        for (int a = 0; a < nb; a++)
            for (int b = a + 1; b < nb; b++) {
                r->batch_cos[p] = gs_cosine(s->bsum + (int64_t)a * d, s->bsum + (int64_t)b * d, d);
                sum += r->batch_cos[p++];
            }
        r->stab_mean = sum / r->n_pairs;
        double v = 0;
        for (int i = 0; i < r->n_pairs; i++) v += (r->batch_cos[i] - r->stab_mean) * (r->batch_cos[i] - r->stab_mean);
        r->stab_std = r->n_pairs > 1 ? sqrt(v / (r->n_pairs - 1)) : 0.0;
        r->stability_valid = 1;
    }
    if (full && doc_batches(s, o->docs, o->boot, o->seed, g->n_windows, r) != 0) goto fail;
    if (s->wsum && full && o->boot > 0) {
        if (window_intervals(s, o->boot, o->seed, g->top_sv, r) != 0) goto fail;
    } else if (o->boot <= 0) {
        snprintf(r->interval_note, sizeof r->interval_note, "no interval: no bootstrap asked for");
    } else {
        snprintf(r->interval_note, sizeof r->interval_note, "no interval: %lld windows (%d needed)%s",
                 (long long)g->n_windows, 2 * nb, g->n_windows >= 2 * nb ? ", too many to keep" : "");
    }
    gs_default_sums_free(s);
    if (m && decode_part(g, m, unigram, unigram_len, o, r) != 0) goto fail;
    return 0;
fail:
    gs_default_sums_free(s);
    gs_default_dir_free(r);
    return -1;
}

int gs_default_dir_run(gs_state_source *src, const gs_geometry *g, const gs_model *m, const double *unigram,
                       int64_t unigram_len, const gs_default_opts *o, gs_default_dir *r) {
    memset(r, 0, sizeof *r);
    if (check_geometry(src, g)) return -1;
    gs_default_sums s;
    if (gs_default_sums_init(&s, g->d, g->n_windows, o)) return -1;
    if (gs_default_dir_accumulate(src, g, o, 0, 0, &s)) { gs_default_sums_free(&s); return -1; }
    return gs_default_dir_finish(&s, g, m, unigram, unigram_len, o, r);
}
