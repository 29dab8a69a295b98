#include "analyses/result_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

gs_result_writer gs_result_to_store(store *st, int64_t run, const char *code_version) {
    return (gs_result_writer){.st = st, .run = run, .code_version = code_version};
}

gs_result_writer gs_result_to_scalars(gs_result_scalars *s) { return (gs_result_writer){.scalars = s}; }

void gs_result_scalars_free(gs_result_scalars *s) {
    for (int64_t i = 0; i < s->n; i++) free(s->key[i]);
    free(s->key);
    free(s->value);
    memset(s, 0, sizeof *s);
}

static int cmp_key(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void gs_result_scalars_sort(gs_result_scalars *s) {
    /* keys are unique: sort the keys alone, then find each one's value again */
    double *v = malloc((size_t)(s->n ? s->n : 1) * sizeof *v);
    char **k = malloc((size_t)(s->n ? s->n : 1) * sizeof *k);
    if (!v || !k) { free(v); free(k); return; } /* left in write order */
    memcpy(k, s->key, (size_t)s->n * sizeof *k);
    qsort(k, (size_t)s->n, sizeof *k, cmp_key);
    for (int64_t i = 0; i < s->n; i++)
        for (int64_t j = 0; j < s->n; j++)
            if (k[i] == s->key[j]) { v[i] = s->value[j]; break; }
    free(s->key);
    free(s->value);
    s->key = k;
    s->value = v;
}

/* key = v into the collected scalars, replacing an earlier value of key */
static int collect(gs_result_scalars *s, const char *key, double v) {
    for (int64_t i = 0; i < s->n; i++)
        if (!strcmp(s->key[i], key)) { s->value[i] = v; return 0; }
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        char **k = realloc(s->key, (size_t)cap * sizeof *k);
        if (k) s->key = k;
        double *nv = k ? realloc(s->value, (size_t)cap * sizeof *nv) : NULL;
        if (!nv) return gs_fail("out of memory");
        s->value = nv;
        s->cap = cap;
    }
    if (!(s->key[s->n] = strdup(key))) return gs_fail("out of memory");
    s->value[s->n++] = v;
    return 0;
}

int gs_result_begin(gs_result_writer *w, const char *name, const gs_analyze_opts *o, const char *extra) {
    w->rc = 0;
    if (!w->st) { w->id = 0; return 0; }
    char *set = settings(o, extra);
    w->id = set ? store_analysis_begin(w->st, w->run, name, set, w->code_version) : gs_fail("out of memory");
    free(set);
    return w->id > 0 ? 0 : -1;
}

int gs_result_end(gs_result_writer *w) {
    if (!w->st) return w->rc ? -1 : 0;
    if (w->rc != 0) { store_rollback(w->st); return -1; }
    return store_commit(w->st);
}

void gs_result_scalar(gs_result_writer *w, const char *key, double v, const char *note) {
    if (isfinite(v)) gs_result_scalar_kept(w, key, v, note);
}

void gs_result_scalar_kept(gs_result_writer *w, const char *key, double v, const char *note) {
    if (w->rc != 0) return;
    if (w->st) w->rc = store_analysis_scalar(w->st, w->id, key, v, note);
    else if (isfinite(v)) w->rc = collect(w->scalars, key, v);
}

void gs_result_series(gs_result_writer *w, const char *name, const double *x, const double *y,
                      const char *const *labels, int64_t n) {
    if (w->st && w->rc == 0 && n > 0) w->rc = store_analysis_series(w->st, w->id, name, x, y, labels, n);
}

void gs_result_vector(gs_result_writer *w, const char *key, const double *v, int64_t n) {
    if (!w->st || w->rc != 0 || n <= 0 || !v) return;
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
