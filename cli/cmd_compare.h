/* gpnscope compare, callable in-process (the demo ends with it). */
#ifndef GS_CLI_CMD_COMPARE_H
#define GS_CLI_CMD_COMPARE_H

#include <stdio.h>

#include "analyses/compare/compare.h"
#include "plots/plots.h"

typedef struct {
    const char *const *operands; /* "STORE[:RUN[:SITE]]" each */
    int n_operands;
    gs_compare_opts compare;     /* gs_compare_opts_default, then as wanted */
    const char *out_dir;         /* NULL: the table only */
    gs_plot_opts plot;           /* figures under out_dir (gs_plot_opts_default) */
    int json;                    /* 1: the table as JSON on `out` */
    int quiet;                   /* 1: no progress on stderr */
} cli_compare_request;

void cli_compare_request_default(cli_compare_request *q);
/* Measure, print the table on out, write out_dir. Returns the exit status
 * (0; 1 with one line "gpnscope compare: ..." on stderr). */
int cli_compare_run(const cli_compare_request *q, FILE *out);

#endif
