/* horizons: the paper's two panels (section 3 of docs/analyses.md): (a) the
 * raw and centered lag cosine on a log lag axis with the content horizons
 * marked (`horizons`), (b) each memory head's retention curve with its
 * 1/e time marked, coloured by pool (`retention`, GPN+M only). Either
 * panel alone when the run has only one of the two analyses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "analyses/state/horizons_keys.h"

typedef struct {
    int64_t aid, n;
    double *lag, *raw, *cen, *rawp, *cenp;
    double c1, he, he_cens, h2, h2_cens;
    double min_pairs, last_enough; /* the last lag drawn */
} lagcos;

typedef struct {
    int64_t aid;
    int H, n_lags, pools;
    double *lags;  /* n_lags */
    double *R;     /* H x n_lags */
    double *half, *cens, *extra, *pool, *alpha, *beta; /* H each (NaN where absent) */
    double fast_n, fast_min, fast_max, slow_n, slow_min, slow_max, lr, lr_p_uniform;
    double power, verdict, lr_start, verdict_start; /* pool_verdict: 1 present, 0.5 inconclusive, 0 not demonstrated */
} retention;

static const char *verdict_word(double v) {
    return !isfinite(v) ? "not judged" : v >= 1 ? "present" : v > 0 ? "inconclusive" : "not demonstrated";
}

static void lagcos_free(lagcos *l) { free(l->lag); free(l->raw); free(l->cen); free(l->rawp); free(l->cenp); }
static void retention_free(retention *r) {
    free(r->lags); free(r->R); free(r->half); free(r->cens); free(r->extra); free(r->pool); free(r->alpha); free(r->beta);
}

static int load_lagcos(const plot_ctx *c, lagcos *l) {
    memset(l, 0, sizeof *l);
    l->aid = gp_analysis(c->st, c->run, GS_AN_HORIZON);
    if (l->aid <= 0) return 0;
    double *x2 = NULL, *x3 = NULL, *x4 = NULL;
    int64_t n = gp_series(c->st, l->aid, GS_KEY_RAW, &l->lag, &l->raw);
    int64_t n2 = gp_series(c->st, l->aid, GS_KEY_CENTERED, &x2, &l->cen);
    int64_t n3 = gp_series(c->st, l->aid, GS_KEY_RAW_PAIRS, &x3, &l->rawp);
    int64_t n4 = gp_series(c->st, l->aid, GS_KEY_CENTERED_PAIRS, &x4, &l->cenp);
    int ok = n >= 0 && n2 >= 0 && n3 >= 0 && n4 >= 0;
    /* the four series share the lag grid; a mismatch is padded with NaN */
    if (ok && n > 0) {
        double **cols[] = {&l->cen, &l->rawp, &l->cenp};
        double *xs[] = {x2, x3, x4};
        int64_t ns[] = {n2, n3, n4};
        for (int k = 0; k < 3 && ok; k++) {
            double *v = malloc((size_t)n * sizeof *v);
            if (!v) { ok = 0; gs_fail("out of memory"); break; }
            for (int64_t i = 0; i < n; i++) v[i] = i < ns[k] && xs[k][i] == l->lag[i] ? (*cols[k])[i] : NAN;
            free(*cols[k]);
            *cols[k] = v;
        }
    }
    free(x2); free(x3); free(x4);
    if (!ok) { lagcos_free(l); return -1; }
    l->n = n;
    /* undefined is not zero, and a few pairs are not a mean: draw a lag only
     * with the pairs the analysis asks for (its min_pairs; 100 before it said) */
    double mp = gp_scalar(c->st, l->aid, GS_KEY_MIN_PAIRS);
    l->min_pairs = isfinite(mp) ? mp : 100;
    for (int64_t i = 0; i < n; i++)
        if (l->rawp[i] >= l->min_pairs || l->cenp[i] >= l->min_pairs) l->last_enough = l->lag[i];
    l->c1 = gp_scalar(c->st, l->aid, GS_KEY_C1);
    l->he = gp_scalar(c->st, l->aid, GS_KEY_CONTENT_HORIZON_E);
    l->he_cens = gp_scalar(c->st, l->aid, GS_KEY_CONTENT_HORIZON_E_CENSORED);
    l->h2 = gp_scalar(c->st, l->aid, GS_KEY_CONTENT_HORIZON_002);
    l->h2_cens = gp_scalar(c->st, l->aid, GS_KEY_CONTENT_HORIZON_002_CENSORED);
    return 0;
}

/* a per-head series as an array of H values, NaN where absent */
static int head_values(const plot_ctx *c, int64_t aid, const char *name, int H, double **out) {
    double *x = NULL, *y = NULL;
    *out = malloc((size_t)(H > 0 ? H : 1) * sizeof **out);
    if (!*out) return gs_fail("out of memory");
    for (int h = 0; h < H; h++) (*out)[h] = NAN;
    int64_t n = gp_series(c->st, aid, name, &x, &y);
    if (n < 0) return -1;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        int h = (int)x[i];
        if (h >= 0 && h < H && x[i] == h) (*out)[h] = y[i];
    }
    free(x);
    free(y);
    return 0;
}

static int load_retention(const plot_ctx *c, retention *r) {
    memset(r, 0, sizeof *r);
    r->aid = gp_analysis(c->st, c->run, GS_AN_RETENTION);
    if (r->aid <= 0) return 0;
    double heads = gp_scalar(c->st, r->aid, "heads");
    if (!(heads >= 1 && heads <= 4096)) { r->aid = 0; return 0; }
    const int H = r->H = (int)heads;
    /* e_fold_time: the 1/e time; stores written before it was renamed call it half_life */
    int64_t ne = gp_series(c->st, r->aid, "e_fold_time", &r->half, &r->cens);
    free(r->half); free(r->cens);
    r->half = r->cens = NULL;
    if (ne < 0) goto fail;
    if (head_values(c, r->aid, ne > 0 ? "e_fold_time" : "half_life", H, &r->half) || head_values(c, r->aid, "censored", H, &r->cens) ||
        head_values(c, r->aid, "extrapolated", H, &r->extra) || head_values(c, r->aid, "pool", H, &r->pool) ||
        head_values(c, r->aid, "mean_alpha", H, &r->alpha) || head_values(c, r->aid, "mean_beta", H, &r->beta))
        goto fail;
    /* R_head{h}: the lag grid of head 0 is the grid of all */
    for (int h = 0; h < H; h++) {
        char name[32];
        double *x = NULL, *y = NULL;
        snprintf(name, sizeof name, "R_head%d", h);
        int64_t n = gp_series(c->st, r->aid, name, &x, &y);
        if (n < 0) goto fail;
        if (h == 0) {
            r->n_lags = (int)n;
            r->lags = x;
            x = NULL;
            r->R = malloc((size_t)H * (size_t)(n > 0 ? n : 1) * sizeof *r->R);
            if (!r->R) { free(y); gs_fail("out of memory"); goto fail; }
        }
        for (int i = 0; i < r->n_lags; i++)
            r->R[(int64_t)h * r->n_lags + i] = i < n && (!x || x[i] == r->lags[i]) ? y[i] : NAN;
        free(x);
        free(y);
    }
    r->pools = 1;
    for (int h = 0; h < H; h++) if (!(r->pool[h] == 0 || r->pool[h] == 1)) r->pools = 0;
    r->fast_n = gp_scalar(c->st, r->aid, "fast_n");
    r->fast_min = gp_scalar(c->st, r->aid, "fast_min");
    r->fast_max = gp_scalar(c->st, r->aid, "fast_max");
    r->slow_n = gp_scalar(c->st, r->aid, "slow_n");
    r->slow_min = gp_scalar(c->st, r->aid, "slow_min");
    r->slow_max = gp_scalar(c->st, r->aid, "slow_max");
    r->lr = gp_scalar(c->st, r->aid, "pool_lr");
    r->lr_p_uniform = gp_scalar(c->st, r->aid, "pool_lr_null_p_uniform");
    r->power = gp_scalar(c->st, r->aid, "pools_power_paper");
    r->verdict = gp_scalar(c->st, r->aid, "pool_verdict");
    r->lr_start = gp_scalar(c->st, r->aid, "pool_lr_from_start");
    r->verdict_start = gp_scalar(c->st, r->aid, "pool_verdict_from_start");
    return 0;
fail:
    retention_free(r);
    return -1;
}

/* "fast pool: 1 head, 1/e time 1.89" / "slow pool: 9 heads, 1/e time 5.1-322" (tokens) */
static void pool_text(char *buf, size_t size, const char *which, double n, double lo, double hi) {
    int k = isfinite(n) ? (int)n : 0;
    char a[32], b[32];
    if (k == 1 || (isfinite(lo) && isfinite(hi) && lo == hi))
        snprintf(buf, size, "%s pool: %d head%s, 1/e time %s", which, k, k == 1 ? "" : "s", gp_tokens(a, sizeof a, lo));
    else
        snprintf(buf, size, "%s pool: %d heads, 1/e time %s-%s", which, k, gp_tokens(a, sizeof a, lo),
                 gp_tokens(b, sizeof b, hi));
}

static void horizon_text(char *buf, size_t size, double k, double censored) {
    char a[32];
    if (!isfinite(k)) snprintf(buf, size, "undefined");
    else snprintf(buf, size, "%s%s", censored > 0 ? ">= " : "", gp_tokens(a, sizeof a, k));
}

static void panel_lagcos(FILE *f, const lagcos *l, int rows) {
    double lo = 0, hi = 0, kmax = 1;
    gp_minmax(l->raw, l->n, &lo, &hi);
    double lo2 = 0, hi2 = 0;
    if (gp_minmax(l->cen, l->n, &lo2, &hi2)) { if (lo2 < lo) lo = lo2; if (hi2 > hi) hi = hi2; }
    if (lo > 0) lo = 0;
    if (hi < 0) hi = 0;
    gp_pad(&lo, &hi, 0);
    double kmin = 1;
    gp_minmax(l->lag, l->n, &kmin, &kmax);
    if (l->last_enough > kmin) kmax = l->last_enough;
    if (!(kmin > 0)) kmin = 1;
    if (!(kmax > kmin)) kmax = kmin * 2;
    char he[64], h2[64], b[32];
    horizon_text(he, sizeof he, l->he, l->he_cens);
    horizon_text(h2, sizeof h2, l->h2, l->h2_cens);
    fprintf(f,
            "set title '(a) state horizon: lag cosine'\n"
            "set logscale x\n"
            "set xlabel 'lag k (tokens, log scale)'\n"
            "set ylabel 'cos(s_t, s_(t+k)), mean over t'\n"
            "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n"
            "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb C_GREY\n",
            kmin, kmax, lo, hi);
    gp_key_below(f, 0.0, rows);
    gp_log_tics(f, "x", kmin, kmax);
    /* vertical marks at the content horizons (when not censored) */
    const double ks[2] = {l->he, l->h2}, cens[2] = {l->he_cens, l->h2_cens};
    const double ys[2] = {isfinite(l->c1) ? l->c1 / exp(1.0) : NAN, 0.02};
    for (int i = 0; i < 2; i++)
        if (isfinite(ks[i]) && isfinite(ys[i]) && !(cens[i] > 0) && ks[i] >= kmin && ks[i] <= kmax)
            fprintf(f, "set arrow %d from first %.17g, graph 0 to first %.17g, first %.17g nohead dt 2 lw 1.5 lc rgb %s\n",
                    i + 2, ks[i], ks[i], ys[i], i ? "C_VERMILION" : "C_GREEN");
    fprintf(f,
            "# a lag is drawn only with at least MIN_PAIRS pairs (the data keep every lag and its count)\n"
            "MIN_PAIRS = %.17g\n"
            "plot 'horizons-lag.dat' using 1:($4 >= MIN_PAIRS ? $2 : NaN) with linespoints pt 7 ps 0.7 lw 2.5 lc rgb C_BLUE title 'raw', \\\n"
            "     '' using 1:($5 >= MIN_PAIRS ? $3 : NaN) with linespoints pt 5 ps 0.7 lw 2.5 lc rgb C_ORANGE title 'centered (window mean removed)'",
            l->min_pairs);
    if (isfinite(l->he) && isfinite(ys[0]) && !(l->he_cens > 0))
        fprintf(f, ", \\\n     'horizons-marks.dat' index 0 using 1:2 with points pt 9 ps 2 lc rgb C_GREEN "
                   "title 'falls to c_1/e at k = %s'", he);
    else
        fprintf(f, ", \\\n     NaN with points pt 9 ps 2 lc rgb C_GREEN title '%s%s'",
                isfinite(l->he) ? "does not fall to c_1/e by k = " : "c_1/e crossing undefined (c_1 <= 0)",
                isfinite(l->he) ? gp_tokens(b, sizeof b, l->he) : "");
    if (isfinite(l->h2) && !(l->h2_cens > 0))
        fprintf(f, ", \\\n     'horizons-marks.dat' index 1 using 1:2 with points pt 11 ps 2 lc rgb C_VERMILION "
                   "title 'falls below 0.02 at k = %s'", h2);
    else
        fprintf(f, ", \\\n     NaN with points pt 11 ps 2 lc rgb C_VERMILION title '%s%s'",
                isfinite(l->h2) ? "does not fall below 0.02 by k = " : "0.02 crossing undefined",
                isfinite(l->h2) ? gp_tokens(b, sizeof b, l->h2) : "");
    fprintf(f, "\n");
}

static int retention_rows(const retention *r, double kmax) {
    int rows = r->pools ? 2 : 1;
    for (int h = 0; h < r->H; h++)
        if (r->cens[h] > 0 || (isfinite(r->half[h]) && r->half[h] > kmax)) { rows++; break; }
    return rows;
}

static void panel_retention(FILE *f, const retention *r, double kmax_hint, double ox, int rows) {
    const int H = r->H;
    double kmin = 1, kmax = kmax_hint > 1 ? kmax_hint : 2;
    if (r->n_lags > 0) gp_minmax(r->lags, r->n_lags, &kmin, &kmax);
    if (!(kmin > 0)) kmin = 1;
    if (!(kmax > kmin)) kmax = kmin * 2;
    fprintf(f, "H = %d\n# per head (retention: pool): 0 fast, 1 slow, -1 no pools\narray POOL[H] = [", H);
    for (int h = 0; h < H; h++) fprintf(f, "%s%d", h ? ", " : "", r->pools ? (int)r->pool[h] : -1);
    fprintf(f, "]\n"
               "C_FAST = C_VERMILION; C_SLOW = C_BLUE\n"
               "POOL_COLOR(p) = p == 0 ? C_FAST : (p == 1 ? C_SLOW : C_GREY)\n"
               "set title '(b) memory horizon: retention per head'\n"
               "set logscale x\n"
               "set xlabel 'lag k (tokens, log scale)'\n"
               "set ylabel 'retention R_h(k): mean product of k decays'\n");
    fprintf(f, "set xrange [%.17g:%.17g]\nset yrange [0:1.05]\n", kmin, kmax);
    gp_key_below(f, ox, rows);
    gp_log_tics(f, "x", kmin, kmax);
    fprintf(f, "set ytics (0, 0.2, '1/e' exp(-1), 0.6, 0.8, 1)\n"
               "set arrow 1 from graph 0, first exp(-1) to graph 1, first exp(-1) nohead dt 3 lw 1.5 lc rgb C_GREY\n");
    fprintf(f, "plot for [h=1:H] 'horizons-retention.dat' using 1:(column(h+1)) with lines lw 2.5 lc rgb POOL_COLOR(POOL[h]) notitle");
    char t[160];
    if (r->pools) {
        pool_text(t, sizeof t, "fast", r->fast_n, r->fast_min, r->fast_max);
        fprintf(f, ", \\\n     NaN with linespoints lw 2.5 pt 7 ps 1.5 lc rgb C_FAST title '%s'", t);
        pool_text(t, sizeof t, "slow", r->slow_n, r->slow_min, r->slow_max);
        fprintf(f, ", \\\n     NaN with linespoints lw 2.5 pt 7 ps 1.5 lc rgb C_SLOW title '%s'", t);
    } else {
        fprintf(f, ", \\\n     NaN with linespoints lw 2.5 pt 7 ps 1.5 lc rgb C_GREY title '%d head%s (no pools)'", H,
                H == 1 ? "" : "s");
    }
    /* 1/e times inside the window: a dot on the 1/e line; censored ones: an open circle at its end */
    int in_pool[3] = {0, 0, 0}, any_cens = 0; /* a clause with no point would make gnuplot warn */
    for (int h = 0; h < H; h++) {
        if (!(r->cens[h] > 0) && isfinite(r->half[h]) && r->half[h] <= kmax) in_pool[r->pools ? (int)r->pool[h] + 1 : 0] = 1;
        if (r->cens[h] > 0 || (isfinite(r->half[h]) && r->half[h] > kmax)) any_cens = 1;
    }
    {
        /* one clause per pool, so the dots take their pool's colour */
        static const char *const colour[3] = {"C_GREY", "C_FAST", "C_SLOW"};
        for (int p = r->pools ? 0 : -1; p <= (r->pools ? 1 : -1); p++)
            if (in_pool[p + 1])
                fprintf(f, ", \\\n     'horizons-heads.dat' using ($5 != %d || $3 > 0 || $2 > %.17g ? NaN : $2):(exp(-1))"
                       " with points pt 7 ps 1.6 lc rgb %s notitle",
                    p, kmax, colour[p + 1]);
    }
    if (any_cens)
        fprintf(f, ", \\\n     'horizons-heads.dat' using ($3 > 0 || $2 > %.17g ? %.17g : NaN):(exp(-1))"
                   " with points pt 6 ps 2 lw 2 lc rgb C_GREY title '1/e time beyond the window (censored)'",
                kmax, kmax);
    fprintf(f, "\n");
}

int fig_horizons(const plot_ctx *c, gs_plot_figure *fig) {
    lagcos l;
    retention r;
    if (load_lagcos(c, &l) != 0) return -1;
    if (load_retention(c, &r) != 0) { lagcos_free(&l); return -1; }
    int has_l = l.aid > 0 && l.n > 0, has_r = r.aid > 0 && r.H > 0 && r.n_lags > 0;
    if (!has_l && !has_r) { lagcos_free(&l); retention_free(&r); return 1; }
    const char *name = "horizons";
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->sources, sizeof fig->sources, "%s%s%s", has_l ? gs_analysis_stored_name(GS_AN_HORIZON) : "",
             has_l && has_r ? ", " : "", has_r ? gs_analysis_stored_name(GS_AN_RETENTION) : "");
    snprintf(fig->title, sizeof fig->title, "Horizons: how long the state and the memory heads keep content");
    int rc = -1;
    gp_file a = {0};

    if (has_l) {
        const double *lc[] = {l.lag, l.raw, l.cen, l.rawp, l.cenp};
        if (gp_write_columns(c, "horizons-lag.dat",
                             "raw and centered lag cosine (horizons: raw, centered, raw_pairs, centered_pairs)",
                             "lag raw centered raw_pairs centered_pairs", 5, l.n, lc) != 0)
            goto done;
        if (gp_file_open(&a, c->dir, "horizons-marks.dat") != 0) goto done;
        fprintf(a.f, "# content horizons (horizons: content_horizon_e, content_horizon_002) at the level they cross\n"
                     "# %s, %s\n# lag level censored\n", c->run_label, c->store_name);
        fprintf(a.f, "%.17g %.17g %g\n\n\n", l.he, isfinite(l.c1) ? l.c1 / exp(1.0) : NAN, l.he_cens);
        fprintf(a.f, "%.17g 0.02 %g\n", l.h2, l.h2_cens);
        if (gp_file_commit(&a) != 0) goto done;
    }
    if (has_r) {
        /* retention curves: one column per head */
        if (gp_file_open(&a, c->dir, "horizons-retention.dat") != 0) goto done;
        fprintf(a.f, "# retention R_h(k) per head (retention: R_head0 .. R_head%d)\n# %s, %s\n# lag", r.H - 1,
                c->run_label, c->store_name);
        for (int h = 0; h < r.H; h++) fprintf(a.f, " R_head%d", h);
        fputc('\n', a.f);
        for (int i = 0; i < r.n_lags; i++) {
            fprintf(a.f, "%.17g", r.lags[i]);
            for (int h = 0; h < r.H; h++) {
                double v = r.R[(int64_t)h * r.n_lags + i];
                if (isfinite(v)) fprintf(a.f, " %.17g", v);
                else fprintf(a.f, " NaN");
            }
            fputc('\n', a.f);
        }
        if (gp_file_commit(&a) != 0) goto done;
        double *head = malloc((size_t)r.H * sizeof *head);
        if (!head) { gs_fail("out of memory"); goto done; }
        double *pool = malloc((size_t)r.H * sizeof *pool);
        if (!pool) { free(head); gs_fail("out of memory"); goto done; }
        for (int h = 0; h < r.H; h++) { head[h] = h; pool[h] = r.pools ? r.pool[h] : -1; }
        const double *hc[] = {head, r.half, r.cens, r.extra, pool, r.alpha, r.beta};
        int w = gp_write_columns(c, "horizons-heads.dat",
                                 "per head (retention: e_fold_time, censored, extrapolated, pool (0 fast, 1 slow, -1 none), "
                                 "mean_alpha, mean_beta)",
                                 "head e_fold_time censored extrapolated pool mean_alpha mean_beta", 7, r.H, hc);
        free(head);
        free(pool);
        if (w != 0) goto done;
    }

    if (gp_file_open(&a, c->dir, "horizons.gp") != 0) goto done;
    FILE *f = a.f;
    char files[256];
    snprintf(files, sizeof files, "%s%s%s", has_l ? "horizons-lag.dat, horizons-marks.dat" : "", has_l && has_r ? ", " : "",
             has_r ? "horizons-retention.dat, horizons-heads.dat" : "");
    gp_preamble(f, c, name, "state horizon (lag cosine) and memory horizon (retention per head)", files);
    fprintf(f, "set multiplot title sprintf('Horizons · %%s', RUN) font TITLE_FONT\n");
    /* both panels keep the same bottom margin, so their axes line up */
    double kmax_r = has_l ? l.lag[l.n - 1] : 0, rmin = 1, rmax = 2;
    if (has_r && r.n_lags > 0 && gp_minmax(r.lags, r.n_lags, &rmin, &rmax)) kmax_r = rmax;
    int rows = has_l ? 4 : 0;
    if (has_r && retention_rows(&r, kmax_r) > rows) rows = retention_rows(&r, kmax_r);
    if (has_l) {
        gp_panel(f, has_r ? "(a) lag cosine: left" : "(a) lag cosine", 0.0, 0.0, has_r ? 0.5 : 1.0, 0.94);
        panel_lagcos(f, &l, rows);
    }
    if (has_r) {
        gp_panel(f, has_l ? "(b) retention per head: right" : "(b) retention per head", has_l ? 0.5 : 0.0, 0.0,
                 has_l ? 0.5 : 1.0, 0.94);
        panel_retention(f, &r, kmax_r, has_l ? 0.5 : 0.0, rows);
    }
    fprintf(f, "\nunset multiplot\n");
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;

    char he[64], h2[64], t1[160], t2[160], b1[32], b2[32], b3[32], b4[32];
    size_t len = 0;
    fig->caption[0] = 0;
    if (has_l) {
        horizon_text(he, sizeof he, l.he, l.he_cens);
        horizon_text(h2, sizeof h2, l.h2, l.h2_cens);
        len += (size_t)snprintf(fig->caption + len, sizeof fig->caption - len,
                                "(a) Mean cosine between states k tokens apart in the same window, raw and after "
                                "removing each window's mean state, on a log lag axis. The content horizon (the lag "
                                "where the centered curve falls to c_1/e, c_1 = %s) is %s tokens; it falls below 0.02 "
                                "at %s tokens%s. Paper: raw plateau near 0.65 out to k = 1500; centered 0.31 at k = 1, "
                                "about 0 by k = 256. Drawn out to k = %s, the last lag with at least %s pairs. ",
                                gp_num(b1, sizeof b1, l.c1), he, h2,
                                l.he_cens > 0 || l.h2_cens > 0 ? " (\">=\": not reached inside the window, a lower bound)" : "",
                                gp_num(b2, sizeof b2, l.last_enough), gp_num(b3, sizeof b3, l.min_pairs));
    }
    if (has_r && len < sizeof fig->caption) {
        if (r.pools) {
            pool_text(t1, sizeof t1, "fast", r.fast_n, r.fast_min, r.fast_max);
            pool_text(t2, sizeof t2, "slow", r.slow_n, r.slow_min, r.slow_max);
        } else {
            snprintf(t1, sizeof t1, "no pools");
            snprintf(t2, sizeof t2, "-");
        }
        snprintf(fig->caption + len, sizeof fig->caption - len,
                 "(b) Retention R_h(k), the mean product of head h's decays over k steps, for each of the %d memory "
                 "heads, averaged over every start position (gpnscope's estimator); a dot marks the 1/e time in tokens (R = "
                 "1/e; the paper calls it a half-life, which would be ln 2 times as long), coloured by pool (the best "
                 "split of log 1/e times into two normal pools): %s; %s; likelihood ratio %s against one pool (null p "
                 "%s under a uniform null, the strictest): pools %s (the rule's power on the paper's pools at this head "
                 "count: %s). With the paper's estimator (the product of decays from the start of the window): "
                 "likelihood ratio %s, pools %s. Paper: 15 heads, fast pool 6 heads at 1-3 tokens, slow pool 9 heads at "
                 "5-322 tokens.",
                 r.H, t1, t2, gp_num(b1, sizeof b1, r.lr), gp_num(b2, sizeof b2, r.lr_p_uniform),
                 verdict_word(r.verdict), gp_num(b3, sizeof b3, r.power), gp_num(b4, sizeof b4, r.lr_start),
                 verdict_word(r.verdict_start));
    }
    rc = 0;
done:
    gp_file_abort(&a);
    lagcos_free(&l);
    retention_free(&r);
    return rc;
}
