/* probe_horizon: how far back a ridge probe decodes the token from the state
 * (section 4 of docs/analyses.md): (a) top-1 accuracy against lag with the
 * majority baseline, the probe horizon marked; (b) the margin over the
 * baseline in binomial standard errors against the pass threshold of 2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "analyses/state/probe_keys.h"

static double slog(double z) { return (z < 0 ? -1 : 1) * log10(1 + fabs(z)); }

/* the values of series y at the x grid gx (NaN where absent) */
static void align(const double *gx, int64_t n, const double *x, const double *y, int64_t m, double *out) {
    for (int64_t i = 0; i < n; i++) {
        out[i] = NAN;
        for (int64_t j = 0; j < m; j++) if (x[j] == gx[i]) { out[i] = y[j]; break; }
    }
}

int fig_probe(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t aid = gp_analysis(c->st, c->run, GS_AN_PROBE);
    if (aid <= 0) return 1;
    double *ax = NULL, *acc = NULL, *bx = NULL, *by = NULL, *px = NULL, *py = NULL, *nx = NULL, *ny = NULL;
    double *base = NULL, *pass = NULL, *ntest = NULL, *z = NULL, *sx = NULL, *sy = NULL, *se = NULL;
    int rc = -1;
    gp_file a = {0};
    int64_t n = gp_series(c->st, aid, GS_KEY_ACCURACY, &ax, &acc);
    int64_t nb = gp_series(c->st, aid, GS_KEY_BASELINE, &bx, &by);
    int64_t np = gp_series(c->st, aid, GS_KEY_PASS, &px, &py);
    int64_t nn = gp_series(c->st, aid, GS_KEY_N_TEST, &nx, &ny);
    int64_t ns = gp_series(c->st, aid, GS_KEY_SE, &sx, &sy); /* the rule's standard error (absent in older stores) */
    if (n < 0 || nb < 0 || np < 0 || nn < 0) goto done;
    {
        double l0, h0;
        if (n == 0 || !gp_minmax(acc, n, &l0, &h0)) { rc = 1; goto done; } /* nothing measured */
    }
    const char *name = "probe_horizon";
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->sources, sizeof fig->sources, "%s", gs_analysis_stored_name(GS_AN_PROBE));
    snprintf(fig->title, sizeof fig->title, "Probe horizon: decoding the token read k steps ago from the state");
    base = malloc((size_t)n * sizeof *base);
    pass = malloc((size_t)n * sizeof *pass);
    ntest = malloc((size_t)n * sizeof *ntest);
    z = malloc((size_t)n * sizeof *z);
    se = malloc((size_t)n * sizeof *se);
    if (!base || !pass || !ntest || !z || !se) { gs_fail("out of memory"); goto done; }
    align(ax, n, bx, by, nb, base);
    align(ax, n, px, py, np, pass);
    align(ax, n, nx, ny, nn, ntest);
    if (ns > 0) align(ax, n, sx, sy, ns, se);
    for (int64_t i = 0; i < n; i++) {
        if (ns <= 0 || !isfinite(se[i])) se[i] = sqrt(base[i] * (1 - base[i]) / ntest[i]);
        z[i] = se[i] > 0 ? (acc[i] - base[i]) / se[i] : NAN;
    }
    const double *cols[] = {ax, acc, base, pass, ntest, z};
    if (gp_write_columns(c, "probe_horizon.dat",
                         "ridge probe, top-1 accuracy per lag on held-out windows (probe: accuracy, baseline, pass, "
                         "n_test, se); margin = (accuracy - baseline) / se, the rule's standard error (block "
                         "standard error and the spread over splits; sqrt(b (1 - b) / n_test) in stores without it)",
                         "lag accuracy baseline pass n_test margin_se", 6, n, cols) != 0)
        goto done;
    const double horizon = gp_scalar(c->st, aid, GS_KEY_PROBE_HORIZON), cens = gp_scalar(c->st, aid, GS_KEY_PROBE_HORIZON_CENSORED);
    char htext[64], b1[32];
    if (isfinite(horizon)) snprintf(htext, sizeof htext, "%s%s", cens > 0 ? ">= " : "", gp_num(b1, sizeof b1, horizon));
    else snprintf(htext, sizeof htext, "n/a");
    /* its spread over splits, when the store has it */
    char spread[160] = "";
    {
        double hs = gp_scalar(c->st, aid, GS_KEY_SPLITS), hmin = gp_scalar(c->st, aid, GS_KEY_PROBE_HORIZON_MIN);
        double hmed = gp_scalar(c->st, aid, GS_KEY_PROBE_HORIZON_MEDIAN), hmax = gp_scalar(c->st, aid, GS_KEY_PROBE_HORIZON_MAX);
        double bydoc = gp_scalar(c->st, aid, GS_KEY_SPLIT_BY_DOCUMENT);
        if (isfinite(hs) && hs > 1 && isfinite(hmin) && isfinite(hmax))
            snprintf(spread, sizeof spread, " (over %.0f splits by %s: %.0f to %.0f, median %.0f)", hs,
                     bydoc > 0 ? "document" : "window", hmin, hmax, hmed);
    }

    double kmin = 1, kmax = 2, lo = 0, hi = 1;
    gp_minmax(ax, n, &kmin, &kmax);
    if (!(kmin > 0)) kmin = 1;
    if (!(kmax > kmin)) kmax = kmin * 2;
    {
        double l2 = 0, h2 = 0;
        gp_minmax(acc, n, &lo, &hi);
        if (gp_minmax(base, n, &l2, &h2)) { if (l2 < lo) lo = l2; if (h2 > hi) hi = h2; }
        lo = 0;
        gp_pad(&lo, &hi, 0);
        lo = 0;
        if (hi > 1) hi = 1.02;
    }
    /* the margin runs from about -3 to the hundreds for a good probe: panel (b) uses a signed log
     * scale, y = sgn(z) log10(1 + |z|), labelled in standard errors, so the threshold of 2 stays
     * readable next to the largest margins */
    double zlo = 0, zhi = 2;
    gp_minmax(z, n, &zlo, &zhi);
    if (zlo > 0) zlo = 0;
    if (zhi < 2) zhi = 2;
    double ylo = slog(zlo), yhi = slog(zhi);
    gp_pad(&ylo, &yhi, 0);
    char ztics[1024];
    {
        static const double mant[3] = {1, 2, 5};
        size_t len = (size_t)snprintf(ztics, sizeof ztics, "'0' 0");
        for (double dec = 1; dec <= 1e7; dec *= 10)
            for (int i = 0; i < 3; i++) {
                const double v = mant[i] * dec;
                for (int sg = -1; sg <= 1; sg += 2)
                    if (v != 1 && sg * v >= zlo && sg * v <= zhi && len + 40 < sizeof ztics) /* 1 crowds 2 */
                        len += (size_t)snprintf(ztics + len, sizeof ztics - len, ", '%g' %.17g", sg * v, slog(sg * v));
            }
    }

    if (gp_file_open(&a, c->dir, "probe_horizon.gp") != 0) goto done;
    FILE *f = a.f;
    gp_preamble(f, c, name, "probe accuracy against lag, with the majority baseline and the pass rule",
                "probe_horizon.dat");
    fprintf(f, "HORIZON = %.17g    # probe: probe_horizon%s\n", isfinite(horizon) ? horizon : 0,
            cens > 0 ? " (right-censored: a lower bound)" : "");
    fprintf(f, "set multiplot title sprintf('Probe horizon · %%s', RUN) font TITLE_FONT\n");
    gp_panel(f, "(a) accuracy and baseline: left", 0.0, 0.0, 0.5, 0.94);
    fprintf(f,
            "set title '(a) top-1 accuracy of a ridge probe'\n"
            "set logscale x\n"
            "set xlabel 'lag k: token read k steps ago (log scale)'\n"
            "set ylabel 'top-1 accuracy (held-out positions)'\n"
            "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n",
            kmin / 1.15, kmax * 1.15, lo, hi);
    gp_key_below(f, 0.0, 4); /* panel (b) has 3 entries; the same margin keeps the axes level */
    gp_log_tics(f, "x", kmin, kmax);
    int show_h = isfinite(horizon) && horizon >= kmin && horizon <= kmax;
    if (show_h)
        fprintf(f, "set arrow 1 from first HORIZON, graph 0 to first HORIZON, graph 1 nohead dt 2 lw 1.5 lc rgb C_GREEN\n");
    /* a clause whose filter keeps no point would make gnuplot warn: such entries go in the key only */
    int n_pass = 0, n_fail = 0, n_z = 0, n_base = 0;
    for (int64_t i = 0; i < n; i++) {
        n_base += isfinite(base[i]) != 0;
        if (isfinite(acc[i])) { if (pass[i] > 0) n_pass++; else n_fail++; }
        if (isfinite(z[i])) n_z++;
    }
    fprintf(f, "plot 'probe_horizon.dat' using 1:2 with lines lw 2.5 lc rgb C_BLUE notitle");
    fprintf(f, ", \\\n     %s with points pt 7 ps 1.5 lc rgb C_BLUE title 'accuracy (lag passes)'",
            n_pass ? "'' using ($4 > 0 ? $1 : NaN):2" : "NaN");
    fprintf(f, ", \\\n     %s with points pt 6 ps 1.5 lw 2 lc rgb C_BLUE title 'accuracy (lag fails)'",
            n_fail ? "'' using ($4 > 0 ? NaN : $1):2" : "NaN");
    fprintf(f, ", \\\n     %s with linespoints dt 2 lw 2 pt 1 ps 1 lc rgb C_GREY title 'majority-token baseline'",
            n_base ? "'' using 1:3" : "NaN");
    fprintf(f, ", \\\n     NaN with lines dt 2 lw 1.5 lc rgb C_GREEN title 'probe horizon: k = %s'\n", htext);
    gp_panel(f, "(b) margin over the baseline in standard errors: right", 0.5, 0.0, 0.5, 0.94);
    if (n_z == 0) {
        gp_empty_panel(f, "(b) margin over the baseline", "undefined: the baseline is 0 or 1 at every lag");
        fprintf(f, "\nunset multiplot\n");
    } else {
        fprintf(f,
                "set title '(b) margin over the baseline'\n"
                "set logscale x\n"
                "set xlabel 'lag k (log scale)'\n"
                "set ylabel 'accuracy - baseline (std errors, signed log scale)'\n"
                "# a signed log scale: y = SLOG(margin), tics labelled in standard errors\n"
                "SLOG(z) = sgn(z) * log10(1 + abs(z))\n"
                "set xrange [%.17g:%.17g]\n"
                "set yrange [%.17g:%.17g]\n"
                "set ytics (%s)\n"
                "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb C_GREY\n",
                kmin / 1.15, kmax * 1.15, ylo, yhi, ztics);
        gp_key_below(f, 0.5, 4);
        gp_log_tics(f, "x", kmin, kmax);
        if (show_h)
            fprintf(f, "set arrow 2 from first HORIZON, graph 0 to first HORIZON, graph 1 nohead dt 2 lw 1.5 lc rgb C_GREEN\n");
        fprintf(f, "plot 'probe_horizon.dat' using 1:(SLOG($6)) with linespoints pt 7 ps 1.2 lw 2.5 lc rgb C_BLUE title 'margin'"
                   ", \\\n     SLOG(2) with lines dt 2 lw 2 lc rgb C_VERMILION title 'pass threshold: 2 std errors'"
                   ", \\\n     NaN with lines dt 2 lw 1.5 lc rgb C_GREEN title 'probe horizon: k = %s'\n"
                   "\nunset multiplot\n",
                htext);
    }
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;

    char rule[512];
    gp_scalar_note(c->st, aid, GS_KEY_PROBE_HORIZON, rule, sizeof rule);
    char vis[600];
    gp_text_visible(vis, sizeof vis, rule, (size_t)-1, 0);
    snprintf(fig->caption, sizeof fig->caption,
             "(a) Top-1 accuracy of a ridge probe that decodes the token read k steps ago from the centered state, "
             "on held-out windows (%s train / %s test windows), against the held-out majority-token baseline; filled "
             "dots pass the rule, open ones fail. (b) The same as a margin in the rule's standard errors of "
             "accuracy - baseline, on a signed log scale. Probe "
             "horizon: %s tokens%s. Rule: %s. The paper did not measure this.",
             gp_num(b1, sizeof b1, gp_scalar(c->st, aid, GS_KEY_TRAIN_WINDOWS)),
             gp_num((char[32]){0}, 32, gp_scalar(c->st, aid, GS_KEY_TEST_WINDOWS)), htext, spread, vis[0] ? vis : "n/a");
    rc = 0;
done:
    gp_file_abort(&a);
    free(ax); free(acc); free(bx); free(by); free(px); free(py); free(nx); free(ny);
    free(base); free(pass); free(ntest); free(z); free(sx); free(sy); free(se);
    return rc;
}
