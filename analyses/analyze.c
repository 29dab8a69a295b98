#include "analyses/analyze.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/registry.h"
#include "analyses/result_writer.h"
#include "analyses/rows.h"
#include "base/error.h"
#include "base/text.h"
#include "train/config_json.h"
#include "probes/site_ref.h"

void gs_analyze_opts_default(gs_analyze_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_states = 16384;
    o->seed = 1;
    o->boot = 200;
    o->kind = NULL;
    o->max_positions = GS_POSITIONS_TRAINING;
    o->probe_max_lag = 256;
    o->probe_splits = 5;
}

unsigned gs_analysis_runnable(void) {
    unsigned bits = 0;
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if (gs_analysis_rows[i].run) bits |= gs_analysis_rows[i].bit;
    return bits;
}

int gs_analyze_parse_parts(const char *list, unsigned *parts) {
    /* the names --only takes: each runnable row's name and alias, then "all" */
    gs_flag_name names[2 * 32 + 1];
    size_t n = 0;
    for (int i = 0; i < gs_n_analysis_rows && n + 2 < sizeof names / sizeof *names; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        if (!r->run) continue;
        names[n++] = (gs_flag_name){r->name, r->bit};
        if (r->alias) names[n++] = (gs_flag_name){r->alias, r->bit};
    }
    names[n++] = (gs_flag_name){"all", gs_analysis_runnable()};
    const char *bad;
    int len;
    if (gs_parse_flag_list(list, names, n, 0, parts, &bad, &len)) {
        char all[256];
        return gs_fail("unknown analysis '%.*s' (choose from %s)", len, bad, gs_analysis_names(all, sizeof all));
    }
    if (!*parts) return gs_fail("no analysis named in '%s'", list ? list : "");
    return 0;
}

/* ---------- a state source over a store run ---------- */

typedef struct {
    gs_state_source src; /* first: the source handed out */
    store *st;
    int64_t run;
    char kind[STORE_KIND_MAX + 1];
    int skip, ground; /* ground: kind is "ground" */
    int limit;        /* store positions < limit only (0: all) */
    int64_t max, delivered;
    store_states *rd;
    int32_t *w32, *p32;
    int64_t cap;
} store_src;

static int ss_rewind(void *ctx) {
    store_src *s = ctx;
    store_states_close(s->rd);
    s->rd = store_states_open(s->st, s->run, s->kind, -1, -1);
    s->delivered = 0;
    return s->rd ? 0 : -1;
}

static int64_t ss_next(void *ctx, float *rows, int64_t *window, int32_t *pos, int64_t cap) {
    store_src *s = ctx;
    const int d = s->src.d;
    if (cap > s->cap) {
        free(s->w32);
        free(s->p32);
        s->w32 = malloc((size_t)cap * sizeof *s->w32);
        s->p32 = malloc((size_t)cap * sizeof *s->p32);
        if (!s->w32 || !s->p32) return gs_fail("out of memory");
        s->cap = cap;
    }
    int64_t n = 0;
    while (n == 0) {
        int64_t want = cap;
        if (s->max > 0 && s->max - s->delivered < want) want = s->max - s->delivered;
        if (want <= 0) return 0;
        int64_t k = store_states_read(s->rd, rows, s->w32, s->p32, want);
        if (k <= 0) return k;
        for (int64_t i = 0; i < k; i++) {
            if (s->p32[i] < s->skip || (s->limit > 0 && s->p32[i] >= s->limit)) continue;
            if (n != i) memmove(rows + n * d, rows + i * d, (size_t)d * sizeof *rows);
            window[n] = s->w32[i];
            /* analyses count a state's position as the tokens it has read: a
             * 'pred' state at store position p was made from tokens 0..p-1
             * (docs/schema.md), a 'ground' state has also read token p */
            pos[n] = s->p32[i] + s->ground;
            n++;
        }
        s->delivered += n;
    }
    return n;
}

void gs_store_source_limit(gs_state_source *src, int max_positions) {
    ((store_src *)src->ctx)->limit = max_positions > 0 ? max_positions : 0;
}

gs_state_source *gs_store_source_open(store *st, int64_t run_id, const char *kind, int skip_positions,
                                      int64_t max_states) {
    store_src *s = calloc(1, sizeof *s);
    if (!s) { gs_fail("out of memory"); return NULL; }
    s->st = st;
    s->run = run_id;
    snprintf(s->kind, sizeof s->kind, "%s", kind ? kind : "pred");
    s->ground = strcmp(s->kind, "ground") == 0;
    s->skip = skip_positions > 0 ? skip_positions : 0;
    s->max = max_states;
    s->rd = store_states_open(st, run_id, s->kind, -1, -1);
    if (!s->rd) { free(s); return NULL; }
    int d = store_states_dim(s->rd);
    if (d <= 0) {
        store_states_close(s->rd);
        free(s);
        const char *want = kind ? kind : "pred", *other = strcmp(want, "ground") ? "ground" : "pred";
        store_run_info info;
        const char *has = store_run_get(st, run_id, &info) == 0 ? info.states : "?";
        /* a run that kept the other state only: name the option that reads it */
        if (store_count_states(st, run_id, other) > 0)
            gs_fail("run %lld has no '%s' states but has '%s' ones (it recorded: %s): analyse those with --kind %s "
                    "(or --site), or record with --states %s", (long long)run_id, want, other, has, other, want);
        else
            gs_fail("run %lld has no '%s' states (it recorded: %s): record the site with record --sites (or --states "
                    "%s), or analyze another with --site", (long long)run_id, want, has, want);
        return NULL;
    }
    s->src.d = d;
    s->src.ctx = s;
    s->src.rewind = ss_rewind;
    s->src.next = ss_next;
    return &s->src;
}

void gs_store_source_close(gs_state_source *src) {
    if (!src) return;
    store_src *s = (store_src *)src;
    store_states_close(s->rd);
    free(s->w32);
    free(s->p32);
    free(s);
}

/* ---------- running the rows ---------- */

void gs_analysis_note(gs_analysis *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(a->notes, sizeof a->notes, fmt, ap);
    va_end(ap);
}

void gs_analysis_note_states(gs_analysis *a, int64_t have, int64_t max_states) {
    if (max_states > 0 && have > max_states)
        gs_analysis_note(a, "the analyses of the state read the first %lld of the run's %lld states "
                         "(--max-states %lld; --max-states 0 reads all)",
                         (long long)max_states, (long long)have, (long long)max_states);
}

void gs_analysis_free(gs_analysis *a) {
    gs_model_free(a->model);
    gs_geometry_free(&a->geometry);
    gs_default_dir_free(&a->default_dir);
    gs_horizons_free(&a->horizons);
    gs_retention_free(&a->retention);
    gs_probe_free(&a->probe);
    memset(a, 0, sizeof *a);
}

gs_model *gs_analysis_load_model(const store_run_info *info, const char *given) {
    const char *path = given;
    if (!path) {
        if (info->model_id <= 0) { gs_fail("run %lld names no model: give one with --model", (long long)info->id); return NULL; }
        if (!info->model_path[0]) {
            gs_fail("run %lld's model has no file path in the store: give it with --model", (long long)info->id);
            return NULL;
        }
        path = info->model_path;
    }
    gs_model *m = gs_model_load(path);
    if (!m) { gs_fail_context("loading the run's model %s: ", path); return NULL; }
    if (info->model_sha256[0] && strcmp(info->model_sha256, m->hash) != 0) {
        gs_fail("the model %s (sha256 %.12s...) is not the one run %lld was recorded with (%.12s...): pass that "
                "model with --model",
                path, m->hash, (long long)info->id, info->model_sha256);
        gs_model_free(m);
        return NULL;
    }
    return m;
}

gs_model *gs_analysis_ctx_model(gs_analysis_ctx *c) {
    if (!c->a->model) c->a->model = gs_analysis_load_model(c->info, c->o->model_path);
    return c->a->model;
}

const char *gs_analysis_site_of_role(store *st, int64_t run, const char *role, int want_stored_as,
                                     const char *fallback, char *buf, size_t size) {
    store_site x;
    if (store_site_of_role(st, run, role, &x) != 0) return fallback;
    snprintf(buf, size, "%s", want_stored_as ? x.stored_as : x.site);
    return buf;
}

int gs_analyze_resolve_site(store *st, int64_t run, const gs_analyze_opts *o, gs_analyze_opts *eff) {
    *eff = *o;
    if (!o->site) return 0;
    store_site x;
    int found = store_find_site(st, run, o->site, &x);
    if (found < 0) return -1;
    if (found == 0 && !strcmp(x.shape, "per-head scalar")) {
        if (!eff->decay_site) eff->decay_site = o->site;
    } else {
        eff->kind = probe_stored_kind(o->site);
    }
    return 0;
}

unsigned gs_analyze_parts(const gs_analyze_opts *o) {
    unsigned parts = o->parts ? o->parts : gs_analysis_runnable();
    for (int i = 0; i < gs_n_analysis_rows; i++) /* a row runs after those whose results it reads */
        if (parts & gs_analysis_rows[i].bit) parts |= gs_analysis_rows[i].requires;
    return parts;
}

unsigned gs_analysis_rows_needing(unsigned parts, unsigned needs) {
    unsigned bits = 0;
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if ((parts & gs_analysis_rows[i].bit) && (gs_analysis_rows[i].needs & needs)) bits |= gs_analysis_rows[i].bit;
    return bits;
}

int gs_analysis_model_for(const store_run_info *info, const gs_analyze_opts *o, int strict, unsigned *parts,
                          gs_analysis *a) {
    if (!gs_analysis_rows_needing(*parts, GS_NEEDS_MODEL | GS_WANTS_MODEL)) return 0;
    a->model = gs_analysis_load_model(info, o->model_path);
    unsigned needing = gs_analysis_rows_needing(*parts, GS_NEEDS_MODEL);
    if (a->model) return 0;
    if ((strict && needing) || o->model_path) return -1;
    gs_analysis_note(a, "no model (%s): default tokens, the embedding control and the probe are skipped", gs_error());
    *parts &= ~needing;
    return 0;
}

void gs_positions_choose(int recorded, int trained, int all, int *max_positions, char *note, size_t size) {
    const int T = trained, R = recorded;
    *max_positions = 0;
    if (T <= 0)
        snprintf(note, size, "all %d positions (training length unknown: no config.json with data.seq_len beside the model)", R);
    else if (R <= T)
        snprintf(note, size, "all %d positions (trained on %d)", R, T);
    else if (all)
        snprintf(note, size, "all %d positions (--positions all), %d of them past the training length %d", R, R - T, T);
    else {
        *max_positions = T;
        snprintf(note, size, "positions 0-%d of %d: the model was trained on %d (--positions all reads every one)", T - 1,
                 R, T);
    }
}

void gs_analysis_positions(const store_run_info *info, const gs_analyze_opts *o, gs_analysis *a) {
    const char *model = o->model_path ? o->model_path : info->model_path;
    a->recorded_len = (int)info->seq_len;
    a->trained_seq_len = model && model[0] ? train_config_seq_len(model) : 0;
    if (o->max_positions > 0) { /* a caller's own bound (compare's rows choose theirs alike) */
        a->max_positions = o->max_positions < a->recorded_len || a->recorded_len <= 0 ? o->max_positions : 0;
        if (a->max_positions)
            snprintf(a->positions_note, sizeof a->positions_note, "positions 0-%d of %d", a->max_positions - 1,
                     a->recorded_len);
        else snprintf(a->positions_note, sizeof a->positions_note, "all %d positions", a->recorded_len);
        return;
    }
    gs_positions_choose(a->recorded_len, a->trained_seq_len, o->max_positions == 0, &a->max_positions,
                        a->positions_note, sizeof a->positions_note);
}

int gs_analyze_control(store *st, int64_t run, int k, const gs_analyze_opts *o, const char *code_version) {
    int64_t c = store_control_run(st, run, store_control_names[k]);
    if (c <= 0) return c < 0 ? -1 : 0;
    gs_analyze_opts eff = *o;
    eff.parts = gs_analyze_parts(o) & (GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON | GS_AN_RETENTION);
    if (!eff.parts) return 0;
    eff.explicit_parts = 0;
    eff.model_path = NULL;
    eff.train_corpus = NULL;
    gs_analysis a;
    int rc = gs_analyze_store(st, c, &eff, &a);
    if (rc == 0) rc = gs_analysis_write(st, &a, &eff, code_version);
    if (rc) gs_fail_context("the %s control (run %lld): ", store_control_names[k], (long long)c);
    gs_analysis_free(&a);
    return rc ? -1 : 1;
}

/* the row's run over this input: the store's, or the shards' split */
static int (*row_run_of(const gs_analysis_row *r, const gs_analysis_ctx *c))(gs_analysis_ctx *) {
    return c->shards ? r->run_shards : r->run;
}

int gs_analysis_run_rows(gs_analysis_ctx *c, unsigned parts, int first_step) {
    const gs_analyze_opts *o = c->o;
    int n_steps = first_step, k = first_step;
    for (int i = 0; i < gs_n_analysis_rows; i++)
        if (row_run_of(&gs_analysis_rows[i], c) && (parts & gs_analysis_rows[i].bit)) n_steps++;
    for (int i = 0; i < gs_n_analysis_rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        int (*run)(gs_analysis_ctx *) = row_run_of(r, c);
        if (!run || !(parts & r->bit)) continue;
        if (o->on_part) o->on_part(o->on_part_ctx, k++, n_steps, r->name);
        int rc = run(c);
        if (rc < 0) return -1;
        if (rc == 0) c->a->done |= r->bit;
    }
    if (o->on_part) o->on_part(o->on_part_ctx, n_steps, n_steps, NULL);
    return 0;
}

int gs_analyze_store(store *st, int64_t run_id, const gs_analyze_opts *o, gs_analysis *a) {
    memset(a, 0, sizeof *a);
    gs_analyze_opts dflt;
    if (!o) { gs_analyze_opts_default(&dflt); o = &dflt; }
    a->run_id = run_id;
    store_run_info info;
    if (store_run_get(st, run_id, &info) != 0) return -1;
    gs_analyze_opts eff;
    if (gs_analyze_resolve_site(st, run_id, o, &eff)) return -1;
    gs_analysis_positions(&info, o, a);
    eff.max_positions = a->max_positions;
    o = &eff;
    unsigned parts = gs_analyze_parts(o);
    const int strict = o->explicit_parts && o->parts;
    gs_analysis_ctx c = {.st = st, .run = run_id, .info = &info, .o = o, .a = a, .src = NULL, .strict = strict};
    if (gs_analysis_rows_needing(parts, GS_NEEDS_STATES)) {
        char kbuf[64];
        snprintf(a->kind, sizeof a->kind, "%s",
                 o->kind ? o->kind : gs_analysis_site_of_role(st, run_id, "state", 1, "pred", kbuf, sizeof kbuf));
        c.src = gs_store_source_open(st, run_id, a->kind, o->skip_positions, o->max_states);
        if (!c.src) return -1;
        gs_store_source_limit(c.src, o->max_positions);
        /* say when the geometry reads fewer states than the run holds */
        gs_analysis_note_states(
            a, store_count_states_in(st, run_id, a->kind, o->skip_positions > 0 ? o->skip_positions : 0, o->max_positions),
            o->max_states);
    }
    if (gs_analysis_model_for(&info, o, strict, &parts, a)) goto fail;
    if (a->model && c.src && a->model->cfg.d != c.src->d) {
        gs_fail("the model has d_state = %d but run %lld's states have %d dimensions", a->model->cfg.d,
                (long long)run_id, c.src->d);
        goto fail;
    }
    if (gs_analysis_run_rows(&c, parts, 0)) goto fail;
    gs_store_source_close(c.src);
    return 0;
fail:
    gs_store_source_close(c.src);
    gs_analysis_free(a);
    return -1;
}

/* ---------- writing, printing, JSON: each computed row's own function ---------- */

/* the settings a write names: what was read (the site resolved from the run, not NULL) */
static gs_analyze_opts written_opts(const gs_analysis *a, const gs_analyze_opts *o) {
    gs_analyze_opts eff;
    if (o) eff = *o;
    else gs_analyze_opts_default(&eff);
    eff.max_positions = a->max_positions;
    if (!eff.kind && a->kind[0]) eff.kind = a->kind;
    if (!eff.decay_site && a->decay_site[0] && strcmp(a->decay_site, "mem.alpha")) eff.decay_site = a->decay_site;
    return eff;
}

int gs_analysis_write(store *st, const gs_analysis *a, const gs_analyze_opts *o, const char *cv) {
    const gs_analyze_opts eff = written_opts(a, o);
    for (int i = 0; i < gs_n_analysis_rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        gs_result_writer w = gs_result_to_store(st, a->run_id, cv);
        if (r->write && (a->done & r->bit) && r->write(&w, a, &eff) != 0) return -1;
    }
    return 0;
}

typedef struct { store *st; int64_t run; char buf[256]; } piece_ctx;
static const char *piece(void *ctx, int id) {
    piece_ctx *p = ctx;
    if (store_token_piece(p->st, p->run, id, p->buf, sizeof p->buf) != 0) {
        gs_clear_error();
        snprintf(p->buf, sizeof p->buf, "#%d", id);
    }
    return p->buf;
}

void gs_analysis_print(FILE *f, store *st, const gs_analysis *a) {
    piece_ctx pc = {st, a->run_id, ""};
    const gs_token_text tokens = {piece, &pc};
    fprintf(f, "run %lld\n", (long long)a->run_id);
    if (a->positions_note[0]) fprintf(f, "positions: %s\n", a->positions_note);
    for (int i = 0; i < gs_n_analysis_rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        if (r->print && (a->done & r->bit)) r->print(f, a, &tokens);
    }
    if (a->notes[0]) fprintf(f, "\nnotes:\n%s", a->notes);
}

/* Every scalar the row's write stores, under its stored key (docs/schema.md), that the row's object does not
 * already hold, in the store's order (by key): what the text prints and the store keeps is in the JSON too
 * (intervals, window counts, the decays against their initialisation; issue 38.5). */
static void add_written_scalars(const gs_analysis_row *r, const gs_analysis *a, const gs_analyze_opts *o,
                                cJSON *member) {
    gs_result_scalars sc = {0};
    gs_result_writer w = gs_result_to_scalars(&sc);
    if (r->write(&w, a, o) == 0) {
        gs_result_scalars_sort(&sc);
        for (int64_t i = 0; i < sc.n; i++)
            if (!cJSON_GetObjectItemCaseSensitive(member, sc.key[i])) cJSON_AddNumberToObject(member, sc.key[i], sc.value[i]);
    }
    gs_clear_error();
    gs_result_scalars_free(&sc);
}

cJSON *gs_analysis_json(const gs_analysis *a, const gs_analyze_opts *opts) {
    const gs_analyze_opts eff = written_opts(a, opts);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", (double)a->run_id);
    if (a->positions_note[0]) { /* as compare's rows say it */
        cJSON *pos = cJSON_AddObjectToObject(o, "positions");
        if (a->max_positions > 0) cJSON_AddNumberToObject(pos, "below", a->max_positions);
        else cJSON_AddNullToObject(pos, "below");
        cJSON_AddNumberToObject(pos, "recorded", a->recorded_len);
        if (a->trained_seq_len > 0) cJSON_AddNumberToObject(pos, "trained_seq_len", a->trained_seq_len);
        else cJSON_AddNullToObject(pos, "trained_seq_len");
        cJSON_AddStringToObject(pos, "note", a->positions_note);
    }
    for (int i = 0; i < gs_n_analysis_rows; i++) {
        const gs_analysis_row *r = &gs_analysis_rows[i];
        if (!r->json || !(a->done & r->bit)) continue;
        cJSON *member = cJSON_AddObjectToObject(o, r->stored);
        r->json(member, a);
        if (r->write) add_written_scalars(r, a, &eff, member);
    }
    if (a->notes[0]) cJSON_AddStringToObject(o, "notes", a->notes);
    return o;
}
