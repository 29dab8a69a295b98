/* effective_attention: per-head heatmaps of the exact effective attention
 * a_tj of the run's newest attention analysis (gpnscope attention), over
 * its first stored window, query down, key across, the tokens on both axes,
 * a diverging palette around 0 (delta-rule weights may be negative). One
 * layer: the first the analysis stored matrices for; every head it stored
 * (at most 16: gpnscope attention --heads chooses), each a square panel in a
 * near-square grid on a canvas as tall as the grid needs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "store/causal.h"

#define MAX_PANELS 16
#define MAX_TICS 7 /* token labels per axis: more pile up in a panel a quarter of the width */

/* "set xtics (...)" labels: the token each position's state last read */
static void tics(FILE *f, const char *axis, char **pieces, int T, int offset) {
    int step = (T + MAX_TICS - 1) / MAX_TICS;
    fprintf(f, "set %stics (", axis);
    for (int t = 0, first = 1; t < T; t += step, first = 0) {
        int at = t - offset;
        char vis[64], q[160];
        gp_token_visible(vis, sizeof vis, at >= 0 && pieces[at] ? pieces[at] : "·", 7);
        fprintf(f, "%s%s %d", first ? "" : ", ", gp_quote(q, sizeof q, vis, GP_Q_PERCENT), t);
    }
    fprintf(f, ")%s font ',9'\n", axis[0] == 'x' ? " rotate by 60 right" : "");
}

int fig_attention(const plot_ctx *c, gs_plot_figure *fig) {
    int64_t aid = gp_analysis(c->st, c->run, GS_AN_ATTENTION);
    if (aid <= 0) return 1;
    int32_t window = 0, layer = 0;
    int heads[MAX_PANELS];
    int n = store_attention_first_panel(c->st, aid, &window, &layer, heads, MAX_PANELS);
    if (n < 0) return -1;
    snprintf(fig->name, sizeof fig->name, "effective_attention");
    snprintf(fig->sources, sizeof fig->sources, "attention");
    snprintf(fig->title, sizeof fig->title, "Exact effective attention of the memory heads");
    if (n == 0) {
        snprintf(fig->problem, sizeof fig->problem, "the attention analysis stored no full matrices (its length was over "
                 "--full-upto): rerun gpnscope attention with a shorter --length or a larger --full-upto");
        return 1;
    }
    int rc = -1, T = 0;
    char **pieces = NULL;
    float *w = NULL;
    gp_file a = {0}, d = {0};
    int offset = isfinite(gp_scalar(c->st, aid, "token_offset")) ? (int)gp_scalar(c->st, aid, "token_offset") : 0;
    double l1[MAX_PANELS], mx[MAX_PANELS];
    for (int i = 0; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "L%d.h%d.heuristic_l1", layer, heads[i]);
        l1[i] = gp_scalar(c->st, aid, key);
        int32_t side;
        free(w);
        w = NULL;
        int got = store_read_attention_matrix(c->st, aid, window, layer, heads[i], "exact", &w, &side);
        if (got != 0) { if (got > 0) gs_fail("attention matrix of head %d vanished", heads[i]); goto done; }
        T = side;
        mx[i] = 0;
        for (long k = 0; k < (long)side * side; k++) mx[i] = fmax(mx[i], fabs(w[k]));
        if (!(mx[i] > 0)) mx[i] = 1;
        char file[64];
        snprintf(file, sizeof file, "effective_attention-h%d.dat", heads[i]);
        if (gp_file_open(&d, c->dir, file) != 0) goto done;
        fprintf(d.f, "# exact effective attention a_tj of layer %d, head %d, window %d: row t = query, column j = key "
                     "(gnuplot 'matrix' layout)\n", layer, heads[i], window);
        for (int t = 0; t < side; t++)
            for (int j = 0; j < side; j++) fprintf(d.f, "%.6g%c", w[(size_t)t * side + j], j + 1 < side ? ' ' : '\n');
        if (gp_file_commit(&d) != 0) goto done;
    }
    pieces = calloc((size_t)T, sizeof *pieces);
    if (!pieces) { gs_fail("out of memory"); goto done; }
    store_window_pieces(c->st, c->run, window, T, pieces); /* best effort: tics without text otherwise */
    if (gp_file_open(&a, c->dir, "effective_attention.gp") != 0) goto done;
    FILE *f = a.f;
    /* a near-square grid of square panels (set size ratio 1): the canvas
     * widens to 360 pixels a column and is as tall as the rows need */
    int cols = 1;
    while (cols * cols < n) cols++;
    int rows = (n + cols - 1) / cols;
    gs_plot_opts tall = *c->o;
    if (tall.width < 360 * cols) tall.width = 360 * cols;
    tall.height = (int)((double)tall.width * rows / cols * 0.8) + 60;
    plot_ctx grid = *c;
    grid.o = &tall;
    gp_preamble(f, &grid, "effective_attention", "exact effective attention a_tj per memory head (query down, key across)",
                "effective_attention-h*.dat");
    fprintf(f, "set multiplot title sprintf('Effective attention a_tj, layer %d, window %d (query down, key across) · %%s', "
               "RUN) font TITLE_FONT\n",
            layer, window);
    fprintf(f, "set palette defined (-1 '#2166ac', 0 '#ffffff', 1 '#b2182b')\n");
    for (int i = 0; i < n; i++) {
        char comment[64];
        snprintf(comment, sizeof comment, "head %d", heads[i]);
        gp_panel(f, comment, (double)(i % cols) / cols, (rows - 1 - i / cols) * 0.94 / rows, 1.0 / cols, 0.94 / rows);
        /* the colour range: the head's largest |a| on both sides of 0 */
        fprintf(f,
                "M = %.6g    # the largest |a_tj| of this head\n"
                "set size ratio 1; set cbrange [-M:M]; set colorbox; set grid noxtics noytics; unset key\n"
                "set cbtics M format '%%.2g' font ',9'\n"
                "set title 'head %d · heuristic L1 %.2f' font ',11'\n"
                "set xrange [-0.5:%d.5]; set yrange [%d.5:-0.5]\n"
                "unset xlabel; unset ylabel; set lmargin 6; set rmargin 6; set bmargin 4; set tmargin 1.5\n",
                mx[i], heads[i], l1[i], T - 1, T - 1);
        tics(f, "x", pieces, T, offset);
        tics(f, "y", pieces, T, offset);
        fprintf(f, "plot 'effective_attention-h%d.dat' matrix with image notitle\n", heads[i]);
    }
    fprintf(f, "\nunset multiplot\n");
    gp_epilogue(f);
    if (gp_file_commit(&a) != 0) goto done;
    snprintf(fig->caption, sizeof fig->caption,
             "Exact effective attention a_tj = beta_j k_j^T A_{j+1}...A_t q_t of %d memory head%s of layer %d over window "
             "%d (%d positions): row t is the read at step t, column j the write at step j, red positive, blue negative, "
             "each panel scaled to its largest |a|. Axis labels: the token the step's state last read (position t - %d). "
             "In the panel titles, the heuristic that drops key removal, as mean sum_j |h - a| / sum_j |a|.",
             n, n == 1 ? "" : "s", layer, window, T, offset);
    rc = 0;
done:
    gp_file_abort(&a);
    gp_file_abort(&d);
    for (int i = 0; pieces && i < T; i++) free(pieces[i]);
    free(pieces);
    free(w);
    return rc;
}
