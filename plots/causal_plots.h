/* Figures of the causal experiments (store/causal.h): the patching heatmap
 * and the steering curve, as editable gnuplot scripts with their data, drawn
 * to PNG when gnuplot is on PATH (plots/gp.h has the conventions). */
#ifndef GS_PLOTS_CAUSAL_PLOTS_H
#define GS_PLOTS_CAUSAL_PLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* DIR/patch_heatmap.gp, -scores.dat (.png): mean score by component (rows)
 * and position (columns, the last one "all"). A line saying what was written
 * into made. 0, or -1 with gs_error(). */
int gs_plot_patch(store *st, int64_t experiment, const char *dir, char *made, size_t size);
/* DIR/steer_curve.gp, -c.dat (.png): the NLL change and the share of
 * changed top-1 predictions against c. */
int gs_plot_steer(store *st, int64_t experiment, const char *dir, char *made, size_t size);

/* DIR/lens_heatmap.gp, -top1.dat (.png): the logit lens as sites (rows) by
 * positions (columns), each cell coloured by the top-1 logit with the top-1
 * token written in it. 0, or -1 with gs_error(). */
int gs_plot_lens(store *st, int64_t experiment, const char *dir, char *made, size_t size);

#endif
