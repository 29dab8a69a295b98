/* The study notebook's cells from study.py (notebook_cells.h): the file is
 * embedded at build time (module.cmake) and cut at its marker lines here. */
#include "notebooks-export/notebook_cells.h"

#include <string.h>

#include "base/error.h"
#include "notebooks-export/study_py.h"

static const char CODE_MARK[] = "# %% ";
static const char MD_MARK[] = "# %% [markdown] ";

/* the line at p (up to, not including, its newline) and where the next starts */
static size_t line_end(const char *p, const char *end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return (size_t)((nl ? nl : end) - p);
}

static int starts(const char *p, size_t n, const char *mark) { return n >= strlen(mark) && !memcmp(p, mark, strlen(mark)); }

int gs_nb_cells(gs_nb_cell *out, int max) {
    const char *p = gs_nb_study_py, *end = gs_nb_study_py + gs_nb_study_py_len;
    int n = 0, line = 1;
    gs_nb_cell *c = NULL;
    for (; p < end; line++) {
        size_t len = line_end(p, end);
        if (starts(p, len, CODE_MARK)) {
            int md = starts(p, len, MD_MARK);
            size_t skip = strlen(md ? MD_MARK : CODE_MARK);
            if (n == max) return gs_fail("study.py: more than %d cells", max);
            if (len - skip == 0 || len - skip >= GS_NB_MAX_ID)
                return gs_fail("study.py:%d: a cell marker needs an id of 1 to %d characters", line, GS_NB_MAX_ID - 1);
            c = &out[n++];
            memcpy(c->id, p + skip, len - skip);
            c->id[len - skip] = 0;
            c->code = !md;
            c->body = p + len + (p + len < end);
            c->len = 0;
        } else if (!c) {
            return gs_fail("study.py:%d: text before the first cell marker", line);
        } else if (len) {
            if (!c->code && !(len == 1 ? p[0] == '#' : starts(p, len, "# ")))
                return gs_fail("study.py:%d: a markdown line of cell %s does not start with '# '", line, c->id);
            c->len = (size_t)(p + len - c->body); /* trailing blank lines before the next marker are left out */
        }
        p += len + 1;
    }
    return n;
}

int gs_nb_cell_line(const gs_nb_cell *c, size_t *pos, const char **line, size_t *n) {
    if (*pos >= c->len) return 0;
    const char *p = c->body + *pos, *end = c->body + c->len;
    size_t len = line_end(p, end);
    *pos += len + 1;
    if (!c->code) {
        size_t skip = len >= 2 ? 2 : len; /* "# " or a lone "#" */
        p += skip;
        len -= skip;
    }
    *line = p;
    *n = len;
    return 1;
}
