/* The figure table (plots/gp.h): one row per figure, keyed by the analysis
 * it is drawn from, with the study notebook's matplotlib twin beside it. */
#include "plots/gp.h"

const gp_figure_row gp_figure_rows[] = {
    {GS_AN_GEOMETRY, 0, fig_geometry, "geometry", NULL,
     "How the state's variance spreads: (a) sorted coordinate spreads, a flat curve means no dominant coordinate; "
     "(b) coordinate correlations, pale means nearly independent; (c) how few components reach 90% and 99%."},
    {GS_AN_HORIZON, GS_AN_RETENTION, fig_horizons, "horizons", NULL,
     "How long content stays: (a) the state's similarity to itself k tokens later, the horizon where the centered "
     "curve falls to 1/e and 0.02; (b) each memory head's retention, its dot the 1/e time, colour its pool."},
    {GS_AN_DEFAULT, 0, fig_default_direction, "default-direction", NULL,
     "Whether the mean state is a default prediction: (a) the tokens the mean state decodes to, longest bar most "
     "likely; (b) how fast the running mean of the states settles on that direction (near 1: settled)."},
    {GS_AN_PROBE, 0, fig_probe, "probe", NULL,
     "How far back the state still names a token: a linear probe's accuracy at recovering the token k steps ago "
     "against the majority baseline; filled dots pass the rule, the horizon is the last lag before the first fail."},
    {GS_AN_ABLATION, GS_AN_RETENTION, fig_ablations, NULL /* the notebook lists ablations in its "other" cell */,
     " (no delta_ppl in it: see docs/plots.md, Ablations)",
     "What removing a part costs: (a) each head's perplexity change, coloured by pool; (b) other interventions as "
     "perplexity ratios on a log axis; (c) where in the window the loss goes. Longer bars: the part matters more."},
    {GS_AN_ATTENTION, 0, fig_attention, NULL /* the notebook's section 8 draws it */, NULL,
     "Which earlier tokens each read draws on: row t is the read at step t, column j the write at step j; red adds, "
     "blue subtracts; colour far left of the diagonal is long-range recall."},
    {GS_AN_ATTRIBUTION, 0, fig_logit_attribution, NULL /* the notebook's section 8 draws it */, NULL,
     "Which parts of the step form the recorded token's logit: each part's mean share (blue) and its mean size "
     "(grey); a part whose grey bar is long but blue short pushes both ways and cancels out."},
    {0, 0, fig_lens, NULL /* the notebook's section 9 shows the lens as a table */, NULL,
     "What each site would predict if decoded: rows are sites, columns positions, the cell's token the top-1 guess "
     "and its colour the logit; a token that appears early in a row is known early."}, /* an experiment's */
};

const int gp_n_figure_rows = (int)(sizeof gp_figure_rows / sizeof *gp_figure_rows);
_Static_assert(sizeof gp_figure_rows / sizeof *gp_figure_rows <= GS_PLOT_MAX_FIGURES,
               "gs_plot_result holds GS_PLOT_MAX_FIGURES figures");
