/* `gpnscope train` as a user runs it: --help, usage and config errors (one
 * line, exit 2 / 1), a run to the end, a run stopped with --run-steps and
 * resumed (same weights as the straight run), and Ctrl-C: the step finishes,
 * a checkpoint is written, exit 130, and the run resumes from it. */
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include <math.h>

#include "engine/model.h"
#include "io/checkpoint/safetensors.h"
#include "testlib.h"

static char bin[4096], dir[4096];

static int run(const char *args, char *err, size_t errsz) {
    char cmd[16384], errpath[4200];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' train %s >/dev/null 2>'%s'", bin, args, errpath);
    int st = system(cmd);
    if (err) {
        err[0] = 0;
        FILE *f = fopen(errpath, "r");
        if (f) {
            size_t n = fread(err, 1, errsz - 1, f);
            err[n] = 0;
            fclose(f);
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void write_config(const char *name, const char *out, long steps) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fprintf(f,
            "{\"model\": {\"arch\": \"gpn_m\", \"vocab_size\": 29, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24,"
            " \"n_heads\": 2, \"d_key\": 4, \"d_val\": 4},\n"
            " \"data\": {\"train\": \"shards\", \"eval\": \"shards\", \"seq_len\": 16, \"batch_size\": 4},\n"
            " \"training\": {\"steps\": %ld, \"seed\": 5, \"threads\": 1},\n"
            " \"optimizer\": {\"learning_rate\": 0.01, \"warmup_steps\": 2},\n"
            " \"output\": {\"dir\": \"%s\", \"eval_every\": 3, \"eval_windows\": 4}}\n",
            steps, out);
    fclose(f);
}

static int file_size(const char *d, const char *name) {
    char p[8400];
    snprintf(p, sizeof p, "%s/%s/%s", dir, d, name);
    struct stat st;
    return stat(p, &st) == 0 ? (int)(st.st_size > 0) : 0;
}

static char *slurp(const char *d, const char *name) {
    char p[8400];
    snprintf(p, sizeof p, "%s/%s/%s", dir, d, name);
    FILE *f = fopen(p, "r");
    if (!f) return strdup("");
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static gs_model *load(const char *d) {
    char p[8400];
    snprintf(p, sizeof p, "%s/%s/model.safetensors", dir, d);
    return gs_model_load(p);
}

/* The last row's decay columns: how far A_log / dt_bias moved from the
 * initial values the checkpoint's metadata records (the init of seed 5). */
static void check_decay_log_and_meta(const char *log) {
    const char *last = log + strlen(log) - 1;
    while (last > log && last[-1] != '\n') last--;
    double col[11];
    const char *p = last;
    for (int i = 0; i < 11; i++) {
        char *end;
        col[i] = strtod(p, &end);
        CHECK(end != p || i == 5, "loss.csv column %d of the last row is not a number: %s", i, last);
        p = *end == ',' ? end + 1 : end;
    }
    gs_model *m = load("straight");
    CHECK(m != NULL, "load: %s", gs_error());
    if (!m) return;
    char p8[8400];
    snprintf(p8, sizeof p8, "%s/straight/model.safetensors", dir);
    st_file *f = safetensors_open(p8);
    const char *a = f ? safetensors_meta(f, "init_write_A_log") : NULL, *seed = f ? safetensors_meta(f, "train_seed") : NULL;
    CHECK(a && seed && !strcmp(seed, "5"), "checkpoint metadata lacks the initial A_log / seed");
    double moved = 0, mean = 0;
    for (int h = 0; h < m->cfg.H && a; h++) {
        char *end;
        double init = strtod(a, &end);
        CHECK(end != a, "init_write_A_log is not a list of %d numbers", m->cfg.H);
        double d = fabs(m->p.write_A_log[h] - init);
        if (d > moved) moved = d;
        mean += m->p.write_A_log[h] / m->cfg.H;
        a = *end == ',' ? end + 1 : end;
    }
    CHECK(moved > 0 && fabs(moved - col[8]) < 1e-5 && fabs(mean - col[7]) < 1e-5,
          "A_log moved %g (log: %g), mean %g (log: %g)", moved, col[8], mean, col[7]);
    CHECK(col[10] > 0, "dt_bias never moved in 6 steps at lr 0.01");
    safetensors_close(f);
    gs_model_free(m);
}

int main(void) {
    const char *b = getenv("GPNSCOPE_BIN");
    if (!b || access(b, X_OK) != 0) return test_skip("GPNSCOPE_BIN not set or not executable");
    snprintf(bin, sizeof bin, "%s", b);
    snprintf(dir, sizeof dir, "%s", scratch_dir("train_cli"));
    char err[8192], path[8400];
    /* shards */
    snprintf(path, sizeof path, "%s/shards", dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/shards/data_0000.bin", dir);
    FILE *f = fopen(path, "wb");
    for (uint32_t i = 0; i < 4000; i++) {
        uint32_t x = (i * 7 + i / 3) % 29;
        fwrite(&x, 4, 1, f);
    }
    fclose(f);

    /* help and usage */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' train --help > '%s/help.txt'", bin, dir);
    CHECK(system(cmd) == 0, "--help exits 0");
    char *help = slurp(".", "help.txt");
    const char *opts[] = {"--config", "--resume", "--bptt", "--out", "--steps", "--run-steps", "--threads", "--quiet", "--help"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) CHECK(strstr(help, opts[i]), "--help does not explain %s", opts[i]);
    free(help);
    CHECK(run("", err, sizeof err) == 2, "no --config: exit 2");
    CHECK(run("--config x.json --bptt -3", err, sizeof err) == 2, "bad --bptt: exit 2");
    snprintf(cmd, sizeof cmd, "--config '%s/missing.json'", dir);
    CHECK(run(cmd, err, sizeof err) == 1 && count_lines(err) == 1 && strstr(err, "missing.json"),
          "missing config: exit 1, one line naming the file: %s", err);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    f = fopen(path, "w");
    fputs("{\"model\": {\"vocab_size\": 29, \"d_state\": 16}, \"data\": {\"train\": \"shards\"}, \"output\": {\"dir\": \"o\"}}", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "--config '%s'", path);
    CHECK(run(cmd, err, sizeof err) == 1 && count_lines(err) == 1 && strstr(err, "d_emb"), "bad config: %s", err);

    /* a whole run */
    write_config("c6.json", "straight", 6);
    snprintf(cmd, sizeof cmd, "--config '%s/c6.json'", dir);
    int rc = run(cmd, err, sizeof err);
    CHECK(rc == 0, "run: exit %d: %s", rc, err);
    CHECK(file_size("straight", "model.safetensors") && file_size("straight", "optimizer.safetensors") &&
              file_size("straight", "config.json"),
          "outputs written");
    char *log = slurp("straight", "loss.csv");
    CHECK(count_lines(log) == 7 &&
              !strncmp(log, "step,tokens,train_loss,lr,grad_norm,eval_loss,elapsed_s,A_log_mean,A_log_max_change,"
                            "dt_bias_mean,dt_bias_max_change\n", 104),
          "loss.csv: header + 6 rows:\n%s", log);
    check_decay_log_and_meta(log);
    free(log);

    CHECK(run(cmd, err, sizeof err) == 1 && count_lines(err) == 1 && strstr(err, "--resume"),
          "a fresh run over an existing one is refused: %s", err);

    /* 2 steps, then resume to the end: the same weights */
    snprintf(cmd, sizeof cmd, "--config '%s/c6.json' --out '%s/split' --run-steps 2", dir, dir);
    CHECK(run(cmd, err, sizeof err) == 0, "run-steps: %s", err);
    log = slurp("split", "loss.csv");
    CHECK(count_lines(log) == 3, "after --run-steps 2: %d lines", count_lines(log));
    free(log);
    snprintf(cmd, sizeof cmd, "--config '%s/c6.json' --out '%s/split' --resume '%s/split'", dir, dir, dir);
    CHECK(run(cmd, err, sizeof err) == 0, "resume: %s", err);
    gs_model *a = load("straight"), *bm = load("split");
    CHECK(a && bm && !memcmp(a->block, bm->block, a->n_params * 4), "CLI resume differs from the straight run");
    gs_model_free(a);
    gs_model_free(bm);
    snprintf(cmd, sizeof cmd, "--config '%s/c6.json' --out '%s/split' --resume '%s/split'", dir, dir, dir);
    CHECK(run(cmd, err, sizeof err) == 1 && strstr(err, "already run"), "resuming a finished run: %s", err);

    /* Ctrl-C: finish the step, checkpoint, exit 130; then resume */
    write_config("long.json", "long", 100000000);
    snprintf(path, sizeof path, "%s/long.json", dir);
    snprintf(cmd, sizeof cmd, "%s/long/loss.csv", dir);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(bin, bin, "train", "--config", path, (char *)NULL);
        _exit(127);
    }
    int rows = 0;
    for (int tries = 0; tries < 6000 && rows < 4; tries++) { /* wait for a few steps (up to 60 s) */
        usleep(10000);
        char *l = slurp("long", "loss.csv");
        rows = count_lines(l) - 1;
        free(l);
    }
    CHECK(rows >= 4, "the long run never logged steps");
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 130, "SIGINT: want exit 130, got status %d", st);
    CHECK(file_size("long", "optimizer.safetensors") && file_size("long", "model.safetensors"), "checkpoint on SIGINT");
    snprintf(cmd, sizeof cmd, "--config '%s' --resume '%s/long' --run-steps 1", path, dir);
    CHECK(run(cmd, err, sizeof err) == 0, "resume after SIGINT: %s", err);
    char *l = slurp("long", "loss.csv");
    int after = count_lines(l) - 1;
    free(l);
    CHECK(after >= 5, "resumed run did not continue the log (%d rows)", after);
    printf("  CLI: help, usage errors, run, --run-steps + --resume (bitwise), SIGINT after %d steps -> 130 + checkpoint\n", rows);
    return test_summary();
}
