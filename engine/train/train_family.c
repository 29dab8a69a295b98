/* The training entries of the family table (train_family.h): thin adapters
 * from the trainer's untyped tape to each family's float32 tape. */
#include "engine/train/train_family.h"

#include "engine/arch/rt/rt.h"
#include "engine/train/seq_window.h"
#include "engine/train/train_ops.h"
#include "engine/train/train_window.h"

static void *gpn_new(const gpn_config *c, int B, int T) { return gpn_tape_new_f32(c, B, T); }
static void gpn_free(void *tp) { gpn_tape_free_f32(tp); }
static int gpn_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {
    return gpn_tape_forward_f32(tp, P, tok, NULL, NULL, NULL, grads, loss);
}
static void gpn_backward(void *tp, const float *P, float *grads, int bptt) { gpn_tape_backward_f32(tp, P, grads, bptt); }

/* the "model" keys of each family's training config (train_family.h) */
#define NO_CONV {"conv_size", GS_KEY_REFUSED, "belongs to \"gdn\" only"}
static const gs_train_key gpn_keys[] = {
    {"vocab_size", GS_KEY_REQUIRED, NULL}, {"d_state", GS_KEY_REQUIRED, NULL}, {"d_emb", GS_KEY_REQUIRED, NULL},
    {"d_ffn", GS_KEY_REQUIRED, NULL},      {"use_decoder_bias", GS_KEY_OPTIONAL, NULL}, NO_CONV, {NULL, 0, NULL}};
static const gs_train_key gpn_m_keys[] = {
    {"vocab_size", GS_KEY_REQUIRED, NULL}, {"d_state", GS_KEY_REQUIRED, NULL}, {"d_emb", GS_KEY_REQUIRED, NULL},
    {"d_ffn", GS_KEY_REQUIRED, NULL},      {"n_heads", GS_KEY_REQUIRED, NULL}, {"d_key", GS_KEY_REQUIRED, NULL},
    {"d_val", GS_KEY_REQUIRED, NULL},      {"n_layers", GS_KEY_OPTIONAL, NULL},
    {"use_decoder_bias", GS_KEY_OPTIONAL, NULL}, NO_CONV, {NULL, 0, NULL}};
/* the baselines: e = d_state and no decoder bias, so GPN's keys for them are errors, not ignored */
#define NO_GPN(FAM)                                                                                                  \
    {"d_emb", GS_KEY_REFUSED, "has no meaning for \"" FAM "\""},                                                    \
        {"use_decoder_bias", GS_KEY_REFUSED, "has no meaning for \"" FAM "\""}
#define NO_HEAD_SIZE(FAM)                                                                                            \
    {"d_key", GS_KEY_REFUSED, "has no meaning for \"" FAM "\" (its head size is d_state / n_heads)"},                \
        {"d_val", GS_KEY_REFUSED, "has no meaning for \"" FAM "\" (its head size is d_state / n_heads)"}
#define ATTENTION_KEYS(FAM)                                                                                          \
    {"vocab_size", GS_KEY_REQUIRED, NULL}, {"d_state", GS_KEY_REQUIRED, NULL}, {"d_ffn", GS_KEY_REQUIRED, NULL},      \
        {"n_heads", GS_KEY_REQUIRED, NULL}, {"n_layers", GS_KEY_OPTIONAL, NULL}, NO_GPN(FAM), NO_HEAD_SIZE(FAM),      \
        NO_CONV, {NULL, 0, NULL}
static const gs_train_key tpp_keys[] = {ATTENTION_KEYS("transformer++")};
static const gs_train_key rt_keys[] = {ATTENTION_KEYS("recurrent-transformer")};
static const gs_train_key gdn_keys[] = {
    {"vocab_size", GS_KEY_REQUIRED, NULL}, {"d_state", GS_KEY_REQUIRED, NULL}, {"d_ffn", GS_KEY_REQUIRED, NULL},
    {"n_heads", GS_KEY_REQUIRED, NULL},    {"d_key", GS_KEY_REQUIRED, NULL},   {"d_val", GS_KEY_REQUIRED, NULL},
    {"n_layers", GS_KEY_OPTIONAL, NULL},   {"conv_size", GS_KEY_OPTIONAL, NULL}, NO_GPN("gdn"), {NULL, 0, NULL}};

/* GPN: one layer, no memory heads, whatever the config says of them */
static void gpn_derive(gpn_config *c) {
    c->H = c->dk = c->dv = 0;
    c->n_layers = 1;
}
/* the baselines: the residual width is d_state, the tapes' RMSNorm eps (the sources' 1e-6) */
static void baseline_derive(gpn_config *c) {
    c->e = c->d;
    c->norm_eps = (float)TRAIN_RMS_EPS;
}
/* Transformer++: heads of d / H (validate refuses a remainder) */
static void tpp_derive(gpn_config *c) {
    baseline_derive(c);
    if (c->H > 0) c->dk = c->dv = c->d / c->H;
}
/* the paper's runs (docs/training.md): GELU, q/k LayerNorms, ALiBi 8, OLMo's eps, no clip_qkv */
static void rt_derive(gpn_config *c) {
    baseline_derive(c);
    c->activation = RT_ACT_GELU;
    c->qk_norm = 1;
    c->alibi_bias_max = 8.0f;
    c->clip_qkv = 0.0f;
    c->norm_eps = 1e-5f;
    if (c->H > 0) c->dk = c->dv = c->d / c->H;
}
static void gdn_defaults(gpn_config *c) { c->conv = 4; /* fla's conv_size */ }

/* GPN+M's one write; GDN's per layer (n_layers x n_heads numbers) */
#define INIT_WRITE {"init_write_A_log", "init_write_dt_bias"}
#define INIT_DECAY {"init_A_log", "init_dt_bias"}

const gs_train_i gs_train_gpn = {gpn_new,  gpn_free, gpn_forward, gpn_backward, gpn_tape_bytes, train_init_params, 1, 1,
                                 gpn_keys, NULL,     gpn_derive,  INIT_DECAY};
const gs_train_i gs_train_gpn_m = {gpn_new,    gpn_free, gpn_forward, gpn_backward, gpn_tape_bytes, train_init_params, 1, 1,
                                   gpn_m_keys, NULL,     NULL,        INIT_WRITE};

/* Transformer++, GDN and the Recurrent Transformer: one adapter set each, from one template */
#define SEQ_ADAPTERS(FAM)                                                                                            \
    static void *FAM##_new(const gpn_config *c, int B, int T) { return FAM##_tape_new_f32(c, B, T); }               \
    static void FAM##_free(void *tp) { FAM##_tape_free_f32(tp); }                                                    \
    static int FAM##_forward(void *tp, const float *P, const int32_t *tok, float *grads, double *loss) {             \
        return FAM##_tape_forward_f32(tp, P, tok, grads, loss);                                                      \
    }                                                                                                                \
    static void FAM##_backward(void *tp, const float *P, float *grads, int bptt) {                                   \
        (void)bptt; /* full window: the config reader refuses bptt > 0 */                                            \
        FAM##_tape_backward_f32(tp, P, grads);                                                                       \
    }
SEQ_ADAPTERS(tpp)
SEQ_ADAPTERS(gdn)
SEQ_ADAPTERS(rt)

const gs_train_i gs_train_tpp = {tpp_new,  tpp_free, tpp_forward, tpp_backward, tpp_tape_bytes, train_init_lm, 0, 2,
                                 tpp_keys, NULL,     tpp_derive,  INIT_DECAY};
const gs_train_i gs_train_gdn = {gdn_new,  gdn_free,     gdn_forward,     gdn_backward, gdn_tape_bytes, train_init_lm, 0, 2,
                                 gdn_keys, gdn_defaults, baseline_derive, INIT_DECAY};
const gs_train_i gs_train_rt = {rt_new,  rt_free, rt_forward, rt_backward, rt_tape_bytes, train_init_lm, 0, 2,
                                rt_keys, NULL,    rt_derive,  INIT_DECAY};
