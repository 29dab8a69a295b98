#include "engine/tape/train_init.h"

#include <math.h>
#include <string.h>

#include "base/prng.h"

void train_rng_seed(train_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = gs_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t train_rng_next(train_rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double train_rng_uniform(train_rng *r) { return (double)(train_rng_next(r) >> 11) * 0x1.0p-53; }

/* Box-Muller, one value per call (no cached spare: the state stays 4 words) */
double train_rng_normal(train_rng *r) {
    double u1 = 1.0 - train_rng_uniform(r); /* (0, 1] */
    double u2 = train_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double train_rng_truncated_normal(train_rng *r, double lo, double hi) {
    for (;;) { /* rejection: P(accept) = 0.95 on [-2, 2] */
        double x = train_rng_normal(r);
        if (x >= lo && x <= hi) return x;
    }
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* the decay parameters, shared by GPN+M and GDN (fla draws them the same way) */
static void init_decay(const gs_tensor_spec *s, float *x, train_rng *r) {
    for (size_t k = 0; k < s->numel; k++) {
        if (s->role == GS_TENSOR_A_LOG) {
            double a = 16.0 * train_rng_uniform(r);
            x[k] = (float)log(a > 1e-8 ? a : 1e-8);
        } else {
            double dt = exp(train_rng_uniform(r) * (log(0.1) - log(0.001)) + log(0.001));
            if (dt < 1e-4) dt = 1e-4;
            x[k] = (float)(dt + log(-expm1(-dt))); /* inverse softplus */
        }
    }
}

void train_init_params(const gs_config *c, float *block, train_rng *r) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    for (int i = 0; i < n; i++) {
        const gs_tensor_spec *s = &specs[i];
        float *x = block + s->offset;
        size_t m = s->numel;
        switch (s->role) {
        case GS_TENSOR_NORM:
            for (size_t k = 0; k < m; k++) x[k] = 1.0f;
            break;
        case GS_TENSOR_BIAS:
            memset(x, 0, m * sizeof *x);
            break;
        case GS_TENSOR_A_LOG:
        case GS_TENSOR_DT_BIAS:
            init_decay(s, x, r);
            break;
        case GS_TENSOR_MATRIX:
            if (ends_with(s->name, "fg_gate_k") || ends_with(s->name, "pg_gate_k") || ends_with(s->name, "ffn_w2_k")) {
                memset(x, 0, m * sizeof *x);
            } else if (strcmp(s->name, "embedding") == 0 || ends_with(s->name, "read_W_o_k")) {
                for (size_t k = 0; k < m; k++) x[k] = (float)(0.02 * train_rng_normal(r));
            } else { /* flax lecun_normal: variance_scaling(1, fan_in, truncated_normal) */
                double std = sqrt(1.0 / (double)s->shape[0]) / 0.87962566103423978;
                for (size_t k = 0; k < m; k++) x[k] = (float)(std * train_rng_truncated_normal(r, -2.0, 2.0));
            }
            break;
        }
    }
}

void train_init_lm(const gs_config *c, float *block, train_rng *r) {
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    double out_std = 0.02 / sqrt(2.0 * (c->n_layers > 0 ? c->n_layers : 1));
    for (int i = 0; i < n; i++) {
        const gs_tensor_spec *s = &specs[i];
        float *x = block + s->offset;
        if (s->role == GS_TENSOR_NORM) {
            for (size_t k = 0; k < s->numel; k++) x[k] = 1.0f;
        } else if (s->role == GS_TENSOR_BIAS) {
            memset(x, 0, s->numel * sizeof *x);
        } else if (s->role == GS_TENSOR_A_LOG || s->role == GS_TENSOR_DT_BIAS) {
            init_decay(s, x, r);
        } else {
            int back = ends_with(s->name, "attn.W_o.weight") || ends_with(s->name, "ffn.w2.weight") ||
                       ends_with(s->name, "attn.o_proj.weight") || ends_with(s->name, "mlp.down_proj.weight") ||
                       (strncmp(s->name, "transformer.blocks.", 19) == 0 && /* the RT's; not its head transformer.ff_out */
                        (ends_with(s->name, ".attn_out.weight") || ends_with(s->name, ".ff_out.weight")));
            double std = back ? out_std : 0.02;
            for (size_t k = 0; k < s->numel; k++) x[k] = (float)(std * train_rng_normal(r));
        }
    }
}
