/* bench/analyze: the geometry analysis (analyses.md section 1) on the
 * paper's setting, 16384 states of d = 2496, against numpy doing np.cov +
 * np.linalg.eigh on the same matrix in the same run (bench/analyze_numpy.py,
 * run with $GPNSCOPE_PYTHON or /usr/bin/python3).
 *
 * The states are also written to a store (float16, as `gpnscope record`
 * keeps them by default) and analysed from there end to end: our store
 * reader + gs_geometry_run against Python's sqlite3 + np.frombuffer + np.cov
 * + eigh on the same file.
 *
 * Rows: the covariance (ours: one streaming DSYRK pass in double; numpy:
 * np.cov), the spectrum (ours: DSYEVD, values only; numpy: eigh, which also
 * computes vectors, and eigvalsh, values only, for a like-for-like row), and
 * end to end (ours: the whole of gs_geometry_run, which also does norms,
 * correlations, the heatmap sample and the top singular vector; numpy:
 * np.cov + eigh). Ratio = numpy time / ours (> 1: we are faster). Goal: no
 * slower than numpy end to end. The top eigenvalues of both are compared.
 *
 * States are random (a mean of norm ~107 plus coordinates of unequal spread,
 * like the paper's); the store-reading variant replaces the source only.
 * Not a test: the numbers depend on the machine.
 *
 * Each side is timed REPS times and the fastest kept (other work on the
 * machine only ever makes a run slower).
 *
 * usage: bench_analyze [N [D [REPS]]]   (default 16384 2496 2) */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyses/analyze.h"
#include "analyses/state/geometry.h"
#include "analyses/math/linalg.h"
#include "analyses/math/stats.h"
#include "base/error.h"
#include "store/store.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void script_path(char *out, size_t n) {
    const char *src = getenv("GPNSCOPE_SOURCE");
    if (src) { snprintf(out, n, "%s/bench/analyze_numpy.py", src); return; }
    /* __FILE__ is this source's absolute path in a CMake build */
    snprintf(out, n, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    if (slash) snprintf(slash + 1, n - (size_t)(slash + 1 - out), "analyze_numpy.py");
    else snprintf(out, n, "bench/analyze_numpy.py");
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
    int d = argc > 2 ? atoi(argv[2]) : 2496;
    int reps = argc > 3 ? atoi(argv[3]) : 2;
    if (n < 2 || d < 1 || reps < 1) { fprintf(stderr, "usage: bench_analyze [N >= 2 [D >= 1 [REPS >= 1]]]\n"); return 2; }
    const int T = 2048;
    printf("bench_analyze: %lld states x d = %d (float32, %.0f MB), windows of %d\n", (long long)n, d,
           (double)n * d * 4 / 1e6, T);

    /* ---- states ---- */
    float *x = malloc((size_t)n * d * sizeof *x);
    int64_t *win = malloc((size_t)n * sizeof *win);
    int32_t *pos = malloc((size_t)n * sizeof *pos);
    double *m = malloc((size_t)d * sizeof *m), *sd = malloc((size_t)d * sizeof *sd);
    if (!x || !win || !pos || !m || !sd) { fprintf(stderr, "out of memory\n"); return 1; }
    gs_rng rng = {7};
    double mn = 0;
    for (int j = 0; j < d; j++) {
        m[j] = gs_rng_normal(&rng);
        mn += m[j] * m[j];
        sd[j] = 1.05 * exp(gs_rng_uniform(&rng) * log(11.3 / 1.05)); /* the paper's range of per-dim stds */
    }
    for (int j = 0; j < d; j++) m[j] *= 107.0 / sqrt(mn);
    for (int64_t i = 0; i < n; i++) {
        win[i] = i / T;
        pos[i] = (int32_t)(i % T);
        for (int j = 0; j < d; j++) x[i * d + j] = (float)(m[j] + sd[j] * gs_rng_normal(&rng));
    }
    gs_states s = {n, d, x, win, pos};
    gs_state_source src;
    gs_states_cursor cur;

    /* ---- ours: the parts, then the whole ---- */
    double t_cov = INFINITY, t_eig = INFINITY, t_geom = INFINITY, t0;
    double *mean = malloc((size_t)d * sizeof *mean), *w = malloc((size_t)d * sizeof *w);
    gs_geometry g = {0};
    for (int r = 0; r < reps; r++) {
        t0 = now();
        gs_cov_acc acc;
        if (gs_cov_acc_init(&acc, d, 512) != 0) { fprintf(stderr, "%s\n", gs_error()); return 1; }
        for (int64_t i = 0; i < n; i += 512) gs_cov_acc_add(&acc, x + i * d, n - i < 512 ? n - i : 512);
        gs_cov_acc_finish(&acc, mean, acc.S);
        t_cov = fmin(t_cov, now() - t0);
        t0 = now();
        if (gs_sym_eigvals(acc.S, d, w) != 0) { fprintf(stderr, "%s\n", gs_error()); return 1; }
        t_eig = fmin(t_eig, now() - t0);
        gs_cov_acc_free(&acc);

        gs_states_source(&src, &cur, &s);
        gs_geometry_free(&g);
        t0 = now();
        if (gs_geometry_run(&src, NULL, &g) != 0) { fprintf(stderr, "geometry: %s\n", gs_error()); return 1; }
        t_geom = fmin(t_geom, now() - t0);
    }

    /* ---- the same states in a store (float16), analysed from there ---- */
    char dir[] = "/tmp/gs_bench_analyze_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[4200], script[4200], cmd[9000], outp[4200], dbp[4200];
    snprintf(dbp, sizeof dbp, "%s/study.db", dir);
    store *st = store_open(dbp, STORE_WRITE | STORE_CREATE);
    if (!st) { fprintf(stderr, "%s\n", gs_error()); return 1; }
    int64_t run = store_begin_run(st, &(store_run){.seq_len = T, .states = "pred", .positions = "all",
                                                   .state_dtype = "f16", .d_state = d});
    double t_write = now();
    for (int64_t i = 0; i < n; i++) {
        if (i % T == 0 && store_begin(st) != 0) { fprintf(stderr, "%s\n", gs_error()); return 1; }
        if (store_put_state(st, run, (int32_t)win[i], pos[i], "pred", STORE_F16, x + i * d, d) != 0) {
            fprintf(stderr, "%s\n", gs_error());
            return 1;
        }
        if ((i + 1) % T == 0 || i == n - 1) store_commit(st);
    }
    t_write = now() - t_write;
    store_finish_run(st, run, "complete", NULL);
    double t_store = INFINITY;
    gs_geometry gs = {0};
    for (int r = 0; r < reps; r++) {
        gs_geometry_free(&gs);
        t0 = now();
        gs_state_source *ss = gs_store_source_open(st, run, "pred", 0, 0);
        if (!ss || gs_geometry_run(ss, NULL, &gs) != 0) { fprintf(stderr, "from the store: %s\n", gs_error()); return 1; }
        gs_store_source_close(ss);
        t_store = fmin(t_store, now() - t0);
    }
    store_close(st);

    /* ---- numpy on the same matrix ---- */
    snprintf(path, sizeof path, "%s/states.f32", dir);
    snprintf(outp, sizeof outp, "%s/numpy.txt", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(x, sizeof *x, (size_t)n * d, f) != (size_t)n * d) { fprintf(stderr, "cannot write %s\n", path); return 1; }
    fclose(f);
    script_path(script, sizeof script);
    const char *py = getenv("GPNSCOPE_PYTHON");
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %lld %d %d '%s' %lld > '%s'", py && *py ? py : "/usr/bin/python3", script,
             path, (long long)n, d, reps, dbp, (long long)run, outp);
    int rc = system(cmd);
    double np_cov = 0, np_eigh = 0, np_eigvalsh = 0, np_top[3] = {0}, np_store = 0, np_stop = 0;
    int have_np = 0;
    if (rc == 0 && (f = fopen(outp, "r"))) {
        have_np = fscanf(f, "%lf %lf %lf %lf %lf %lf %lf %lf", &np_cov, &np_eigh, &np_eigvalsh, &np_top[0], &np_top[1],
                         &np_top[2], &np_store, &np_stop) == 8;
        fclose(f);
    }
    unlink(path);
    unlink(outp);
    snprintf(cmd, sizeof cmd, "rm -f '%s'*", dbp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dbp);
    rmdir(dir);

    /* ---- table ---- */
    printf("\n%-44s %12s %12s %8s\n", "step", "gpnscope s", "numpy s", "ratio");
    if (have_np) {
        printf("%-44s %12.3f %12.3f %8.2f\n", "covariance (dsyrk stream / np.cov)", t_cov, np_cov, np_cov / t_cov);
        printf("%-44s %12.3f %12.3f %8.2f\n", "spectrum (dsyevd values / eigh)", t_eig, np_eigh, np_eigh / t_eig);
        printf("%-44s %12.3f %12.3f %8.2f\n", "spectrum, like for like (/ eigvalsh)", t_eig, np_eigvalsh,
               np_eigvalsh / t_eig);
        printf("%-44s %12.3f %12.3f %8.2f\n", "end to end in memory (geometry / cov + eigh)", t_geom, np_cov + np_eigh,
               (np_cov + np_eigh) / t_geom);
        printf("%-44s %12.3f %12.3f %8.2f\n", "end to end from the store, f16 states", t_store, np_store,
               np_store / t_store);
        double e = 0;
        for (int i = 0; i < 3; i++) e = fmax(e, fabs(g.eigvals[i] - np_top[i]) / np_top[i]);
        printf("\ntop eigenvalues: ours %.6f %.6f %.6f, numpy %.6f %.6f %.6f (max rel diff %.2g)\n", g.eigvals[0],
               g.eigvals[1], g.eigvals[2], np_top[0], np_top[1], np_top[2], e);
        printf("from the store: top eigenvalue ours %.6f, numpy %.6f (rel diff %.2g); writing the store took %.1f s\n",
               gs.eigvals[0], np_stop, fabs(gs.eigvals[0] - np_stop) / np_stop, t_write);
    } else {
        printf("%-44s %12.3f %12s\n", "covariance (dsyrk stream)", t_cov, "-");
        printf("%-44s %12.3f %12s\n", "spectrum (dsyevd values)", t_eig, "-");
        printf("%-44s %12.3f %12s\n", "end to end in memory (gs_geometry_run)", t_geom, "-");
        printf("%-44s %12.3f %12s\n", "end to end from the store, f16 states", t_store, "-");
        printf("\nnumpy not run (%s): set GPNSCOPE_PYTHON to a python3 with numpy\n", cmd);
    }
    printf("geometry: components 90%%/99%% %d/%d, stable rank %.2f, participation ratio %.1f, top-SV fallback %d\n",
           g.n90, g.n99, g.stable_rank, g.participation_ratio, g.top_sv_fallback);
    gs_geometry_free(&g);
    gs_geometry_free(&gs);
    free(x); free(win); free(pos); free(m); free(sd); free(mean); free(w);
    return 0;
}
