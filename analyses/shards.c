/* Sharded analyses (analyses/shards.h). */
#include "analyses/shards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h" /* the store source, GS_AN_*, the run's model */
#include "analyses/documents.h"
#include "analyses/state/probe_shards.h"
#include "analyses/registry.h"
#include "analyses/state/retention_store.h"
#include "analyses/rows.h" /* the run's decay site */
#include "base/error.h"
#include "engine/arch/family.h"
#include "store/merge.h"
#include "store/store.h"

/* the registry rows with a part below */
#define SHARD_ROWS (GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON | GS_AN_RETENTION | GS_AN_PROBE)

/* One state source over this rank's shards, one after another (their
 * windows are disjoint and ascend with the shard's rank). */
typedef struct {
    gs_state_source src;
    const store_shard *shards;
    const int64_t *take; /* states to read from each shard (0: none) */
    int n, at;           /* the shard being read */
    const char *kind;
    int skip, limit; /* store positions skip <= p < limit (limit 0: no end) */
    store *st;
    gs_state_source *cur;
} chain;

static void chain_close_current(chain *c) {
    gs_store_source_close(c->cur);
    store_close(c->st);
    c->cur = NULL;
    c->st = NULL;
}

static int chain_open(chain *c) {
    for (; c->at < c->n; c->at++) {
        if (c->take[c->at] <= 0) continue;
        const store_shard *s = &c->shards[c->at];
        if (!(c->st = store_open(s->path, STORE_READ))) return -1;
        if (!(c->cur = gs_store_source_open(c->st, s->run, c->kind, c->skip, c->take[c->at]))) {
            gs_fail_context("%s: ", s->path);
            store_close(c->st);
            c->st = NULL;
            return -1;
        }
        gs_store_source_limit(c->cur, c->limit);
        if (c->cur->d != c->src.d)
            return gs_fail("%s: states of width %d, the other shards' %d", s->path, c->cur->d, c->src.d);
        return 0;
    }
    return 0;
}

static int chain_rewind(void *ctx) {
    chain *c = ctx;
    chain_close_current(c);
    c->at = 0;
    return chain_open(c);
}

static int64_t chain_next(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap) {
    chain *c = ctx;
    while (c->cur) {
        int64_t k = c->cur->next(c->cur->ctx, rows, window, pos, cap);
        if (k != 0) return k;
        chain_close_current(c);
        c->at++;
        if (chain_open(c)) return -1;
    }
    return 0;
}

/* states of the shard's run at positions skip <= p < limit (limit 0: no end) */
static int64_t count_states(const store_shard *s, const char *kind, int skip, int limit) {
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int64_t n = store_count_states_in(st, s->run, kind, skip, limit);
    store_close(st);
    return n;
}

static int by_rank(const void *x, const void *y) {
    return ((const store_shard *)x)->rank - ((const store_shard *)y)->rank;
}

/* Every rank's sums moved to one reference point c and added up (see
 * analyses/math/linalg.h: S is the sum of (x - shift)(x - shift)^T). With
 * delta = shift_r - c, x - c = (x - shift_r) + delta, so
 *   sum' = sum + n delta,  S' = S + sum delta^T + delta sum^T + n delta delta^T.
 * c is the lowest rank's with states: rank 0's first window, the merged
 * store's reference point, so the two differ by summation order only.
 * Welford's (n, mean, M2) of the norms combine by Chan's rule. */
static int reduce_sums(gs_job *job, gs_geometry_sums *s) {
    const int K = job->size, d = s->acc.d;
    int rc = -1;
    double *per = calloc((size_t)K * 3, sizeof *per), *c = calloc((size_t)d, sizeof *c);
    int64_t *counts = calloc((size_t)K + 2, sizeof *counts);
    if (!per || !c || !counts) { gs_fail("out of memory"); goto out; }
    per[3 * job->rank] = (double)s->n;
    per[3 * job->rank + 1] = s->norm_mean;
    per[3 * job->rank + 2] = s->norm_m2;
    counts[job->rank] = s->n;
    if (gs_job_sum_f64(job, per, 3 * (int64_t)K) || gs_job_sum_i64(job, counts, K)) goto out;
    int ref = 0;
    while (ref < K - 1 && counts[ref] == 0) ref++;
    if (job->rank == ref) memcpy(c, s->acc.shift, (size_t)d * sizeof *c);
    if (gs_job_sum_f64(job, c, d)) goto out;
    double *sum = s->acc.sum, *S = s->acc.S;
    const double n = (double)s->n;
    if (s->n > 0) {
        for (int i = 0; i < d; i++) s->acc.shift[i] -= c[i]; /* delta */
        const double *dl = s->acc.shift;
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) S[(int64_t)i * d + j] += sum[i] * dl[j] + dl[i] * sum[j] + n * dl[i] * dl[j];
        for (int i = 0; i < d; i++) sum[i] += n * dl[i];
    }
    memcpy(s->acc.shift, c, (size_t)d * sizeof *c);
    int64_t totals[2] = {s->n, s->n_windows};
    double sq = s->sq;
    if (gs_job_sum_f64(job, sum, d) || gs_job_sum_f64(job, S, (int64_t)d * d) || gs_job_sum_i64(job, totals, 2) ||
        gs_job_sum_f64(job, &sq, 1))
        goto out;
    s->n = s->acc.n = totals[0];
    s->n_windows = totals[1];
    s->sq = sq;
    double mean = 0, m2 = 0;
    for (int r = 0; r < K; r++) mean += per[3 * r] * per[3 * r + 1];
    mean = s->n ? mean / (double)s->n : 0;
    for (int r = 0; r < K; r++) {
        double dm = per[3 * r + 1] - mean;
        m2 += per[3 * r + 2] + per[3 * r] * dm * dm;
    }
    s->norm_mean = mean;
    s->norm_m2 = m2;
    rc = 0;
out:
    free(per);
    free(c);
    free(counts);
    return rc;
}

int gs_shards_agree(gs_job *job, int ok) {
    int64_t failed = !ok;
    if (gs_job_sum_i64(job, &failed, 1)) return -1;
    if (!failed) return 0;
    if (ok) gs_fail("another rank failed");
    return -1;
}

static int share_mean(gs_job *job, gs_geometry *g);

static int geometry_part(gs_job *job, gs_state_source *src, const gs_analyze_opts *o, gs_analysis *a) {
    gs_geometry_opts go;
    gs_geometry_row_opts(o, &go);
    gs_geometry_sums sums;
    int rc = gs_geometry_accumulate(src, &go, &sums);
    if (gs_shards_agree(job, rc == 0)) {
        if (rc == 0) gs_cov_acc_free(&sums.acc);
        return -1;
    }
    if (reduce_sums(job, &sums)) { gs_cov_acc_free(&sums.acc); return -1; }
    rc = 0;
    if (job->rank) gs_cov_acc_free(&sums.acc);
    else rc = gs_geometry_finish(&sums, &go, &a->geometry); /* takes over sums.acc */
    if (gs_shards_agree(job, rc == 0)) return -1;
    return share_mean(job, &a->geometry);
}

/* What the default direction's pass reads of the geometry (its mean, norms and
 * counts), rank 0's exact numbers sent to every rank: a sum with zeros
 * elsewhere, exact in floating point. */
static int share_mean(gs_job *job, gs_geometry *g) {
    int64_t d = g->d, counts[3] = {g->d, g->n, g->n_windows};
    if (gs_job_max_i64(job, &d, 1)) return -1;
    if (job->rank) {
        memset(g, 0, sizeof *g);
        counts[0] = counts[1] = counts[2] = 0;
        if (!(g->mean = calloc((size_t)d, sizeof *g->mean))) return gs_fail("out of memory");
    }
    double norms[2] = {job->rank ? 0 : g->mean_norm, job->rank ? 0 : g->norm_mean};
    if (gs_job_sum_i64(job, counts, 3) || gs_job_sum_f64(job, g->mean, d) || gs_job_sum_f64(job, norms, 2)) return -1;
    g->d = (int)counts[0];
    g->n = counts[1];
    g->n_windows = counts[2];
    g->mean_norm = norms[0];
    g->norm_mean = norms[1];
    return 0;
}

/* The windows among shard s's first `take` states: the default direction
 * assigns batches by a window's place in the whole job. */
static int64_t count_windows(const store_shard *s, const char *kind, int skip, int limit, int64_t take) {
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int64_t n = store_count_windows_in_prefix(st, s->run, kind, skip, limit, take);
    store_close(st);
    return n;
}

/* The default direction: each of this rank's shards read on its own, with its
 * first window's and state's places in the job, adds its batch and emergence
 * sums; the sums are added up and rank 0 finishes, with the decode to default
 * tokens when the model is a language model (in: gs_default_row_inputs). */
static int default_part(gs_job *job, const chain *c, const int64_t *all_take, const gs_default_inputs *in,
                        gs_analysis *a) {
    const int n = c->n;
    gs_geometry *g = &a->geometry;
    /* the documents of every shard's windows in rank order (a document may run across two shards), read by
     * every rank alike, for the batches that share no document: the merged store's documents */
    gs_default_opts op = in->opts;
    gs_doc_map dm = {0};
    {
        store **sts = calloc((size_t)n, sizeof *sts);
        int64_t *runs = calloc((size_t)n, sizeof *runs);
        int opened = 0, okd = sts && runs;
        for (; okd && opened < n; opened++) {
            runs[opened] = c->shards[opened].run;
            if (!(sts[opened] = store_open(c->shards[opened].path, STORE_READ))) okd = 0;
        }
        okd = okd && gs_doc_map_read(sts, runs, n, in->lm ? in->lm->cfg.V : 0, &dm) == 0 && dm.n > 0;
        if (!okd) gs_clear_error();
        op.docs = okd ? &dm : NULL;
        for (int i = 0; sts && i < opened; i++) store_close(sts[i]);
        free(sts);
        free(runs);
    }
    int64_t *wins = calloc((size_t)n, sizeof *wins);
    gs_default_sums sums = {0};
    int ok = wins && gs_default_sums_init(&sums, g->d, g->n_windows, &op) == 0, rc = -1;
    if (!wins) gs_fail("out of memory");
    for (int i = 0; ok && i < n; i++)
        if (c->take[i] > 0 && (wins[i] = count_windows(&c->shards[i], c->kind, c->skip, c->limit, c->take[i])) < 0) ok = 0;
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, wins, n)) goto out;
    int64_t win0 = 0, row0 = 0;
    for (int i = 0; ok && i < n; win0 += wins[i], row0 += all_take[i], i++) {
        if (c->take[i] <= 0) continue;
        store *st = store_open(c->shards[i].path, STORE_READ);
        gs_state_source *src = st ? gs_store_source_open(st, c->shards[i].run, c->kind, c->skip, c->take[i]) : NULL;
        if (src) gs_store_source_limit(src, c->limit);
        if (!src || gs_default_dir_accumulate(src, g, &op, win0, row0, &sums)) {
            gs_fail_context("%s: ", c->shards[i].path);
            ok = 0;
        }
        gs_store_source_close(src);
        store_close(st);
    }
    if (gs_shards_agree(job, ok)) goto out;
    int64_t cap = sums.cap;
    if (gs_job_max_i64(job, &cap, 1)) goto out;
    if (cap > sums.cap) { /* the longest window may be another rank's */
        double *e = realloc(sums.emergence, (size_t)cap * sizeof *e);
        if (e) sums.emergence = e;
        int64_t *en = e ? realloc(sums.emergence_n, (size_t)cap * sizeof *en) : NULL;
        if (en) sums.emergence_n = en;
        ok = e && en;
        for (int64_t t = sums.cap; ok && t < cap; t++) sums.emergence[t] = 0, sums.emergence_n[t] = 0;
        if (ok) sums.cap = cap;
        else gs_fail("out of memory");
    }
    if (gs_shards_agree(job, ok)) goto out;
    const int64_t bd = (int64_t)sums.n_batches * sums.d;
    int64_t totals[2] = {sums.n, sums.n_windows};
    if (gs_job_sum_f64(job, sums.bsum, bd) || gs_job_sum_f64(job, sums.rsum, bd) ||
        gs_job_sum_i64(job, sums.bcount, sums.n_batches) || gs_job_sum_i64(job, sums.rcount, sums.n_batches) ||
        gs_job_sum_f64(job, sums.emergence, cap) || gs_job_sum_i64(job, sums.emergence_n, cap) ||
        gs_job_sum_i64(job, totals, 2) ||
        (sums.wsum && (gs_job_sum_f64(job, sums.wsum, sums.win_total * sums.d) ||
                       gs_job_sum_f64(job, sums.wnorm, sums.win_total))) ||
        (sums.wgram && gs_job_sum_f64(job, sums.wgram, sums.win_total * sums.d * sums.d)) ||
        (sums.wid && gs_job_sum_i64(job, sums.wid, sums.win_total)))
        goto out;
    sums.n = totals[0];
    sums.n_windows = totals[1];
    rc = job->rank ? 0 : gs_default_dir_finish(&sums, g, in->lm, in->unigram, in->V, &op, &a->default_dir);
    if (gs_shards_agree(job, rc == 0)) rc = -1; /* the ranks go on to the next part together, or none does */
out:
    gs_default_sums_free(&sums);
    gs_doc_map_free(&dm);
    free(wins);
    return rc;
}

/* h's per-window rows replaced by these (taken over) */
static void replace_windows(gs_horizons *h, double *raw, double *cen, int64_t *nraw, int64_t *ncen, int64_t *id) {
    free(h->win_raw); free(h->win_centered); free(h->win_n_raw); free(h->win_n_centered); free(h->win_id);
    h->win_raw = raw, h->win_centered = cen, h->win_n_raw = nraw, h->win_n_centered = ncen, h->win_id = id;
}

/* The per-window rows of h in increasing window number. */
typedef struct { int64_t id, row; } window_row;
static int by_window(const void *a, const void *b) {
    const window_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int sort_windows(gs_horizons *h) {
    const int64_t W = h->n_windows;
    const size_t L = (size_t)h->n_lags;
    window_row *order = malloc((size_t)(W + 1) * sizeof *order);
    double *raw = malloc((W * L + 1) * sizeof *raw), *cen = malloc((W * L + 1) * sizeof *cen);
    int64_t *nraw = malloc((W * L + 1) * sizeof *nraw), *ncen = malloc((W * L + 1) * sizeof *ncen),
            *id = malloc((size_t)(W + 1) * sizeof *id);
    int rc = order && raw && cen && nraw && ncen && id ? 0 : gs_fail("out of memory for the windows' lag sums");
    for (int64_t i = 0; rc == 0 && i < W; i++) order[i] = (window_row){h->win_id[i], i};
    if (rc == 0) qsort(order, (size_t)W, sizeof *order, by_window);
    for (int64_t i = 0; rc == 0 && i < W; i++) {
        const int64_t from = order[i].row;
        memcpy(raw + i * L, h->win_raw + from * L, L * sizeof *raw);
        memcpy(cen + i * L, h->win_centered + from * L, L * sizeof *cen);
        memcpy(nraw + i * L, h->win_n_raw + from * L, L * sizeof *nraw);
        memcpy(ncen + i * L, h->win_n_centered + from * L, L * sizeof *ncen);
        id[i] = h->win_id[from];
    }
    if (rc == 0) {
        replace_windows(h, raw, cen, nraw, ncen, id);
    } else {
        free(raw); free(cen); free(nraw); free(ncen); free(id);
    }
    free(order);
    return rc;
}

/* Every rank's per-window lag sums in one set of rows on every rank (a zeroed job-wide array each rank
 * fills at its offset, then summed), put in the order of the store's window numbers, which is the order a
 * store's own reader meets them; the one-store bootstrap over windows then draws the same resamples. */
static int gather_windows(gs_job *job, gs_horizons *h) {
    const int L = h->n_lags;
    int64_t *counts = calloc((size_t)job->size, sizeof *counts);
    if (!counts) return gs_fail("out of memory");
    counts[job->rank] = h->n_windows;
    if (gs_job_sum_i64(job, counts, job->size)) { free(counts); return -1; }
    int64_t W = 0, at = 0;
    for (int r = 0; r < job->size; r++) at += r < job->rank ? counts[r] : 0, W += counts[r];
    free(counts);
    const size_t n = (size_t)W * (size_t)L, off = (size_t)at * (size_t)L, mine = (size_t)h->n_windows * (size_t)L;
    double *raw = calloc(n + 1, sizeof *raw), *cen = calloc(n + 1, sizeof *cen);
    int64_t *nraw = calloc(n + 1, sizeof *nraw), *ncen = calloc(n + 1, sizeof *ncen), *id = calloc((size_t)W + 1, sizeof *id);
    int rc = raw && cen && nraw && ncen && id ? 0 : gs_fail("out of memory for the windows' lag sums");
    rc = gs_shards_agree(job, rc == 0); /* every rank enters the reductions, or none */
    if (rc == 0 && mine) {
        memcpy(raw + off, h->win_raw, mine * sizeof *raw);
        memcpy(cen + off, h->win_centered, mine * sizeof *cen);
        memcpy(nraw + off, h->win_n_raw, mine * sizeof *nraw);
        memcpy(ncen + off, h->win_n_centered, mine * sizeof *ncen);
        memcpy(id + at, h->win_id, (size_t)h->n_windows * sizeof *id);
    }
    if (rc == 0 && (gs_job_sum_f64(job, raw, (int64_t)n) || gs_job_sum_f64(job, cen, (int64_t)n) ||
                    gs_job_sum_i64(job, nraw, (int64_t)n) || gs_job_sum_i64(job, ncen, (int64_t)n) ||
                    gs_job_sum_i64(job, id, W)))
        rc = -1;
    replace_windows(h, raw, cen, nraw, ncen, id);
    h->n_windows = W;
    if (rc) return rc;
    /* only rank 0 draws the bootstrap; the others agree so that its failure fails them too */
    return gs_shards_agree(job, job->rank || sort_windows(h) == 0);
}

static int horizons_part(gs_job *job, gs_state_source *src, const gs_analyze_opts *o, gs_analysis *a) {
    gs_horizon_opts ho;
    gs_horizons_row_opts(o, &ho);
    ho.per_window = o->boot > 0; /* the intervals the findings decide on, as on one store */
    int max_lag = 0;
    int rc = gs_horizons_max_lag(src, &ho, &max_lag);
    if (gs_shards_agree(job, rc == 0)) return -1;
    int64_t lag = max_lag;
    if (gs_job_max_i64(job, &lag, 1)) return -1;
    gs_horizons *h = &a->horizons;
    rc = gs_horizons_accumulate(src, (int)lag, &ho, h);
    if (gs_shards_agree(job, rc == 0)) { gs_horizons_free(h); return -1; }
    if (gs_job_sum_f64(job, h->raw, h->n_lags) || gs_job_sum_f64(job, h->centered, h->n_lags) ||
        gs_job_sum_i64(job, h->n_raw, h->n_lags) || gs_job_sum_i64(job, h->n_centered, h->n_lags) ||
        gs_job_sum_i64(job, &h->n_zero_states, 1) || (ho.per_window && gather_windows(job, h))) {
        gs_horizons_free(h);
        return -1;
    }
    if (job->rank) { gs_horizons_free(h); return 0; }
    if (gs_horizons_finish(h)) return -1;
    return gs_horizons_intervals(h, o->boot, o->seed);
}

/* One shard's decays, read by the rank that reads the shard. */
typedef struct {
    float *alpha, *beta;
    int64_t *ws;
    int nw, H;
} decays;

static int read_shard_decays(const store_shard *s, const char *site, int max_positions, decays *dk) {
    if (s->begin >= s->end) return 0; /* a rank that had no windows to record (more ranks than batches) */
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int rc = gs_retention_read_decays(st, s->run, site, max_positions, &dk->alpha, &dk->beta, &dk->ws, &dk->nw, &dk->H);
    if (rc) gs_fail_context("%s: reading the decays: ", s->path);
    store_close(st);
    return rc;
}

/* Retention: every rank reads its shards' decays (a shard's, not the job's),
 * the windows are numbered across the shards in rank order, each rank adds
 * its windows' sums for every lag once and per bootstrap resample
 * (gs_retention_accumulate), the sums are added up and rank 0 finishes. */
static int retention_part(gs_job *job, const store_shard *shards, int n, int max_positions, gs_analysis *a) {
    decays *dk = calloc((size_t)n, sizeof *dk);
    int64_t *wins = calloc((size_t)n + 2, sizeof *wins); /* per shard, then H and the longest window */
    gs_retention_sums sums = {0};
    int ok = dk && wins, rc = -1;
    if (!ok) gs_fail("out of memory");
    for (int i = job->rank; ok && i < n; i += job->size) {
        if (read_shard_decays(&shards[i], a->decay_site, max_positions, &dk[i])) { ok = 0; break; }
        wins[i] = dk[i].nw;
        if (dk[i].nw && dk[i].H > wins[n]) wins[n] = dk[i].H;
        for (int w = 0; w < dk[i].nw; w++)
            if (dk[i].ws[w + 1] - dk[i].ws[w] > wins[n + 1]) wins[n + 1] = dk[i].ws[w + 1] - dk[i].ws[w];
    }
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, wins, n) || gs_job_max_i64(job, wins + n, 2)) goto out;
    int64_t nw = 0;
    for (int i = 0; i < n; i++) nw += wins[i];
    for (int i = job->rank; ok && i < n; i += job->size)
        if (dk[i].nw && dk[i].H != wins[n])
            ok = 0, gs_fail("%s: decays of %d heads, another shard's %lld", shards[i].path, dk[i].H, (long long)wins[n]);
    if (ok && nw > INT32_MAX) ok = 0, gs_fail("retention: %lld windows is too many", (long long)nw);
    if (ok && gs_retention_sums_init(&sums, (int)wins[n], (int)nw, (int)wins[n + 1] - 1, &a->retention_opts)) ok = 0;
    int64_t first = 0;
    for (int i = 0; ok && i < n; first += wins[i], i++)
        if (i % job->size == job->rank && dk[i].nw &&
            gs_retention_accumulate(dk[i].alpha, dk[i].beta, dk[i].ws, dk[i].nw, (int)first, &sums)) {
            gs_fail_context("%s: ", shards[i].path);
            ok = 0;
        }
    if (gs_shards_agree(job, ok)) goto out;
    if (gs_job_sum_f64(job, sums.f64, sums.n_f64) || gs_job_sum_i64(job, sums.i64, sums.n_i64)) goto out;
    rc = job->rank ? 0 : gs_retention_finish(&sums, &a->retention_opts, &a->retention);
    if (gs_shards_agree(job, rc == 0)) rc = -1;
out:
    gs_retention_sums_free(&sums);
    for (int i = 0; dk && i < n; i++) free(dk[i].alpha), free(dk[i].beta), free(dk[i].ws);
    free(dk);
    free(wins);
    return rc;
}

/* The probe: every rank holds the run's model (a->model) for its embedding
 * (the targets), and the ridge sums are reduced per lag
 * (analyses/state/probe_shards.h); st0 is the first shard, for the boundary tokens. */
static int probe_part(gs_job *job, const chain *c, const int64_t *all_take, store *st0, const gs_analyze_opts *o,
                      gs_analysis *a) {
    gs_probe_opts po;
    gs_probe_row_opts(o, &po);
    const gs_family *fam = gs_family_of(&a->model->cfg);
    int width = 0;
    const float *E = fam && fam->embedding ? fam->embedding(a->model, &width) : NULL;
    if (!E) gs_fail("the %s family has no token embedding to probe for", fam ? fam->name : "model's");
    else gs_run_boundary_tokens(st0, c->shards[0].run, a->model->cfg.V, &po.bos, &po.eos); /* split by document */
    int rc = -1;
    if (!gs_shards_agree(job, E != NULL)) {
        gs_probe_shards_in in = {.shards = c->shards, .n = c->n, .take = c->take, .all_take = all_take,
                                 .kind = c->kind, .skip = c->skip, .limit = c->limit, .d = c->src.d};
        rc = gs_probe_shards(job, &in, E, a->model->cfg.V, width, &po, &a->probe);
    }
    return rc;
}

/* A row analyze may skip (retention, probe) failed alike on every rank: an
 * error when asked for by name, else a note as the store's pass makes. */
static int skipped(gs_analysis *a, int strict, const char *name) {
    if (strict) return -1;
    gs_analysis_note(a, "%s skipped: %s", name, gs_error());
    return 0;
}

/* The progress of the parts (o->on_part, as gs_analyze_store reports them):
 * "shards" (reading every shard's count of states), then each analysis by
 * its registry name; steps counts them (1 + the analyses in parts). */
typedef struct {
    const gs_analyze_opts *o;
    int k, steps;
} part_progress;

static void part_steps(part_progress *p, unsigned parts) {
    p->steps = 1;
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if (gs_analysis_rows[i].bit & SHARD_ROWS & parts) p->steps++;
}

static void part_start(part_progress *p, unsigned bit) {
    const char *name = bit ? "" : "shards";
    for (int i = 0; bit && i < gs_n_analysis_rows; i++)
        if (gs_analysis_rows[i].bit == bit) name = gs_analysis_rows[i].name;
    if (p->o->on_part) p->o->on_part(p->o->on_part_ctx, p->k++, p->steps, name);
}

int gs_analyze_shards(gs_job *job, const char *const *paths, int n, const gs_analyze_opts *o, gs_analysis *a) {
    memset(a, 0, sizeof *a);
    store_shard *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    int64_t *count = calloc((size_t)(n > 0 ? n : 1), sizeof *count), *take = calloc((size_t)(n > 0 ? n : 1), sizeof *take),
            *all_take = calloc((size_t)(n > 0 ? n : 1), sizeof *all_take);
    int rc = -1, ok = 1, read = 0;
    chain c = {0};
    store *st0 = NULL;
    store_run_info info;
    gs_analyze_opts eff;
    gs_default_inputs din = {0};
    if (!s || !count || !take || !all_take) { gs_fail("out of memory"); ok = 0; }
    if (ok && n < 1) { gs_fail("no shards to analyse"); ok = 0; }
    /* every rank checks the whole list, so a bad shard fails every rank alike */
    for (int i = 0; ok && i < n; i++, read++) {
        if (store_shard_read(paths[i], &s[i])) ok = 0;
        const char *why = ok && i ? store_shards_differ(&s[0], &s[i]) : NULL;
        if (why) {
            gs_fail("%s and %s are shards of different runs (%s)", s[0].path, s[i].path, why);
            ok = 0;
        }
    }
    if (ok) {
        qsort(s, (size_t)n, sizeof *s, by_rank);
        for (int i = 1; i < n && ok; i++)
            if (s[i].rank == s[i - 1].rank) ok = 0, gs_fail("%s and %s are both rank %d of %d", s[i - 1].path, s[i].path, s[i].rank, s[i].of);
    }
    /* the run as the first shard holds it: its sites, model, corpus and tokens, read as on a store */
    if (ok && (!(st0 = store_open(s[0].path, STORE_READ)) || store_run_get(st0, s[0].run, &info) ||
               gs_analyze_resolve_site(st0, s[0].run, o, &eff)))
        ok = 0;
    if (gs_shards_agree(job, ok)) goto out;
    gs_analysis_positions(&info, &eff, a); /* the store's rule, on the run as the first shard holds it */
    eff.max_positions = a->max_positions;
    o = &eff;
    a->run_id = s[0].run;
    char buf[64];
    snprintf(a->kind, sizeof a->kind, "%s",
             o->kind ? o->kind : gs_analysis_site_of_role(st0, s[0].run, "state", 1, "pred", buf, sizeof buf));
    unsigned parts = gs_analyze_parts(o);
    const int strict = o->explicit_parts && o->parts;
    for (int i = 0; i < gs_n_analysis_rows; i++) { /* a row with no part below: the merged store's alone */
        const gs_analysis_row *row = &gs_analysis_rows[i];
        if (!(parts & row->bit) || (row->bit & SHARD_ROWS)) continue;
        if (strict) {
            gs_fail("%s is not reduced over shards: merge them (gpnscope merge STORE SHARD...) and analyze the store",
                    row->name);
            goto out;
        }
        gs_analysis_note(a, "%s needs the merged store (gpnscope merge)", row->name);
        parts &= ~row->bit;
    }
    part_progress pg = {o, 0, 0};
    part_steps(&pg, parts);
    part_start(&pg, 0);
    /* each shard's states: counted by the rank that reads it, shared by a sum */
    for (int i = job->rank; ok && i < n; i += job->size)
        if ((count[i] = count_states(&s[i], a->kind, o->skip_positions, o->max_positions)) < 0) ok = 0;
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, count, n)) goto out;
    int d = 0;
    int64_t have = 0;
    for (int i = 0; i < n; i++) have += count[i];
    for (int i = 0; ok && i < n && !d; i++) { /* the width, from the first shard with states (a rank may have none) */
        if (!count[i]) continue;
        store *st = store_open(s[i].path, STORE_READ);
        gs_state_source *src = st ? gs_store_source_open(st, s[i].run, a->kind, o->skip_positions, 1) : NULL;
        if (src) d = src->d; /* the width only: no state is read */
        else ok = 0;
        gs_store_source_close(src);
        store_close(st);
    }
    if (ok && !d) ok = 0, gs_fail("the shards hold no '%s' states after position %d", a->kind, o->skip_positions);
    if (gs_shards_agree(job, ok)) goto out;
    gs_analysis_note_states(a, have, o->max_states);
    /* the model, as the store's pass loads it (the default tokens, retention's initial decays, the probe) */
    ok = gs_analysis_model_for(&info, o, strict, &parts, a) == 0;
    part_steps(&pg, parts); /* less the rows that needed a model there is none of (noted) */
    if (ok && a->model && a->model->cfg.d != d)
        ok = 0, gs_fail("the model has d_state = %d but the shards' states have %d dimensions", a->model->cfg.d, d);
    if (gs_shards_agree(job, ok)) goto out;
    /* the first max_states of the job in window order: shards in rank order */
    int64_t before = 0;
    for (int i = 0; i < n; i++) {
        int64_t left = o->max_states > 0 ? o->max_states - before : count[i];
        all_take[i] = take[i] = left <= 0 ? 0 : left < count[i] ? left : count[i];
        before += count[i];
        if (i % job->size != job->rank) take[i] = 0; /* another rank's */
    }
    c = (chain){.src = {.d = d}, .shards = s, .take = take, .n = n, .kind = a->kind, .skip = o->skip_positions,
              .limit = o->max_positions};
    c.src.ctx = &c;
    c.src.rewind = chain_rewind;
    c.src.next = chain_next;
    if (parts & GS_AN_GEOMETRY) {
        part_start(&pg, GS_AN_GEOMETRY);
        if (geometry_part(job, &c.src, o, a)) goto out;
        a->done |= GS_AN_GEOMETRY;
    }
    if (parts & GS_AN_DEFAULT) {
        part_start(&pg, GS_AN_DEFAULT);
        if (gs_shards_agree(job, gs_default_row_inputs(st0, s[0].run, &info, o, a, &din) == 0) ||
            default_part(job, &c, all_take, &din, a)) {
            gs_fail_context("default direction: ");
            goto out;
        }
        a->done |= GS_AN_DEFAULT;
    }
    if (parts & GS_AN_HORIZON) {
        part_start(&pg, GS_AN_HORIZON);
        if (horizons_part(job, &c.src, o, a)) { gs_fail_context("horizons: "); goto out; }
        a->done |= GS_AN_HORIZON;
    }
    if (parts & GS_AN_RETENTION) {
        part_start(&pg, GS_AN_RETENTION);
        snprintf(a->decay_site, sizeof a->decay_site, "%s",
                 o->decay_site ? o->decay_site : gs_analysis_site_of_role(st0, s[0].run, "decay", 0, "mem.alpha", buf, sizeof buf));
        gs_retention_row_opts(o, &a->retention_opts);
        if (retention_part(job, s, n, o->max_positions, a) == 0) {
            a->done |= GS_AN_RETENTION;
            if (!job->rank) { /* did training move the decays? (the store's pass loads the model for it alike) */
                if (!a->model) a->model = gs_analysis_load_model(&info, o->model_path);
                gs_retention_row_decay_init(a, a->model);
            }
        } else if (skipped(a, strict, "retention")) {
            gs_fail_context("retention: ");
            goto out;
        }
    }
    if (parts & GS_AN_PROBE) {
        part_start(&pg, GS_AN_PROBE);
        if (probe_part(job, &c, all_take, st0, o, a) == 0) a->done |= GS_AN_PROBE;
        else if (skipped(a, strict, "probe")) {
            gs_fail_context("probe: ");
            goto out;
        }
    }
    if (o->on_part) o->on_part(o->on_part_ctx, pg.steps, pg.steps, NULL);
    rc = 0;
out:
    if (rc) gs_analysis_free(a);
    gs_default_inputs_free(&din);
    chain_close_current(&c);
    store_close(st0);
    for (int i = 0; i < read && s; i++) store_shard_free(&s[i]);
    free(s);
    free(count);
    free(take);
    free(all_take);
    return rc;
}
