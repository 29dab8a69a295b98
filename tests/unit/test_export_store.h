/* A small store for the export and notebook tests, built with the store's
 * own writer: run 1 has 2 windows x 5 positions, 2 memory heads (one head
 * step missing), float32 'pred' and float16 'ground' states of 3 elements,
 * token rows with a vocabulary of awkward pieces (commas, quotes, newlines,
 * an empty piece, invalid UTF-8) and one analysis with scalars, a labelled
 * series and a vector. Run 2 has tokens only (no heads, states, analyses). */
#ifndef GS_TEST_EXPORT_STORE_H
#define GS_TEST_EXPORT_STORE_H

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "store/store.h"

enum { XS_W = 2, XS_T = 5, XS_H = 2, XS_D = 3, XS_V = 10 };

static const char *const xs_pieces[XS_V] = {"a", ",", "\"q\"", "line\nbreak", "cr\r", " lead", "x,\"y\"", "", "\xc3\xa9",
                                            "\xff"};

static float xs_state(int w, int p, int j) { return (float)(0.1 * (w + 1) + 0.01 * p - 0.3 * j) * (j == 2 ? 1e-3f : 1); }
static float xs_alpha(int w, int p, int h) { return 0.5f + 0.1f * (float)h + 0.01f * (float)(w * XS_T + p); }
static int xs_token(int w, int p) { return (w * XS_T + p) % XS_V; }

/* Returns 0, or -1 with gs_error() set. */
static int xs_build(const char *db) {
    store *st = store_open(db, STORE_WRITE | STORE_CREATE);
    if (!st) return -1;
    char sha[65];
    memset(sha, 'c', 64);
    sha[64] = 0;
    int64_t model = store_add_model(st, &(store_model){.path = "model.safetensors", .sha256 = sha, .arch = "gpn+m",
                                                       .d_state = XS_D, .n_heads = XS_H, .vocab_size = XS_V});
    memset(sha, 'd', 64);
    int64_t tok = store_add_tokenizer(st, &(store_tokenizer){.sha256 = sha, .kind = "test", .vocab_size = XS_V});
    int rc = model > 0 && tok > 0 ? 0 : -1;
    for (int v = 0; v < XS_V && !rc; v++) rc = store_put_piece(st, tok, v, xs_pieces[v], strlen(xs_pieces[v]));
    int64_t run = rc ? -1
                     : store_begin_run(st, &(store_run){.model_id = model, .tokenizer_id = tok, .seq_len = XS_T,
                                                        .n_windows = XS_W, .states = "pred,ground", .positions = "all",
                                                        .state_dtype = "f32", .d_state = XS_D, .n_heads = XS_H});
    if (run <= 0) rc = -1;
    for (int w = 0; w < XS_W && !rc; w++) {
        rc = store_begin(st);
        store_token_row rows[XS_T];
        for (int p = 0; p < XS_T; p++) {
            rows[p] = (store_token_row){w, p, xs_token(w, p), p + 1 < XS_T ? xs_token(w, p + 1) : -1, (p * 3) % XS_V,
                                        0.25f * (float)p + 1.0f / 3.0f, p == 2 ? NAN : 0.125f * (float)w};
        }
        if (!rc) rc = store_put_tokens(st, run, rows, XS_T);
        for (int p = 0; p < XS_T && !rc; p++) {
            float a[XS_H], b[XS_H], m[XS_H], s[XS_D];
            for (int h = 0; h < XS_H; h++) {
                a[h] = xs_alpha(w, p, h);
                b[h] = 0.5f * a[h];
                m[h] = 10.0f * a[h];
            }
            if (!(w == 1 && p == 3)) /* one missing step: NaN in the dense arrays */
                rc = store_put_head_steps(st, run, w, p, XS_H, a, b, m);
            for (int j = 0; j < XS_D; j++) s[j] = xs_state(w, p, j);
            if (!rc) rc = store_put_state(st, run, w, p, "pred", STORE_F32, s, XS_D);
            if (!rc) rc = store_put_state(st, run, w, p, "ground", STORE_F16, s, XS_D);
        }
        if (!rc) rc = store_window_done(st, run, w, (int64_t)w * XS_T, XS_T);
        if (!rc) rc = store_commit(st);
    }
    if (!rc) rc = store_finish_run(st, run, "complete", NULL);
    int64_t a = rc ? -1 : store_analysis_begin(st, run, "geometry", "{\"seed\":1}", "test");
    if (a <= 0) rc = -1;
    if (!rc) rc = store_analysis_scalar(st, a, "participation_ratio", 2.0 / 3.0, "(sum l)^2 / sum l^2");
    if (!rc) rc = store_analysis_scalar(st, a, "d", XS_D, NULL);
    double x[3] = {1, 2, 3}, y[3] = {0.1, NAN, 1e-300};
    const char *labels[3] = {"one, two", NULL, "say \"hi\""};
    if (!rc) rc = store_analysis_series(st, a, "curve", x, y, labels, 3);
    float vec[4] = {1.5f, -2.0f, 0.1f, 3e-39f};
    if (!rc) rc = store_analysis_vector(st, a, "mean", vec, 4);
    if (!rc) rc = store_commit(st);
    /* run 2: tokens only */
    int64_t run2 = rc ? -1
                      : store_begin_run(st, &(store_run){.model_id = model, .seq_len = XS_T, .n_windows = 1,
                                                         .states = "none", .positions = "all", .state_dtype = "f32",
                                                         .d_state = XS_D});
    if (run2 <= 0) rc = -1;
    store_token_row r2 = {0, 0, 1, -1, -1, 0.5f, 0.5f};
    if (!rc) rc = store_put_tokens(st, run2, &r2, 1);
    if (!rc) rc = store_finish_run(st, run2, "complete", NULL);
    store_close(st);
    return rc;
}

#endif
