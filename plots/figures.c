/* The figure table (plots/gp.h): one row per figure, keyed by the analysis
 * it is drawn from, with the study notebook's matplotlib twin beside it. */
#include "plots/gp.h"

const gp_figure_row gp_figure_rows[] = {
    {GS_AN_GEOMETRY, 0, fig_geometry, "geometry", NULL},
    {GS_AN_HORIZON, GS_AN_RETENTION, fig_horizons, "horizons", NULL},
    {GS_AN_DEFAULT, 0, fig_default_direction, "default-direction", NULL},
    {GS_AN_PROBE, 0, fig_probe, "probe", NULL},
    {GS_AN_ABLATION, GS_AN_RETENTION, fig_ablations, NULL /* the notebook lists ablations in its "other" cell */,
     " (no delta_ppl in it: see docs/plots.md, Ablations)"},
    {GS_AN_ATTENTION, 0, fig_attention, NULL /* the notebook's section 8 draws it */, NULL},
    {GS_AN_ATTRIBUTION, 0, fig_logit_attribution, NULL /* the notebook's section 8 draws it */, NULL},
    {0, 0, fig_lens, NULL /* the notebook's section 9 shows the lens as a table */, NULL}, /* an experiment's */
};

const int gp_n_figure_rows = (int)(sizeof gp_figure_rows / sizeof *gp_figure_rows);
_Static_assert(sizeof gp_figure_rows / sizeof *gp_figure_rows <= GS_PLOT_MAX_FIGURES,
               "gs_plot_result holds GS_PLOT_MAX_FIGURES figures");
