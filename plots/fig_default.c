/* default_direction: the mean state as a default-token distribution (section
 * 2 of docs/analyses.md): (a) the top 20 tokens of decode(s_bar) as labelled
 * bars, (b) the emergence curve cos(m_t, s_bar) of the running mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"

#define TOP_N 20
#define LABEL_CHARS 20

/* indices of the n largest values, descending, ties to the lower index */
static int top_n(const double *v, int64_t V, int n, int64_t *out) {
    int k = 0;
    for (int64_t i = 0; i < V; i++) {
        if (!isfinite(v[i])) continue;
        if (k == n && !(v[i] > v[out[k - 1]])) continue;
        int j = k < n ? k++ : n - 1;
        while (j > 0 && v[i] > v[out[j - 1]]) { out[j] = out[j - 1]; j--; }
        out[j] = i;
    }
    return k;
}

/* the text shown for a token: its piece in quotes (spaces visible), or #id */
static void token_label(const plot_ctx *c, int64_t id, const char *stored, char *out, size_t size) {
    char piece[1024], vis[512];
    const char *text = NULL;
    if (store_token_piece(c->st, c->run, (int32_t)id, piece, sizeof piece) == 0) text = piece;
    else { gs_clear_error(); text = stored; }
    if (!text) { snprintf(out, size, "#%lld", (long long)id); return; }
    gp_token_visible(vis, sizeof vis, text, LABEL_CHARS);
    snprintf(out, size, "\"%s\"", vis);
}

/* The vocabulary size of the run's model (else its tokenizer's); 0 when neither is known. */
static int64_t run_vocab(const plot_ctx *c) {
    store_run_info info;
    if (store_run_get(c->st, c->run, &info) != 0) { gs_clear_error(); return 0; }
    return info.model_vocab > 0 ? info.model_vocab : info.tokenizer_vocab > 0 ? info.tokenizer_vocab : 0;
}

int fig_default_direction(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t aid = gp_analysis(c->st, c->run, GS_AN_DEFAULT);
    if (aid <= 0) return 1;
    const char *name = "default_direction";
    double *logits = NULL, *tx = NULL, *ty = NULL, *ex = NULL, *ey = NULL;
    char **stored = NULL;
    int64_t nst = 0;
    int rc = -1;
    gp_file a = {0};
    int64_t V = gp_vector(c->st, aid, GS_KEY_LOGITS_BAR, &logits);
    int64_t nt = gp_series(c->st, aid, GS_KEY_DEFAULT_TOKENS, &tx, &ty);
    int64_t nem = gp_series(c->st, aid, GS_KEY_EMERGENCE, &ex, &ey);
    if (V < 0 || nt < 0 || nem < 0) goto done;
    /* logits_bar is a decode over the whole vocabulary: a shorter (or longer) row has lost ids, and its
     * largest entries are not the top tokens. The stored top list stands in, and both are said. */
    int64_t vocab = run_vocab(c);
    char problem[300] = "";
    if (V > 0 && vocab > 0 && V != vocab) {
        snprintf(problem, sizeof problem, "logits_bar holds %lld values but the run's vocabulary has %lld tokens, "
                 "so its top tokens are not drawn from it (%s)", (long long)V, (long long)vocab,
                 nt > 0 ? "the stored default_tokens list is shown instead" : "and no default_tokens list is stored");
        snprintf(fig->problem, sizeof fig->problem, "%s", problem);
        V = 0;
    }
    if (nt > 0 && (nst = gp_series_labels(c->st, aid, GS_KEY_DEFAULT_TOKENS, &stored)) < 0) goto done;
    snprintf(fig->name, sizeof fig->name, "%s", name);
    snprintf(fig->sources, sizeof fig->sources, "%s", gs_analysis_stored_name(GS_AN_DEFAULT));
    snprintf(fig->title, sizeof fig->title, "The mean state as a default-token distribution");

    /* the top tokens: from the whole logit vector when stored, else the stored top list */
    int64_t ids[TOP_N];
    double val[TOP_N];
    const char *stored_label[TOP_N];
    int n = 0;
    if (V > 0) {
        n = top_n(logits, V, TOP_N, ids);
        for (int i = 0; i < n; i++) {
            val[i] = logits[ids[i]];
            stored_label[i] = NULL;
            for (int64_t j = 0; j < nt && j < nst; j++) if (tx[j] == (double)ids[i]) stored_label[i] = stored[j];
        }
    } else {
        for (int64_t j = 0; j < nt && n < TOP_N; j++) {
            if (!isfinite(tx[j])) continue;
            ids[n] = (int64_t)tx[j];
            val[n] = ty[j];
            stored_label[n] = j < nst ? stored[j] : NULL;
            n++;
        }
    }
    char labels[TOP_N][LABEL_CHARS * 12 + 8];
    for (int i = 0; i < n; i++) token_label(c, ids[i], stored_label[i], labels[i], sizeof labels[i]);

    if (n > 0) {
        double rank[TOP_N], idd[TOP_N];
        for (int i = 0; i < n; i++) { rank[i] = i + 1; idd[i] = (double)ids[i]; }
        const double *cols[] = {rank, idd, val};
        if (gp_write_columns(c, "default_direction-tokens.dat",
                             V > 0 ? "top tokens of decode(s_bar): logits_bar sorted descending (default_direction: logits_bar)"
                                   : "top tokens of decode(s_bar) (default_direction: default_tokens)",
                             "rank token_id logit", 3, n, cols) != 0)
            goto done;
    }
    if (nem > 0) {
        const double *cols[] = {ex, ey};
        if (gp_write_columns(c, "default_direction-emergence.dat",
                             "cos(m_t, s_bar), m_t the running mean of a window's first t states, averaged over "
                             "windows (default_direction: emergence)",
                             "t cosine", 2, nem, cols) != 0)
            goto done;
    }
    const double t10 = gp_scalar(c->st, aid, GS_KEY_EMERGENCE_T10), t100 = gp_scalar(c->st, aid, GS_KEY_EMERGENCE_T100);
    if (nem > 0) {
        double mk[2] = {10, 100}, mv[2] = {t10, t100};
        const double *cols[] = {mk, mv};
        if (gp_write_columns(c, "default_direction-emergence_marks.dat",
                             "the emergence curve at t = 10 and t = 100 (emergence_t10, emergence_t100)", "t cosine", 2,
                             2, cols) != 0)
            goto done;
    }

    if (gp_file_open(&a, c->dir, "default_direction.gp") != 0) goto done;
    FILE *f = a.f;
    gp_preamble(f, c, name, "the mean state's decoded tokens and how fast the running mean finds it",
                "default_direction-tokens.dat, default_direction-emergence.dat, default_direction-emergence_marks.dat");
    fprintf(f, "set multiplot title sprintf('The mean state as a default-token distribution · %%s', RUN) font TITLE_FONT\n");

    /* (a) */
    gp_panel(f, "(a) top tokens of decode(mean state): left, a little wider for the token texts", 0.0, 0.0, 0.54, 0.94);
    if (n > 0) {
        double lo = 0, hi = 0;
        gp_minmax(val, n, &lo, &hi);
        if (lo > 0) lo = 0;
        if (hi < 0) hi = 0;
        gp_pad(&lo, &hi, 0);
        if (val[n - 1] >= 0) lo = 0;
        fprintf(f,
                "set title \"(a) the mean state's top %d tokens\"\n"
                "set xlabel 'logit of decode(mean state) (nats)'\n"
                "unset ylabel\n"
                "set xrange [%.17g:%.17g]\nset yrange [%d.6:0.4]\n"
                "set xtics %g\n"
                "set grid noytics\n"
                "set key off\n"
                "set style fill solid 0.85 border lc rgb C_BLUE\n"
                "# token texts, shown in quotes so spaces are visible (tic labels are formats: %%%% prints one %%)\n"
                "set ytics scale 0 (",
                n, lo, hi, n, gp_nice_step(lo, hi, 4));
        char q[LABEL_CHARS * 24 + 16];
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%s %d", i ? ", \\\n    " : "", gp_quote(q, sizeof q, labels[i], GP_Q_PERCENT), i + 1);
        fprintf(f, ")\n"
                   "plot 'default_direction-tokens.dat' using ($3/2):1:(abs($3)/2):(0.38) with boxxyerror lc rgb C_BLUE notitle\n"
                   );
    } else {
        gp_empty_panel(f, "(a) tokens decoded from the mean state",
                       problem[0] ? problem : "no decode stored: analyze with the run's model (default_direction: logits_bar)");
    }

    /* (b) */
    gp_panel(f, "(b) emergence: right", 0.54, 0.0, 0.46, 0.94);
    if (nem > 0) {
        double lo = 0, hi = 1, tmax = 2, tmin = 1;
        gp_minmax(ey, nem, &lo, &hi);
        if (hi < 1 && hi > 0.9) hi = 1;
        gp_pad(&lo, &hi, 0);
        if (hi > 1 && hi < 1.1) hi = 1.02;
        gp_minmax(ex, nem, &tmin, &tmax);
        if (!(tmin > 0)) tmin = 1;
        if (!(tmax > tmin)) tmax = tmin * 2;
        char b1[32], b2[32];
        fprintf(f,
                "set title \"(b) emergence of the mean direction\\nat t = 10: %s; at t = 100: %s\"\n"
                "set logscale x\n"
                "set xlabel 't: states in m_t (tokens, log scale)'\n"
                "set ylabel 'cos(m_t, mean state), mean over windows'\n"
                "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n"
                "set key off\n",
                gp_num(b1, sizeof b1, t10), gp_num(b2, sizeof b2, t100), tmin, tmax, lo, hi);
        gp_log_tics(f, "x", tmin, tmax);
        /* the values at t = 10 and 100: below right of the point in the left part of the axis, above left
         * further right (the curve rises from the left, so both sides stay clear of it) */
        const double mt[2] = {10, 100}, mv[2] = {t10, t100};
        for (int i = 0; i < 2; i++) {
            if (!isfinite(mv[i]) || mt[i] < tmin || mt[i] > tmax) continue;
            int right = log(mt[i] / tmin) > 0.6 * log(tmax / tmin);
            fprintf(f, "set label %d 't = %g: %.3f' at first %g, first %.17g %s offset char %s, char %s tc rgb C_VERMILION\n",
                    i + 1, mt[i], mv[i], mt[i], mv[i], right ? "right" : "left", right ? "-0.8" : "0.8",
                    right ? "1" : "-1");
        }
        fprintf(f, "plot 'default_direction-emergence.dat' using 1:2 with lines lw 2.5 lc rgb C_BLUE notitle");
        if (isfinite(t10) || isfinite(t100))
            fprintf(f, ", \\\n     'default_direction-emergence_marks.dat' using 1:2 with points pt 7 ps 1.6 lc rgb C_VERMILION "
                       "notitle");
        fprintf(f, "\n");
    } else {
        gp_empty_panel(f, "(b) emergence of the mean direction", "not in the store (default_direction: emergence)");
    }
    fprintf(f, "\nunset multiplot\n");
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;

    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], uni[320];
    /* like for like: only the training corpus's Spearman stands beside the paper's +0.46 */
    double spt = gp_scalar(c->st, aid, GS_KEY_SPEARMAN_UNIGRAM_TRAIN), spr = gp_scalar(c->st, aid, GS_KEY_SPEARMAN_UNIGRAM);
    if (isfinite(spt))
        snprintf(uni, sizeof uni, "Spearman correlation with the training corpus's unigram counts: %s (paper +0.46, "
                 "also against its training corpus); with the recorded text's: %s",
                 gp_num(b3, sizeof b3, spt), gp_num(b6, sizeof b6, spr));
    else
        snprintf(uni, sizeof uni, "Spearman correlation with the recorded text's unigram counts: %s (the paper's "
                 "+0.46 is against its training corpus, which was not given: not comparable)",
                 gp_num(b3, sizeof b3, spr));
    snprintf(fig->caption, sizeof fig->caption,
             "(a) The %d tokens with the highest logits when the mean state s_bar (norm %s, %s times the mean "
             "state norm) is decoded by the model's own readout; text in quotes, so leading spaces show (paper: \",\" \" and\" "
             "\" the\" \" in\" \" to\" \" a\" ...). %s. (b) Cosine between the running mean m_t of a window's first t "
             "states and s_bar, averaged over windows: %s at t = 10, %s at t = 100 (paper: 0.98 and 0.996).",
             n, gp_num(b1, sizeof b1, gp_scalar(c->st, aid, GS_KEY_MEAN_NORM)),
             gp_num(b2, sizeof b2, gp_scalar(c->st, aid, GS_KEY_NORM_RATIO)), uni, gp_num(b4, sizeof b4, t10),
             gp_num(b5, sizeof b5, t100));
    if (problem[0]) {
        size_t k = strlen(fig->caption);
        snprintf(fig->caption + k, sizeof fig->caption - k, " Note: %s.", problem);
    }
    rc = 0;
done:
    gp_file_abort(&a);
    free(logits); free(tx); free(ty); free(ex); free(ey);
    gp_free_labels(stored, nst);
    return rc;
}
