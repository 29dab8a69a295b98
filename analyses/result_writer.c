#include "analyses/result_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"

static char *settings(const gs_analyze_opts *o, const char *extra) {
    char *buf = malloc(1024);
    if (!buf) return NULL;
    /* positions_below only for a bounded reading, so that one of every position keeps its settings */
    char below[48] = "";
    if (o->max_positions > 0) snprintf(below, sizeof below, ",\"positions_below\":%d", o->max_positions);
    snprintf(buf, 1024, "{\"kind\":\"%s\",\"max_states\":%lld,\"skip_positions\":%d%s,\"seed\":%llu%s%s}",
             o->kind ? o->kind : "pred", (long long)o->max_states, o->skip_positions, below, (unsigned long long)o->seed,
             extra ? "," : "", extra ? extra : "");
    return buf;
}

int gs_result_begin(gs_result_writer *w, store *st, int64_t run, const char *name, const gs_analyze_opts *o,
                    const char *extra, const char *code_version) {
    char *set = settings(o, extra);
    w->st = st;
    w->rc = 0;
    w->id = set ? store_analysis_begin(st, run, name, set, code_version) : gs_fail("out of memory");
    free(set);
    return w->id > 0 ? 0 : -1;
}

int gs_result_end(gs_result_writer *w) {
    if (w->rc != 0) { store_rollback(w->st); return -1; }
    return store_commit(w->st);
}

void gs_result_scalar(gs_result_writer *w, const char *key, double v, const char *note) {
    if (w->rc == 0 && isfinite(v)) w->rc = store_analysis_scalar(w->st, w->id, key, v, note);
}

void gs_result_series(gs_result_writer *w, const char *name, const double *x, const double *y,
                      const char *const *labels, int64_t n) {
    if (w->rc == 0 && n > 0) w->rc = store_analysis_series(w->st, w->id, name, x, y, labels, n);
}

void gs_result_vector(gs_result_writer *w, const char *key, const double *v, int64_t n) {
    if (w->rc != 0 || n <= 0 || !v) return;
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) { w->rc = gs_fail("out of memory"); return; }
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
    w->rc = store_analysis_vector(w->st, w->id, key, f, n);
    free(f);
}

double *gs_result_iota(int64_t n, double first) {
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (x) for (int64_t i = 0; i < n; i++) x[i] = first + (double)i;
    return x;
}

double *gs_result_ints(const int *v, int64_t n) {
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (x) for (int64_t i = 0; i < n; i++) x[i] = v[i];
    return x;
}
