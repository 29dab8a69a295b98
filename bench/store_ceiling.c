/* The store's write overhead against a raw SQLite ceiling measured in the
 * same run: the store API (tokens, head steps, states) versus a minimal loop
 * of prepared INSERTs of the same rows into the same schema, one transaction
 * per window in both. No engine involved: this is the cost the store adds.
 *
 *   bench_store_ceiling [--windows N] [--seq-len T] [--d D] [--heads H] [--dir DIR]
 */
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/half.h"
#include "store/store.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    int windows, T, d, H;
    float *states, *alpha, *beta, *norm;
    uint16_t *half;
} shape;

static store *fresh(const char *dir, const char *name, char *path) {
    sprintf(path, "%s/%s", dir, name);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s-wal", path);
    unlink(path);
    unlink(cmd);
    store *st = store_open(path, STORE_WRITE | STORE_CREATE);
    if (!st) fprintf(stderr, "bench: %s\n", gs_error());
    return st;
}

/* Through store.h, as a recorder writes. */
static double run_store(const char *dir, const shape *s, int with_states, store_dtype dt) {
    char path[4200];
    store *st = fresh(dir, "bench_store.db", path);
    if (!st) return -1;
    int64_t run = store_begin_run(st, &(store_run){.n_windows = s->windows, .seq_len = s->T});
    store_token_row *rows = malloc((size_t)s->T * sizeof *rows);
    double t0 = now();
    for (int w = 0; w < s->windows; w++) {
        if (store_begin(st)) goto fail;
        for (int t = 0; t < s->T; t++) {
            rows[t] = (store_token_row){.window = w, .position = t, .token_id = t % 1000, .next_token_id = (t + 1) % 1000,
                                        .top1 = 7, .nll = 2.5f, .entropy = 3.5f};
            if (store_put_head_steps(st, run, w, t, s->H, s->alpha + (size_t)t * s->H, s->beta + (size_t)t * s->H,
                                     s->norm + (size_t)t * s->H))
                goto fail;
            if (with_states && store_put_state(st, run, w, t, "pred", dt, s->states + (size_t)t * s->d, s->d)) goto fail;
        }
        if (store_put_tokens(st, run, rows, s->T) || store_window_done(st, run, w, (int64_t)w * s->T, s->T) ||
            store_run_progress(st, run, w + 1, (int64_t)(w + 1) * s->T) || store_commit(st))
            goto fail;
    }
    double dt_s = now() - t0;
    free(rows);
    store_close(st);
    return (double)s->windows * s->T / dt_s;
fail:
    fprintf(stderr, "bench: %s\n", gs_error());
    free(rows);
    store_close(st);
    return -1;
}

/* The ceiling: one prepared statement per table, values bound directly. */
static double run_raw(const char *dir, const shape *s, int with_states, store_dtype dt) {
    char path[4200];
    store *st = fresh(dir, "bench_raw.db", path);
    if (!st) return -1;
    int64_t run = store_begin_run(st, &(store_run){.n_windows = s->windows, .seq_len = s->T});
    sqlite3 *db = store_db(st);
    sqlite3_stmt *tok, *head, *state;
    sqlite3_prepare_v2(db, "INSERT INTO tokens VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &tok, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO head_steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &head, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO states(run_id, window, position, kind, dtype, vector) VALUES (?1, ?2, ?3, 'pred', ?4, ?5)",
                       -1, &state, NULL);
    /* the ceiling gets its float16 bytes for free */
    for (int i = 0; i < s->T * s->d; i++) s->half[i] = f32_to_f16(s->states[i]);
    double t0 = now();
    for (int w = 0; w < s->windows; w++) {
        sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        for (int t = 0; t < s->T; t++) {
            for (int h = 0; h < s->H; h++) {
                sqlite3_bind_int64(head, 1, run);
                sqlite3_bind_int(head, 2, w);
                sqlite3_bind_int(head, 3, t);
                sqlite3_bind_int(head, 4, h);
                sqlite3_bind_double(head, 5, s->alpha[t * s->H + h]);
                sqlite3_bind_double(head, 6, s->beta[t * s->H + h]);
                sqlite3_bind_double(head, 7, s->norm[t * s->H + h]);
                sqlite3_step(head);
                sqlite3_reset(head);
            }
            if (with_states) {
                sqlite3_bind_int64(state, 1, run);
                sqlite3_bind_int(state, 2, w);
                sqlite3_bind_int(state, 3, t);
                sqlite3_bind_text(state, 4, dt == STORE_F16 ? "f16" : "f32", -1, SQLITE_STATIC);
                if (dt == STORE_F16) sqlite3_bind_blob(state, 5, s->half + (size_t)t * s->d, s->d * 2, SQLITE_STATIC);
                else sqlite3_bind_blob(state, 5, s->states + (size_t)t * s->d, s->d * 4, SQLITE_STATIC);
                sqlite3_step(state);
                sqlite3_reset(state);
            }
        }
        for (int t = 0; t < s->T; t++) {
            sqlite3_bind_int64(tok, 1, run);
            sqlite3_bind_int(tok, 2, w);
            sqlite3_bind_int(tok, 3, t);
            sqlite3_bind_int(tok, 4, t % 1000);
            sqlite3_bind_int(tok, 5, (t + 1) % 1000);
            sqlite3_bind_double(tok, 6, 2.5);
            sqlite3_bind_double(tok, 7, 3.5);
            sqlite3_bind_int(tok, 8, 7);
            sqlite3_step(tok);
            sqlite3_reset(tok);
        }
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) fprintf(stderr, "bench: %s\n", sqlite3_errmsg(db));
    }
    double dt_s = now() - t0;
    sqlite3_finalize(tok);
    sqlite3_finalize(head);
    sqlite3_finalize(state);
    store_close(st);
    return (double)s->windows * s->T / dt_s;
}

int main(int argc, char **argv) {
    shape s = {.windows = 4, .T = 512, .d = 2496, .H = 15};
    const char *dir = "/tmp";
    static const struct option opts[] = {{"windows", required_argument, 0, 'w'}, {"seq-len", required_argument, 0, 't'},
                                         {"d", required_argument, 0, 'd'},       {"heads", required_argument, 0, 'H'},
                                         {"dir", required_argument, 0, 'o'},     {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == 'w') s.windows = atoi(optarg);
        else if (ch == 't') s.T = atoi(optarg);
        else if (ch == 'd') s.d = atoi(optarg);
        else if (ch == 'H') s.H = atoi(optarg);
        else if (ch == 'o') dir = optarg;
        else { fprintf(stderr, "usage: bench_store_ceiling [--windows N] [--seq-len T] [--d D] [--heads H] [--dir DIR]\n"); return 2; }
    }
    if (s.windows <= 0 || s.T <= 0 || s.d <= 0 || s.H <= 0) { fprintf(stderr, "bench: sizes must be positive\n"); return 2; }
    s.states = malloc((size_t)s.T * s.d * sizeof *s.states);
    s.half = malloc((size_t)s.T * s.d * sizeof *s.half);
    s.alpha = malloc((size_t)s.T * s.H * sizeof(float));
    s.beta = malloc((size_t)s.T * s.H * sizeof(float));
    s.norm = malloc((size_t)s.T * s.H * sizeof(float));
    for (size_t i = 0; i < (size_t)s.T * s.d; i++) s.states[i] = (float)((i * 2654435761u) % 1000) / 100.0f - 5;
    for (size_t i = 0; i < (size_t)s.T * s.H; i++) { s.alpha[i] = 0.9f; s.beta[i] = 0.1f; s.norm[i] = 3; }
    printf("store write overhead: %d windows x %d positions, d=%d, H=%d, one transaction per window, files in %s\n\n",
           s.windows, s.T, s.d, s.H, dir);
    printf("%-12s %14s %14s %8s\n", "states", "store tok/s", "raw tok/s", "ratio");
    const char *names[3] = {"none", "f16", "f32"};
    for (int m = 0; m < 3; m++) {
        store_dtype dt = m == 2 ? STORE_F32 : STORE_F16;
        double raw = run_raw(dir, &s, m > 0, dt), api = run_store(dir, &s, m > 0, dt);
        printf("%-12s %14.0f %14.0f %7.2fx\n", names[m], api, raw, raw / api);
    }
    free(s.states);
    free(s.half);
    free(s.alpha);
    free(s.beta);
    free(s.norm);
    return 0;
}
