/* gpnscope automaton: does the operator learn the automaton? Clusters a
 * tree model's node vectors over random strings of a task and scores the
 * clusters against the minimal DFA's transition monoid (docs/automaton.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/automaton/automaton.h"
#include "analyses/registry.h"
#include "analyses/automaton/ldru_nodes.h"
#include "analyses/automaton/node_sources.h"
#include "analyses/automaton/state_geometry.h"
#include "base/error.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "engine/model.h"
#include "plots/automaton_plots.h"
#include "store/automaton.h"

static const char help[] =
    "usage: gpnscope automaton MODEL --task NAME [--strings N] [--max-length L] [--train-length T]\n"
    "                          [--seed S] [--points P] [--auto-points A] [--geometry-points G]\n"
    "                          [--db F] [--plot DIR] [--json]\n"
    "       gpnscope automaton --reference exact|random --task NAME [same options]\n\n"
    "Does the operator learn the automaton? Every node of an MLP-LDRU tree stands\n"
    "for a segment w of its input; w induces a function f_w on the states of the\n"
    "task's minimal DFA, an element of its transition monoid. Over N random\n"
    "strings of the task (lengths uniform in 1..L), the node vectors are grouped\n"
    "by tree level and by segment length (buckets (2^(b-1), 2^b]), each split into\n"
    "in distribution (segments of at most T symbols) and out, then clustered two\n"
    "ways: k-means with k = the number of monoid elements present, and k-means\n"
    "with k chosen by the silhouette (no labels used). Each cell reports purity,\n"
    "the adjusted Rand index against the elements, and the clusters found against\n"
    "the elements present. 1 and 1 mean the vectors separate exactly what the\n"
    "automaton separates; ARI near 0 means they are unrelated to it.\n\n"
    "  MODEL            an MLP-LDRU checkpoint (safetensors) trained on --task\n"
    "  --reference K    instead of a model, a reference source on the balanced tree:\n"
    "                   exact (each node the one-hot of its element: the ceiling) or\n"
    "                   random (i.i.d. normal vectors of width 32: the floor)\n"
    "  --task NAME      the task (gpnscope tasks --list); required\n"
    "  --strings N      random strings, 1..1000000 (default 200)\n"
    "  --max-length L   longest string, 1..1000 (default 256)\n"
    "  --train-length T segments of at most T symbols count as in distribution\n"
    "                   (default 40, the training length of docs/tasks.md)\n"
    "  --seed S         seed of the strings, the samples and k-means (default 1)\n"
    "  --points P       nodes kept per cell, a uniform sample (default 2000)\n"
    "  --auto-points A  of those, how many the silhouette clustering sees (default\n"
    "                   600; it holds A x A distances)\n"
    "  --geometry-points G  the state geometry (as analyze --only geometry: explained\n"
    "                   variance, components for 90%/99%, participation ratio, stable\n"
    "                   rank) of a uniform sample of G prefix states (a model's state\n"
    "                   site, the root over x_0..x_t; in distribution when t + 1 <= T)\n"
    "                   and G node vectors (in when the segment has <= T symbols), in\n"
    "                   and out of distribution (default 4096; 0: none)\n"
    "  --db F           store the experiment in F (tables automaton_experiments,\n"
    "                   automaton_cells and automaton_geometry; created if missing)\n"
    "  --plot DIR       draw DIR/automaton.gp and .png per tree level (needs --db)\n"
    "  --json           the cells as JSON instead of the table\n"
    "Progress goes to stderr on a terminal. Nothing is stored until the whole\n"
    "experiment is done (one transaction). See docs/automaton.md.\n";

/* The state geometry's four sets: [prefix | node][out | in]. */
typedef struct {
    int done[2][2];
    gs_geometry g[2][2];
    char why[2][2][256];
} geometry_sets;

static const char *const set_names[2] = {"prefix", "node"};

static int measure_sets(const gs_state_geometry *sg, uint64_t seed, geometry_sets *out) {
    for (int w = 0; w < 2; w++)
        for (int in = 0; in < 2; in++) {
            if (w == GS_GEOM_PREFIX && !sg->engine) continue;
            int rc = gs_state_geometry_measure(sg, w, in, seed, &out->g[w][in], out->why[w][in], sizeof out->why[w][in]);
            if (rc < 0) return -1;
            out->done[w][in] = rc == 0 ? 1 : -1;
        }
    return 0;
}

static void print_geometry(const geometry_sets *s, const gs_state_geometry *sg) {
    printf("\nstate geometry (as analyze --only geometry; a uniform sample of each set)\n%-6s %-3s %9s %7s %4s %10s %7s %7s"
           " %13s %11s\n", "states", "", "seen", "sampled", "d", "norm mean", "90%", "99%", "participation", "stable rank");
    for (int w = 0; w < 2; w++)
        for (int in = 1; in >= 0; in--) {
            if (!s->done[w][in]) continue;
            const gs_geometry *g = &s->g[w][in];
            printf("%-6s %-3s %9lld %7d ", set_names[w], in ? "in" : "out", (long long)sg->set[w][in].seen, sg->set[w][in].n);
            if (s->done[w][in] < 0) printf("n/a (%s)\n", s->why[w][in]);
            else printf("%4d %10.4g %7d %7d %13.3f %11.3f\n", g->d, g->norm_mean, g->n90, g->n99, g->participation_ratio,
                        g->stable_rank);
        }
}

static void geometry_json(cJSON *all, const geometry_sets *s, const gs_state_geometry *sg) {
    cJSON *arr = cJSON_AddArrayToObject(all, "geometry");
    for (int w = 0; w < 2; w++)
        for (int in = 1; in >= 0; in--) {
            if (!s->done[w][in]) continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "states", set_names[w]);
            cJSON_AddBoolToObject(o, "in_distribution", in);
            cJSON_AddNumberToObject(o, "seen", (double)sg->set[w][in].seen);
            if (s->done[w][in] > 0) {
                gs_analysis a = {.geometry = s->g[w][in]}; /* the registry row's own JSON fields */
                gs_analysis_row_of(GS_AN_GEOMETRY)->json(o, &a);
                cJSON *cum = cJSON_AddArrayToObject(o, "cumulative_explained");
                for (int i = 0; i < s->g[w][in].d; i++) cJSON_AddItemToArray(cum, cJSON_CreateNumber(s->g[w][in].cum_explained[i]));
            } else {
                cJSON_AddStringToObject(o, "skipped", s->why[w][in]);
            }
            cJSON_AddItemToArray(arr, o);
        }
}

static int geometry_rows(const geometry_sets *s, const gs_state_geometry *sg, store_automaton_geometry *rows) {
    int n = 0;
    for (int w = 0; w < 2; w++)
        for (int in = 1; in >= 0; in--) {
            if (s->done[w][in] <= 0) continue;
            const gs_geometry *g = &s->g[w][in];
            rows[n++] = (store_automaton_geometry){
                .states = set_names[w], .in_distribution = in, .n_seen = sg->set[w][in].seen, .n_states = (int)g->n,
                .d = g->d, .norm_mean = g->norm_mean, .mean_norm = g->mean_norm, .total_variance = g->total_var,
                .participation_ratio = g->participation_ratio, .stable_rank = g->stable_rank, .components_90 = g->n90,
                .components_99 = g->n99, .cum_explained = g->cum_explained, .vectors = sg->set[w][in].x};
        }
    return n;
}

static void print_table(const gs_automaton_result *r, const gs_task *task, int train_length) {
    printf("task %s: minimal DFA %d states, transition monoid %d elements; %d strings, %lld nodes\n", task->name,
           r->dfa_states, r->monoid_size, r->n_strings, (long long)r->n_nodes);
    const char *group = NULL;
    for (int i = 0; i < r->n_cells; i++) {
        const gs_automaton_cell *c = &r->cells[i];
        const char *g = c->grouping == GS_CELL_LEVEL ? "tree level" : "length bucket";
        if (g != group) {
            printf("\nby %s (in: segments of at most %d symbols; k-means with k = elements | k by silhouette, of the"
                   " elements in its sample)\n%-3s %6s %9s %8s %6s %8s %8s | %7s %7s | %7s %7s %7s\n", g, train_length, "",
                   c->grouping == GS_CELL_LEVEL ? "level" : "bucket", "spans", "nodes", "points", "elements", "majority",
                   "purity", "ARI", "k/elem", "purity", "ARI");
            group = g;
        }
        char spans[24], found[24];
        snprintf(spans, sizeof spans, "%d-%d", c->min_span, c->max_span);
        snprintf(found, sizeof found, "%d/%d", c->auto_k, c->auto_elements);
        printf("%-3s %6d %9s %8lld %6d %8d %8.3f | %7.3f %7.3f | %7s %7.3f %7.3f\n", c->in_distribution ? "in" : "out",
               c->bucket, spans, (long long)c->n_nodes, c->n_points, c->n_elements, c->majority, c->kmeans_purity,
               c->kmeans_ari, found, c->auto_purity, c->auto_ari);
    }
}

static cJSON *cells_json(const gs_automaton_result *r, const gs_task *task) {
    cJSON *all = cJSON_CreateObject();
    cJSON_AddStringToObject(all, "task", task->name);
    cJSON_AddNumberToObject(all, "dfa_states", r->dfa_states);
    cJSON_AddNumberToObject(all, "monoid_size", r->monoid_size);
    cJSON_AddNumberToObject(all, "strings", r->n_strings);
    cJSON_AddNumberToObject(all, "nodes", (double)r->n_nodes);
    cJSON *cells = cJSON_AddArrayToObject(all, "cells");
    for (int i = 0; i < r->n_cells; i++) {
        const gs_automaton_cell *c = &r->cells[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "grouping", c->grouping == GS_CELL_LEVEL ? "level" : "length");
        cJSON_AddBoolToObject(o, "in_distribution", c->in_distribution);
        const struct {
            const char *key;
            double v;
        } f[] = {{"bucket", c->bucket},         {"min_span", c->min_span},       {"max_span", c->max_span},
                 {"nodes", (double)c->n_nodes}, {"points", c->n_points},         {"elements", c->n_elements},
                 {"majority", c->majority},     {"kmeans_purity", c->kmeans_purity}, {"kmeans_ari", c->kmeans_ari},
                 {"auto_points", c->auto_points}, {"auto_elements", c->auto_elements}, {"auto_k", c->auto_k},
                 {"auto_silhouette", c->auto_silhouette}, {"auto_purity", c->auto_purity}, {"auto_ari", c->auto_ari}};
        for (size_t j = 0; j < sizeof f / sizeof *f; j++)
            if (f[j].v == f[j].v) cJSON_AddNumberToObject(o, f[j].key, f[j].v);
            else cJSON_AddNullToObject(o, f[j].key); /* NaN: a one-point cell's ARI */
        cJSON_AddItemToArray(cells, o);
    }
    return all;
}

typedef struct {
    const char *task_name, *plot, *reference;
    int geo_points;
    gs_automaton_opts opts;
    gs_model *model; /* NULL for a --reference */
    gs_monoid *monoid;
    gs_ldru_nodes ldru;
    gs_random_nodes random;
    gs_node_source source;
    gs_automaton_result result;
    gs_state_geometry sg;
    geometry_sets sets;
    store_automaton_geometry geo[4];
    int n_geo;
    int64_t experiment; /* stored as; 0: not stored */
} automaton_state;

static int store_result(run_call *call) {
    automaton_state *s = call->state;
    if (!call->out) return 0;
    const gs_model *m = s->model;
    const gs_automaton_opts *o = &s->opts;
    const gs_automaton_result *r = &s->result;
    store_automaton_experiment e = {0};
    snprintf(e.model_path, sizeof e.model_path, "%s", m ? m->path : s->reference);
    snprintf(e.model_sha256, sizeof e.model_sha256, "%s", m ? m->hash : "");
    snprintf(e.task, sizeof e.task, "%s", o->task->name);
    snprintf(e.code_version, sizeof e.code_version, "%s", GPNSCOPE_VERSION);
    snprintf(e.settings, sizeof e.settings,
             "{\"strings\": %d, \"max_length\": %d, \"train_length\": %d, \"seed\": %llu, \"points\": %d, "
             "\"auto_points\": %d, \"geometry_points\": %d%s%s%s}",
             o->n_strings, o->max_length, o->train_length, (unsigned long long)o->seed, o->max_points, o->auto_points,
             s->geo_points, m ? "" : ", \"reference\": \"", m ? "" : s->reference, m ? "" : "\"");
    e.monoid_size = r->monoid_size;
    e.dfa_states = r->dfa_states;
    e.n_strings = r->n_strings;
    e.n_nodes = r->n_nodes;
    e.geometry = s->geo;
    e.n_geometry = s->n_geo;
    s->experiment = store_put_automaton(call->out, &e, r->cells, r->n_cells);
    return s->experiment < 0 ? -1 : 0;
}

static void automaton_options(run_call *call, cli_opt *rows) {
    automaton_state *s = call->state;
    gs_automaton_opts *o = &s->opts;
    gs_automaton_opts_default(o);
    s->geo_points = 4096;
    const cli_opt table[] = {
        {CLI_STRING("task", &s->task_name)},
        {CLI_INTEGER("strings", &o->n_strings, 1, 1000000, "a count in 1..1000000")},
        {CLI_INTEGER("max-length", &o->max_length, 1, GS_TASK_MAX_LENGTH, "a length in 1..1000")},
        {CLI_INTEGER("train-length", &o->train_length, 1, GS_TASK_MAX_LENGTH, "a length in 1..1000")},
        {CLI_INTEGER("seed", &o->seed, 0, 9007199254740992LL, "a seed >= 0")},
        {CLI_INTEGER("points", &o->max_points, 2, 100000, "a count in 2..100000")},
        {CLI_INTEGER("auto-points", &o->auto_points, 2, 5000, "a count in 2..5000")},
        {CLI_STRING("db", &call->out_path)},
        {CLI_STRING("plot", &s->plot)},
        {CLI_FLAG("json", &call->json)},
        {CLI_STRING("reference", &s->reference)},
        {CLI_INTEGER("geometry-points", &s->geo_points, 0, 1000000, "a count in 0..1000000")},
        {0}};
    RUN_COMMAND_SET_ROWS(rows, table);
}

static int automaton_check(run_call *call) {
    automaton_state *s = call->state;
    int n_models = call->n_args;
    if ((s->reference ? n_models != 0 : n_models != 1) || !s->task_name)
        return run_usage(call, !s->task_name ? "--task is required"
                               : s->reference ? "give either MODEL or --reference, not both"
                               : n_models     ? "give one MODEL"
                                              : "give a MODEL (or --reference exact|random)");
    if (s->reference && strcmp(s->reference, "exact") && strcmp(s->reference, "random")) {
        fprintf(stderr, "gpnscope automaton: --reference %s: exact or random\n", s->reference);
        return 2;
    }
    if (s->plot && !call->out_path) {
        fprintf(stderr, "gpnscope automaton: --plot draws from the stored experiment: give --db too\n");
        return 2;
    }
    return (s->opts.task = gs_task_find(s->task_name)) ? 0 : run_error(call, 2);
}

/* the node source: the exact monoid, random vectors, or a tree model's LDRU nodes, with the state geometry's sample */
static int automaton_prepare(run_call *call) {
    automaton_state *s = call->state;
    s->random = (gs_random_nodes){.state = s->opts.seed ^ 0xa5a5a5a5ull, .width = 32};
    if (s->reference && !strcmp(s->reference, "exact")) {
        gs_dfa dfa;
        gs_task_dfa(s->opts.task, &dfa);
        if (!(s->monoid = gs_monoid_build(&dfa, GS_MONOID_DEFAULT_MAX))) return run_error(call, 1);
        s->source = gs_node_source_exact(s->monoid);
    } else if (s->reference) {
        s->source = gs_node_source_random(&s->random);
    } else if (!(s->model = gs_model_load(call->args[0])) ||
               gs_node_source_ldru(s->model, s->opts.task, &s->ldru, &s->source)) {
        return run_error(call, 1);
    }
    if (s->geo_points > 0 && gs_state_geometry_wrap(&s->sg, &s->source, s->model, s->opts.train_length, s->geo_points,
                                                    s->opts.seed, &s->source))
        return run_error(call, 1);
    return 0;
}

static int64_t automaton_planned(const run_call *call) { return ((const automaton_state *)call->state)->opts.n_strings; }
static int64_t automaton_done(const run_call *call) { return ((const automaton_state *)call->state)->result.n_strings; }

static int automaton_run(run_call *call) {
    automaton_state *s = call->state;
    s->opts.progress = progress_callback;
    s->opts.progress_ctx = &call->bar;
    if (gs_automaton_run(&s->source, &s->opts, &s->result)) return -1;
    if (s->geo_points > 0 && measure_sets(&s->sg, s->opts.seed, &s->sets)) return -1;
    if (s->geo_points > 0) s->n_geo = geometry_rows(&s->sets, &s->sg, s->geo);
    return 0;
}

static void automaton_json(const run_call *call) {
    const automaton_state *s = call->state;
    cJSON *all = cells_json(&s->result, s->opts.task);
    if (s->geo_points > 0) geometry_json(all, &s->sets, &s->sg);
    if (s->experiment > 0) cJSON_AddNumberToObject(all, "experiment_id", (double)s->experiment);
    char *text = cJSON_PrintUnformatted(all);
    puts(text);
    free(text);
    cJSON_Delete(all);
}

static void automaton_text(const run_call *call) {
    const automaton_state *s = call->state;
    print_table(&s->result, s->opts.task, s->opts.train_length);
    if (s->geo_points > 0) print_geometry(&s->sets, &s->sg);
    if (s->experiment > 0)
        printf("\nstored as automaton experiment %lld in %s (tables automaton_experiments, automaton_cells)\n",
               (long long)s->experiment, call->out_path);
}

static int automaton_draw(run_call *call) {
    const automaton_state *s = call->state;
    if (!s->plot) return 0;
    char made[4096];
    if (gs_plot_automaton(call->out, s->experiment, s->plot, made, sizeof made)) return -1;
    if (!call->json) printf("%s\n", made);
    return 0;
}

static void automaton_release(run_call *call) {
    automaton_state *s = call->state;
    gs_automaton_result_free(&s->result);
    for (int w = 0; w < 2; w++)
        for (int in = 0; in < 2; in++) gs_geometry_free(&s->sets.g[w][in]);
    gs_state_geometry_free(&s->sg);
    gs_monoid_free(s->monoid);
    gs_model_free(s->model);
}

static const run_command automaton_command = {
    .name = "automaton",
    .help = help,
    .state_size = sizeof(automaton_state),
    .input = RUN_ON_ARGS,
    .options = automaton_options,
    .check = automaton_check,
    .prepare = automaton_prepare,
    .progress_unit = "strings",
    .planned = automaton_planned,
    .run = automaton_run,
    .done = automaton_done,
    .write = store_result,
    .print_json = automaton_json,
    .print_text = automaton_text,
    .draw = automaton_draw,
    .release = automaton_release,
};

int cmd_automaton(int argc, char **argv) { return run_command_main(&automaton_command, argc, argv); }
