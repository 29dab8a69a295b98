/* gpnscope view: one self-contained HTML page of a store (docs/view.md), in
 * the spirit of CircuitsVis: each window's text as tokens coloured by a
 * per-token quantity (NLL, entropy, the state's norm, its projection on the
 * mean direction s_bar), hover for the values behind the colour, click for
 * the token's exact effective attention over earlier tokens (where `gpnscope
 * attention` stored the matrices), the run's verdicts, and the store's newest
 * patching and steering results. Scripts, styles and data are inline: the
 * page needs no network and no server.
 *
 *     gs_view_opts o = {.windows = 2, .max_tokens = 512};
 *     gs_view_write(st, &o, "view.html", &result);   (one line in gs_error() on failure)
 *
 * The data is read here (view_data.c) as one JSON document; the page's
 * script (view/page.js, embedded at build time) draws it. */
#ifndef GS_VIEW_VIEW_H
#define GS_VIEW_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct {
    const int64_t *runs; /* the runs to show (NULL: every run with token rows) */
    int n_runs;
    int windows;         /* windows per run, the first ones recorded (default 2) */
    int max_tokens;      /* positions per window, from the start (default 512) */
    int lens_k;          /* the logit lens's top k per token, re-run with the run's model (0: no lens) */
} gs_view_opts;

typedef struct {
    int runs, windows;   /* shown */
    int64_t tokens;
    int attention_heads; /* (layer, head) panels with exact matrices on the page */
    int attention_left_out; /* runs whose matrices did not all fit the page's budget */
    int lens_missing;    /* runs asked for a lens that could not run it, the first one's reason: */
    char lens_why[300];
    size_t bytes;        /* the page's size */
} gs_view_result;

/* The page's data: a JSON document (malloc'd) of the runs, their windows'
 * tokens and quantities, verdicts, attention matrices and causal results. */
char *gs_view_data(store *st, const gs_view_opts *o, gs_view_result *r);
/* Write the page to path (atomically; an input of the command is refused). */
int gs_view_write(store *st, const gs_view_opts *o, const char *path, gs_view_result *r);

#endif
