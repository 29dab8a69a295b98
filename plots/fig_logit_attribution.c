/* logit_attribution: the mean share of the recorded token's logit each part
 * of the predicted state holds (gpnscope attribute), as bars: the signed mean
 * and the mean magnitude, one pair per part (carry, grounded input, FFN per
 * layer, memory per layer and head), the residual's size in the title. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"

int fig_logit_attribution(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t aid = gp_analysis(c->st, c->run, GS_AN_ATTRIBUTION);
    if (aid <= 0) return 1;
    double *x = NULL, *mean = NULL, *ax = NULL, *mabs = NULL;
    char **labels = NULL;
    int rc = -1;
    int64_t nl = 0;
    gp_file a = {0};
    int64_t n = gp_series(c->st, aid, "mean", &x, &mean), na = gp_series(c->st, aid, "mean_abs", &ax, &mabs);
    if (n < 0 || na < 0 || (nl = gp_series_labels(c->st, aid, "mean", &labels)) < 0) goto done;
    if (n == 0 || na != n || nl != n) { rc = 1; goto done; }
    snprintf(fig->name, sizeof fig->name, "logit_attribution");
    snprintf(fig->sources, sizeof fig->sources, "logit_attribution");
    snprintf(fig->title, sizeof fig->title, "Direct logit attribution: where each token's logit comes from");
    /* the residual is drawn as its own part; it is float rounding, so leave it out of the bars */
    int64_t m = n;
    while (m > 0 && labels[m - 1] && !strcmp(labels[m - 1], "residual")) m--;
    const double *cols[] = {x, mean, mabs};
    if (gp_write_columns(c, "logit_attribution.dat",
                         "direct logit attribution (logit_attribution: series mean, mean_abs), one row per part in "
                         "the order carry, ground, ffn per layer, mem per layer and head, bias, residual",
                         "part mean mean_abs", 3, n, cols) != 0)
        goto done;
    if (gp_file_open(&a, c->dir, "logit_attribution.gp") != 0) goto done;
    FILE *f = a.f;
    gp_preamble(f, c, "logit_attribution", "mean logit share of each part of the predicted state", "logit_attribution.dat");
    char b1[32], b2[32];
    gp_num(b1, sizeof b1, gp_scalar(c->st, aid, "residual_rel"));
    fprintf(f, "set title sprintf('Direct logit attribution, decode scale frozen (residual <= %s) · %%s', RUN) "
               "font TITLE_FONT\n", b1);
    fprintf(f, "set style data histogram\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
               "set boxwidth 0.9\nset ylabel 'logit of the recorded token'\nset grid ytics\n"
               "set key inside top right\nset xrange [-0.7:%lld.7]\n", (long long)(m - 1));
    fprintf(f, "set xtics (");
    for (int64_t i = 0; i < m; i++) {
        char vis[64], qq[160];
        gp_text_visible(vis, sizeof vis, labels[i] ? labels[i] : "?", (size_t)-1, 16);
        fprintf(f, "%s%s %lld", i ? ", " : "", gp_quote(qq, sizeof qq, vis, GP_Q_PERCENT), (long long)i);
    }
    fprintf(f, ") rotate by 45 right\n");
    fprintf(f, "plot 'logit_attribution.dat' every ::0::%lld using 2 title 'mean' lc rgb C_BLUE, \\\n"
               "     '' every ::0::%lld using 3 title 'mean |.|' lc rgb C_GREY\n",
            (long long)(m - 1), (long long)(m - 1));
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;
    snprintf(fig->caption, sizeof fig->caption,
             "The recorded token's logit split over the parts of the predicted state the step forms: the gated carry "
             "of the previous state, the grounded input path, each layer's FFN output and each memory head's read, "
             "each times the predict gates of the later layers, decoded with the decode norm's scale frozen from the "
             "full state. Bars: the mean over %s tokens and the mean magnitude. The parts add up to the logit up to "
             "a residual of at most %s of the mean |logit| (float rounding).",
             gp_tokens(b2, sizeof b2, gp_scalar(c->st, aid, "tokens")), b1);
    rc = 0;
done:
    gp_file_abort(&a);
    free(x);
    free(mean);
    free(ax);
    free(mabs);
    if (labels) gp_free_labels(labels, nl);
    return rc;
}
