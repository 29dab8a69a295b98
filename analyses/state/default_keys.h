/* The result keys of the registry row "default" (analyses/state/run_default.c): each key's name, meaning and unit,
 * declared once. Writers and readers use the GS_KEY_* constants; `gpnscope analyze --keys`
 * lists the table (analyses/result_keys.h). */
#ifndef GS_ANALYSES_STATE_DEFAULT_KEYS_H
#define GS_ANALYSES_STATE_DEFAULT_KEYS_H

#include "analyses/result_keys.h"
#include "analyses/shared_keys.h"

/* X(constant, name, meaning, unit): the keys only this analysis writes */
#define GS_DEFAULT_KEYS(X) \
    X(GS_KEY_NORM_RATIO, "norm_ratio", "||s_bar|| / mean ||s||", "") \
    X(GS_KEY_NORM_RATIO_LO, "norm_ratio_lo", "norm_ratio, 95% bootstrap interval over windows: low end", "") \
    X(GS_KEY_NORM_RATIO_HI, "norm_ratio_hi", "norm_ratio, 95% bootstrap interval: high end", "") \
    X(GS_KEY_BATCH_COS_MEAN, "batch_cos_mean", "mean cosine between the 8 batches' mean states", "cosine") \
    X(GS_KEY_BATCH_COS_STD, "batch_cos_std", "std of those cosines", "cosine") \
    X(GS_KEY_BATCH_COS_LO, "batch_cos_lo", "batch_cos_mean, 95% bootstrap interval: low end", "cosine") \
    X(GS_KEY_BATCH_COS_HI, "batch_cos_hi", "batch_cos_mean, 95% bootstrap interval: high end", "cosine") \
    X(GS_KEY_BATCH_COS_BY_DOCUMENT, "batch_cos_by_document", "1: the 8-batch test groups by document", "flag") \
    X(GS_KEY_DOCUMENTS, "documents", "documents among the windows read", "count") \
    X(GS_KEY_BATCH_COS_DOC_MEAN, "batch_cos_doc_mean", "mean cosine, 8 batches that share no document", "cosine") \
    X(GS_KEY_BATCH_COS_DOC_LO, "batch_cos_doc_lo", "batch_cos_doc_mean, 95% bootstrap interval: low end", "cosine") \
    X(GS_KEY_BATCH_COS_DOC_HI, "batch_cos_doc_hi", "batch_cos_doc_mean, 95% bootstrap interval: high end", "cosine") \
    X(GS_KEY_BATCH_COSINES, "batch_cosines", "series: the cosine of each batch pair", "cosine") \
    X(GS_KEY_BATCH_COS_RANDOM_MEAN, "batch_cos_random_mean", "mean cosine, 8 random batches of rows", "cosine") \
    X(GS_KEY_BATCH_COS_RANDOM_STD, "batch_cos_random_std", "std of those cosines", "cosine") \
    X(GS_KEY_PC1_COS, "pc1_cos", "|cos(s_bar, centered PC1)|", "cosine") \
    X(GS_KEY_MEAN_NORM2_OVER_LAMBDA1, "mean_norm2_over_lambda1", "||s_bar||^2 / top centered eigenvalue", "") \
    X(GS_KEY_EMERGENCE_T10, "emergence_t10", "cos(running mean at t = 10, s_bar)", "cosine") \
    X(GS_KEY_EMERGENCE_T100, "emergence_t100", "cos(running mean at t = 100, s_bar)", "cosine") \
    X(GS_KEY_TOP_SV_COS, "top_sv_cos", "cos(s_bar, first right singular vector)", "cosine") \
    X(GS_KEY_TOP_SV_COS_LO, "top_sv_cos_lo", "top_sv_cos, 95% bootstrap interval: low end", "cosine") \
    X(GS_KEY_TOP_SV_COS_HI, "top_sv_cos_hi", "top_sv_cos, 95% bootstrap interval: high end", "cosine") \
    X(GS_KEY_TOP_SV_COS_WINDOWS, "top_sv_cos_windows", "windows, when no top_sv_cos interval was drawn", "count") \
    X(GS_KEY_EMERGENCE, "emergence", "series: cos(running mean at t, s_bar) by position t", "cosine") \
    X(GS_KEY_EMBEDDING_OVERLAP, "embedding_overlap", "top-10 tokens shared by logits_emb and logits_bar", "count") \
    X(GS_KEY_EMBEDDING_COS, "embedding_cos", "cos(logits_emb, logits_bar)", "cosine") \
    X(GS_KEY_SPEARMAN_UNIGRAM, "spearman_unigram", "Spearman(logits_bar, recorded-text unigrams)", "rank correlation") \
    X(GS_KEY_SPEARMAN_UNIGRAM_TRAIN, "spearman_unigram_train", "Spearman(logits_bar, training-corpus unigrams)", "rank correlation") \
    X(GS_KEY_EMBEDDING_TOKENS, "embedding_tokens", "series: top tokens of the embedding's logits (x: token id)", "logit") \
    X(GS_KEY_DEFAULT_TOKENS, "default_tokens", "series: top tokens of logits_bar (x: token id)", "logit") \
    X(GS_KEY_LOGITS_BAR, "logits_bar", "vector: the logits of s_bar", "logit")

/* the keys of analyses/shared_keys.h this analysis writes too */
#define GS_DEFAULT_SHARED_KEYS(S) \
    S(GS_KEY_MEAN_NORM) \
    S(GS_KEY_WINDOWS)

GS_DEFAULT_KEYS(GS_KEY_DECLARE)


#endif
