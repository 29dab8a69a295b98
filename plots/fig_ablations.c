/* ablations: perplexity change under the causal interventions of
 * `gpnscope ablate` (analyses/causal/ablation.h). Each intervention is one
 * analysis named "ablation" with settings {what, scope, windows, seed},
 * scalars delta_ppl, delta_ppl_ci_low, delta_ppl_ci_high (95% t-intervals over
 * documents), ppl_base, ppl_ablated, delta_nll, and the series
 * bucket_delta_nll (x = first position of the bucket, label its name).
 *   (a) single heads ("heads:H"): the change per head, coloured by the
 *       head's retention pool, with the interval;
 *   (b) every other intervention: the perplexity ratio ablated / baseline
 *       on a log axis (one carry ablation of +700 perplexity would squash
 *       every other bar on a linear one), with the interval;
 *   (c) those interventions' NLL change by position bucket.
 * When the same intervention was run with several settings, the newest
 * counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"

#define MAX_IV 128
#define MAX_BUCKETS 16

typedef struct {
    int64_t aid;
    int head; /* >= 0: a single-head ablation */
    char label[96]; /* visible text */
    double delta, lo, hi, base, ablated, dnll;
    int has_buckets; /* a finite bucket value on the common grid */
} intervention;

static int single_head(const char *what) {
    if (!what || strncmp(what, "heads:", 6)) return -1;
    const char *p = what + 6;
    if (!*p) return -1;
    int h = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || h > 100000) return -1;
        h = h * 10 + (*p - '0');
    }
    return h;
}

const char *gp_ablation_label(const store_ablation_ref *r, const char *prefix, char *out, size_t size) {
    const char *scope = r->scope;
    /* a head ablation stored without heads_at zeroed before the norm */
    if ((!strncmp(r->what, "pool:", 5) || !strncmp(r->what, "heads:", 6)) && !*scope) scope = "before-norm";
    snprintf(out, size, "%s%s%s%s%s", prefix, r->what[0] ? r->what : "?", *scope ? " (" : "", scope, *scope ? ")" : "");
    return out;
}

int fig_ablations(const plot_ctx *c, gs_plot_figure *fig) {
    store_ablation_ref *refs = NULL;
    int n_refs = store_newest_ablations(c->st, c->run, &refs);
    if (n_refs < 0) return -1;
    intervention *iv = calloc(MAX_IV, sizeof *iv);
    if (!iv) { free(refs); return gs_fail("out of memory"); }
    int n = 0, max_head = -1;
    for (int k = 0; k < n_refs && n < MAX_IV; k++) {
        int64_t aid = refs[k].id;
        double d = gp_scalar(c->st, aid, "delta_ppl");
        if (!isfinite(d)) continue;
        intervention *v = &iv[n++];
        char raw[300];
        gp_text_visible(v->label, sizeof v->label, gp_ablation_label(&refs[k], "", raw, sizeof raw), (size_t)-1, 32);
        v->aid = aid;
        v->head = single_head(refs[k].what);
        if (v->head > max_head) max_head = v->head;
        v->delta = d;
        v->lo = gp_scalar(c->st, aid, "delta_ppl_ci_low");
        v->hi = gp_scalar(c->st, aid, "delta_ppl_ci_high");
        v->base = gp_scalar(c->st, aid, "ppl_base");
        v->ablated = gp_scalar(c->st, aid, "ppl_ablated");
        v->dnll = gp_scalar(c->st, aid, "delta_nll");
    }
    free(refs);
    if (n == 0) { free(iv); return 1; }

    const int H = max_head >= 0 && max_head < 4096 ? max_head + 1 : 0;
    int n_other = 0;
    for (int i = 0; i < n; i++) n_other += iv[i].head < 0;
    const char *name = "ablations";
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->sources, sizeof fig->sources, "%s%s%s", gs_analysis_stored_name(GS_AN_ABLATION), H ? ", " : "",
             H ? gs_analysis_stored_name(GS_AN_RETENTION) : "");
    snprintf(fig->title, sizeof fig->title, "Causal ablations: perplexity change under each intervention");
    int rc = -1;
    gp_file a = {0};
    double *col = calloc((size_t)(H + 1) * 6 + (size_t)n * 8 + 64, sizeof *col);
    if (!col) { free(iv); return gs_fail("out of memory"); }
    int any_head_ci = 0, has_pool[3] = {0, 0, 0}, any_ci = 0;

    /* ---- (a) data: per head ---- */
    if (H > 0) {
        double *head = col, *d = head + H, *lo = d + H, *hi = lo + H, *pool = hi + H, *aid = pool + H;
        int64_t rid = gp_analysis(c->st, c->run, GS_AN_RETENTION);
        double *px = NULL, *py = NULL;
        int64_t np = gp_series(c->st, rid, "pool", &px, &py);
        for (int h = 0; h < H; h++) {
            head[h] = h;
            d[h] = lo[h] = hi[h] = aid[h] = NAN;
            pool[h] = -1;
            for (int64_t j = 0; j < np; j++)
                if (px[j] == h && (py[j] == 0 || py[j] == 1)) pool[h] = py[j];
        }
        free(px);
        free(py);
        for (int i = 0; i < n; i++) {
            if (iv[i].head < 0) continue;
            int h = iv[i].head;
            d[h] = iv[i].delta; lo[h] = iv[i].lo; hi[h] = iv[i].hi; aid[h] = (double)iv[i].aid;
            any_head_ci |= isfinite(lo[h]) && isfinite(hi[h]);
            has_pool[(int)pool[h] + 1] = 1;
        }
        const double *cols[] = {head, d, lo, hi, pool, aid};
        if (gp_write_columns(c, "ablations-heads.dat",
                             "perplexity change when one memory head's read is zeroed (ablation heads:H: delta_ppl, "
                             "delta_ppl_ci_low, delta_ppl_ci_high; retention: pool, -1 none)",
                             "head delta_ppl ci_low ci_high pool analysis_id", 6, H, cols) != 0)
            goto done;
    }
    /* ---- (b), (c) data: the other interventions ---- */
    double bucket_x[MAX_BUCKETS];
    char bucket_name[MAX_BUCKETS][64];
    int nb = 0, bany = 0;
    double blo = 0, bhi = 0;
    if (n_other > 0) {
        if (gp_file_open(&a, c->dir, "ablations-interventions.dat") != 0) goto done;
        fprintf(a.f, "# perplexity change per intervention (ablation: delta_ppl, delta_ppl_ci_low, delta_ppl_ci_high, "
                     "ppl_base, ppl_ablated, delta_nll)\n# %s, %s\n"
                     "# index delta_ppl ci_low ci_high ppl_base ppl_ablated delta_nll analysis_id\n",
                c->run_label, c->store_name);
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (iv[i].head >= 0) continue;
            const double v[6] = {iv[i].delta, iv[i].lo, iv[i].hi, iv[i].base, iv[i].ablated, iv[i].dnll};
            fprintf(a.f, "%d", ++k);
            for (int j = 0; j < 6; j++) fprintf(a.f, isfinite(v[j]) ? " %.17g" : " NaN", v[j]);
            fprintf(a.f, " %lld\n", (long long)iv[i].aid);
            any_ci |= isfinite(iv[i].lo) && isfinite(iv[i].hi);
        }
        if (gp_file_commit(&a) != 0) goto done;

        /* buckets: the grid of the first intervention that has them */
        double **by = calloc((size_t)n, sizeof *by);
        if (!by) { gs_fail("out of memory"); goto done; }
        for (int i = 0; i < n; i++) {
            if (iv[i].head >= 0) continue;
            double *x = NULL, *y = NULL;
            int64_t m = gp_series(c->st, iv[i].aid, "bucket_delta_nll", &x, &y);
            if (m > 0 && nb == 0) {
                char **labels = NULL;
                int64_t nl = gp_series_labels(c->st, iv[i].aid, "bucket_delta_nll", &labels);
                if (nl < 0) { gs_clear_error(); nl = 0; }
                for (int64_t j = 0; j < m && nb < MAX_BUCKETS; j++) {
                    bucket_x[nb] = x[j];
                    if (j < nl && labels[j]) gp_text_visible(bucket_name[nb], sizeof bucket_name[nb], labels[j], (size_t)-1, 12);
                    else snprintf(bucket_name[nb], sizeof bucket_name[nb], "from %.0f", x[j]);
                    nb++;
                }
                gp_free_labels(labels, nl);
            }
            if (m > 0) {
                by[i] = malloc((size_t)MAX_BUCKETS * sizeof **by);
                if (by[i])
                    for (int b = 0; b < nb; b++) {
                        by[i][b] = NAN;
                        for (int64_t j = 0; j < m; j++) if (x[j] == bucket_x[b]) by[i][b] = y[j];
                    }
            }
            free(x);
            free(y);
        }
        int w = 0;
        if (nb > 0) {
            /* only when some intervention has a value there (else no panel) */
            int any = 0;
            for (int i = 0; i < n; i++)
                for (int b = 0; b < nb && by[i]; b++) any |= isfinite(by[i][b]);
            if (!any) nb = 0;
        }
        if (nb > 0) {
            w = gp_file_open(&a, c->dir, "ablations-buckets.dat");
            if (w == 0) {
                fprintf(a.f, "# mean NLL change per token (nats) by position in the window (ablation: bucket_delta_nll)\n"
                             "# %s, %s\n# bucket first_position", c->run_label, c->store_name);
                for (int i = 0, k2 = 0; i < n; i++) if (iv[i].head < 0) fprintf(a.f, " intervention_%d", ++k2);
                fputc('\n', a.f);
                for (int b = 0; b < nb; b++) {
                    fprintf(a.f, "%d %.17g", b + 1, bucket_x[b]);
                    for (int i = 0; i < n; i++) {
                        if (iv[i].head >= 0) continue;
                        double v = by[i] ? by[i][b] : NAN;
                        fprintf(a.f, isfinite(v) ? " %.17g" : " NaN", v);
                        if (isfinite(v)) {
                            iv[i].has_buckets = 1;
                            if (!bany || v < blo) blo = v;
                            if (!bany || v > bhi) bhi = v;
                            bany = 1;
                        }
                    }
                    fputc('\n', a.f);
                }
                w = gp_file_commit(&a);
            }
        }
        for (int i = 0; i < n; i++) free(by[i]);
        free(by);
        if (w != 0) goto done;
    }

    /* ---- script ---- */
    if (gp_file_open(&a, c->dir, "ablations.gp") != 0) goto done;
    FILE *f = a.f;
    char files[160];
    snprintf(files, sizeof files, "%s%s%s%s", H ? "ablations-heads.dat" : "", H && n_other ? ", " : "",
             n_other ? "ablations-interventions.dat" : "", nb ? ", ablations-buckets.dat" : "");
    gp_preamble(f, c, name, "perplexity change under causal interventions", files);
    fprintf(f, "set multiplot title sprintf('Causal ablations · %%s', RUN) font TITLE_FONT\n");
    fprintf(f, "C_FAST = C_VERMILION; C_SLOW = C_BLUE\n");
    /* layout: (a) and (b) side by side on top when both exist, (c) below them */
    const double top_y = nb ? 0.47 : 0.0, top_h = nb ? 0.47 : 0.94;
    if (H > 0) {
        double lo = 0, hi = 0, l2 = 0, h2 = 0;
        const double *d = col + H, *clo = col + 2 * H, *chi = col + 3 * H;
        gp_minmax(d, H, &lo, &hi);
        if (gp_minmax(clo, H, &l2, &h2) && l2 < lo) lo = l2;
        if (gp_minmax(chi, H, &l2, &h2) && h2 > hi) hi = h2;
        if (lo > 0) lo = 0;
        if (hi < 0) hi = 0;
        gp_pad(&lo, &hi, 0);
        hi += 0.35 * (hi - lo); /* headroom for the key, top left */
        gp_panel(f, "(a) one head at a time", 0.0, top_y, n_other ? 0.5 : 1.0, top_h);
        fprintf(f,
                "set title '(a) zeroing one memory head''s read'\n"
                "set xlabel 'memory head'\n"
                "set ylabel 'perplexity change (ablated - baseline)'\n"
                "set xrange [-0.7:%d-0.3]\nset yrange [%.17g:%.17g]\n"
                "set xtics 1\nset grid noxtics\n"
                "set key top left\n"
                "set style fill solid 0.85\n"
                "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb C_GREY\n",
                H, lo, hi);
        static const char *const clause[3] = {
            "using 1:($5 < 0 ? $2 : NaN):(0.7) with boxes lc rgb C_GREY title 'head (no pools)'",
            "using 1:($5 == 0 ? $2 : NaN):(0.7) with boxes lc rgb C_FAST title 'fast pool'",
            "using 1:($5 == 1 ? $2 : NaN):(0.7) with boxes lc rgb C_SLOW title 'slow pool'"};
        int first = 1;
        for (int p = 0; p < 3; p++) {
            if (!has_pool[p]) continue;
            fprintf(f, "%s%s", first ? "plot 'ablations-heads.dat' " : ", \\\n     '' ", clause[p]);
            first = 0;
        }
        if (any_head_ci) fprintf(f, ", \\\n     '' using 1:2:3:4 with yerrorbars pt 7 ps 0.6 lw 2 lc rgb '#000000' title '95%% interval'");
        fprintf(f, "\n");
    }
    if (n_other > 0) {
        /* ratios ablated / base and their intervals, with 1 (no change) inside */
        double lo = 1, hi = 1;
        for (int i = 0; i < n; i++) {
            if (iv[i].head >= 0 || !(iv[i].base > 0)) continue;
            const double v[3] = {iv[i].ablated, iv[i].base + iv[i].lo, iv[i].base + iv[i].hi};
            for (int j = 0; j < 3; j++) {
                double r = v[j] / iv[i].base;
                if (!isfinite(r) || r <= 0) continue;
                if (r < lo) lo = r;
                if (r > hi) hi = r;
            }
        }
        lo /= 1.12;
        hi *= 1.12;
        gp_panel(f, "(b) each intervention", H ? 0.5 : 0.0, top_y, H ? 0.5 : 1.0, top_h);
        fprintf(f,
                "set title '(b) each intervention'\n"
                "set xlabel 'perplexity ratio ablated / baseline (log axis)'\n"
                "unset ylabel\n"
                "set logscale x\n"
                "set xrange [%.17g:%.17g]\nset yrange [%d.5:0.4]\n"
                "unset mxtics\n"
                "set grid noytics\nset key off\nunset ytics\n"
                "set style fill solid 0.85\n"
                "set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead lw 1 lc rgb C_GREY\n"
                "R(b, a) = (b > 0 && a > 0) ? a / b : NaN\n"
                "# what was ablated, as stored: a label above each bar\n",
                lo, hi, n_other);
        /* tics at readable ratios inside the range (gnuplot's own log tics are
         * powers of ten, none of which may fall in a range like 0.9-2.5) */
        static const double rt[] = {0.1, 0.2, 0.5, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 1e4};
        fprintf(f, "set xtics (");
        for (size_t i = 0, k = 0; i < sizeof rt / sizeof *rt; i++)
            if (rt[i] >= lo && rt[i] <= hi) fprintf(f, "%s'%g' %g", k++ ? ", " : "", rt[i], rt[i]);
        fprintf(f, ")\n");
        char q[400];
        for (int i = 0, k = 0; i < n; i++) {
            if (iv[i].head >= 0) continue;
            k++;
            char lab[200];
            snprintf(lab, sizeof lab, "%s: %+.3g ppl", iv[i].label, iv[i].delta);
            fprintf(f, "set label %d %s at graph 0.02, first %d.0 - 0.28 left front\n", k,
                    gp_quote(q, sizeof q, lab, 0), k);
        }
        fprintf(f, "plot 'ablations-interventions.dat' using (R($5,$6)):($1+0.12):(R($5,$6) < 1 ? R($5,$6) : 1):"
                   "(R($5,$6) < 1 ? 1 : R($5,$6)):($1+0.02):($1+0.22) with boxxyerror lc rgb C_BLUE notitle%s\n",
                any_ci ? ", \\\n     '' using (R($5,$6)):($1+0.12):(R($5,$5+$3)):(R($5,$5+$4)) with xerrorbars pt 7 ps 0.6 lw 2 "
                         "lc rgb '#000000' notitle" : "");
        fprintf(f, "unset logscale x\nunset mxtics\n");
    }
    if (nb > 0) {
        if (blo > 0) blo = 0;
        if (bhi < 0) bhi = 0;
        gp_pad(&blo, &bhi, 0);
        gp_panel(f, "(c) by position in the window: bottom", 0.0, 0.0, 1.0, 0.47);
        fprintf(f,
                "set title '(c) NLL change by position in the window'\n"
                "set xlabel 'positions in the window'\n"
                "set ylabel 'NLL change (nats/token)'\n"
                "set xrange [0.6:%d.4]\nset yrange [%.17g:%.17g]\n"
                "set key outside right top Left reverse\n"
                "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb C_GREY\n"
                "set xtics (",
                nb, blo, bhi);
        char q[128];
        for (int b = 0; b < nb; b++)
            fprintf(f, "%s%s %d", b ? ", " : "", gp_quote(q, sizeof q, bucket_name[b], GP_Q_PERCENT), b + 1);
        fprintf(f, ")\n");
        fprintf(f, "plot ");
        static const char *const colours[6] = {"C_BLUE", "C_VERMILION", "C_GREEN", "C_ORANGE", "C_PURPLE", "C_SKY"};
        char t[200];
        for (int i = 0, k = 0, shown = 0; i < n; i++) {
            if (iv[i].head >= 0) continue;
            k++; /* column k + 2 of the data file */
            if (!iv[i].has_buckets) continue; /* an empty column would make gnuplot warn */
            fprintf(f, "%s'ablations-buckets.dat' using 1:%d with linespoints lw 2.5 pt %d ps 1.3 lc rgb %s title %s",
                    shown ? ", \\\n     " : "", k + 2, 5 + 2 * (shown % 4), colours[shown % 6],
                    gp_quote(t, sizeof t, iv[i].label, 0));
            shown++;
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nunset multiplot\n");
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;
    snprintf(fig->caption, sizeof fig->caption,
             "Perplexity on the run's own tokens under each intervention minus the unablated perplexity on the same "
             "tokens%s%s%s. Error bars: 95%% t-intervals over documents (head ablations zero the heads before the "
             "read's output norm unless labelled after-norm). The paper did not measure these.",
             H ? "; (a) zeroing the memory read of one head, coloured by the head's retention pool" : "",
             n_other ? "; (b) the other interventions (mean direction removed, pools of heads) as the perplexity ratio "
                       "on a log axis" : "",
             nb ? "; (c) their mean NLL change per token by position in the window (slow heads should matter late)" : "");
    rc = 0;
done:
    gp_file_abort(&a);
    free(col);
    free(iv);
    return rc;
}
