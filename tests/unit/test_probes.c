/* Hook names, captures and interventions: a capture sees exactly what the
 * engine outputs; a hook that changes nothing changes nothing; zeroing a head
 * whose read weights are zero changes nothing while zeroing a live head does;
 * a decode-only direction edit changes logits by the hand-computed amount and
 * leaves the carried state alone. */
#include <cblas.h>

#include "base/error.h"
#include "engine/cpu/ops.h"
#include "io/checkpoint/safetensors.h"
#include "probes/probes.h"
#include "probes/site_ref.h"
#include "testlib.h"

#define NSEQ 3
#define NSTEP 24

static const int32_t *tokens;

static void noop_fn(void *ctx, const gs_hook_event *ev) {
    (void)ev;
    (*(int *)ctx)++;
}

/* Run the fixture tokens; return nll (NSEQ*NSTEP) and s_ground (NSEQ*NSTEP*d), optional setup. */
static void run(gs_model *m, void (*setup)(probe_set *, void *), void *arg, float *nll, float *sg, float *logits) {
    gs_engine *e = gs_engine_new(m, NSEQ);
    probe_set *ps = probe_set_new(e);
    if (setup) setup(ps, arg);
    gs_engine_reset(e);
    int d = m->cfg.d, V = m->cfg.V;
    for (int t = 0; t < NSTEP; t++) {
        int32_t tok[NSEQ];
        for (int b = 0; b < NSEQ; b++) tok[b] = tokens[b * NSTEP + t];
        gs_engine_step(e, tok, NSEQ);
        gs_step_out o = gs_engine_out(e);
        for (int b = 0; b < NSEQ; b++) {
            nll[b * NSTEP + t] = o.nll[b];
            memcpy(sg + ((size_t)b * NSTEP + t) * d, o.s_ground + (size_t)b * d, (size_t)d * 4);
            if (logits) memcpy(logits + ((size_t)b * NSTEP + t) * V, o.logits + (size_t)b * V, (size_t)V * 4);
        }
    }
    probe_set_free(ps);
    gs_engine_free(e);
}

static int calls;
static void setup_noop(probe_set *ps, void *arg) {
    (void)arg;
    const char *names[] = {"s_pred", "s_decode", "s_ground", "mem.alpha", "L0.mem_read", "*.ffn_out", "logits", "nll",
                           "mem.k"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        CHECK(probe_add(ps, names[i], noop_fn, &calls) == 0, "add %s: %s", names[i], gs_error());
}
/* reverse the entries of every head's key (still relu'd and unit length) */
static void reverse_keys(void *ctx, const gs_hook_event *ev) {
    int dk = *(const int *)ctx;
    for (long h = 0; h < (long)ev->B * ev->width / dk; h++)
        for (int i = 0, j = dk - 1; i < j; i++, j--) {
            float t = ev->data[h * dk + i];
            ev->data[h * dk + i] = ev->data[h * dk + j];
            ev->data[h * dk + j] = t;
        }
}
static void setup_reverse_keys(probe_set *ps, void *arg) {
    CHECK(probe_add(ps, "mem.k", reverse_keys, arg) == 0, "%s", gs_error());
}
/* the same within each head's columns of W_k and b_k (d rows of H*dk) */
static void reverse_key_weights(gs_model *m) {
    const gs_config *c = &m->cfg;
    int hk = c->H * c->dk;
    for (int r = 0; r <= c->d; r++) {
        float *row = r < c->d ? m->p.write_W_k_k + (size_t)r * hk : m->p.write_W_k_b;
        for (int h = 0; h < c->H; h++)
            for (int i = 0, j = c->dk - 1; i < j; i++, j--) {
                float t = row[h * c->dk + i];
                row[h * c->dk + i] = row[h * c->dk + j];
                row[h * c->dk + j] = t;
            }
    }
}
static void setup_heads(probe_set *ps, void *arg) { CHECK(probe_zero_heads(ps, -1, arg, 1) == 0, "%s", gs_error()); }
static void setup_sub_decode(probe_set *ps, void *arg) { CHECK(probe_subtract(ps, "s_decode", arg) == 0, "%s", gs_error()); }
static void setup_sub_carry(probe_set *ps, void *arg) { CHECK(probe_subtract(ps, "s_pred", arg) == 0, "%s", gs_error()); }

int main(void) {
    gs_model *m = gs_model_load(fixture("reference/gpnm1.weights.safetensors"));
    st_file *ex = safetensors_open(fixture("reference/gpnm1.expect.safetensors"));
    CHECK(m && ex, "fixtures: %s", gs_error());
    if (!m || !ex) return test_summary();
    const st_tensor *tt = safetensors_find(ex, "tokens");
    int32_t *tok_copy = malloc((size_t)tt->numel * sizeof *tok_copy); /* file data may be unaligned */
    memcpy(tok_copy, tt->data, (size_t)tt->numel * sizeof *tok_copy);
    tokens = tok_copy;
    const gs_config *c = &m->cfg;
    int d = c->d, V = c->V;

    /* names */
    gs_hook_point p;
    int layer;
    CHECK(probe_parse_name(c, "L0.mem_read", &p, &layer) == 0 && p == GS_HOOK_MEM_READ && layer == 0, "L0.mem_read");
    CHECK(probe_parse_name(c, "mem_read", &p, &layer) == 0 && p == GS_HOOK_MEM_READ, "one-layer shorthand");
    CHECK(probe_parse_name(c, "L1.mem_read", &p, &layer) != 0 && strstr(gs_error(), "1 layer"), "L1 on 1 layer: %s", gs_error());
    CHECK(probe_parse_name(c, "L0.s_pred", &p, &layer) != 0, "s_pred is not per layer");
    CHECK(probe_parse_name(c, "bogus", &p, &layer) != 0 && strstr(gs_error(), "unknown hook"), "unknown: %s", gs_error());
    char list[4096];
    CHECK(probe_list_names(c, list, sizeof list) == 0 && strstr(list, "blocks.0.mem.heads\n") &&
              strstr(list, "mem.alpha\n") && strstr(list, "state.pred\n") && !strstr(list, "s_pred"),
          "list:\n%s", list);
    /* the site names and their aliases name the same point */
    const struct { const char *a, *b; } same[] = {{"s_pred", "state.pred"},           {"s_ground", "state.ground"},
                                                   {"L0.ffn_out", "blocks.0.hook_mlp_out"}, {"L0.mem_read", "blocks.0.hook_mem_out"},
                                                   {"*.mem.heads", "blocks.*.mem.heads"},   {"hook_mlp_out", "L0.ffn_out"}};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        gs_hook_point pa, pb;
        int la, lb;
        CHECK(probe_parse_name(c, same[i].a, &pa, &la) == 0 && probe_parse_name(c, same[i].b, &pb, &lb) == 0 && pa == pb &&
                  la == lb,
              "%s and %s: %s", same[i].a, same[i].b, gs_error());
    }
    CHECK(probe_parse_name(c, "blocks.0.state.pred", &p, &layer) != 0 && strstr(gs_error(), "not per layer"),
          "blocks.0.state.pred: %s", gs_error());
    CHECK(probe_parse_name(c, "blocks.1.hook_mlp_out", &p, &layer) != 0 && strstr(gs_error(), "1 layer"),
          "blocks.1 of 1: %s", gs_error());
    gs_model *plain = gs_model_load(fixture("reference/gpn.weights.safetensors"));
    CHECK(plain && probe_parse_name(&plain->cfg, "mem.alpha", &p, &layer) != 0 && strstr(gs_error(), "no memory"), "gpn mem");
    gs_model_free(plain);

    /* a site reference: parsed once; its stored kind and name per layer, and the written name for messages */
    {
        probe_site_ref r;
        char kind[64], name[64];
        CHECK(probe_site_ref_parse(c, "s_pred", &r) == 0 && r.layer == 0 && r.heads.n == 0 &&
                  !strcmp(r.written, "s_pred") && probe_site_ref_kind(&r, 0, kind, sizeof kind) == 0 &&
                  !strcmp(kind, "pred"),
              "s_pred -> %s (%s)", kind, gs_error());
        CHECK(probe_site_ref_parse(c, "blocks.*.mem.heads[heads=2,0,1]", &r) == 0 && r.layer == -1 && r.heads.n == 3 &&
                  !strcmp(r.written, "blocks.*.mem.heads") && probe_site_ref_kind(&r, 0, kind, sizeof kind) == 0 &&
                  !strcmp(kind, "blocks.0.mem.heads[heads=0-2]"),
              "selector -> %s (%s)", kind, gs_error());
        probe_site_ref_name(&r, 0, name, sizeof name);
        CHECK(!strcmp(name, "blocks.0.mem.heads"), "name %s", name);
        CHECK(probe_site_ref_kind(&r, 0, kind, 12) == -1, "a kind that does not fit is refused");
        CHECK(probe_site_ref_parse(c, "bogus[heads=0]", &r) != 0 && strstr(gs_error(), "unknown hook"), "%s", gs_error());
        CHECK(!strcmp(probe_stored_kind("state.ground"), "ground") && !strcmp(probe_site_of_stored_kind("ground"), "state.ground") &&
                  !strcmp(probe_stored_kind("blocks.0.hook_mlp_out"), "blocks.0.hook_mlp_out") &&
                  !strcmp(probe_site_of_stored_kind("blocks.0.hook_mlp_out"), "blocks.0.hook_mlp_out"),
              "stored kinds");
    }

    size_t BT = (size_t)NSEQ * NSTEP;
    float *nll0 = malloc(BT * 4), *sg0 = malloc(BT * d * 4), *lg0 = malloc(BT * V * 4);
    float *nll1 = malloc(BT * 4), *sg1 = malloc(BT * d * 4), *lg1 = malloc(BT * V * 4);
    run(m, NULL, NULL, nll0, sg0, lg0);

    /* hooks that change nothing change nothing (bit for bit) */
    run(m, setup_noop, NULL, nll1, sg1, NULL);
    CHECK(!memcmp(nll0, nll1, BT * 4) && !memcmp(sg0, sg1, BT * d * 4), "no-op hooks changed the run");
    CHECK(calls == NSTEP * 9, "handlers ran %d times, expected %d", calls, NSTEP * 9);

    /* a hook's keys are the keys the write uses, for k M too (the engine
     * otherwise carries k M over from the last step, made with the keys
     * before any hook): reversing every head's keys at every step is the
     * model with W_k and b_k reversed within each head */
    {
        int dk = c->dk;
        run(m, setup_reverse_keys, &dk, nll1, sg1, NULL);
        reverse_key_weights(m);
        float *nll2 = malloc(BT * 4), *sg2 = malloc(BT * d * 4);
        run(m, NULL, NULL, nll2, sg2, NULL);
        reverse_key_weights(m);
        double e_s = rel_err(sg1, sg2, BT * d), e_n = rel_err(nll1, nll2, BT), moved = rel_err(sg0, sg2, BT * d);
        CHECK(e_s < 1e-5 && e_n < 1e-5, "keys reversed by a hook != reversed key weights: state %.2e, nll %.2e", e_s, e_n);
        CHECK(moved > 1e-3, "reversing the keys changed the states by only %.2e: the check would see nothing", moved);
        free(nll2), free(sg2);
    }

    /* capture equals the engine's own output */
    {
        gs_engine *e = gs_engine_new(m, NSEQ);
        probe_set *ps = probe_set_new(e);
        probe_capture *cap = probe_capture_add(ps, "s_pred"), *al = probe_capture_add(ps, "mem.alpha");
        probe_site_ref r;
        probe_capture *by_ref = probe_site_ref_parse(c, "state.pred", &r) ? NULL : probe_capture_site(ps, r.site, r.layer);
        CHECK(cap && al && by_ref, "capture: %s", gs_error());
        gs_engine_reset(e);
        int32_t tok[NSEQ] = {tokens[0], tokens[NSTEP], tokens[2 * NSTEP]};
        gs_engine_step(e, tok, NSEQ);
        gs_step_out o = gs_engine_out(e);
        CHECK(cap->B == NSEQ && cap->width == d && !memcmp(cap->data, o.s_pred, (size_t)NSEQ * d * 4), "s_pred capture");
        CHECK(al->width == c->H && !memcmp(al->data, o.alpha, (size_t)NSEQ * c->H * 4), "alpha capture");
        CHECK(by_ref && by_ref->width == d && !memcmp(by_ref->data, o.s_pred, (size_t)NSEQ * d * 4), "capture by reference");
        probe_set_free(ps);
        gs_engine_free(e);
    }

    /* zero a head's read: the result cannot depend on that head's W_o rows
     * (its read no longer reaches the state), and differs from the baseline
     * because the head was live */
    int head = 1;
    float *wo = m->p.layers[0].read_W_o_k;
    size_t rows = (size_t)c->dv * d;
    float *saved = malloc(rows * 4);
    memcpy(saved, wo + (size_t)head * rows, rows * 4);
    memset(wo + (size_t)head * rows, 0, rows * 4);
    run(m, setup_heads, &head, nll1, sg1, NULL);
    float *nll2 = malloc(BT * 4), *sg2 = malloc(BT * d * 4);
    memcpy(wo + (size_t)head * rows, saved, rows * 4);
    run(m, setup_heads, &head, nll2, sg2, NULL);
    CHECK(!memcmp(nll1, nll2, BT * 4), "zeroing a head: its W_o rows should not matter once its read is zero");
    double dn = 0;
    for (size_t i = 0; i < BT; i++) dn += fabs((double)nll2[i] - nll0[i]);
    CHECK(dn / BT > 1e-4, "zeroing live head %d changed mean |dNLL| by only %.2e", head, dn / BT);
    free(saved); free(nll2); free(sg2);

    /* decode-only subtraction: carried state untouched, logits as by hand */
    float *v = malloc((size_t)d * 4);
    for (int i = 0; i < d; i++) v[i] = 0.5f * sinf((float)i);
    run(m, setup_sub_decode, v, nll1, sg1, lg1);
    CHECK(!memcmp(sg0, sg1, BT * d * 4), "decode-only edit changed the carried state");
    {
        /* s_pred of step 0 is the zero-state prediction; recompute its decode by hand */
        gs_engine *e = gs_engine_new(m, NSEQ);
        gs_engine_reset(e);
        int32_t tok[NSEQ] = {tokens[0], tokens[NSTEP], tokens[2 * NSTEP]};
        gs_engine_step(e, tok, NSEQ);
        gs_step_out o = gs_engine_out(e);
        float *x = malloc((size_t)NSEQ * d * 4), *z = malloc((size_t)NSEQ * c->e * 4), *lg = malloc((size_t)NSEQ * V * 4);
        for (int i = 0; i < NSEQ * d; i++) x[i] = o.s_pred[i] - v[i % d];
        rmsnorm_forward(x, x, m->p.decode_norm_w, NSEQ, d);
        matmul_forward(z, x, m->p.decode_proj_k, NULL, NSEQ, d, c->e);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, NSEQ, V, c->e, 1, z, c->e, m->p.embedding, c->e, 0, lg, V);
        double err = 0;
        for (int b = 0; b < NSEQ; b++) err = fmax(err, rel_err(lg1 + (size_t)b * NSTEP * V, lg + (size_t)b * V, V));
        CHECK(err < 1e-6, "decode-only logits differ from hand computation: %.2e", err);
        free(x); free(z); free(lg);
        gs_engine_free(e);
    }
    run(m, setup_sub_carry, v, nll1, sg1, NULL);
    CHECK(memcmp(sg0, sg1, BT * d * 4) != 0, "carry-scope edit left the carried state unchanged");
    float zero[64] = {0};
    gs_engine *te = gs_engine_new(m, 1);
    probe_set *tmp = probe_set_new(te);
    CHECK(probe_project_out(tmp, "s_pred", zero) != 0 && strstr(gs_error(), "zero"), "zero direction refused");
    probe_set_free(tmp);
    gs_engine_free(te);
    free(v);
    free(nll0); free(sg0); free(lg0); free(nll1); free(sg1); free(lg1);
    safetensors_close(ex);
    gs_model_free(m);
    free(tok_copy);
    return test_summary();
}
