/* The figures and report of `gpnscope compare` (docs/comparison.md), drawn
 * from its JSON with the curves (analyses' gs_compare_json(c, 1), saved as
 * DIR/compare.json): plots/ reads only that text, never the analyses.
 *
 *   compare_explained   cumulative explained variance of each row's states
 *   compare_horizons    raw and centered lag cosines, overlaid per row
 *   compare_default     ||s_bar|| / mean ||s|| with its bootstrap interval per
 *                       row, and the emergence curve cos(m_t, s_bar)
 *   compare_retention   per-head retention R_h(k) of every row with decaying
 *                       heads (all starts solid, from the start dashed)
 *
 * Then report.md and report.html: the table, the verdicts and every figure. */
#ifndef GS_PLOTS_COMPARE_PLOTS_H
#define GS_PLOTS_COMPARE_PLOTS_H

#include "plots/plots.h"

/* 0 when everything asked for was written (and rendered, or gnuplot is
 * absent); -1 with gs_error() otherwise (r says which figure failed). */
int gs_plot_compare(const char *dir, const char *compare_json, const gs_plot_opts *o, gs_plot_result *r);

#endif
