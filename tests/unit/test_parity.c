/* Parity with the companion code: every tensor of every reference fixture
 * (tests/fixtures/reference, produced by the companion's own step functions)
 * within 1e-4 relative error, from F32 weights; the same weights stored as
 * BF16 within bf16 rounding; and batch invariance. */
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h"
#include "io/checkpoint/safetensors.h"
#include "family_check.h"
#include "testlib.h"

typedef struct {
    int B, T, d, V, H;
    float *s_pred, *s_ground, *logits, *nll, *alpha, *beta, *mem_norm;
} run_out;

static void run_out_free(run_out *r) {
    free(r->s_pred); free(r->s_ground); free(r->logits); free(r->nll);
    free(r->alpha); free(r->beta); free(r->mem_norm);
}

/* Run the model over B sequences of T tokens, batch `batch` at a time, with
 * outputs laid out (B, T, ...) like the fixtures. */
static int run_model(const gs_model *m, const int32_t *tokens, int B, int T, int batch, run_out *r) {
    const gs_config *c = &m->cfg;
    memset(r, 0, sizeof *r);
    r->B = B; r->T = T; r->d = c->d; r->V = c->V; r->H = c->H;
    long BT = (long)B * T;
    r->s_pred = calloc((size_t)BT * c->d, 4); r->s_ground = calloc((size_t)BT * c->d, 4);
    r->logits = calloc((size_t)BT * c->V, 4); r->nll = calloc((size_t)BT, 4);
    int H = c->H ? c->H : 1;
    r->alpha = calloc((size_t)BT * H, 4); r->beta = calloc((size_t)BT * H, 4); r->mem_norm = calloc((size_t)BT * H, 4);
    for (int b0 = 0; b0 < B; b0 += batch) {
        int nb = B - b0 < batch ? B - b0 : batch;
        gs_engine *e = gs_engine_new(m, batch);
        if (!e) return -1;
        gs_engine_reset(e);
        for (int t = 0; t < T; t++) {
            int32_t tok[64];
            for (int b = 0; b < nb; b++) tok[b] = tokens[(long)(b0 + b) * T + t];
            if (gs_engine_step(e, tok, nb) != 0) { gs_engine_free(e); return -1; }
            gs_step_out o = gs_engine_out(e);
            for (int b = 0; b < nb; b++) {
                long row = (long)(b0 + b) * T + t;
                memcpy(r->s_pred + row * c->d, o.s_pred + (long)b * c->d, (size_t)c->d * 4);
                memcpy(r->s_ground + row * c->d, o.s_ground + (long)b * c->d, (size_t)c->d * 4);
                memcpy(r->logits + row * c->V, o.logits + (long)b * c->V, (size_t)c->V * 4);
                r->nll[row] = o.nll[b];
                if (o.alpha) {
                    memcpy(r->alpha + row * c->H, o.alpha + (long)b * c->H, (size_t)c->H * 4);
                    memcpy(r->beta + row * c->H, o.beta + (long)b * c->H, (size_t)c->H * 4);
                    memcpy(r->mem_norm + row * c->H, o.mem_norm + (long)b * c->H, (size_t)c->H * 4);
                }
            }
        }
        gs_engine_free(e);
    }
    return 0;
}


static void check_pair(const char *name, const char *wpath, const char *epath) {
    gs_model *m = gs_model_load(wpath);
    CHECK(m != NULL, "load %s: %s", name, gs_error());
    st_file *ex = safetensors_open(epath);
    CHECK(ex != NULL, "open %s: %s", epath, gs_error());
    if (!m || !ex) { gs_model_free(m); safetensors_close(ex); return; }
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    /* tensor data in a safetensors file need not be aligned: copy it */
    int32_t *tokens = malloc((size_t)tt->numel * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)tt->numel * sizeof *tokens);
    int is_m = m->cfg.arch == GS_ARCH_GPN_M;

    /* 1. float32, whole batch at once */
    run_out full;
    CHECK(run_model(m, tokens, B, T, B, &full) == 0, "run: %s", gs_error());
    const char *names[] = {"s_pred", "s_ground", "logits", "nll", "alpha", "beta", "mem_norm"};
    const float *outs[] = {full.s_pred, full.s_ground, full.logits, full.nll, full.alpha, full.beta, full.mem_norm};
    char label[64];
    snprintf(label, sizeof label, "%s f32", name);
    for (int i = 0; i < (is_m ? 7 : 4); i++) fc_compare(label, ex, names[i], outs[i], -1, 1e-4);

    /* 2. batch invariance: each sequence alone gives the same numbers, up to
     * float32 rounding (batch 1 goes through GEMV, batches through GEMM, which
     * sum in different orders) */
    run_out single;
    CHECK(run_model(m, tokens, B, T, 1, &single) == 0, "run single: %s", gs_error());
    double e1 = rel_err(single.s_pred, full.s_pred, (long)B * T * m->cfg.d);
    double e2 = rel_err(single.nll, full.nll, (long)B * T);
    printf("  %-6s batch invariance: s_pred %.2e, nll %.2e\n", name, e1, e2);
    CHECK(e1 < 1e-5 && e2 < 1e-5, "%s: batch of %d vs one at a time differ (s_pred %.2e, nll %.2e)", name, B, e1, e2);
    run_out_free(&single);

    /* 3. the same weights stored as BF16: a different model, so "within bf16
     * rounding" is measured, not guessed. BF16 rounds each weight by at most
     * 2^-9 relative; we build a control model whose weights are perturbed by
     * random relative noise of that same size, and require the BF16 run to
     * drift from the f32 run by no more than 3x the control's drift (plus a
     * floor). A widening bug (byte order, truncation, wrong tensor) drifts by
     * orders of magnitude more. How far either drifts depends on how strongly
     * the recurrence amplifies weight noise: ~1e-2 on the fixtures. */
    char bpath[512];
    snprintf(bpath, sizeof bpath, "%s/%s.bf16.safetensors", scratch_dir(name), name);
    CHECK(gs_model_save(m, bpath, 1) == 0, "save bf16: %s", gs_error());
    gs_model *mb = gs_model_load(bpath);
    CHECK(mb != NULL, "load bf16: %s", gs_error());
    gs_model *mc = gs_model_new(&m->cfg);
    uint64_t rng = 12345;
    for (size_t i = 0; i < m->n_params; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(rng >> 11) / 9007199254740992.0 - 0.5; /* [-0.5, 0.5) */
        mc->block[i] = (float)(m->block[i] * (1.0 + u * (1.0 / 256.0)));
    }
    if (mb && mc) {
        CHECK(strcmp(mb->source_dtype, "BF16") == 0, "source dtype %s", mb->source_dtype);
        run_out rb, rc;
        CHECK(run_model(mb, tokens, B, T, B, &rb) == 0, "run bf16: %s", gs_error());
        CHECK(run_model(mc, tokens, B, T, B, &rc) == 0, "run control: %s", gs_error());
        const char *what[] = {"s_pred", "logits", "nll"};
        const float *bo[] = {rb.s_pred, rb.logits, rb.nll}, *co[] = {rc.s_pred, rc.logits, rc.nll};
        const float *fo[] = {full.s_pred, full.logits, full.nll};
        long len[] = {(long)B * T * m->cfg.d, (long)B * T * m->cfg.V, (long)B * T};
        for (int i = 0; i < 3; i++) {
            double eb = rel_err(bo[i], fo[i], len[i]), ec = rel_err(co[i], fo[i], len[i]);
            printf("  %-6s bf16 %-7s drift %.2e, control (2^-9 noise) %.2e\n", name, what[i], eb, ec);
            CHECK(eb > 0 && eb < 3 * ec + 1e-3, "%s bf16 %s drift %.3e vs control %.3e", name, what[i], eb, ec);
        }
        run_out_free(&rb);
        run_out_free(&rc);
    }
    gs_model_free(mb);
    gs_model_free(mc);
    run_out_free(&full);
    gs_model_free(m);
    safetensors_close(ex);
    free(tokens);
}

/* test_parity [WEIGHTS EXPECT]...: the given pairs (tests/cli/parity_configs.sh
 * generates them), else the companion fixtures. */
int main(int argc, char **argv) {
    static const char *const fixtures[] = {"gpnm1", "gpn", NULL};
    return fc_main_fixtures(argc, argv, fixtures, check_pair);
}
