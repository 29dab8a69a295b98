/* The trainer: its float32 forward against the inference engine and the
 * companion's fixtures (NLL to 1e-5), its float32 gradient against the
 * float64 one, the companion's initialisation, config errors, and resume:
 * 6 steps straight equal 3 steps + checkpoint + resume + 3 steps, bit for bit,
 * for GPN+M, Transformer++, GDN and the Recurrent Transformer. */
#include <stdint.h>
#include <sys/stat.h>

#include "base/error.h"
#include "engine/arch/rt/rt.h"
#include "engine/engine.h"
#include "io/checkpoint/safetensors.h"
#include "train/train.h"
#include "engine/tape/train_init.h"
#include "engine/arch/gpn/gpn_train.h"
#include "testlib.h"

/* ---- parity with the inference engine -------------------------------------- */

static void check_parity(const char *name) {
    gs_model *m = gs_model_load(reference_fixture(name, "weights.safetensors"));
    st_file *ex = safetensors_open(reference_fixture(name, "expect.safetensors"));
    CHECK(m && ex, "load %s: %s", name, gs_error());
    if (!m || !ex) { gs_model_free(m); safetensors_close(ex); return; }
    const st_tensor *tt = safetensors_find(ex, "tokens"), *tn = safetensors_find(ex, "nll");
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    int32_t *tok = malloc((size_t)B * T * 4);
    memcpy(tok, tt->data, (size_t)B * T * 4);
    float *want = malloc((size_t)B * T * 4), *got = malloc((size_t)B * T * 4), *eng = malloc((size_t)B * T * 4);
    st_tensor_to_f32(tn, want);
    /* the inference engine, step by step */
    gs_engine *e = gs_engine_new(m, B);
    for (int t = 0; t < T; t++) {
        int32_t x[64];
        for (int b = 0; b < B; b++) x[b] = tok[(long)b * T + t];
        gs_engine_step(e, x, B);
        gs_step_out o = gs_engine_out(e);
        for (int b = 0; b < B; b++) eng[(long)b * T + t] = o.nll[b];
    }
    gs_engine_free(e);
    /* the trainer's window forward */
    gpn_tape_f32 *tp = gpn_tape_new_f32(&m->cfg, B, T);
    double loss;
    CHECK(gpn_tape_forward_f32(tp, m->block, tok, NULL, NULL, NULL, NULL, &loss) == 0, "forward: %s", gs_error());
    gpn_tape_nll_f32(tp, got);
    double mean_eng = 0, mean_want = 0;
    for (int i = 0; i < B * T; i++) { mean_eng += eng[i]; mean_want += want[i]; }
    mean_eng /= B * T;
    mean_want /= B * T;
    double e1 = fabs(loss - mean_eng) / mean_eng, e2 = rel_err(got, eng, (long)B * T), e3 = rel_err(got, want, (long)B * T);
    printf("  %-6s train forward vs engine: mean NLL %.7f vs %.7f (rel %.1e), per token %.1e; vs fixture %.1e\n", name,
           loss, mean_eng, e1, e2, e3);
    CHECK(e1 < 1e-5, "%s: mean NLL %.8f vs engine %.8f", name, loss, mean_eng);
    CHECK(e2 < 1e-5, "%s: per-token NLL vs engine rel err %.3e", name, e2);
    CHECK(e3 < 1e-5, "%s: per-token NLL vs fixture rel err %.3e", name, e3);
    CHECK(fabs(mean_want - loss) / mean_want < 1e-5, "%s: mean NLL vs fixture", name);

    /* float32 gradient against the float64 one on the same weights */
    long np = (long)m->n_params;
    float *g32 = calloc((size_t)np, 4);
    double *P64 = malloc((size_t)np * 8), *g64 = calloc((size_t)np, 8);
    for (long i = 0; i < np; i++) P64[i] = m->block[i];
    gpn_tape_forward_f32(tp, m->block, tok, NULL, NULL, NULL, g32, &loss);
    gpn_tape_backward_f32(tp, m->block, g32, 0);
    gpn_tape_f64 *t64 = gpn_tape_new_f64(&m->cfg, B, T);
    gpn_tape_forward_f64(t64, P64, tok, NULL, NULL, NULL, g64, &loss);
    gpn_tape_backward_f64(t64, P64, g64, 0);
    float *g64f = malloc((size_t)np * 4);
    for (long i = 0; i < np; i++) g64f[i] = (float)g64[i];
    double eg = rel_err(g32, g64f, np);
    printf("  %-6s float32 gradient vs float64: rel err %.1e over %ld parameters\n", name, eg, np);
    CHECK(eg < 1e-4, "%s: float32 gradient rel err %.3e", name, eg);
    gpn_tape_free_f64(t64);
    gpn_tape_free_f32(tp);
    free(g32); free(P64); free(g64); free(g64f);
    free(tok); free(want); free(got); free(eng);
    gs_model_free(m);
    safetensors_close(ex);
}

/* ---- initialisation ---------------------------------------------------------- */

static void stats(const float *x, size_t n, double *mean, double *sd, double *maxabs) {
    double s = 0, ss = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        ss += (double)x[i] * x[i];
        if (fabs(x[i]) > mx) mx = fabs(x[i]);
    }
    *mean = s / n;
    *sd = sqrt(ss / n - *mean * *mean);
    *maxabs = mx;
}

static void check_init(void) {
    gs_config c = {.arch = GS_ARCH_GPN_M, .n_layers = 2, .d = 96, .e = 48, .f = 128, .H = 64, .dk = 8, .dv = 16,
                    .V = 500, .decoder_bias = 1};
    gs_model *a = gs_model_new(&c), *b = gs_model_new(&c), *z = gs_model_new(&c);
    train_rng r;
    train_rng_seed(&r, 7);
    train_init_params(&c, a->block, &r);
    train_rng_seed(&r, 7);
    train_init_params(&c, b->block, &r);
    CHECK(memcmp(a->block, b->block, a->n_params * 4) == 0, "same seed, different weights");
    train_rng_seed(&r, 8);
    train_init_params(&c, z->block, &r);
    CHECK(memcmp(a->block, z->block, a->n_params * 4) != 0, "different seeds, same weights");
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(&c, specs);
    int lecun = 0;
    for (int i = 0; i < n; i++) {
        const gs_tensor_spec *s = &specs[i];
        const float *x = a->block + s->offset;
        double mean, sd, mx;
        stats(x, s->numel, &mean, &sd, &mx);
        const char *nm = s->name;
        size_t L = strlen(nm);
#define ENDS(suf) (L >= strlen(suf) && !strcmp(nm + L - strlen(suf), suf))
        if (s->role == GS_TENSOR_NORM) CHECK(mean == 1 && sd == 0, "%s: norms start at ones", nm);
        else if (s->role == GS_TENSOR_BIAS) CHECK(mx == 0, "%s: biases start at zero", nm);
        else if (s->role == GS_TENSOR_A_LOG) {
            int ok = 1;
            for (size_t k = 0; k < s->numel; k++) ok &= x[k] <= logf(16.0f) + 1e-6f;
            double em = 0;
            for (size_t k = 0; k < s->numel; k++) em += exp(x[k]);
            em /= s->numel;
            CHECK(ok && fabs(em - 8) < 2.5, "%s: exp(A_log) ~ U(0,16): mean %.2f", nm, em);
        } else if (s->role == GS_TENSOR_DT_BIAS) {
            int ok = 1;
            double lm = 0;
            for (size_t k = 0; k < s->numel; k++) {
                double dt = log1p(exp(x[k]));
                ok &= dt >= 0.001 * 0.9999 && dt <= 0.1 * 1.0001;
                lm += log(dt);
            }
            lm /= s->numel;
            CHECK(ok, "%s: softplus(dt_bias) outside [1e-3, 0.1]", nm);
            CHECK(fabs(lm - 0.5 * (log(0.001) + log(0.1))) < 0.6, "%s: log dt mean %.2f (log-uniform)", nm, lm);
        } else if (ENDS("fg_gate_k") || ENDS("pg_gate_k") || ENDS("ffn_w2_k")) {
            CHECK(mx == 0, "%s: zero at init", nm);
        } else if (!strcmp(nm, "embedding") || ENDS("read_W_o_k")) {
            CHECK(fabs(sd - 0.02) < 0.02 * 0.05 && fabs(mean) < 0.002, "%s: normal(0.02): sd %.4f", nm, sd);
        } else {
            double want = 1 / sqrt((double)s->shape[0]);
            CHECK(fabs(sd - want) < want * 0.08, "%s: lecun sd %.4f, want 1/sqrt(fan_in) = %.4f", nm, sd, want);
            CHECK(mx <= 2 * want / 0.87962566103423978 + 1e-6, "%s: truncated at 2 sd of the untruncated normal", nm);
            lecun++;
        }
#undef ENDS
    }
    CHECK(lecun == 2 + 4 + 2 * 3, "%d LeCun-normal tensors, want 12", lecun);
    printf("  initialisation: %d tensors as the companion's (LeCun-normal: %d), reproducible from the seed\n", n, lecun);
    gs_model_free(a);
    gs_model_free(b);
    gs_model_free(z);
}

/* ---- config ------------------------------------------------------------------- */

static const char *write_text(const char *dir, const char *name, const char *text) {
    static char path[8][4096];
    static int slot;
    char *p = path[slot++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

static void check_config(const char *dir) {
    train_config c;
    train_config_defaults(&c);
    const char *good = write_text(dir, "good.json",
        "{\"model\": {\"arch\": \"gpn_m\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24,"
        " \"n_heads\": 2, \"d_key\": 4, \"d_val\": 4, \"n_layers\": 2, \"use_decoder_bias\": true},"
        " \"data\": {\"train\": \"shards/train\", \"eval\": \"/abs/eval\", \"seq_len\": 32, \"batch_size\": 4},"
        " \"training\": {\"steps\": 10, \"seed\": 3, \"bptt\": 8},"
        " \"optimizer\": {\"learning_rate\": 0.01, \"warmup_steps\": 2},"
        " \"output\": {\"dir\": \"run\", \"checkpoint_every\": 5}}");
    CHECK(train_config_load(good, &c) == 0, "good config: %s", gs_error());
    char want[4200];
    snprintf(want, sizeof want, "%s/shards/train", dir);
    CHECK(!strcmp(c.train_dir, want), "relative path resolved against the config's directory: %s", c.train_dir);
    CHECK(!strcmp(c.eval_dir, "/abs/eval"), "absolute path kept: %s", c.eval_dir);
    CHECK(c.model.n_layers == 2 && c.model.decoder_bias && c.bptt == 8 && c.steps == 10 && c.opt.total_steps == 10 &&
              c.opt.warmup == 2 && c.opt.lr == 0.01 && c.opt.beta2 == 0.95 && c.checkpoint_every == 5,
          "fields read");
    struct { const char *json, *expect; } bad[] = {
        {"{\"model\": {\"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24, \"n_heads\": 2, \"d_key\": 4,"
         " \"d_val\": 4, \"dstate\": 3}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "unknown key \"dstate\""},
        {"{\"model\": {\"vocab_size\": 50, \"d_emb\": 8, \"d_ffn\": 24, \"n_heads\": 2, \"d_key\": 4, \"d_val\": 4},"
         " \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "missing \"d_state\""},
        {"{\"model\": {\"arch\": \"gpn\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24},"
         " \"data\": {\"train\": \"x\", \"seq_len\": 0}, \"output\": {\"dir\": \"o\"}}", "seq_len"},
        {"{\"model\": {\"arch\": \"gpn\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24},"
         " \"data\": {\"train\": \"x\"}, \"optimizer\": {\"learning_rate\": \"high\"}, \"output\": {\"dir\": \"o\"}}", "must be a number"},
        {"{\"model\": {\"arch\": \"gpn\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24},"
         " \"data\": {\"train\": \"x\"}}", "output"},
        {"[1, 2]", "not a JSON object"},
        {"{\"model\": {\"arch\": \"gpn\", \"vocab_size\": 50.5, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24},"
         " \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "integer"},
        /* the baselines: a family without a training entry, truncation, another family's key, a remainder */
        {"{\"model\": {\"arch\": \"elman\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24},"
         " \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "\"transformer++\", \"gdn\""},
        {"{\"model\": {\"arch\": \"transformer++\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24, \"n_heads\": 2},"
         " \"data\": {\"train\": \"x\"}, \"training\": {\"bptt\": 4}, \"output\": {\"dir\": \"o\"}}", "full window only"},
        {"{\"model\": {\"arch\": \"transformer++\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24, \"n_heads\": 2,"
         " \"conv_size\": 4}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "belongs to \"gdn\""},
        {"{\"model\": {\"arch\": \"transformer++\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24, \"n_heads\": 2,"
         " \"d_key\": 8}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "d_state / n_heads"},
        {"{\"model\": {\"arch\": \"gdn\", \"vocab_size\": 50, \"d_state\": 16, \"d_emb\": 8, \"d_ffn\": 24, \"n_heads\": 2,"
         " \"d_key\": 4, \"d_val\": 8}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "no meaning for \"gdn\""},
        {"{\"model\": {\"arch\": \"transformer++\", \"vocab_size\": 50, \"d_state\": 18, \"d_ffn\": 24, \"n_heads\": 4},"
         " \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "does not divide"},
        {"{\"model\": {\"arch\": \"gdn\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24, \"n_heads\": 2,"
         " \"d_key\": 4, \"d_val\": 8}, \"data\": {\"train\": \"x\", \"seq_len\": 1}, \"output\": {\"dir\": \"o\"}}",
         "at least 2 tokens"},
        {"{\"model\": {\"arch\": \"recurrent-transformer\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24,"
         " \"n_heads\": 2, \"d_val\": 8}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}", "d_state / n_heads"},
        {"{\"model\": {\"arch\": \"recurrent-transformer\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24,"
         " \"n_heads\": 2}, \"data\": {\"train\": \"x\"}, \"training\": {\"bptt\": 4}, \"output\": {\"dir\": \"o\"}}",
         "full window only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        train_config_defaults(&c);
        const char *p = write_text(dir, "bad.json", bad[i].json);
        int rc = train_config_load(p, &c);
        CHECK(rc != 0 && strstr(gs_error(), bad[i].expect), "bad config %zu: rc %d, message '%s' lacks '%s'", i, rc,
              gs_error(), bad[i].expect);
    }
    /* a GDN config reads its sizes (and conv_size's default) and writes them back */
    train_config_defaults(&c);
    const char *g = write_text(dir, "gdn.json",
        "{\"model\": {\"arch\": \"gdn\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24, \"n_heads\": 2,"
        " \"d_key\": 4, \"d_val\": 8, \"n_layers\": 3}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}");
    CHECK(train_config_load(g, &c) == 0, "gdn config: %s", gs_error());
    CHECK(c.model.arch == GS_ARCH_GDN && c.model.e == 16 && c.model.conv == 4 && c.model.n_layers == 3 &&
              c.model.dv == 8 && c.model.norm_eps == 1e-6f, "gdn sizes read");
    char *json = train_config_to_json(&c);
    CHECK(json && strstr(json, "\"conv_size\":\t4") && strstr(json, "\"gdn\"") && !strstr(json, "d_emb"),
          "gdn config written back: %s", json ? json : "(null)");
    /* and what it writes (the run's config.json) reads back to the same sizes */
    train_config back;
    train_config_defaults(&back);
    CHECK(json && train_config_load(write_text(dir, "gdn-back.json", json), &back) == 0 &&
              !memcmp(&back.model, &c.model, sizeof c.model), "gdn config.json reads back: %s", gs_error());
    free(json);
    /* a Recurrent Transformer config: its head size from n_heads, the paper's options, and back */
    train_config_defaults(&c);
    g = write_text(dir, "rt.json",
        "{\"model\": {\"arch\": \"recurrent-transformer\", \"vocab_size\": 50, \"d_state\": 16, \"d_ffn\": 24,"
        " \"n_heads\": 2, \"n_layers\": 3}, \"data\": {\"train\": \"x\"}, \"output\": {\"dir\": \"o\"}}");
    CHECK(train_config_load(g, &c) == 0, "rt config: %s", gs_error());
    CHECK(c.model.arch == GS_ARCH_RT && c.model.e == 16 && c.model.dk == 8 && c.model.dv == 8 &&
              c.model.n_layers == 3 && c.model.activation == RT_ACT_GELU && c.model.qk_norm == 1 &&
              c.model.alibi_bias_max == 8.0f && c.model.clip_qkv == 0 && c.model.norm_eps == 1e-5f,
          "rt sizes and options read");
    json = train_config_to_json(&c);
    CHECK(json && strstr(json, "\"recurrent-transformer\"") && !strstr(json, "d_key") && !strstr(json, "d_emb") &&
              !strstr(json, "decoder_bias"), "rt config written back: %s", json ? json : "(null)");
    train_config_defaults(&back);
    CHECK(json && train_config_load(write_text(dir, "rt-back.json", json), &back) == 0 &&
              !memcmp(&back.model, &c.model, sizeof c.model), "rt config.json reads back: %s", gs_error());
    free(json);
    printf("  config: fields, relative paths, %zu kinds of bad input rejected with one-line messages\n",
           sizeof bad / sizeof *bad);
}

/* ---- resume ------------------------------------------------------------------ */

static void write_shard(const char *dir, int n, int V, uint64_t seed) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    CHECK(system(cmd) == 0, "mkdir");
    char path[4200];
    snprintf(path, sizeof path, "%s/data_0000.bin", dir);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t x = (uint32_t)((seed >> 33) % (uint64_t)V);
        if (i % 5 == 0) x = (uint32_t)(i / 5 % V); /* some structure to learn */
        fwrite(&x, 4, 1, f);
    }
    fclose(f);
}

/* loss.csv without its last column (elapsed seconds) */
static char *csv_numbers(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    char *out = calloc(1, 1 << 16), line[512];
    while (fgets(line, sizeof line, f)) { /* every column but the 7th, elapsed_s (wall time differs) */
        char *c = line;
        for (int k = 0; k < 6 && c; k++) c = strchr(c + 1, ',');
        char *after = c ? strchr(c + 1, ',') : NULL;
        if (c) *c = 0;
        strcat(out, line);
        if (after) strcat(out, after);
        else strcat(out, "\n");
    }
    fclose(f);
    return out;
}

/* For each trainable family (model): a run straight through equals one
 * stopped, checkpointed and resumed, bit for bit; then (once, on GPN+M) the
 * refusals of a different model and of a damaged state. */
static void check_resume(const char *root, const char *name, gs_config model, int bptt, int refusals) {
    char train[4200], eval[4200], dir[4200];
    snprintf(train, sizeof train, "%s/train", root);
    snprintf(eval, sizeof eval, "%s/eval", root);
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    write_shard(train, 40000, 37, 1);
    write_shard(eval, 3000, 37, 2);
    train_config c;
    train_config_defaults(&c);
    c.model = model;
    snprintf(c.train_dir, sizeof c.train_dir, "%s", train);
    snprintf(c.eval_dir, sizeof c.eval_dir, "%s", eval);
    c.seq_len = 24;
    c.batch = 4;
    c.steps = c.opt.total_steps = 6;
    c.opt.warmup = 2;
    c.opt.lr = 0.01;
    c.opt.clip = 0.5;
    c.bptt = bptt;
    c.shuffle = 1;
    c.eval_every = 2;
    c.eval_windows = 7;
    c.seed = 11;
    c.export_bf16 = 1;
    /* straight through */
    snprintf(c.out_dir, sizeof c.out_dir, "%s/straight", dir);
    gs_trainer *a = gs_trainer_new(&c, NULL);
    CHECK(a != NULL, "trainer: %s", gs_error());
    if (!a) return;
    train_report r;
    while (!gs_trainer_done(a)) CHECK(gs_trainer_step(a, &r) == 0, "step: %s", gs_error());
    CHECK(r.checkpointed && r.step == 6 && !isnan(r.eval_loss), "the last step evaluates and checkpoints");
    /* 3 steps, stop, resume, 3 steps */
    snprintf(c.out_dir, sizeof c.out_dir, "%s/split", dir);
    gs_trainer *b = gs_trainer_new(&c, NULL);
    for (int i = 0; i < 3; i++) CHECK(gs_trainer_step(b, &r) == 0, "step: %s", gs_error());
    CHECK(gs_trainer_checkpoint(b) == 0, "checkpoint: %s", gs_error());
    /* steps that were never checkpointed must not survive in the log */
    CHECK(gs_trainer_step(b, &r) == 0, "step 4: %s", gs_error());
    gs_trainer_free(b);
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/split", dir);
    gs_trainer *resumed = gs_trainer_new(&c, ckpt);
    CHECK(resumed != NULL, "resume: %s", gs_error());
    if (resumed) {
        CHECK(gs_trainer_step_count(resumed) == 3, "resumed at step %ld, want 3", gs_trainer_step_count(resumed));
        while (!gs_trainer_done(resumed)) CHECK(gs_trainer_step(resumed, &r) == 0, "step: %s", gs_error());
        const gs_model *ma = gs_trainer_model(a), *mb = gs_trainer_model(resumed);
        int same = memcmp(ma->block, mb->block, ma->n_params * 4) == 0;
        double err = rel_err(mb->block, ma->block, (long)ma->n_params);
        printf("  resume (%s): 6 steps vs 3 + resume + 3: weights %s (rel diff %.1e)\n", name,
               same ? "bitwise equal" : "DIFFER", err);
        CHECK(same, "resumed run differs from the straight run (rel %.3e)", err);
        gs_trainer_free(resumed);
        char p1[4200], p2[4200];
        snprintf(p1, sizeof p1, "%s/straight/loss.csv", dir);
        snprintf(p2, sizeof p2, "%s/split/loss.csv", dir);
        char *l1 = csv_numbers(p1), *l2 = csv_numbers(p2);
        CHECK(!strcmp(l1, l2), "loss.csv differs:\n%s---\n%s", l1, l2);
        int rows = 0;
        for (char *s = l1; *s; s++) rows += *s == '\n';
        CHECK(rows == 7, "loss.csv has %d lines, want header + 6", rows);
        free(l1);
        free(l2);
        /* the saved model loads with the engine's loader; BF16 export too */
        char mp[4200];
        snprintf(mp, sizeof mp, "%s/split/model.safetensors", dir);
        gs_model *lm = gs_model_load(mp);
        CHECK(lm && !memcmp(lm->block, ma->block, ma->n_params * 4), "model.safetensors holds the trained weights");
        gs_model_free(lm);
        snprintf(mp, sizeof mp, "%s/split/model.bf16.safetensors", dir);
        lm = gs_model_load(mp);
        CHECK(lm && !strcmp(lm->source_dtype, "BF16"), "BF16 export: %s", lm ? lm->source_dtype : gs_error());
        gs_model_free(lm);
    }
    if (!refusals) { gs_trainer_free(a); return; }
    /* resuming with different model sizes is refused */
    train_config c2 = c;
    c2.model.d = 20;
    gs_trainer *bad = gs_trainer_new(&c2, ckpt);
    CHECK(!bad && strstr(gs_error(), "differs from the config"), "size mismatch: %s", gs_error());
    gs_trainer_free(bad);
    /* a damaged state file is refused */
    char op[4200];
    snprintf(op, sizeof op, "%s/split/optimizer.safetensors", dir);
    FILE *f = fopen(op, "r+b");
    unsigned char len8[8];
    CHECK(fread(len8, 1, 8, f) == 8, "read header length");
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | len8[i];
    fseek(f, (long)(8 + hlen + 101), SEEK_SET); /* inside "params", the first tensor */
    int byte = fgetc(f);
    fseek(f, (long)(8 + hlen + 101), SEEK_SET);
    fputc(byte ^ 0x40, f);
    fclose(f);
    bad = gs_trainer_new(&c, ckpt);
    CHECK(!bad && strstr(gs_error(), "checksum"), "damaged state: %s", gs_error());
    gs_trainer_free(bad);
    gs_trainer_free(a);
}

int main(void) {
    const char *dir = scratch_dir("train");
    check_parity("gpnm1");
    check_parity("gpn");
    check_init();
    check_config(dir);
    check_resume(dir, "gpnm", (gs_config){.arch = GS_ARCH_GPN_M, .n_layers = 2, .d = 24, .e = 12, .f = 32, .H = 3,
                                            .dk = 4, .dv = 6, .V = 37, .decoder_bias = 1}, 5, 1);
    check_resume(dir, "tpp", (gs_config){.arch = GS_ARCH_TPP, .n_layers = 2, .d = 16, .e = 16, .f = 24, .H = 2,
                                           .dk = 8, .dv = 8, .V = 37, .norm_eps = 1e-6f}, 0, 0);
    check_resume(dir, "gdn", (gs_config){.arch = GS_ARCH_GDN, .n_layers = 2, .d = 16, .e = 16, .f = 24, .H = 2,
                                           .dk = 4, .dv = 8, .V = 37, .conv = 4, .norm_eps = 1e-6f}, 0, 0);
    check_resume(dir, "rt", (gs_config){.arch = GS_ARCH_RT, .n_layers = 2, .d = 16, .e = 16, .f = 24, .H = 2, .dk = 8,
                                          .dv = 8, .V = 37, .norm_eps = 1e-5f, .activation = RT_ACT_GELU, .qk_norm = 1,
                                          .alibi_bias_max = 8.0f}, 0, 0);
    return test_summary();
}
