/* Recurrence depth from recorded attention patterns (recurrence_depth.h). */
#include "analyses/causal/recurrence_depth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"

#define PATTERN_SUFFIX ".attn.hook_pattern"

/* sums over positions, per head */
typedef struct {
    double lag, rec_lag, diag, mass, deep;
    int64_t rows, rec_rows;
} head_sums;

/* One position's row of one head: `keys` weights, the diagonal last, NaN
 * where the key precedes position 0. */
static void add_row(const float *w, int keys, head_sums *s, double *lag_weight) {
    double mass = 0, lag = 0, rec_mass = 0, rec_lag = 0;
    for (int j = 0; j < keys; j++) {
        if (isnan(w[j])) continue;
        int k = keys - 1 - j; /* lag: 0 the diagonal, k >= 1 the output of position t - k */
        mass += w[j];
        lag += (double)w[j] * k;
        lag_weight[k] += w[j];
        if (k) rec_mass += w[j], rec_lag += (double)w[j] * k;
    }
    if (!(mass > 0)) return;
    s->rows++;
    s->lag += lag / mass;
    s->diag += isnan(w[keys - 1]) ? 0 : w[keys - 1];
    s->mass += mass;
    s->deep += mass < 1 - 1e-4;
    if (rec_mass > 0) s->rec_rows++, s->rec_lag += rec_lag / rec_mass;
}

static int read_layer(store *st, int64_t run_id, const store_site *site, gs_recurrence_depth *r, int li) {
    int H = r->n_heads, keys = r->keys;
    store_states *rd = store_states_open(st, run_id, site->stored_as, -1, -1);
    if (!rd) return -1;
    head_sums *sums = calloc((size_t)H, sizeof *sums);
    enum { CHUNK = 256 };
    float *rows = malloc((size_t)CHUNK * site->width * sizeof *rows);
    if (!sums || !rows) {
        free(sums), free(rows), store_states_close(rd);
        return gs_fail("out of memory reading %s", site->site);
    }
    int64_t n;
    while ((n = store_states_read(rd, rows, NULL, NULL, CHUNK)) > 0)
        for (int64_t i = 0; i < n; i++)
            for (int h = 0; h < H; h++)
                add_row(rows + (size_t)i * site->width + (size_t)h * keys, keys, &sums[h],
                        r->heads[(size_t)li * H + h].lag_weight);
    store_states_close(rd);
    free(rows);
    for (int h = 0; h < H; h++) {
        gs_recurrence_head *o = &r->heads[(size_t)li * H + h];
        const head_sums *s = &sums[h];
        double n_rows = s->rows ? (double)s->rows : NAN;
        o->layer = site->layer, o->head = h, o->rows = s->rows;
        o->mean_lag = s->lag / n_rows;
        o->recurrent_lag = s->rec_rows ? s->rec_lag / (double)s->rec_rows : NAN;
        o->diag_share = s->diag / n_rows;
        o->kept_mass = s->mass / n_rows;
        o->deep_share = s->deep / n_rows;
        for (int k = 0; k < keys; k++) o->lag_weight[k] /= n_rows;
    }
    free(sums);
    return n < 0 ? -1 : 0;
}

int gs_recurrence_depth_compute(store *st, int64_t run_id, gs_recurrence_depth *r) {
    memset(r, 0, sizeof *r);
    store_site sites[256];
    int n = store_run_sites(st, run_id, sites, 256);
    if (n < 0) return -1;
    if (n > 256) n = 256;
    store_site *pat[64];
    for (int i = 0; i < n; i++) {
        size_t len = strlen(sites[i].site), sl = strlen(PATTERN_SUFFIX);
        if (sites[i].layer < 0 || len < sl || strcmp(sites[i].site + len - sl, PATTERN_SUFFIX) ||
            strcmp(sites[i].stored_in, "states") || r->n_layers == 64)
            continue;
        if (sites[i].width % GS_PATTERN_KEYS)
            return gs_fail("%s is %d wide: not heads of %d keys", sites[i].site, sites[i].width, GS_PATTERN_KEYS);
        if (r->n_layers && sites[i].width != pat[0]->width)
            return gs_fail("%s and %s differ in width", sites[i].site, pat[0]->site);
        pat[r->n_layers++] = &sites[i];
    }
    if (!r->n_layers)
        return gs_fail("run %lld recorded no attention pattern: record it with --sites blocks.0.attn.hook_pattern,"
                       "blocks.1.attn.hook_pattern,... (a family with attention: recurrent-transformer, transformer++)",
                       (long long)run_id);
    /* layers in order (run_sites lists them by name: blocks.10 before blocks.2) */
    for (int i = 1; i < r->n_layers; i++)
        for (int j = i; j > 0 && pat[j - 1]->layer > pat[j]->layer; j--) {
            store_site *t = pat[j];
            pat[j] = pat[j - 1], pat[j - 1] = t;
        }
    r->keys = GS_PATTERN_KEYS;
    r->n_heads = pat[0]->width / GS_PATTERN_KEYS;
    size_t nh = (size_t)r->n_layers * r->n_heads;
    r->heads = calloc(nh, sizeof *r->heads);
    for (size_t i = 0; r->heads && i < nh; i++)
        if (!(r->heads[i].lag_weight = calloc((size_t)r->keys, sizeof(double)))) {
            gs_recurrence_depth_free(r);
            break;
        }
    if (!r->heads) return gs_fail("out of memory for %zu heads", nh);
    for (int i = 0; i < r->n_layers; i++) {
        r->layers[i] = pat[i]->layer;
        if (read_layer(st, run_id, pat[i], r, i)) {
            gs_recurrence_depth_free(r);
            return -1;
        }
    }
    return 0;
}

int gs_recurrence_depth_write(store *st, int64_t run_id, const gs_recurrence_depth *r, const char *code_version) {
    char settings[64];
    snprintf(settings, sizeof settings, "{\"site\": \"blocks.{i}.attn.hook_pattern\", \"keys\": %d}", r->keys);
    int64_t id = store_analysis_begin(st, run_id, "recurrence_depth", settings, code_version);
    if (id <= 0) return -1;
    double *x = malloc((size_t)r->keys * sizeof *x);
    if (!x) {
        store_rollback(st);
        return gs_fail("out of memory");
    }
    for (int k = 0; k < r->keys; k++) x[k] = k;
    int rc = 0;
    for (int i = 0; !rc && i < r->n_layers * r->n_heads; i++) {
        const gs_recurrence_head *h = &r->heads[i];
        const struct { const char *name; double v; const char *note; } vals[] = {
            {"mean_lag", h->mean_lag, "attention-weighted lag over the kept keys (0: the diagonal key)"},
            {"recurrent_lag", h->recurrent_lag, "attention-weighted lag over the recurrent keys only (lag >= 1)"},
            {"diag_share", h->diag_share, "mean weight on the diagonal key"},
            {"kept_mass", h->kept_mass, "mean weight on the pattern's kept keys"},
            {"deep_share", h->deep_share, "share of positions whose older keys took weight (lags: lower bounds)"},
            {"rows", (double)h->rows, "positions averaged"},
        };
        char key[64];
        for (size_t v = 0; !rc && v < sizeof vals / sizeof *vals; v++) {
            snprintf(key, sizeof key, "L%d.h%d.%s", h->layer, h->head, vals[v].name);
            rc = store_analysis_scalar(st, id, key, vals[v].v, vals[v].note);
        }
        snprintf(key, sizeof key, "L%d.h%d.lag_weight", h->layer, h->head);
        if (!rc) rc = store_analysis_series(st, id, key, x, h->lag_weight, NULL, r->keys);
    }
    free(x);
    if (rc) {
        store_rollback(st);
        return -1;
    }
    return store_commit(st);
}

void gs_recurrence_depth_print(FILE *out, const gs_recurrence_depth *r) {
    fprintf(out, "recurrence depth: attention-weighted lag of each head's keys (lag 0: the diagonal key; lag k: the\n"
                 "layer's own output k positions back), over the %d most recent keys the pattern keeps\n\n", r->keys);
    fprintf(out, "%5s %4s %8s %9s %14s %11s %10s %10s\n", "layer", "head", "rows", "mean_lag", "recurrent_lag",
            "diag_share", "kept_mass", "deep_share");
    for (int i = 0; i < r->n_layers; i++) {
        double lag = 0, rec = 0, diag = 0;
        for (int h = 0; h < r->n_heads; h++) {
            const gs_recurrence_head *x = &r->heads[(size_t)i * r->n_heads + h];
            fprintf(out, "%5d %4d %8lld %9.3f %14.3f %11.3f %10.3f %10.3f\n", x->layer, x->head, (long long)x->rows,
                    x->mean_lag, x->recurrent_lag, x->diag_share, x->kept_mass, x->deep_share);
            lag += x->mean_lag, rec += x->recurrent_lag, diag += x->diag_share;
        }
        fprintf(out, "%5d %4s %8s %9.3f %14.3f %11.3f   (mean over heads)\n", r->layers[i], "all", "",
                lag / r->n_heads, rec / r->n_heads, diag / r->n_heads);
    }
    int deep = 0;
    for (int i = 0; i < r->n_layers * r->n_heads; i++) deep |= r->heads[i].deep_share > 0;
    if (deep)
        fprintf(out, "\nwhere deep_share > 0, keys older than %d took weight that the pattern does not keep: the lags "
                     "are lower bounds there\n", r->keys);
}

void gs_recurrence_depth_free(gs_recurrence_depth *r) {
    for (int i = 0; r->heads && i < r->n_layers * r->n_heads; i++) free(r->heads[i].lag_weight);
    free(r->heads);
    r->heads = NULL;
}
