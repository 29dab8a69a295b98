/* The automaton analysis's figure (docs/automaton.md): purity, adjusted
 * Rand index and clusters found against monoid elements, per tree level, in
 * and out of distribution, from the store's automaton_cells. */
#ifndef GS_PLOTS_AUTOMATON_PLOTS_H
#define GS_PLOTS_AUTOMATON_PLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* DIR/automaton.gp, automaton-in.dat, automaton-out.dat (.png when gnuplot
 * is on PATH) for experiment ID (0: the newest). A line saying what was
 * written into made. 0, or -1 with gs_error(). */
int gs_plot_automaton(store *st, int64_t experiment, const char *dir, char *made, size_t size);

#endif
