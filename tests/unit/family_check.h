/* The one helper of the family tests (test_family_tpp.c, test_family_rt.c,
 * test_family_gdn.c, test_parity.c): a fixture's tensors against a run's
 * (fc_compare), and the checks every family without a first-token
 * prediction makes against an expect file (tests/fixtures/reference/
 * README.md's layout: position t of each sequence):
 *   1. every site the expect file holds, read through the engine's sites
 *      (probes/ captures), the logits and the nll within 1e-4, under the
 *      engine's step convention (a site at step t is the file's position t;
 *      the logits and nll of step t + 1 are its position t), NaNs (a
 *      pattern's keys before position 0) where the file has them; step 0
 *      predicts nothing (nll NaN, top1 -1);
 *   2. batch invariance: one sequence at a time (GEMV) against the batch;
 *   3. BF16 weights drift no more than 3x a control model's whose weights
 *      carry random relative noise of bf16's size (test_parity.c's measure).
 * One header, static inline functions: each test is its own executable. */
#ifndef GS_TESTS_FAMILY_CHECK_H
#define GS_TESTS_FAMILY_CHECK_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "io/checkpoint/safetensors.h"
#include "engine/engine.h"
#include "probes/probes.h"
#include "testlib.h"

/* a site and its tensor's name in the expect file ("%d": the layer) */
typedef struct {
    const char *site, *expect;
    int per_layer;
} fc_site;

/* a handler on every site a pattern names, added to each engine a run makes */
typedef struct {
    const char *pattern;
    probe_fn fn;
    void *ctx;
} fc_hook;

/* The sites every family named after transformer-lens has, whatever its
 * mixer's own: the embedding and a block's input, the block's residual stream
 * after its mixer, and the final norm. A test's table lists them around the
 * mixer's sites; FC_N_SITES counts a table. */
#define FC_SITES_IN {"hook_embed", "embed", 0}, {"blocks.%d.hook_resid_pre", "resid_pre_%d", 1}
#define FC_SITES_BLOCK_OUT                                                                             \
    {"blocks.%d.hook_attn_out", "attn_out_%d", 1}, {"blocks.%d.hook_resid_mid", "resid_mid_%d", 1},   \
        {"blocks.%d.hook_mlp_out", "mlp_out_%d", 1}, {"blocks.%d.hook_resid_post", "resid_post_%d", 1}
#define FC_SITE_FINAL {"ln_final.hook_normalized", "final_hidden", 0}
#define FC_N_SITES(table) ((int)(sizeof(table) / sizeof *(table)))

#define FC_MAX_CAPS (2 + 16 * 8)

typedef struct {
    int B, T, V, n;
    char name[FC_MAX_CAPS][48], expect[FC_MAX_CAPS][48];
    int width[FC_MAX_CAPS];
    float *cap[FC_MAX_CAPS]; /* (B, T, width) of each captured site */
    int last_resid;          /* the capture of the last layer's resid_post */
    float *logits, *nll;     /* logits of steps 1..T (B, T, V); nll of steps 1..T-1 (B, T-1) */
    int nan0;                /* every nll at step 0 is NaN and its top1 -1 */
} fc_run;

static inline void fc_run_free(fc_run *r) {
    for (int i = 0; i < r->n; i++) free(r->cap[i]);
    free(r->logits);
    free(r->nll);
}

/* B sequences of T tokens, `batch` at a time, every site captured, then one
 * more step whose logits are the prediction made at position T - 1. */
static inline int fc_run_hooked(const gs_model *m, const fc_site *sites, int n_sites, const int32_t *tokens, int B, int T,
                         int batch, const fc_hook *hooks, int n_hooks, fc_run *r) {
    const gs_config *c = &m->cfg;
    memset(r, 0, sizeof *r);
    if (batch > 64) return gs_fail("at most 64 sequences a batch (%d)", batch);
    r->B = B, r->T = T, r->V = c->V, r->nan0 = 1;
    for (int s = 0; s < n_sites; s++)
        for (int l = 0; l < (sites[s].per_layer ? c->n_layers : 1) && r->n < FC_MAX_CAPS; l++) {
            snprintf(r->name[r->n], sizeof r->name[0], sites[s].site, l);
            snprintf(r->expect[r->n], sizeof r->expect[0], sites[s].expect, l);
            if (!strcmp(sites[s].expect, "resid_post_%d")) r->last_resid = r->n;
            r->n++;
        }
    r->logits = calloc((size_t)B * T * c->V, 4), r->nll = calloc((size_t)B * T, 4);
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gs_engine *e = gs_engine_new(m, batch);
        probe_set *ps = e ? probe_set_new(e) : NULL;
        if (!ps) { gs_engine_free(e); return -1; }
        probe_capture *cap[FC_MAX_CAPS];
        for (int i = 0; i < r->n; i++) {
            if (!(cap[i] = probe_capture_add(ps, r->name[i]))) { probe_set_free(ps); gs_engine_free(e); return -1; }
            r->width[i] = cap[i]->width;
            if (!r->cap[i]) r->cap[i] = calloc((size_t)B * T * cap[i]->width, 4);
        }
        for (int k = 0; k < n_hooks; k++)
            if (probe_add(ps, hooks[k].pattern, hooks[k].fn, hooks[k].ctx) != 0) {
                probe_set_free(ps);
                gs_engine_free(e);
                return -1;
            }
        gs_engine_reset(e);
        for (int t = 0; t <= T; t++) {
            int32_t tok[64];
            for (int b = 0; b < nb; b++) tok[b] = t < T ? tokens[(size_t)(b0 + b) * T + t] : 0;
            if (gs_engine_step(e, tok, nb) != 0) { probe_set_free(ps); gs_engine_free(e); return -1; }
            gs_step_out o = gs_engine_out(e);
            const float *logits = gs_engine_site(e, GS_HOOK_LOGITS), *nll = gs_engine_site(e, GS_HOOK_NLL);
            if (!logits || !nll || o.nll != nll) { probe_set_free(ps); gs_engine_free(e); return gs_fail("no kept logits/nll"); }
            for (int b = 0; b < nb; b++) {
                size_t row = (size_t)(b0 + b) * T + t;
                for (int i = 0; t < T && i < r->n; i++)
                    memcpy(r->cap[i] + row * r->width[i], cap[i]->data + (size_t)b * r->width[i], (size_t)r->width[i] * 4);
                if (t == 0) {
                    r->nan0 &= isnan(nll[b]) && o.top1[b] == -1;
                    continue;
                }
                memcpy(r->logits + (row - 1) * c->V, logits + (size_t)b * c->V, (size_t)c->V * 4);
                if (t < T) r->nll[(size_t)(b0 + b) * (T - 1) + t - 1] = nll[b];
            }
        }
        probe_set_free(ps);
        gs_engine_free(e);
    }
    return 0;
}

static inline int fc_run_model(const gs_model *m, const fc_site *sites, int n_sites, const int32_t *tokens, int B, int T,
                        int batch, fc_run *r) {
    return fc_run_hooked(m, sites, n_sites, tokens, B, T, batch, NULL, 0, r);
}

/* got against the fixture's tensor `name`: ||got - want|| / ||want|| over the
 * entries where want is a number, printed after `label` and CHECKed below
 * tol; a NaN in one and not the other fails. n_got: the values got holds (the
 * fixture must hold as many), or -1 for the fixture's count. */
static inline void fc_compare(const char *label, const st_file *ex, const char *name, const float *got, long n_got,
                       double tol) {
    const st_tensor *t = safetensors_find(ex, name);
    CHECK(t && (n_got < 0 || t->numel == n_got), "%s: the fixture lacks %s of %ld values", label, name, n_got);
    if (!t || (n_got >= 0 && t->numel != n_got)) return;
    n_got = (long)t->numel;
    float *want = malloc((size_t)n_got * 4);
    st_tensor_to_f32(t, want);
    double num = 0, den = 0;
    long nan_mismatch = 0, nans = 0;
    for (long i = 0; i < n_got; i++) {
        if (isnan(want[i]) || isnan(got[i])) {
            nan_mismatch += isnan(want[i]) != isnan(got[i]);
            nans++;
            continue;
        }
        num += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        den += (double)want[i] * want[i];
    }
    double err = den > 0 ? sqrt(num / den) : sqrt(num);
    printf("  %-6s %-16s rel err %.2e%s\n", label, name, err, nans ? " (NaN before position 0 alike)" : "");
    CHECK(err < tol && !nan_mismatch, "%s %s: relative error %.3e (tolerance %.0e), %ld NaNs where the other has a number",
          label, name, err, tol, nan_mismatch);
    free(want);
}

/* Checks 1-3 on model m against the expect file ex; *full keeps the batch's
 * run for the caller's further checks (fc_run_free it). min_sites: how many
 * of the sites the file must hold. */
static inline void fc_parity(const char *fx, const gs_model *m, const st_file *ex, const fc_site *sites, int n_sites,
                      const int32_t *tokens, int B, int T, int min_sites, fc_run *full) {
    int d = m->cfg.d, V = m->cfg.V;
    CHECK(fc_run_model(m, sites, n_sites, tokens, B, T, B, full) == 0, "run: %s", gs_error());
    int compared = 0;
    for (int i = 0; i < full->n; i++)
        if (safetensors_find(ex, full->expect[i]))
            fc_compare(fx, ex, full->expect[i], full->cap[i], (long)B * T * full->width[i], 1e-4), compared++;
    printf("  %-6s %d of %d captured sites in the expect file\n", fx, compared, full->n);
    CHECK(compared >= min_sites, "%s: only %d sites to compare", fx, compared);
    fc_compare(fx, ex, "logits", full->logits, (long)B * T * V, 1e-4);
    fc_compare(fx, ex, "nll", full->nll, (long)B * (T - 1), 1e-4);
    CHECK(full->nan0, "%s: step 0 predicts nothing: its nll must be NaN and its top1 -1", fx);

    fc_run one;
    CHECK(fc_run_model(m, sites, n_sites, tokens, B, T, 1, &one) == 0, "run one at a time: %s", gs_error());
    double e1 = rel_err(one.cap[one.last_resid], full->cap[full->last_resid], (long)B * T * d);
    double e2 = rel_err(one.logits, full->logits, (long)B * T * V);
    printf("  %-6s batch invariance: resid_post %.2e, logits %.2e\n", fx, e1, e2);
    CHECK(e1 < 1e-5 && e2 < 1e-5, "%s: batch of %d vs one at a time (%.2e, %.2e)", fx, B, e1, e2);
    fc_run_free(&one);

    char bpath[512];
    snprintf(bpath, sizeof bpath, "%s/%s.bf16.safetensors", scratch_dir(fx), fx);
    CHECK(gs_model_save(m, bpath, 1) == 0, "save bf16: %s", gs_error());
    gs_model *mb = gs_model_load(bpath), *mc = gs_model_new(&m->cfg);
    CHECK(mb && mc, "bf16 round trip: %s", gs_error());
    if (mb && mc) {
        uint64_t rng = 12345;
        for (size_t i = 0; i < m->n_params; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(rng >> 11) / 9007199254740992.0 - 0.5;
            mc->block[i] = (float)(m->block[i] * (1.0 + u * (1.0 / 256.0)));
        }
        CHECK(!strcmp(mb->source_dtype, "BF16") && !memcmp(&mb->cfg, &m->cfg, sizeof m->cfg),
              "%s: the bf16 file is %s and its config reads back %s", fx, mb->source_dtype,
              memcmp(&mb->cfg, &m->cfg, sizeof m->cfg) ? "different" : "the same");
        fc_run rb, rc;
        CHECK(fc_run_model(mb, sites, n_sites, tokens, B, T, B, &rb) == 0 &&
                  fc_run_model(mc, sites, n_sites, tokens, B, T, B, &rc) == 0, "%s", gs_error());
        double eb = rel_err(rb.logits, full->logits, (long)B * T * V), ec = rel_err(rc.logits, full->logits, (long)B * T * V);
        printf("  %-6s bf16 logits drift %.2e, control (2^-9 noise) %.2e\n", fx, eb, ec);
        CHECK(eb > 0 && eb < 3 * ec + 1e-3, "%s bf16 drift %.3e vs control %.3e", fx, eb, ec);
        fc_run_free(&rb);
        fc_run_free(&rc);
    }
    gs_model_free(mb);
    gs_model_free(mc);
}

/* The model (of family `arch`, which does not predict its first token), the
 * expect file and a copy of its tokens (B x T); 0, or -1 after a failed CHECK
 * with nothing left open. */
typedef struct {
    gs_model *m;
    st_file *ex;
    int32_t *tokens;
    int B, T;
} fc_pair;

static inline int fc_open(const char *fx, const char *wpath, const char *epath, gs_arch arch, fc_pair *p) {
    memset(p, 0, sizeof *p);
    p->m = gs_model_load(wpath);
    CHECK(p->m != NULL, "load %s: %s", fx, gs_error());
    p->ex = safetensors_open(epath);
    CHECK(p->ex != NULL, "open %s: %s", epath, gs_error());
    const st_tensor *tt = p->ex ? safetensors_find(p->ex, "tokens") : NULL;
    CHECK(!p->ex || (tt && tt->ndim == 2 && tt->shape[0] <= 64), "%s: no 2-D tokens of at most 64 sequences", epath);
    const gs_family *fam = p->m ? gs_family_of(&p->m->cfg) : NULL;
    CHECK(!p->m || (p->m->cfg.arch == arch && fam && !fam->predicts_first_token), "%s: recognised as %s", fx,
          gs_arch_name(p->m->cfg.arch));
    if (!p->m || !tt || tt->ndim != 2 || tt->shape[0] > 64 || p->m->cfg.arch != arch) {
        gs_model_free(p->m);
        safetensors_close(p->ex);
        return -1;
    }
    p->B = (int)tt->shape[0], p->T = (int)tt->shape[1];
    p->tokens = malloc((size_t)tt->numel * sizeof *p->tokens);
    memcpy(p->tokens, tt->data, (size_t)tt->numel * sizeof *p->tokens);
    return 0;
}

static inline void fc_close(fc_pair *p) {
    gs_model_free(p->m);
    safetensors_close(p->ex);
    free(p->tokens);
}

/* probe handler: zero the rows of sequences at position 0 */
static inline void fc_zero_first(void *ctx, const gs_hook_event *ev) {
    (void)ctx;
    for (int b = 0; b < ev->B; b++)
        if (ev->positions[b] == 0) memset(ev->data + (size_t)b * ev->width, 0, (size_t)ev->width * sizeof(float));
}

/* How far an edit travels: `site`'s rows at position 0 zeroed (fc_zero_first)
 * in a fresh run of the pair's first three steps, and the summed |difference|
 * of sequence 0's state (s_pred) from the unedited run `full` at step 0
 * (*same) and at steps 1-2 (*moved). 0, or -1 after a failed CHECK. */
static inline int fc_edit_moves(const fc_pair *pr, const char *site, const fc_run *full, double *same, double *moved) {
    const gs_model *m = pr->m;
    const int32_t *tokens = pr->tokens;
    int B = pr->B, T = pr->T, d = m->cfg.d;
    gs_engine *e = gs_engine_new(m, B);
    probe_set *ps = e ? probe_set_new(e) : NULL;
    int ok = ps && probe_add(ps, site, fc_zero_first, NULL) == 0;
    CHECK(ok, "probes: %s", gs_error());
    *same = *moved = 0;
    if (ok) {
        gs_engine_reset(e);
        for (int t = 0; t < 3 && t < T; t++) {
            int32_t tok[64];
            for (int b = 0; b < B; b++) tok[b] = tokens[(size_t)b * T + t];
            CHECK(gs_engine_step(e, tok, B) == 0, "step: %s", gs_error());
            /* sequence 0's last resid_post against the unedited run's */
            gs_step_out o = gs_engine_out(e);
            double diff = 0;
            for (int k = 0; k < d; k++) diff += fabs(o.s_pred[k] - full->cap[full->last_resid][(size_t)t * d + k]);
            if (t == 0) *same = diff;
            else *moved += diff;
        }
    }
    probe_set_free(ps);
    gs_engine_free(e);
    return ok ? 0 : -1;
}

/* fc_edit_moves of `site`, printed ("zeroed WHAT") and CHECKed: step 0 moved
 * less than same_below (DBL_TRUE_MIN: not at all), later steps more than 1e-3. */
static inline void fc_check_edit(const char *fx, const fc_pair *pr, const char *site, const char *what,
                                 const fc_run *full, double same_below) {
    double same, moved;
    if (fc_edit_moves(pr, site, full, &same, &moved) != 0) return;
    printf("  %-6s zeroed %s: step 0 moved %.2e, steps 1-2 moved %.2e\n", fx, what, same, moved);
    CHECK(same < same_below && moved > 1e-3, "%s: editing %s: step 0 moved %.3e, later %.3e", fx,
          strrchr(site, '.') + 1, same, moved);
}

/* main: WEIGHTS EXPECT pairs from argv (named by their files), else the
 * fixtures `names` (NULL-terminated) */
/* A checkpoint the family must refuse: `bad`, what loading it gave, is NULL
 * and the one-line error holds `needle` (printed, so a run shows each
 * refusal's wording); `what` names the case. */
static inline void fc_check_refused(gs_model *bad, const char *what, const char *needle) {
    const char *err = gs_error();
    CHECK(!bad && strstr(err, needle) && !strchr(err, '\n'), "%s: loaded, or the error '%s' lacks '%s'", what,
          bad ? "" : err, needle);
    if (!bad) printf("  refused %s: %s\n", what, err);
    gs_model_free(bad);
}

static inline int fc_main_fixtures(int argc, char **argv, const char *const *names,
                                   void (*check_pair)(const char *, const char *, const char *)) {
    if (test_each_pair(argc, argv, check_pair)) return test_summary();
    for (int k = 0; names[k]; k++)
        check_pair(names[k], reference_fixture(names[k], "weights.safetensors"),
                   reference_fixture(names[k], "expect.safetensors"));
    return test_summary();
}

/* the same for one fixture */
static inline int fc_main(int argc, char **argv, const char *name, void (*check_pair)(const char *, const char *, const char *)) {
    const char *const names[2] = {name, NULL};
    return fc_main_fixtures(argc, argv, names, check_pair);
}

#endif
