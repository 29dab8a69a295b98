/* gpnscope export-notebook FILE --out study.ipynb: a study as a Jupyter
 * notebook; gpnscope export FILE --out DIR --format csv|npy: the data as
 * CSV tables and .npy arrays. The work is in notebooks-export/;
 * docs/notebooks.md describes both. */
#include <cjson/cJSON.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/inputs.h"
#include "base/text.h"
#include "base/tmpfiles.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "notebooks-export/export.h"
#include "notebooks-export/notebook.h"
#include "store/store.h"

static const char *notebook_help =
    "usage: gpnscope export-notebook FILE --out study.ipynb [--run N] [--force]\n\n"
    "Write a Jupyter notebook (nbformat 4) that studies a run of the store FILE: it explains\n"
    "what each analysis measures, opens the store with Python's sqlite3 and pandas (loading the\n"
    "gpnscope_vec extension when it is found, numpy otherwise), shows SQL queries with their\n"
    "results, and redraws every figure with matplotlib from the stored results. The store is\n"
    "named relative to the notebook when they share a top-level folder. Run it with Jupyter, or:\n"
    "  jupyter nbconvert --to notebook --execute --inplace study.ipynb\n\n"
    "  --out PATH   the notebook to write (its folder is created when missing); an existing\n"
    "               file there is replaced (atomically) when it is a notebook, else only with\n"
    "               --force, and never when it is the store itself\n"
    "  --run N      the run (default: the newest)\n"
    "  --force      replace an existing --out file that is not a notebook\n\n"
    "The vector extension is looked for beside the gpnscope executable (build/gpnscope_vec.so)\n"
    "and in ../lib/gpnscope/; GPNSCOPE_VEC=PATH names it, GPNSCOPE_VEC= (empty) leaves it out.\n"
    "Details: docs/notebooks.md.\n";

static const char *export_help =
    "usage: gpnscope export FILE --out DIR --format csv|npy [--run N]\n"
    "                       [--what tokens,heads,states,analyses]\n\n"
    "Write a run's data as files other tools read. csv: tokens.csv (with the token text),\n"
    "heads.csv, states_KIND.csv, analyses.csv, analysis_scalars.csv, analysis_series.csv,\n"
    "analysis_vectors.csv (RFC 4180). npy: states_KIND.npy (n_states, d) '<f4' with\n"
    "states_KIND_window.npy and states_KIND_position.npy; alpha.npy, beta.npy, mem_norm.npy\n"
    "(n_windows, T, H) with heads_window.npy; tokens_*.npy (n_windows, T); analysis vectors as\n"
    ".npy; the other tables as CSV. Both write runs.csv and manifest.json (every file, its\n"
    "shape or rows, what it holds). Files are written whole or not at all.\n\n"
    "  --out DIR      the folder (created when missing; files of the same name are replaced,\n"
    "                 each atomically, but never the store itself)\n"
    "  --format FMT   csv or npy\n"
    "  --run N        the run (default: the newest)\n"
    "  --what LIST    parts to export (default: all the run has; a part named here that the\n"
    "                 run lacks is an error)\n\n"
    "Details: docs/notebooks.md.\n";

/* The run asked for, or the newest; 0 after printing the error. */
static int64_t pick_run(const char *cmd, store *st, int64_t asked) {
    if (asked > 0) {
        store_run_info ri;
        if (store_run_get(st, asked, &ri) != 0) {
            fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
            return 0;
        }
        return asked;
    }
    int64_t run = store_last_run(st, 0);
    if (run < 0) fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
    else if (run == 0) fprintf(stderr, "gpnscope %s: %s has no runs (record or import one first)\n", cmd, store_path(st));
    return run > 0 ? run : 0;
}

/* The gpnscope_vec library: $GPNSCOPE_VEC, else beside this executable or in
 * ../lib/gpnscope/ of it. NULL when not found; *why says so. */
static char *find_vec_extension(char *why, size_t size) {
    const char *env = getenv("GPNSCOPE_VEC");
    if (env) {
        if (!*env) { snprintf(why, size, "GPNSCOPE_VEC is empty"); return NULL; }
        char *real = realpath(env, NULL);
        if (!real) snprintf(why, size, "GPNSCOPE_VEC=%s does not exist", env);
        return real;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) { snprintf(why, size, "the gpnscope executable's folder is unknown"); return NULL; }
    exe[k] = 0;
    char *dir = dirname(exe);
    static const char *const where[] = {"%s/gpnscope_vec.so", "%s/../lib/gpnscope/gpnscope_vec.so",
                                        "%s/../lib/gpnscope_vec.so"};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, where[i], dir);
        char *real = realpath(path, NULL);
        if (real) return real;
    }
    snprintf(why, size, "no gpnscope_vec.so beside %s or in its ../lib/gpnscope", dir);
    return NULL;
}

/* May --out be replaced without --force? Yes when nothing is there, or when
 * it is a notebook (a JSON object with an nbformat number): re-exporting a
 * study replaces its notebook, a typo never replaces some other file. */
static int replaceable_notebook(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 1; /* nothing to replace (or unreadable: the write says why) */
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 > cap) {
            char *nb = cap < ((size_t)256 << 20) ? realloc(buf, cap = cap ? 2 * cap : 1 << 20) : NULL;
            if (!nb) { free(buf); fclose(f); return 0; } /* over 256 MB: not one of ours */
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    cJSON *j = cJSON_ParseWithLength(buf, n);
    free(buf);
    int ok = j && cJSON_IsObject(j) && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "nbformat"));
    cJSON_Delete(j);
    return ok;
}

int cmd_export_notebook(int argc, char **argv) {
    const char *out = NULL;
    int64_t run = 0;
    int force = 0;
    const cli_opt opts[] = {
        {CLI_STRING("out", &out), .short_name = 'o'},
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (a positive integer)"), .short_name = 'r'},
        {CLI_FLAG("force", &force), .short_name = 'f'},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"export-notebook", notebook_help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    const char *usage = cli_one_store_file(argc, optind);
    if (usage || !out) {
        fprintf(stderr, "gpnscope export-notebook: %s (see gpnscope export-notebook --help)\n",
                usage ? usage : "--out is required");
        return 2;
    }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_READ);
    if (!st) { fprintf(stderr, "gpnscope export-notebook: %s\n", gs_error()); return 1; }
    /* the store is an input (store_open says so): gs_outfile refuses to replace it */
    if (gs_output_check(out) != 0) {
        fprintf(stderr, "gpnscope export-notebook: %s\n", gs_error());
        store_close(st);
        return 1;
    }
    if (!force && !replaceable_notebook(out)) {
        char q[4200];
        fprintf(stderr, "gpnscope export-notebook: %s exists and is not a notebook: choose another --out, or add "
                "--force to replace it (e.g. gpnscope export-notebook ... --out %s --force)\n", out,
                gs_shell_quote(out, q, sizeof q));
        store_close(st);
        return 1;
    }
    run = pick_run("export-notebook", st, run);
    if (!run) { store_close(st); return 1; }
    char why[4200] = "";
    char *vec = find_vec_extension(why, sizeof why);
    gs_notebook_opts o = {run, vec, GPNSCOPE_VERSION};
    /* one snapshot of the store for the whole notebook, even while a recording writes */
    store_snapshot_begin(st);
    int rc = gs_notebook_write(st, out, &o);
    store_snapshot_end(st);
    store_close(st);
    if (rc != 0) {
        free(vec);
        fprintf(stderr, "gpnscope export-notebook: %s\n", gs_error());
        return 1;
    }
    printf("wrote %s: a study of run %lld of %s\n", out, (long long)run, path);
    if (vec) printf("  the notebook loads the vector extension %s\n", vec);
    else printf("  note: %s; the notebook computes its vector queries with numpy instead\n", why);
    printf("  run it: jupyter nbconvert --to notebook --execute --inplace %s (or open it in Jupyter)\n", out);
    free(vec);
    return 0;
}

int cmd_export(int argc, char **argv) {
    const char *out = NULL, *format = NULL;
    int64_t run = 0;
    gs_export_opts eo = {0};
    const cli_opt opts[] = {
        {CLI_STRING("out", &out), .short_name = 'o'},
        {CLI_STRING("format", &format), .short_name = 'f'},
        {CLI_INTEGER("run", &run, 1, INT64_MAX, "a run id (a positive integer)"), .short_name = 'r'},
        {CLI_LIST("what", &eo.what, gs_export_parse_what, "--what: "), .short_name = 'w', .seen = &eo.strict},
        {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"export", export_help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    const char *usage = cli_one_store_file(argc, optind);
    if (usage || !out || !format) {
        fprintf(stderr, "gpnscope export: %s (see gpnscope export --help)\n",
                usage ? usage : !out ? "--out DIR is required" : "--format csv|npy is required");
        return 2;
    }
    if (gs_export_parse_format(format, &eo.format) != 0) {
        fprintf(stderr, "gpnscope export: --format: %s\n", gs_error());
        return 2;
    }
    const char *path = argv[optind];
    store *st = store_open(path, STORE_READ);
    if (!st) { fprintf(stderr, "gpnscope export: %s\n", gs_error()); return 1; }
    run = pick_run("export", st, run);
    if (!run) { store_close(st); return 1; }
    gs_remove_stale_tmp(out); /* what a killed export left */
    gs_export_result res;
    int rc = gs_export_run(st, run, out, &eo, &res);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "gpnscope export: %s\n", gs_error());
        gs_export_result_free(&res);
        return 1;
    }
    printf("exported run %lld of %s to %s (%s):\n", (long long)run, path, out, format);
    for (int i = 0; i < res.n_files; i++) printf("  %-44s %s\n", res.files[i].name, res.files[i].size);
    printf("  %-44s the list of files\n", "manifest.json");
    for (char *line = res.notes; *line;) {
        char *e = strchr(line, '\n');
        if (e) *e = 0;
        fprintf(stderr, "note: %s\n", line);
        if (!e) break;
        line = e + 1;
    }
    gs_export_result_free(&res);
    return 0;
}
