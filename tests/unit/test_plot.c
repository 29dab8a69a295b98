/* plots/ on a store built by hand through the store API, with every analysis
 * in the form analyses/ writes it (ablations included, in the form of
 * analyses/causal/ablation.c): all five figures are written, render in png, svg
 * and pdf with no gnuplot warning, images have the requested size, data
 * files carry the stored numbers, hostile token text and model file names
 * stay text, degenerate results (constant curves, one head, censored
 * horizons) render too; without gnuplot nothing is rendered and that is
 * said; a gnuplot that warns fails the figure, leaves no image and the
 * report marks it. Also the text escaping on its own. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "plots/gp.h"
#include "plots/plots.h"
#include "store/store.h"
#include "testlib.h"

enum { D = 8, V = 30, H = 4, NL = 12, T = 64 };

static const char *const hostile[] = {
    "\"quote\"", "it's", "back\\slash", "new\nline", "@^_{}", "emoji \xF0\x9F\x98\x80", "100% %s %d",
    "tab\there", "\x1b[31mred", "'; system('touch PWNED'); '", "` | * _ <b>x</b> [a](b)", "\xC3\xA9t\xC3\xA9",
    "rtl \xE2\x80\xAE override", "", "bad \xff\xfe utf8", "}{@@__^^", "\\n not a newline", "$HOME `id`",
    "a very long token piece that goes on and on and on well past any sensible label width",
};
#define N_HOSTILE (sizeof hostile / sizeof *hostile)

static int exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat sb;
    return stat(p, &sb) == 0 && sb.st_size > 0;
}

/* width and height from a PNG's IHDR; 0 if it is not a PNG */
static int png_size(const char *path, unsigned *w, unsigned *h) {
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) || memcmp(b + 12, "IHDR", 4)) return 0;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    return 1;
}

/* the numbers of data line `row` (0-based, comments skipped) of a .dat file */
static int dat_row(const char *dir, const char *name, int row, double *v, int max) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *s = read_whole_file(p, NULL);
    if (!s) return -1;
    int r = 0, n = -1;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        if (r++ != row) continue;
        n = 0;
        for (char *tok = strtok(line, " "); tok && n < max; tok = strtok(NULL, " ")) v[n++] = strtod(tok, NULL);
        break;
    }
    free(s);
    return n;
}

static void series(store *st, int64_t a, const char *name, const double *x, const double *y, int64_t n) {
    CHECK(store_analysis_series(st, a, name, x, y, NULL, n) == 0, "%s: %s", name, gs_error());
}

/* ---------- a run with every analysis ---------- */
static int64_t fill_run(store *st, int64_t model_id, int64_t tok_id, int degenerate) {
    int64_t run = store_begin_run(st, &(store_run){.model_id = model_id, .tokenizer_id = tok_id, .seq_len = T,
                                                   .n_windows = 4, .states = "pred", .d_state = D, .n_heads = H});
    CHECK(run > 0, "%s", gs_error());
    store_finish_run(st, run, "complete", NULL);
    double x[256], y[256], z[256];

    int64_t a = store_analysis_begin(st, run, "geometry", "{\"seed\":1}", "test");
    for (int i = 0; i < D; i++) { x[i] = i + 1; y[i] = degenerate ? 1.0 : 3.0 - 0.25 * i; }
    series(st, a, "dim_std_sorted", x, y, D);
    for (int i = 0; i < D; i++) { y[i] = degenerate ? (i + 1.0) / D : 1 - pow(0.5, i + 1); z[i] = 1.0 / (i + 1); }
    series(st, a, "cumulative_explained", x, y, D);
    series(st, a, "eigenvalues", x, z, D);
    float corr[D * D], dims[D];
    for (int i = 0; i < D; i++) {
        dims[i] = (float)(2 * i);
        for (int j = 0; j < D; j++) corr[i * D + j] = i == j ? 1.0f : (degenerate ? 0.0f : (float)(0.1 * sin(i * 7 + j * 3)));
    }
    store_analysis_vector(st, a, "corr_sample", corr, D * D);
    store_analysis_vector(st, a, "corr_sample_dims", dims, D);
    const struct { const char *k; double v; } gs[] = {
        {"n_states", 256}, {"n_windows", 4}, {"d", D}, {"median_std", degenerate ? 1 : 2.1}, {"dead_dims", 0},
        {"corr_mean_abs", degenerate ? 0 : 0.05}, {"corr_max_abs", degenerate ? 0 : 0.1}, {"components_90", 6},
        {"components_99", 8}, {"norm_mean", 10}, {"norm_std", 1}, {"stable_rank", 3}, {"participation_ratio", 4},
        {"dim_std_min", 1}, {"dim_std_max", 3}};
    for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) store_analysis_scalar(st, a, gs[i].k, gs[i].v, NULL);
    CHECK(store_commit(st) == 0, "%s", gs_error());

    a = store_analysis_begin(st, run, "default_direction", "{\"batches\":8}", "test");
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = degenerate ? 0.5f : (float)(((v * 7) % V) - 5) * 0.25f;
    store_analysis_vector(st, a, "logits_bar", logits, V);
    { /* the stored top 10, labelled with the pieces, as analyze writes it */
        double ids[10], lv[10];
        const char *labels[10];
        int used[V] = {0};
        for (int i = 0; i < 10; i++) {
            int best = -1;
            for (int t = 0; t < V; t++) if (!used[t] && (best < 0 || logits[t] > logits[best])) best = t;
            used[best] = 1;
            ids[i] = best;
            lv[i] = logits[best];
            labels[i] = hostile[best % N_HOSTILE];
        }
        CHECK(store_analysis_series(st, a, "default_tokens", ids, lv, labels, 10) == 0, "%s", gs_error());
    }
    for (int i = 0; i < T; i++) { x[i] = i + 1; y[i] = degenerate ? 0.99 : 1 - 0.5 / (i + 1); }
    series(st, a, "emergence", x, y, T);
    store_analysis_scalar(st, a, "emergence_t10", y[9], NULL);
    store_analysis_scalar(st, a, "mean_norm", 7, NULL);
    store_analysis_scalar(st, a, "norm_ratio", 0.6, NULL);
    CHECK(store_commit(st) == 0, "%s", gs_error());

    a = store_analysis_begin(st, run, "horizons", "{}", "test");
    int nl = 0;
    for (int k = 1; k < T; k = k < 4 ? k + 1 : k * 2) { x[nl] = k; y[nl] = degenerate ? 0.5 : 0.6 + 0.3 / k; z[nl] = degenerate ? 0.5 : 0.3 / k; nl++; }
    series(st, a, "raw", x, y, nl);
    series(st, a, "centered", x, z, nl);
    for (int i = 0; i < nl; i++) y[i] = 1000 - i;
    series(st, a, "raw_pairs", x, y, nl);
    series(st, a, "centered_pairs", x, y, nl);
    store_analysis_scalar(st, a, "c1", degenerate ? 0.5 : 0.3, NULL);
    store_analysis_scalar(st, a, "content_horizon_e", degenerate ? 32 : 2.7, NULL);
    store_analysis_scalar(st, a, "content_horizon_e_censored", degenerate, NULL);
    store_analysis_scalar(st, a, "content_horizon_002", degenerate ? 32 : 15, NULL);
    store_analysis_scalar(st, a, "content_horizon_002_censored", degenerate, NULL);
    CHECK(store_commit(st) == 0, "%s", gs_error());

    const int heads = degenerate ? 1 : H;
    a = store_analysis_begin(st, run, "retention", "{}", "test");
    double half[H] = {1.5, 2.5, 20, 5000}, pool[H] = {0, 0, 1, 1}, cens[H] = {0, 0, 0, 1};
    for (int h = 0; h < heads; h++) {
        char name[32];
        snprintf(name, sizeof name, "R_head%d", h);
        for (int i = 0; i < nl; i++) y[i] = exp(-x[i] / half[h]);
        series(st, a, name, x, y, nl);
        z[h] = h;
    }
    series(st, a, "e_fold_time", z, half, heads);
    series(st, a, "censored", z, cens, heads);
    series(st, a, "extrapolated", z, half, heads);
    if (!degenerate) series(st, a, "pool", z, pool, heads);
    store_analysis_scalar(st, a, "heads", heads, NULL);
    if (!degenerate) {
        const struct { const char *k; double v; } rs[] = {{"fast_n", 2}, {"fast_min", 1.5}, {"fast_max", 2.5},
                                                          {"slow_n", 2},  {"slow_min", 20},  {"slow_max", 5000},
                                                          {"separation", 4.2}, {"pool_lr", 12.5},
                                                          {"pool_lr_null_p_uniform", 0.01}};
        for (size_t i = 0; i < sizeof rs / sizeof *rs; i++) store_analysis_scalar(st, a, rs[i].k, rs[i].v, NULL);
    }
    CHECK(store_commit(st) == 0, "%s", gs_error());

    a = store_analysis_begin(st, run, "probe", "{}", "test");
    double lags[6] = {1, 2, 3, 4, 6, 8}, acc[6] = {0.9, 0.5, 0.2, 0.05, 0.04, 0.03}, base[6], pass[6], nt[6];
    for (int i = 0; i < 6; i++) {
        if (degenerate) acc[i] = 0;
        base[i] = degenerate ? 0 : 0.04;
        pass[i] = !degenerate && i < 3;
        nt[i] = 500;
    }
    series(st, a, "accuracy", lags, acc, 6);
    series(st, a, "baseline", lags, base, 6);
    series(st, a, "pass", lags, pass, 6);
    series(st, a, "n_test", lags, nt, 6);
    store_analysis_scalar(st, a, "probe_horizon", degenerate ? 0 : 3, "largest lag before the first failing lag; 100% sure");
    store_analysis_scalar(st, a, "probe_horizon_censored", 0, NULL);
    CHECK(store_commit(st) == 0, "%s", gs_error());

    if (!degenerate) { /* ablations, as analyses/causal/ablation.c stores them */
        const char *whats[] = {"heads:0", "heads:1", "heads:2", "heads:3", "pool:fast", "pool:slow",
                               "mean-direction:subtract", "none"};
        static const char *const bucket_names[4] = {"1-16", "17-128", "129-512", "513+"};
        for (int i = 0; i < 8; i++) {
            char set[200];
            snprintf(set, sizeof set, "{\"what\":\"%s\",\"scope\":\"%s\",\"windows\":4,\"seed\":1}", whats[i],
                     i == 6 ? "decode" : "");
            int64_t b = store_analysis_begin(st, run, "ablation", set, "test");
            double d = i == 7 ? 0 : 0.5 * (i + 1);
            store_analysis_scalar(st, b, "ppl_base", 20, NULL);
            store_analysis_scalar(st, b, "ppl_ablated", 20 + d, NULL);
            store_analysis_scalar(st, b, "delta_ppl", d, "ablated - base");
            store_analysis_scalar(st, b, "delta_ppl_ci_low", d - 0.2, NULL);
            store_analysis_scalar(st, b, "delta_ppl_ci_high", d + 0.3, NULL);
            store_analysis_scalar(st, b, "delta_nll", log((20 + d) / 20), NULL);
            double bx[4] = {1, 17, 129, 513}, bd[4] = {0.01 * i, 0.02 * i, 0.03 * i, NAN};
            CHECK(store_analysis_series(st, b, "bucket_delta_nll", bx, bd, bucket_names, 4) == 0, "%s", gs_error());
            CHECK(store_commit(st) == 0, "%s", gs_error());
        }
        a = store_analysis_begin(st, run, "mystery", "{}", "test");
        store_analysis_scalar(st, a, "x", 1, NULL);
        store_commit(st);
    }
    return run;
}

static void test_text(void) {
    char vis[256], q[512];
    gp_text_visible(vis, sizeof vis, "a\nb\tc\x1b" "d", (size_t)-1, 0);
    CHECK(!strcmp(vis, "a\\nb\\tc\\x1bd"), "controls: %s", vis);
    gp_text_visible(vis, sizeof vis, "ok \xff\xc3", (size_t)-1, 0);
    CHECK(!strcmp(vis, "ok \\xff\\xc3"), "invalid utf-8: %s", vis);
    gp_text_visible(vis, sizeof vis, "\xC3\xA9\xF0\x9F\x98\x80", (size_t)-1, 0);
    CHECK(!strcmp(vis, "\xC3\xA9\xF0\x9F\x98\x80"), "valid utf-8 kept: %s", vis);
    gp_text_visible(vis, sizeof vis, "x\xE2\x80\xAEy", (size_t)-1, 0);
    CHECK(!strcmp(vis, "x\\u{202e}y"), "direction override: %s", vis);
    gp_text_visible(vis, sizeof vis, "\xC0\xAF", (size_t)-1, 0); /* overlong '/' */
    CHECK(!strcmp(vis, "\\xc0\\xaf"), "overlong: %s", vis);
    gp_text_visible(vis, sizeof vis, "abcdefghij", (size_t)-1, 4);
    CHECK(!strcmp(vis, "abcd..."), "cut: %s", vis);
    gp_text_visible(vis, 8, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", (size_t)-1, 0);
    CHECK(strlen(vis) < 8 && strstr(vis, "...") && !strstr(vis, "\xC3..."), "cut at a character: %s", vis);
    gp_quote(q, sizeof q, "it's 100%", 0);
    CHECK(!strcmp(q, "'it''s 100%'"), "quote: %s", q);
    gp_quote(q, sizeof q, "it's 100%", GP_Q_PERCENT);
    CHECK(!strcmp(q, "'it''s 100%%'"), "quote for tics: %s", q);
    gp_quote(q, 6, "abcdef", 0);
    CHECK(q[0] == '\'' && q[strlen(q) - 1] == '\'' && strlen(q) < 6, "quote cut stays quoted: %s", q);
    gp_quote(q, 6, "a\xC3\xA9\xC3\xA9", 0);
    CHECK(!strcmp(q, "'a\xC3\xA9'"), "quote cut at a character: %s", q);
    unsigned f;
    CHECK(gs_plot_parse_formats("png,svg,pdf", &f) == 0 && f == (GS_PLOT_PNG | GS_PLOT_SVG | GS_PLOT_PDF), "formats");
    CHECK(gs_plot_parse_formats("png,gif", &f) != 0 && strstr(gs_error(), "gif"), "bad format: %s", gs_error());
    CHECK(gs_plot_parse_formats("", &f) != 0, "no format");
}

int main(void) {
    test_text();
    const char *dir0 = scratch_dir("test_plot");
    char dir[4096], db[4200], out[4200], out2[4200], out3[4200], out4[4200], path[4400];
    snprintf(dir, sizeof dir, "%s", dir0);
    snprintf(db, sizeof db, "%s/study.db", dir);
    snprintf(out, sizeof out, "%s/figs", dir);
    snprintf(out2, sizeof out2, "%s/degenerate", dir);
    snprintf(out3, sizeof out3, "%s/nognuplot", dir);
    snprintf(out4, sizeof out4, "%s/warned", dir);

    store *st = store_open(db, STORE_WRITE | STORE_CREATE);
    CHECK(st != NULL, "%s", gs_error());
    if (!st) return test_summary();
    char sha[65], tsha[65];
    memset(sha, 'c', 64); sha[64] = 0;
    memset(tsha, 'd', 64); tsha[64] = 0;
    int64_t model_id = store_add_model(st, &(store_model){.path = "/models/it's a \"model\" @_^{} 100% $$x$$.safetensors",
                                                          .sha256 = sha, .arch = "gpn+m", .d_state = D, .n_heads = H,
                                                          .vocab_size = V});
    int64_t tok_id = store_add_tokenizer(st, &(store_tokenizer){.sha256 = tsha, .kind = "test", .vocab_size = V});
    for (int v = 0; v < V; v++) {
        const char *p = hostile[v % N_HOSTILE];
        CHECK(store_put_piece(st, tok_id, v, p, strlen(p)) == 0, "%s", gs_error());
    }
    int64_t empty_run = store_begin_run(st, &(store_run){.model_id = model_id, .seq_len = T, .states = "pred"});
    int64_t run = fill_run(st, model_id, tok_id, 0);
    int64_t run2 = fill_run(st, model_id, tok_id, 1);
    CHECK(gs_plot_default_run(st) == run2, "default run: the newest with analyses");

    char gnuplot[4096];
    const int have_gnuplot = gp_find_program("gnuplot", gnuplot, sizeof gnuplot) == 0;
    if (!have_gnuplot) printf("NOTE: gnuplot is not installed: rendering is not checked here\n");

    /* ---- the full set, three formats ---- */
    gs_plot_opts o;
    gs_plot_opts_default(&o);
    o.formats = GS_PLOT_PNG | GS_PLOT_SVG | GS_PLOT_PDF;
    o.width = 1000;
    o.height = 700;
    gs_plot_result r;
    int rc = gs_plot_store(st, run, out, &o, &r);
    CHECK(rc == 0, "%s", gs_error());
    CHECK(r.n_figures == 5, "figures: %d", r.n_figures);
    static const char *const names[5] = {"state_geometry", "horizons", "default_direction", "probe_horizon", "ablations"};
    for (int i = 0; i < 5 && i < r.n_figures; i++) {
        CHECK(!strcmp(r.fig[i].name, names[i]), "figure %d: %s", i, r.fig[i].name);
        CHECK(r.fig[i].caption[0] && r.fig[i].title[0], "%s has a caption", names[i]);
        char gp[64];
        snprintf(gp, sizeof gp, "%s.gp", names[i]);
        CHECK(exists(out, gp), "%s written", gp);
        if (have_gnuplot) {
            CHECK(r.fig[i].rendered == o.formats, "%s rendered %u: %s", names[i], r.fig[i].rendered, r.fig[i].error);
            unsigned w = 0, h = 0;
            snprintf(path, sizeof path, "%s/%s.png", out, names[i]);
            CHECK(png_size(path, &w, &h) && w == 1000 && h == 700, "%s.png is %ux%u", names[i], w, h);
            snprintf(path, sizeof path, "%s/%s.svg", out, names[i]);
            char *svg = read_whole_file(path, NULL);
            CHECK(svg && strstr(svg, "width=\"1000\" height=\"700\""), "%s.svg size", names[i]);
            free(svg);
            snprintf(path, sizeof path, "%s/%s.pdf", out, names[i]);
            char *pdf = read_whole_file(path, NULL);
            CHECK(pdf && !strncmp(pdf, "%PDF-", 5), "%s.pdf is a pdf", names[i]);
            free(pdf);
        }
    }
    CHECK(strstr(r.notes, "'mystery' has no figure") != NULL, "notes: %s", r.notes);
    CHECK(exists(out, "report.md") && exists(out, "report.html"), "report written");
    /* issue 37: every figure in the report with one line on what it shows and how to read it */
    snprintf(path, sizeof path, "%s/report.html", out);
    char *page = read_whole_file(path, NULL);
    int figures = 0, readings = 0;
    for (const char *p = page; p && (p = strstr(p, "<figure id=")); p++) figures++;
    for (const char *p = page; p && (p = strstr(p, "<b>How to read it.</b> ")); p++) readings++;
    CHECK(figures == r.n_figures && readings == figures, "a reading line per figure (%d figures, %d lines, %d drawn)",
          figures, readings, r.n_figures);
    free(page);
    snprintf(path, sizeof path, "%s/PWNED", out);
    CHECK(access(path, F_OK) != 0, "a token piece ran a command");
    /* no temporary files left */
    snprintf(path, sizeof path, "ls -A '%s' | grep -c '^\\.' > '%s/dotfiles.txt'", out, dir);
    CHECK(system(path) >= 0, "ls");
    snprintf(path, sizeof path, "%s/dotfiles.txt", dir);
    char *dots = read_whole_file(path, NULL);
    CHECK(dots && atoi(dots) == 0, "temporary files left: %s", dots ? dots : "?");
    free(dots);

    /* the data files carry the stored numbers */
    double v[16];
    CHECK(dat_row(out, "state_geometry-std.dat", 2, v, 16) == 2 && v[0] == 3 && v[1] == 2.5, "std row 3: %g %g", v[0], v[1]);
    CHECK(dat_row(out, "state_geometry-pca.dat", 0, v, 16) == 4 && v[1] == 0.5 && v[3] == 1, "pca row 1");
    CHECK(dat_row(out, "state_geometry-corr.dat", 1, v, 16) == D && v[1] == 1 && (float)v[2] == (float)(0.1 * sin(7 + 6)),
          "corr row 2: %g", v[2]);
    CHECK(dat_row(out, "horizons-lag.dat", 1, v, 16) == 5 && v[0] == 2 && v[1] == 0.6 + 0.3 / 2 && v[2] == 0.3 / 2,
          "lag row 2");
    CHECK(dat_row(out, "horizons-retention.dat", 2, v, 16) == 1 + H && v[0] == 3 && v[3] == exp(-3.0 / 20), "R row 3");
    CHECK(dat_row(out, "horizons-heads.dat", 3, v, 16) == 7 && v[1] == 5000 && v[2] == 1 && v[4] == 1, "head 3");
    /* top tokens: the largest logits of logits_bar, descending */
    CHECK(dat_row(out, "default_direction-tokens.dat", 0, v, 16) == 3, "tokens row");
    {
        float best = -1e30f;
        int arg = -1;
        for (int t = 0; t < V; t++) {
            float l = (float)(((t * 7) % V) - 5) * 0.25f;
            if (l > best) { best = l; arg = t; }
        }
        CHECK(v[1] == arg && v[2] == best, "top token %g (%g), want %d (%g)", v[1], v[2], arg, best);
    }
    CHECK(dat_row(out, "default_direction-emergence.dat", 9, v, 16) == 2 && v[0] == 10 && v[1] == 1 - 0.5 / 10, "emergence");
    CHECK(dat_row(out, "probe_horizon.dat", 2, v, 16) == 6 && v[0] == 3 && v[1] == 0.2 && v[2] == 0.04 && v[3] == 1,
          "probe row 3");
    CHECK(dat_row(out, "ablations-heads.dat", 2, v, 16) == 6 && v[0] == 2 && v[1] == 1.5 && v[2] == 1.3 && v[3] == 1.8 &&
              v[4] == 1,
          "ablation head 2: %g %g %g %g %g", v[0], v[1], v[2], v[3], v[4]);
    CHECK(dat_row(out, "ablations-interventions.dat", 1, v, 16) == 8 && v[1] == 3 && v[4] == 20 && v[5] == 23,
          "pool:slow row: %g", v[1]);
    CHECK(dat_row(out, "ablations-buckets.dat", 1, v, 16) == 2 + 4 && v[1] == 17 && fabs(v[3] - 0.10) < 1e-15,
          "bucket 2");

    /* the scripts: quoted, escaped text; no enhanced markup */
    snprintf(path, sizeof path, "%s/default_direction.gp", out);
    char *gp = read_whole_file(path, NULL);
    CHECK(gp && strstr(gp, "set termoption noenhanced"), "noenhanced");
    CHECK(gp && strstr(gp, "'\"it''s\"'"), "a quote doubled");
    /* token labels show a space as U+2423 and a newline as U+21B5 (gp_token_visible) */
    CHECK(gp && strstr(gp, "'\"100%%\u2423%%s\u2423%%d\"'"), "a percent doubled in a tic label, spaces shown");
    CHECK(gp && strstr(gp, "'\"new\u21b5line\"'"), "a newline shown as U+21B5");
    CHECK(gp && !strstr(gp, "new\nline"), "no raw newline from a token");
    free(gp);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = read_whole_file(path, NULL);
    CHECK(md && strstr(md, "| quantity | ours | paper |") && strstr(md, "1131 and 2099 of 2496"), "summary table");
    CHECK(md && strstr(md, "![state_geometry](state_geometry.png)"), "figures embedded");
    CHECK(md && strstr(md, "perplexity change: pool:slow") && strstr(md, "+3 (95% interval +2.8 to +3.3)"),
          "ablation rows");
    CHECK(md && !strstr(md, "<b>"), "markup escaped in the report");
    CHECK(md && strstr(md, "\\$\\$x\\$\\$") && !strstr(md, " $$x$$"), "no math from the store in report.md: '$' escaped");
    free(md);
    snprintf(path, sizeof path, "%s/report.html", out);
    char *html = read_whole_file(path, NULL);
    CHECK(html && strstr(html, "<img src=\"horizons.png\"") && !strstr(html, "<b>x</b>"), "html report");
    free(html);

    /* ---- degenerate results render without warnings ---- */
    gs_plot_opts_default(&o);
    rc = gs_plot_store(st, run2, out2, &o, &r);
    CHECK(rc == 0, "degenerate: %s", gs_error());
    CHECK(r.n_figures == 4, "degenerate figures: %d", r.n_figures);
    for (int i = 0; i < r.n_figures && have_gnuplot; i++)
        CHECK(r.fig[i].rendered == GS_PLOT_PNG, "degenerate %s: %s", r.fig[i].name, r.fig[i].error);

    /* ---- no analyses, no run ---- */
    CHECK(gs_plot_store(st, empty_run, out2, &o, &r) != 0 && strstr(gs_error(), "no analyses"), "empty run: %s", gs_error());
    CHECK(gs_plot_store(st, 999, out2, &o, &r) != 0, "missing run");
    o.width = 10;
    CHECK(gs_plot_store(st, run, out2, &o, &r) != 0 && strstr(gs_error(), "size"), "size: %s", gs_error());
    gs_plot_opts_default(&o);

    /* ---- without gnuplot on PATH ---- */
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", "/nonexistent-gpnscope", 1);
    rc = gs_plot_store(st, run, out3, &o, &r);
    CHECK(rc == 0 && !r.gnuplot_found, "no gnuplot: rc %d (%s)", rc, gs_error());
    CHECK(strstr(r.notes, "gnuplot not found"), "said: %s", r.notes);
    CHECK(exists(out3, "horizons.gp") && !exists(out3, "horizons.png"), "scripts, no images");
    snprintf(path, sizeof path, "%s/report.md", out3);
    md = read_whole_file(path, NULL);
    CHECK(md && strstr(md, "**Not rendered**"), "the report says so");
    free(md);
    if (saved) { setenv("PATH", saved, 1); free(saved); }

    /* ---- a gnuplot that warns: the figure fails, no image is left, the report marks it ---- */
    snprintf(path, sizeof path, "%s/warngnuplot.sh", dir);
    FILE *fk = fopen(path, "w");
    if (fk) {
        fprintf(fk, "#!/bin/sh\necho 'warning: Skipping data file with no valid points' >&2\nexit 0\n");
        fclose(fk);
        chmod(path, 0755);
    }
    mkdir(out4, 0777);
    char stale[4400];
    snprintf(stale, sizeof stale, "%s/horizons.png", out4);
    fk = fopen(stale, "w");
    if (fk) { fputs("old", fk); fclose(fk); }
    o.gnuplot = path;
    rc = gs_plot_store(st, run, out4, &o, &r);
    CHECK(rc != 0 && r.n_failed == r.n_figures && strstr(gs_error(), "warned"), "warning fails: %s", gs_error());
    CHECK(strstr(r.fig[1].error, "Skipping data file"), "gnuplot's words kept: %s", r.fig[1].error);
    CHECK(access(stale, F_OK) != 0, "a stale image of a failed figure is removed");
    snprintf(path, sizeof path, "%s/report.md", out4);
    md = read_whole_file(path, NULL);
    CHECK(md && strstr(md, "**Not rendered:**"), "the report marks the failure");
    free(md);
    o.gnuplot = "/nonexistent/gnuplot";
    CHECK(gs_plot_store(st, run, out4, &o, &r) != 0 && strstr(gs_error(), "not found"), "named gnuplot missing: %s",
          gs_error());

    /* ---- results of the wrong size: each figure says what is wrong (issue 17, item 10) ---- */
    {
        int64_t run3 = store_begin_run(st, &(store_run){.model_id = model_id, .tokenizer_id = tok_id, .seq_len = T,
                                                        .n_windows = 4, .states = "pred", .d_state = D, .n_heads = H});
        store_finish_run(st, run3, "complete", NULL);
        int64_t a = store_analysis_begin(st, run3, "geometry", "{}", "test");
        float corr[50] = {0}, dims[D] = {0}, logits[20];
        store_analysis_vector(st, a, "corr_sample", corr, 50);
        store_analysis_vector(st, a, "corr_sample_dims", dims, D);
        double x[D], y[D];
        for (int i = 0; i < D; i++) { x[i] = i + 1; y[i] = 1.0 / (i + 1); }
        series(st, a, "dim_std_sorted", x, y, D);
        CHECK(store_commit(st) == 0, "%s", gs_error());
        a = store_analysis_begin(st, run3, "default_direction", "{}", "test");
        for (int i = 0; i < 20; i++) logits[i] = (float)i; /* the largest at id 19, of a vocabulary of 30 */
        store_analysis_vector(st, a, "logits_bar", logits, 20);
        double ids[2] = {25, 3}, lv[2] = {9, 8};
        const char *labels[2] = {"tw", "th"};
        CHECK(store_analysis_series(st, a, "default_tokens", ids, lv, labels, 2) == 0, "%s", gs_error());
        CHECK(store_commit(st) == 0, "%s", gs_error());
        char out5[4200];
        snprintf(out5, sizeof out5, "%s/wrongsize", dir);
        gs_plot_opts_default(&o);
        o.render = 0;
        rc = gs_plot_store(st, run3, out5, &o, &r);
        CHECK(rc == 0, "wrong sizes: %s", gs_error());
        CHECK(strstr(r.notes, "figure 'state_geometry': panel (b) left empty: corr_sample holds 50 values, not 8 x 8 "
                              "= 64 for the 8 coordinates of corr_sample_dims"),
              "the correlation sample's size is said: %s", r.notes);
        CHECK(strstr(r.notes, "figure 'default_direction': logits_bar holds 20 values but the run's vocabulary has "
                              "30 tokens, so its top tokens are not drawn from it (the stored default_tokens list is "
                              "shown instead)"),
              "the short logits row is said: %s", r.notes);
        for (int i = 0; i < r.n_figures; i++) {
            if (!strcmp(r.fig[i].name, "state_geometry"))
                CHECK(strstr(r.fig[i].caption, "Not drawn: panel (b) left empty: corr_sample holds 50 values"),
                      "geometry caption: %s", r.fig[i].caption);
            if (!strcmp(r.fig[i].name, "default_direction"))
                CHECK(strstr(r.fig[i].caption, "logits_bar holds 20 values"), "default caption: %s", r.fig[i].caption);
        }
        snprintf(path, sizeof path, "%s/state_geometry.gp", out5);
        gp = read_whole_file(path, NULL);
        CHECK(gp && strstr(gp, "corr_sample holds 50 values, not 8 x 8 = 64") && !strstr(gp, "not in the store (geometry: corr_sample)"),
              "the panel says what is wrong, not that it is missing");
        free(gp);
        /* the top tokens are the stored list (25, 3), not the largest entries of the short row (19, 18, ...) */
        CHECK(dat_row(out5, "default_direction-tokens.dat", 0, v, 16) == 3 && v[1] == 25, "top token %g", v[1]);
        CHECK(dat_row(out5, "default_direction-tokens.dat", 1, v, 16) == 3 && v[1] == 3, "second token %g", v[1]);
        CHECK(dat_row(out5, "default_direction-tokens.dat", 2, v, 16) < 0, "no more tokens than stored");
    }

    store_close(st);
    return test_summary();
}
