/* The analysis registry (analyses/registry.c) and the figure table
 * (plots/figures.c) hold together: bits are distinct, names and stored names
 * unique and found again by lookup, every row analyze runs can be written,
 * printed and put in JSON, a row runs after the rows it requires, --only
 * takes exactly the runnable rows' names and aliases, and every figure is
 * keyed by a registry row whose notebook twin is a code cell of the study
 * notebook. */
#include <string.h>

#include "analyses/analyze.h"
#include "analyses/registry.h"
#include "base/error.h"
#include "notebooks-export/notebook_cells.h"
#include "plots/gp.h"
#include "testlib.h"

static gs_nb_cell cells[GS_NB_MAX_CELLS];
static int n_cells;

static const gs_nb_cell *cell(const char *id) {
    for (int i = 0; i < n_cells; i++)
        if (!strcmp(cells[i].id, id)) return &cells[i];
    return NULL;
}

/* study.py cut into cells: ids unique, every cell has a line, markdown lines lose their "# " */
static void check_notebook_cells(void) {
    n_cells = gs_nb_cells(cells, GS_NB_MAX_CELLS);
    CHECK(n_cells > 20, "study.py has its cells (%d: %s)", n_cells, n_cells < 0 ? gs_error() : "");
    for (int i = 0; i < n_cells; i++) {
        for (int j = 0; j < i; j++) CHECK(strcmp(cells[i].id, cells[j].id), "cell id %s is unique", cells[i].id);
        size_t pos = 0, len;
        const char *line;
        int lines = 0;
        while (gs_nb_cell_line(&cells[i], &pos, &line, &len)) {
            lines++;
            if (!cells[i].code) CHECK(len == 0 || line[-1] == ' ', "markdown line of %s without its '# '", cells[i].id);
        }
        CHECK(lines > 0, "cell %s has lines", cells[i].id);
    }
    CHECK(cell("setup") && cell("setup")->code && cell("intro") && !cell("intro")->code, "setup is code, intro markdown");
}

int main(void) {
    check_notebook_cells();
    unsigned seen = 0;
    CHECK(gs_n_analysis_rows >= 5, "%d rows", gs_n_analysis_rows);
    for (int i = 0; i < gs_n_analysis_rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        CHECK(r->bit && !(r->bit & (r->bit - 1)) && !(seen & r->bit), "row %s: a bit of its own", r->name);
        CHECK((r->requires & ~seen) == 0, "row %s requires only rows before it (they run first)", r->name);
        seen |= r->bit;
        CHECK(gs_analysis_row_of(r->bit) == r && gs_analysis_row_stored(r->stored) == r, "row %s found again", r->name);
        CHECK(!strcmp(gs_analysis_stored_name(r->bit), r->stored), "row %s: stored name", r->name);
        CHECK(r->summary && r->summary[0], "row %s has a summary for --help", r->name);
        if (r->run) {
            CHECK(r->write && r->print && r->json, "runnable row %s is written, printed and in JSON", r->name);
            unsigned parts = 0;
            CHECK(gs_analyze_parse_parts(r->name, &parts) == 0 && parts == r->bit, "--only %s", r->name);
            if (r->alias) CHECK(gs_analyze_parse_parts(r->alias, &parts) == 0 && parts == r->bit, "--only %s", r->alias);
        } else {
            unsigned parts = 0;
            CHECK(r->written_by && gs_analyze_parse_parts(r->name, &parts) != 0,
                  "row %s, stored by %s, is not an --only choice", r->name, r->written_by ? r->written_by : "?");
        }
        for (int k = 0; k < i; k++) {
            CHECK(strcmp(gs_analysis_rows[k].name, r->name) && strcmp(gs_analysis_rows[k].stored, r->stored),
                  "rows %d and %d: names and stored names differ", k, i);
        }
    }
    CHECK(gs_analysis_runnable() == GS_AN_ALL, "GS_AN_ALL = the runnable rows (%u vs %u)", gs_analysis_runnable(),
          (unsigned)GS_AN_ALL);
    unsigned all = 0;
    CHECK(gs_analyze_parse_parts("all", &all) == 0 && all == gs_analysis_runnable(), "--only all");
    CHECK(gs_analyze_parse_parts("geometry,bogus", &all) != 0 && strstr(gs_error(), "'bogus'") &&
              strstr(gs_error(), "geometry, default, horizon, retention, probe"),
          "an unknown name is named, with the choices: %s", gs_error());
    CHECK(gs_analysis_row_of(1u << 30) == NULL && gs_analysis_row_stored("bogus") == NULL &&
              !strcmp(gs_analysis_stored_name(1u << 30), ""),
          "unknown bits and names find no row");

    unsigned drawn = 0;
    for (int i = 0; i < gp_n_figure_rows; i++) {
        const gp_figure_row *f = &gp_figure_rows[i];
        /* 0: a causal experiment's figure (the lens), drawn from the store rather than a run's analysis */
        CHECK(f->analysis == 0 || gs_analysis_row_of(f->analysis) != NULL, "figure %d is keyed by a registry row", i);
        CHECK((f->also & ~seen) == 0, "figure %d reads registry rows only", i);
        CHECK(f->draw != NULL, "figure %d draws", i);
        CHECK(f->reading && strlen(f->reading) > 40 && strlen(f->reading) < 300 && !strchr(f->reading, '\n'),
              "figure %d has one line on what it shows and how to read it", i);
        if (f->notebook_cell) {
            const gs_nb_cell *c = cell(f->notebook_cell);
            CHECK(c && c->code, "figure %d's twin '%s' is a code cell of the notebook", i, f->notebook_cell);
        }
        drawn |= f->analysis;
    }
    CHECK(gp_n_figure_rows <= GS_PLOT_MAX_FIGURES, "the figures fit gs_plot_result");
    /* every analysis analyze runs is shown somewhere: a figure or the report's table */
    CHECK((gs_analysis_runnable() & ~(drawn | gp_report_analyses)) == 0, "every runnable row is drawn or reported");
    return test_summary();
}
