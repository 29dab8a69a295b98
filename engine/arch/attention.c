/* The attention families' shared CPU pieces (attention.h). */
#include "engine/arch/attention.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/cpu/ops.h"

void gs_linear(float *out, const float *x, const float *W, int B, int n_in, int n_out) {
    if (B == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, n_out, n_in, 1.0f, W, n_in, x, 1, 0.0f, out, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, n_out, n_in, 1.0f, x, n_in, W, n_in, 0.0f, out, n_out);
}

int gs_kv_reserve(gs_kv_cache *c, int b, int64_t pos, size_t row, float **scores, int *scores_cap) {
    if (pos < c->cap) return 0;
    if (pos >= INT32_MAX / 2) return gs_fail("sequence %d is at position %lld: more than a KV cache holds", b, (long long)pos);
    int cap = c->cap ? c->cap : 64;
    while (cap <= pos) cap *= 2;
    float *k = realloc(c->k, (size_t)cap * row * sizeof *k);
    if (k) c->k = k;
    float *v = k ? realloc(c->v, (size_t)cap * row * sizeof *v) : NULL;
    if (v) c->v = v;
    if (!k || !v) return gs_fail("out of memory for the KV cache of sequence %d at position %lld", b, (long long)pos);
    c->cap = cap;
    if (cap + 1 > *scores_cap) {
        float *s = realloc(*scores, (size_t)(cap + 1) * sizeof *s);
        if (!s) return gs_fail("out of memory for attention weights over %d positions", cap + 1);
        *scores = s;
        *scores_cap = cap + 1;
    }
    return 0;
}

void gs_kv_free(gs_kv_cache *caches, int n) {
    for (int b = 0; caches && b < n; b++) {
        free(caches[b].k);
        free(caches[b].v);
    }
    free(caches);
}

void gs_softmax_inplace(float *p, int n) {
    float mx = p[0];
    for (int j = 1; j < n; j++) mx = p[j] > mx ? p[j] : mx;
    double sum = 0;
    for (int j = 0; j < n; j++) sum += p[j] = expf(p[j] - mx);
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < n; j++) p[j] *= inv;
}

void gs_pattern_window(float *row, const float *p, int n, int P) {
    for (int j = 0; j < P; j++) row[j] = n - P + j >= 0 ? p[n - P + j] : NAN;
}

void gs_pattern_apply(float *p, const float *row, int n, int P) {
    for (int j = 0; j < P; j++)
        if (n - P + j >= 0) p[n - P + j] = row[j];
}

void gs_report_pending(const gs_engine_host *host, float *logits, const float *pending, int B, int V, float *nll,
                       float *entropy, int32_t *top1) {
    for (int b = 0; b < B; b++) {
        float *row = logits + (size_t)b * V;
        if (host->pos[b] == 0)
            for (int i = 0; i < V; i++) row[i] = NAN;
        else memcpy(row, pending + (size_t)b * V, (size_t)V * sizeof *row);
    }
    gs_fire(host, GS_HOOK_LOGITS, 0, logits, B, V);
    logits_stats_pooled(logits, host->tokens, B, V, nll, entropy, top1); /* rows over the pool: the same bits */
    for (int b = 0; b < B; b++)
        if (isnan(nll[b])) top1[b] = -1;
    gs_fire(host, GS_HOOK_NLL, 0, nll, B, 1);
}

int gs_attn_cpu_alloc(gs_attn_cpu *a, int max_batch, size_t floats) {
    size_t B = (size_t)max_batch;
    if (!(a->arena = calloc(floats, sizeof(float))) || !(a->top1 = calloc(B, sizeof *a->top1)) ||
        !(a->cache = calloc(B, sizeof *a->cache)))
        return -1;
    a->max_batch = max_batch; /* only with the caches: what gs_kv_free walks */
    return 0;
}

void gs_attn_cpu_release(gs_attn_cpu *a) {
    gs_kv_free(a->cache, a->max_batch);
    free(a->arena);
    free(a->top1);
    free(a->scores);
}

float *gs_attn_cpu_carve_outputs(gs_attn_cpu *a, float *p, size_t B, size_t V) {
    a->logits = p, p += B * V;
    a->pending = p, p += B * V;
    a->nll = p, p += B;
    a->entropy = p, p += B;
    return p;
}

int gs_attn_cpu_begin(gs_attn_cpu *a, const gs_engine_host *host, int B, int V, int d, size_t row, const float *E) {
    /* the prediction of x_t, made at step t - 1 (none at a window's start) */
    gs_report_pending(host, a->logits, a->pending, B, V, a->nll, a->entropy, a->top1);
    for (int b = 0; b < B; b++)
        if (gs_kv_reserve(&a->cache[b], b, host->pos[b], row, &a->scores, &a->scores_cap)) return -1;
    for (int b = 0; b < B; b++) memcpy(a->emb + (size_t)b * d, E + (size_t)host->tokens[b] * d, (size_t)d * sizeof(float));
    gs_fire(host, GS_HOOK_EMBED, 0, a->emb, B, d);
    memcpy(a->h, a->emb, (size_t)B * d * sizeof(float));
    return 0;
}

void gs_attn_cpu_reset_seq(void *impl, int b) {
    (void)impl, (void)b; /* the engine set pos[b] = 0: the cache's length; its memory is kept for reuse */
}

gs_backend gs_attn_cpu_backend(const gs_backend_i *i, void *impl, const gs_attn_cpu *a) {
    gs_step_out o = {a->nll, a->entropy, a->top1, a->h, a->h, a->logits, NULL, NULL, NULL};
    gs_backend be = gs_cpu_backend(i, impl, o);
    be.site[GS_HOOK_EMBED] = a->emb;
    be.site[GS_HOOK_FINAL_NORM] = a->fin;
    return be;
}

int gs_attn_validate(const gs_config *c, const char *family, const char *width, const char *ffn) {
    if (c->V < 1 || c->d < 1 || c->f < 1 || c->H < 1 || c->n_layers < 1)
        return gs_fail("invalid %s sizes (V=%d, %s=%d, %s=%d, n_heads=%d, n_layers=%d): all must be positive", family, c->V,
                       width, c->d, ffn, c->f, c->H, c->n_layers);
    if (c->n_layers > GS_MAX_LAYERS)
        return gs_fail("%d layers: the engine supports at most %d", c->n_layers, GS_MAX_LAYERS);
    if (c->d % c->H || c->dk != c->d / c->H || c->dv != c->dk)
        return gs_fail("n_heads=%d does not divide %s=%d (the source asserts it)", c->H, width, c->d);
    return 0;
}

void gs_attn_describe_pattern(char *buf, size_t size) {
    gs_describe(buf, size, "pattern_keys", GS_PATTERN_KEYS,
                "fixed: blocks.{i}.attn.hook_pattern keeps each head's weights on the most recent %d keys", GS_PATTERN_KEYS);
}
