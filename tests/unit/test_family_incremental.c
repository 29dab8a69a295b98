/* Incremental decoding equals the whole sequence, and a sequence's outputs do
 * not depend on its batch row or its neighbours, for the baseline families
 * (Transformer++ with its KV cache, Gated DeltaNet with its conv and delta
 * states), over every site the family table lists (engine/arch/family.h),
 * logits and nll included:
 *
 * 1. incremental = full: each sequence decoded token by token at batch 1
 *    against the expect file, which a whole-window computation made (tpp2:
 *    the companion's torch module; gdn2: fla's naive recurrence; the pairs
 *    tests/cli/family_tpp.sh and family_gdn.sh pass: the float64 numpy
 *    references over whole sequences with a causal mask), every tensor it
 *    holds < 1e-5 relative;
 * 2. batch invariance: the same sequences in rows of a wider batch, each row
 *    starting at its own step after a reset (its cache or state first filled
 *    by other tokens for a few steps), beside a row that never stops and rows
 *    that run on after their sequence ends: every site's rows equal the
 *    batch-1 run's < 1e-5 relative, NaN exactly where it is NaN.
 *
 * test_family_incremental [WEIGHTS EXPECT]...: those pairs, else tpp2 and gdn2. */
#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "io/checkpoint/safetensors.h"
#include "probes/probes.h"
#include "testlib.h"

#define TOL 1e-5
#define MAX_ROWS 64

/* Every site of a model at every step of B sequences of T tokens plus one
 * step (the prediction made after the last token): data[i] is (B, T + 1, width[i]). */
typedef struct {
    int n;
    char (*name)[64];
    char (*expect)[64]; /* the expect file's name of the same tensor */
    int *width, *shift; /* shift 1: step t + 1 holds the reference's position t */
    float **data;
} sites_out;

static void sites_free(sites_out *r) {
    for (int i = 0; i < r->n; i++) free(r->data[i]);
    free(r->name), free(r->expect), free(r->width), free(r->shift), free(r->data);
    memset(r, 0, sizeof *r);
}

/* The expect files' tensor names: the site's last component without "hook_",
 * with the layer ("blocks.2.attn.hook_q" -> "q_2", "blocks.0.attn.state" ->
 * "state_0"), and the few whole-model sites by their own names. */
static void expect_name(const gs_site *s, int layer, char *out, size_t size) {
    static const struct { const char *site, *expect; } whole[] = {
        {"hook_embed", "embed"}, {"ln_final.hook_normalized", "final_hidden"}, {"logits", "logits"}, {"nll", "nll"}};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
        if (!strcmp(s->name, whole[i].site)) { snprintf(out, size, "%s", whole[i].expect); return; }
    const char *base = strrchr(s->name, '.') ? strrchr(s->name, '.') + 1 : s->name;
    if (!strncmp(base, "hook_", 5)) base += 5;
    snprintf(out, size, "%s_%d", base, layer);
}

static int list_sites(const gs_model *m, int B, int T, sites_out *r) {
    const gs_family *f = gs_family_of(&m->cfg);
    memset(r, 0, sizeof *r);
    if (!f) return gs_fail("no family for the model");
    int cap = f->n_sites * (m->cfg.n_layers > 0 ? m->cfg.n_layers : 1);
    r->name = calloc((size_t)cap, sizeof *r->name), r->expect = calloc((size_t)cap, sizeof *r->expect);
    r->width = calloc((size_t)cap, sizeof *r->width), r->shift = calloc((size_t)cap, sizeof *r->shift);
    r->data = calloc((size_t)cap, sizeof *r->data);
    for (int s = 0; s < f->n_sites; s++) {
        const gs_site *site = &f->sites[s];
        if (!gs_site_present(site, &m->cfg)) continue;
        for (int l = 0; l < (site->per_layer ? m->cfg.n_layers : 1); l++) {
            gs_site_format(site, l, r->name[r->n], sizeof r->name[0]);
            expect_name(site, l, r->expect[r->n], sizeof r->expect[0]);
            r->width[r->n] = gs_site_width(site, &m->cfg);
            r->shift[r->n] = site->role == GS_ROLE_LOGITS || site->role == GS_ROLE_NLL;
            r->data[r->n] = calloc((size_t)B * (T + 1) * r->width[r->n], sizeof(float));
            r->n++;
        }
    }
    return 0;
}

/* One run of `rows` batch rows for `steps` steps. Row r runs sequence seq[r]
 * (or only filler, seq[r] < 0) from step start[r] on, after a reset there;
 * before and after it the row reads filler tokens. Captured rows of every
 * site go to out at (sequence, step - start). */
static int run_rows(const gs_model *m, const int32_t *tokens, int T, int rows, const int *seq, const int *start,
                    int steps, sites_out *out) {
    gs_engine *e = gs_engine_new(m, rows);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    probe_capture **cap = calloc((size_t)out->n, sizeof *cap);
    int rc = ps && cap ? 0 : -1;
    for (int i = 0; rc == 0 && i < out->n; i++)
        if (!(cap[i] = probe_capture_add(ps, out->name[i]))) rc = -1;
    if (rc == 0) gs_engine_reset(e);
    uint64_t rng = 99;
    for (int t = 0; rc == 0 && t < steps; t++) {
        int32_t tok[MAX_ROWS];
        for (int r = 0; r < rows; r++) {
            int at = t - start[r];
            if (seq[r] >= 0 && at == 0) gs_engine_reset_seq(e, r);
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            int32_t filler = 3 + (int32_t)((rng >> 33) % (uint64_t)(m->cfg.V - 3));
            tok[r] = seq[r] >= 0 && at >= 0 && at < T ? tokens[(size_t)seq[r] * T + at] : at == T ? 0 : filler;
        }
        if ((rc = gs_engine_step(e, tok, rows)) != 0) break;
        for (int r = 0; r < rows; r++) {
            int at = t - start[r];
            if (seq[r] < 0 || at < 0 || at > T) continue;
            for (int i = 0; i < out->n; i++)
                memcpy(out->data[i] + ((size_t)seq[r] * (T + 1) + at) * out->width[i],
                       cap[i]->data + (size_t)r * out->width[i], (size_t)out->width[i] * sizeof(float));
        }
    }
    free(cap);
    probe_set_free(ps);
    gs_engine_free(e);
    return rc;
}

/* ||a - b|| / ||b|| over the entries finite in b; *nan_mismatch: entries NaN in one only */
static double rel_err_nan(const float *a, const float *b, long n, long *nan_mismatch) {
    double num = 0, den = 0;
    *nan_mismatch = 0;
    for (long i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            *nan_mismatch += isnan(a[i]) != isnan(b[i]);
            continue;
        }
        double d = (double)a[i] - b[i];
        num += d * d, den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* 1. the batch-1 run against the whole-window reference */
static void check_full(const char *fx, const sites_out *one, const st_file *ex, int B, int T) {
    int compared = 0;
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < one->n; i++) {
        const st_tensor *t = safetensors_find(ex, one->expect[i]);
        if (!t) continue;
        int w = one->width[i], Tr = t->ndim >= 2 ? (int)t->shape[1] : 0, sh = one->shift[i];
        CHECK(t->numel == (int64_t)B * Tr * w && Tr + sh <= T + 1, "%s: %s has %lld values, not B %d x T' x %d", fx,
              one->expect[i], (long long)t->numel, B, w);
        if (t->numel != (int64_t)B * Tr * w || Tr + sh > T + 1) continue;
        float *want = malloc((size_t)t->numel * sizeof(float)), *got = malloc((size_t)t->numel * sizeof(float));
        st_tensor_to_f32(t, want);
        for (int b = 0; b < B; b++)
            memcpy(got + (size_t)b * Tr * w, one->data[i] + ((size_t)b * (T + 1) + sh) * w, (size_t)Tr * w * sizeof(float));
        long nan_bad;
        double err = rel_err_nan(got, want, (long)t->numel, &nan_bad);
        CHECK(err < TOL && !nan_bad, "%s: %s decoded token by token vs the whole window: relative error %.3e, %ld NaN "
              "mismatches", fx, one->name[i], err, nan_bad);
        if (err >= worst) worst = err, worst_name = one->name[i];
        compared++;
        free(want);
        free(got);
    }
    printf("  %-6s incremental = full window: %d tensors of the expect file, worst %.2e (%s)\n", fx, compared, worst,
           worst_name);
    CHECK(compared >= 3, "%s: only %d site tensors in the expect file", fx, compared);
}

/* 2. every site of the staggered batch against the batch-1 run */
static void check_batch(const char *fx, const sites_out *one, const sites_out *mixed, int B, int T) {
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < one->n; i++) {
        long nan_bad, n = (long)B * (T + 1) * one->width[i];
        double err = rel_err_nan(mixed->data[i], one->data[i], n, &nan_bad);
        CHECK(err < TOL && !nan_bad, "%s: %s in a staggered batch vs alone: relative error %.3e, %ld NaN mismatches", fx,
              one->name[i], err, nan_bad);
        if (err >= worst) worst = err, worst_name = one->name[i];
    }
    printf("  %-6s batch invariance (staggered rows, resets): %d site tensors, worst %.2e (%s)\n", fx, one->n, worst,
           worst_name);
}

static void check_pair(const char *fx, const char *wpath, const char *epath) {
    gs_model *m = gs_model_load(wpath);
    st_file *ex = m ? safetensors_open(epath) : NULL;
    const st_tensor *tt = ex ? safetensors_find(ex, "tokens") : NULL;
    CHECK(m && ex && tt && tt->ndim == 2, "%s: load %s / %s: %s", fx, wpath, epath, gs_error());
    if (!m || !ex || !tt || tt->ndim != 2) { gs_model_free(m); safetensors_close(ex); return; }
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);
    sites_out one, mixed;
    CHECK(B + 1 <= MAX_ROWS && list_sites(m, B, T, &one) == 0 && list_sites(m, B, T, &mixed) == 0, "%s: %s", fx,
          gs_error());

    /* each sequence alone, from a fresh engine */
    for (int s = 0; s < B; s++) {
        int seq[1] = {s}, start[1] = {0};
        CHECK(run_rows(m, tokens, T, 1, seq, start, T + 1, &one) == 0, "%s: sequence %d alone: %s", fx, s, gs_error());
    }
    check_full(fx, &one, ex, B, T);

    /* B + 1 rows: row 0 filler only (never reset); row r >= 1 runs sequence
     * B - r from step 2r + 1 (r + 1 filler steps before, some after) */
    int seq[MAX_ROWS], start[MAX_ROWS], steps = 0;
    seq[0] = -1, start[0] = 0;
    for (int r = 1; r <= B; r++) {
        seq[r] = B - r, start[r] = 2 * r + 1;
        if (start[r] + T + 1 > steps) steps = start[r] + T + 1;
    }
    steps += 2;
    CHECK(run_rows(m, tokens, T, B + 1, seq, start, steps, &mixed) == 0, "%s: staggered batch: %s", fx, gs_error());
    check_batch(fx, &one, &mixed, B, T);

    sites_free(&one);
    sites_free(&mixed);
    free(tokens);
    safetensors_close(ex);
    gs_model_free(m);
}

int main(int argc, char **argv) {
    if (test_each_pair(argc, argv, check_pair)) return test_summary();
    check_pair("tpp2", fixture("reference/tpp2.weights.safetensors"), fixture("reference/tpp2.expect.safetensors"));
    check_pair("gdn2", fixture("reference/gdn2.weights.safetensors"), fixture("reference/gdn2.expect.safetensors"));
    return test_summary();
}
