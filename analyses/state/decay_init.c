#include "analyses/state/decay_init.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/math/stats.h"
#include "analyses/result_writer.h"
#include "base/error.h"
#include "io/checkpoint/safetensors.h"

static double softplus(double x) { return x > 20 ? x : log1p(exp(x)); }
static double tau_of(double a_log, double dt_bias) { return 1.0 / (exp(a_log) * softplus(dt_bias)); }

/* P(tau_init <= t) for tau = 1 / (A dt), A ~ U(0, 16), ln dt ~ U(ln 1e-3, ln 1e-1):
 * P(A >= 1 / (t dt)) averaged over dt, by quadrature in ln dt (exact enough:
 * the integrand is smooth, 4096 points). */
static double init_cdf(double t) {
    const double lo = log(1e-3), hi = log(1e-1);
    const int n = 4096;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double dt = exp(lo + (hi - lo) * (i + 0.5) / n), a = 1.0 / (t * dt);
        s += a >= 16 ? 0.0 : 1.0 - a / 16.0;
    }
    return s / n;
}

/* comma-separated floats of a metadata key, exactly H of them */
static int parse_list(const char *s, double *out, int H) {
    int n = 0;
    while (s && *s && n <= H) {
        char *end;
        double v = strtod(s, &end);
        if (end == s) return -1;
        if (n < H) out[n] = v;
        n++;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n == H ? 0 : -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "layer L": the group name every family gives a layer's tensors (GDN's decays sit in them) */
static int in_layer(const gs_tensor_spec *s, int layer) {
    int l;
    return layer < 0 || (s->group && sscanf(s->group, "layer %d", &l) == 1 && l == layer);
}

int gs_decay_init_site_layer(const char *site) {
    int l, n = 0;
    return site && sscanf(site, "blocks.%d.%n", &l, &n) == 1 && n > 0 ? l : -1;
}

int gs_decay_init_run(const gs_model *m, int layer, gs_decay_init *d) {
    memset(d, 0, sizeof *d);
    d->spearman = d->max_abs_dlog = d->median_abs_dlog = NAN;
    d->moved = -1;
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&m->cfg, specs), H = 0, Hd = 0;
    const float *alog[64], *dtb[64];
    int na = 0, nd = 0, len[64];
    /* first: where the selected heads start in the trainer's list of every decaying head (spec order) */
    int first = -1, seen = 0;
    for (int i = 0; i < n; i++) {
        if (specs[i].role != GS_TENSOR_A_LOG) continue;
        if (in_layer(&specs[i], layer) && first < 0) first = seen;
        seen += (int)specs[i].numel;
    }
    for (int i = 0; i < n; i++) {
        if (!in_layer(&specs[i], layer)) continue;
        if (specs[i].role == GS_TENSOR_A_LOG && na < 64) { len[na] = (int)specs[i].numel; alog[na++] = m->block + specs[i].offset; H += (int)specs[i].numel; }
        if (specs[i].role == GS_TENSOR_DT_BIAS && nd < 64) { dtb[nd++] = m->block + specs[i].offset; Hd += (int)specs[i].numel; }
    }
    if (H == 0 && layer >= 0) return gs_fail("the model has no decay parameters in layer %d", layer);
    if (H == 0) return 1;
    if (na != nd || H != Hd) return gs_fail("the model's A_log and dt_bias tensors do not pair up (%d and %d heads)", H, Hd);
    if (H > GS_DECAY_INIT_MAX_HEADS) return gs_fail("%d decaying heads: at most %d", H, GS_DECAY_INIT_MAX_HEADS);
    d->H = H;
    for (int t = 0, h = 0; t < na; t++)
        for (int k = 0; k < len[t]; k++, h++) d->tau_trained[h] = tau_of(alog[t][k], dtb[t][k]);
    for (int h = 0; h < H; h++) d->init_percentile[h] = 100.0 * init_cdf(d->tau_trained[h]);
    /* the initial values the trainer kept: GPN+M's one write under init_write_*, GDN's every layer's heads,
     * layer after layer, under init_* (train/train.c) */
    st_file *f = m->path ? safetensors_open(m->path) : NULL;
    if (!f) return 0; /* a model built in memory, or a file gone: the distribution is the reference */
    const char *ka = "init_write_A_log", *kb = "init_write_dt_bias";
    const char *a = safetensors_meta(f, ka), *b = safetensors_meta(f, kb);
    if (!a && !b) {
        ka = "init_A_log", kb = "init_dt_bias";
        a = safetensors_meta(f, ka), b = safetensors_meta(f, kb);
    }
    double ia[GS_DECAY_INIT_MAX_HEADS], ib[GS_DECAY_INIT_MAX_HEADS];
    int ok = a && b && seen <= GS_DECAY_INIT_MAX_HEADS && parse_list(a, ia, seen) == 0 && parse_list(b, ib, seen) == 0;
    if (a && b && !ok) {
        safetensors_close(f);
        return gs_fail("%s: %s / %s are not %d numbers each", m->path, ka, kb, seen);
    }
    safetensors_close(f);
    if (!ok) return 0;
    d->has_init = 1;
    snprintf(d->init_keys, sizeof d->init_keys, "the checkpoint's %s / %s", ka, kb);
    double dl[GS_DECAY_INIT_MAX_HEADS];
    for (int h = 0; h < H; h++) {
        d->tau_init[h] = tau_of(ia[first + h], ib[first + h]);
        dl[h] = fabs(log(d->tau_trained[h]) - log(d->tau_init[h]));
    }
    qsort(dl, (size_t)H, sizeof *dl, cmp_double);
    d->max_abs_dlog = dl[H - 1];
    d->median_abs_dlog = H % 2 ? dl[H / 2] : 0.5 * (dl[H / 2 - 1] + dl[H / 2]);
    int defined = 0;
    if (H >= 2 && gs_spearman(d->tau_init, d->tau_trained, H, &d->spearman, &defined) != 0) return -1;
    if (!defined) d->spearman = NAN;
    d->moved = d->max_abs_dlog >= log(2.0) && !(d->spearman >= 0.9);
    return 0;
}

int gs_decay_init_split_in_init(const gs_decay_init *d, const int *pool) {
    if (!d->has_init) return -1;
    int k = 0;
    for (int h = 0; h < d->H; h++) k += pool[h] == 1;
    if (k == 0 || k == d->H) return 0;
    /* the k-th largest initial tau: every slow head at or above it, every fast one below */
    double *t = malloc((size_t)d->H * sizeof *t);
    if (!t) return -1;
    memcpy(t, d->tau_init, (size_t)d->H * sizeof *t);
    qsort(t, (size_t)d->H, sizeof *t, cmp_double);
    double cut = t[d->H - k];
    free(t);
    for (int h = 0; h < d->H; h++)
        if ((pool[h] == 1) != (d->tau_init[h] >= cut)) return 0;
    return 1;
}

void gs_decay_init_write(gs_result_writer *w, const gs_decay_init *d, const gs_retention *r) {
    const int H = d->H;
    double x[GS_DECAY_INIT_MAX_HEADS];
    for (int h = 0; h < H; h++) x[h] = h;
    gs_result_scalar_kept(w, "decays_init_known", d->has_init, d->has_init ? d->init_keys : "no initial values in the checkpoint: "
                          "the initialisation's distribution is the reference");
    gs_result_series(w, "tau_param", x, d->tau_trained, NULL, H);
    gs_result_series(w, "tau_param_init_percentile", x, d->init_percentile, NULL, H);
    if (!d->has_init) return;
    gs_result_series(w, "tau_param_init", x, d->tau_init, NULL, H);
    gs_result_scalar_kept(w, "decays_init_spearman", d->spearman, "Spearman of tau at init and trained");
    gs_result_scalar_kept(w, "decays_max_abs_dlog_tau", d->max_abs_dlog, "max over heads of |ln tau - ln tau_init|");
    gs_result_scalar_kept(w, "decays_median_abs_dlog_tau", d->median_abs_dlog, NULL);
    gs_result_scalar_kept(w, "decays_moved", d->moved,
                          "1: some head's tau changed 2x or more and the order changed (Spearman < 0.9)");
    for (int e = 0; e < GS_RET_COUNT; e++) {
        const gs_pools *p = &r->est[e].pools;
        if (!p->valid) continue;
        char key[64];
        snprintf(key, sizeof key, "slow_pool_in_init%s", gs_ret_estimator_suffix((gs_ret_estimator)e));
        gs_result_scalar_kept(w, key, gs_decay_init_split_in_init(d, p->pool),
                              "1: the slow pool is exactly the heads of largest initial tau");
    }
}
