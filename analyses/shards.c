/* The shards as the input of the analysis driver (analyses/shards.h): the
 * shard list checked and sorted, each shard's share of the states, the
 * chained state source, and the run's settings as the first shard holds it. */
#include "analyses/shards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/analyze.h" /* the store source, the run's model and positions */
#include "analyses/registry.h"
#include "analyses/rows.h" /* the run's state site, the model for the rows */
#include "base/error.h"
#include "store/merge.h"
#include "store/store.h"

/* One state source over this rank's shards, one after another (their
 * windows are disjoint and ascend with the shard's rank). */
typedef struct {
    gs_state_source src;
    const store_shard *shards;
    const int64_t *take; /* states to read from each shard (0: none) */
    int n, at;           /* the shard being read */
    const char *kind;
    int skip, limit; /* store positions skip <= p < limit (limit 0: no end) */
    store *st;
    gs_state_source *cur;
} chain;

static void chain_close_current(chain *c) {
    gs_store_source_close(c->cur);
    store_close(c->st);
    c->cur = NULL;
    c->st = NULL;
}

static int chain_open(chain *c) {
    for (; c->at < c->n; c->at++) {
        if (c->take[c->at] <= 0) continue;
        const store_shard *s = &c->shards[c->at];
        if (!(c->st = store_open(s->path, STORE_READ))) return -1;
        if (!(c->cur = gs_store_source_open(c->st, s->run, c->kind, c->skip, c->take[c->at]))) {
            gs_fail_context("%s: ", s->path);
            store_close(c->st);
            c->st = NULL;
            return -1;
        }
        gs_store_source_limit(c->cur, c->limit);
        if (c->cur->d != c->src.d)
            return gs_fail("%s: states of width %d, the other shards' %d", s->path, c->cur->d, c->src.d);
        return 0;
    }
    return 0;
}

static int chain_rewind(void *ctx) {
    chain *c = ctx;
    chain_close_current(c);
    c->at = 0;
    return chain_open(c);
}

static int64_t chain_next(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap) {
    chain *c = ctx;
    while (c->cur) {
        int64_t k = c->cur->next(c->cur->ctx, rows, window, pos, cap);
        if (k != 0) return k;
        chain_close_current(c);
        c->at++;
        if (chain_open(c)) return -1;
    }
    return 0;
}

/* states of the shard's run at positions skip <= p < limit (limit 0: no end) */
static int64_t count_states(const store_shard *s, const char *kind, int skip, int limit) {
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int64_t n = store_count_states_in(st, s->run, kind, skip, limit);
    store_close(st);
    return n;
}

static int by_rank(const void *x, const void *y) {
    return ((const store_shard *)x)->rank - ((const store_shard *)y)->rank;
}

int gs_shards_agree(gs_job *job, int ok) {
    int64_t failed = !ok;
    if (gs_job_sum_i64(job, &failed, 1)) return -1;
    if (!failed) return 0;
    if (ok) gs_fail("another rank failed");
    return -1;
}

/* The rows of parts the driver runs over shards, and the step before them ("shards": reading every
 * shard's count of states), as gs_analyze_store reports its parts (o->on_part). */
static int shard_steps(unsigned parts) {
    int steps = 1;
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if (gs_analysis_rows[i].run_shards && (gs_analysis_rows[i].bit & parts)) steps++;
    return steps;
}

int gs_analyze_shards(gs_job *job, const char *const *paths, int n, const gs_analyze_opts *o, gs_analysis *a) {
    memset(a, 0, sizeof *a);
    store_shard *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    int64_t *count = calloc((size_t)(n > 0 ? n : 1), sizeof *count), *take = calloc((size_t)(n > 0 ? n : 1), sizeof *take),
            *all_take = calloc((size_t)(n > 0 ? n : 1), sizeof *all_take);
    int rc = -1, ok = 1, read = 0;
    chain c = {0};
    store *st0 = NULL;
    store_run_info info;
    gs_analyze_opts eff;
    if (!s || !count || !take || !all_take) { gs_fail("out of memory"); ok = 0; }
    if (ok && n < 1) { gs_fail("no shards to analyse"); ok = 0; }
    /* every rank checks the whole list, so a bad shard fails every rank alike */
    for (int i = 0; ok && i < n; i++, read++) {
        if (store_shard_read(paths[i], &s[i])) ok = 0;
        const char *why = ok && i ? store_shards_differ(&s[0], &s[i]) : NULL;
        if (why) {
            gs_fail("%s and %s are shards of different runs (%s)", s[0].path, s[i].path, why);
            ok = 0;
        }
    }
    if (ok) {
        qsort(s, (size_t)n, sizeof *s, by_rank);
        for (int i = 1; i < n && ok; i++)
            if (s[i].rank == s[i - 1].rank) ok = 0, gs_fail("%s and %s are both rank %d of %d", s[i - 1].path, s[i].path, s[i].rank, s[i].of);
    }
    /* the run as the first shard holds it: its sites, model, corpus and tokens, read as on a store */
    if (ok && (!(st0 = store_open(s[0].path, STORE_READ)) || store_run_get(st0, s[0].run, &info) ||
               gs_analyze_resolve_site(st0, s[0].run, o, &eff)))
        ok = 0;
    if (gs_shards_agree(job, ok)) goto out;
    gs_analysis_positions(&info, &eff, a); /* the store's rule, on the run as the first shard holds it */
    eff.max_positions = a->max_positions;
    o = &eff;
    a->run_id = s[0].run;
    char buf[64];
    snprintf(a->kind, sizeof a->kind, "%s",
             o->kind ? o->kind : gs_analysis_site_of_role(st0, s[0].run, "state", 1, "pred", buf, sizeof buf));
    unsigned parts = gs_analyze_parts(o);
    const int strict = o->explicit_parts && o->parts;
    for (int i = 0; i < gs_n_analysis_rows; i++) { /* a row with no run over shards: the merged store's alone */
        const gs_analysis_row *row = &gs_analysis_rows[i];
        if (!(parts & row->bit) || row->run_shards) continue;
        if (strict) {
            gs_fail("%s is not reduced over shards: merge them (gpnscope merge STORE SHARD...) and analyze the store",
                    row->name);
            goto out;
        }
        gs_analysis_note(a, "%s needs the merged store (gpnscope merge)", row->name);
        parts &= ~row->bit;
    }
    if (o->on_part) o->on_part(o->on_part_ctx, 0, shard_steps(parts), "shards");
    /* each shard's states: counted by the rank that reads it, shared by a sum */
    for (int i = job->rank; ok && i < n; i += job->size)
        if ((count[i] = count_states(&s[i], a->kind, o->skip_positions, o->max_positions)) < 0) ok = 0;
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, count, n)) goto out;
    int d = 0;
    int64_t have = 0;
    for (int i = 0; i < n; i++) have += count[i];
    for (int i = 0; ok && i < n && !d; i++) { /* the width, from the first shard with states (a rank may have none) */
        if (!count[i]) continue;
        store *st = store_open(s[i].path, STORE_READ);
        gs_state_source *src = st ? gs_store_source_open(st, s[i].run, a->kind, o->skip_positions, 1) : NULL;
        if (src) d = src->d; /* the width only: no state is read */
        else ok = 0;
        gs_store_source_close(src);
        store_close(st);
    }
    if (ok && !d) ok = 0, gs_fail("the shards hold no '%s' states after position %d", a->kind, o->skip_positions);
    if (gs_shards_agree(job, ok)) goto out;
    gs_analysis_note_states(a, have, o->max_states);
    /* the model, as the store's pass loads it (the default tokens, retention's initial decays, the probe) */
    ok = gs_analysis_model_for(&info, o, strict, &parts, a) == 0;
    if (ok && a->model && a->model->cfg.d != d)
        ok = 0, gs_fail("the model has d_state = %d but the shards' states have %d dimensions", a->model->cfg.d, d);
    if (gs_shards_agree(job, ok)) goto out;
    /* the first max_states of the job in window order: shards in rank order */
    int64_t before = 0;
    for (int i = 0; i < n; i++) {
        int64_t left = o->max_states > 0 ? o->max_states - before : count[i];
        all_take[i] = take[i] = left <= 0 ? 0 : left < count[i] ? left : count[i];
        before += count[i];
        if (i % job->size != job->rank) take[i] = 0; /* another rank's */
    }
    c = (chain){.src = {.d = d}, .shards = s, .take = take, .n = n, .kind = a->kind, .skip = o->skip_positions,
              .limit = o->max_positions};
    c.src.ctx = &c;
    c.src.rewind = chain_rewind;
    c.src.next = chain_next;
    const gs_shard_input in = {.job = job, .shards = s, .n = n, .take = take, .all_take = all_take, .kind = a->kind,
                               .skip = o->skip_positions, .limit = o->max_positions, .d = d};
    gs_analysis_ctx ctx = {.st = st0, .run = s[0].run, .info = &info, .o = o, .a = a, .src = &c.src,
                           .strict = strict, .shards = &in};
    if (gs_analysis_run_rows(&ctx, parts, 1)) goto out;
    rc = 0;
out:
    if (rc) gs_analysis_free(a);
    chain_close_current(&c);
    store_close(st0);
    for (int i = 0; i < read && s; i++) store_shard_free(&s[i]);
    free(s);
    free(count);
    free(take);
    free(all_take);
    return rc;
}
