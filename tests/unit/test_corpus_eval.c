/* Perplexity on a shard corpus equals the fixture's: the tokens of
 * gpnm1.expect.safetensors (B=3 sequences of T=24) written as shards (split
 * into documents and shards so that a window crosses a shard boundary),
 * read back as 3 windows of 24 and run through the engine in batches of 2
 * must give exp(mean(expected nll)) to 1e-4 relative, in the library and
 * through `gpnscope eval --json`. */
#include <cjson/cJSON.h>
#include <stdint.h>

#include "base/error.h"
#include "io/corpora/corpus.h"
#include "probes/corpus_eval.h"
#include "engine/model.h"
#include "io/checkpoint/safetensors.h"
#include "testlib.h"

int main(void) {
    const char *weights = fixture("reference/gpnm1.weights.safetensors");
    st_file *ex = safetensors_open(fixture("reference/gpnm1.expect.safetensors"));
    gs_model *m = gs_model_load(weights);
    CHECK(ex && m, "load fixtures: %s", gs_error());
    if (!ex || !m) return test_summary();
    const st_tensor *tt = safetensors_find(ex, "tokens"), *tn = safetensors_find(ex, "nll");
    CHECK(tt && tn && tt->dtype == ST_I32 && tt->ndim == 2, "fixture has tokens (I32, B x T) and nll");
    if (!tt || !tn) return test_summary();
    int B = (int)tt->shape[0], T = (int)tt->shape[1];
    int32_t *tokens = malloc((size_t)B * T * sizeof *tokens);
    memcpy(tokens, tt->data, (size_t)B * T * sizeof *tokens);
    float *nll = malloc((size_t)tn->numel * sizeof *nll);
    st_tensor_to_f32(tn, nll);
    double sum = 0;
    for (long i = 0; i < tn->numel; i++) sum += nll[i];
    double want = exp(sum / (double)tn->numel);

    /* documents of 10, 30, 7 and the rest; shards close after >= 20 tokens,
     * so shard 0 holds 40 tokens and window 1 (tokens 24..47) crosses it */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/shards", scratch_dir("corpus_eval"));
    shard_writer *w = shard_writer_open(dir, m->cfg.V, "fixture", 20);
    CHECK(w != NULL, "shard_writer_open: %s", gs_error());
    int lens[] = {10, 30, 7, B * T - 47}, at = 0;
    for (int d = 0; d < 4 && w; d++) {
        CHECK(shard_writer_add(w, tokens + at, (size_t)lens[d]) == 0, "add: %s", gs_error());
        at += lens[d];
    }
    CHECK(w && shard_writer_close(w) == 0, "close: %s", gs_error());

    corpus_options o;
    corpus_options_default(&o);
    o.seq_len = T;
    o.vocab_size = m->cfg.V;
    gs_corpus *c = corpus_open(dir, NULL, &o);
    CHECK(c != NULL, "corpus_open: %s", gs_error());
    if (!c) return test_summary();
    CHECK(corpus_n_windows(c) == B && corpus_total_tokens(c) == B * T && corpus_n_docs(c) == 4, "%lld windows, %lld tokens, %lld docs",
          (long long)corpus_n_windows(c), (long long)corpus_total_tokens(c), (long long)corpus_n_docs(c));
    int32_t win[64];
    for (int b = 0; b < B; b++) {
        CHECK(corpus_window(c, b, win) == 0 && !memcmp(win, tokens + b * T, (size_t)T * sizeof *win), "window %d equals sequence %d", b, b);
    }
    corpus_eval_result r;
    CHECK(corpus_eval(m, c, 2, NULL, NULL, NULL, &r) == 0, "corpus_eval: %s", gs_error());
    printf("  perplexity %.6f, expected exp(mean nll) = %.6f\n", r.perplexity, want);
    CHECK(r.tokens == B * T && r.windows == B, "%lld tokens", (long long)r.tokens);
    CHECK(fabs(r.perplexity / want - 1) < 1e-4, "perplexity %.8f vs %.8f", r.perplexity, want);
    corpus_free(c);

    /* the command line */
    const char *bin = getenv("GPNSCOPE_BIN");
    if (bin) {
        char cmd[12000], out[4300];
        snprintf(out, sizeof out, "%s/eval.json", scratch_dir("corpus_eval_cli"));
        snprintf(cmd, sizeof cmd, "'%s' eval --model '%s' --corpus '%s' --seq-len %d --batch 2 --json > '%s'", bin, weights, dir, T, out);
        CHECK(system(cmd) == 0, "%s failed", cmd);
        FILE *f = fopen(out, "r");
        char buf[8192] = {0};
        if (f) { size_t n = fread(buf, 1, sizeof buf - 1, f); buf[n] = 0; fclose(f); }
        cJSON *j = cJSON_Parse(buf);
        const cJSON *p = cJSON_GetObjectItem(j, "perplexity"), *tk = cJSON_GetObjectItem(j, "tokens");
        CHECK(cJSON_IsNumber(p) && fabs(p->valuedouble / want - 1) < 1e-4, "CLI perplexity %s", buf);
        CHECK(cJSON_IsNumber(tk) && tk->valuedouble == B * T, "CLI tokens");
        cJSON_Delete(j);
    }
    free(tokens);
    free(nll);
    safetensors_close(ex);
    gs_model_free(m);
    return test_summary();
}
