/* The registry row "default" (docs/analyses.md, 2): the mean direction, its
 * stability over batches, its emergence, and (with the model) its decode to
 * default tokens against the unigram counts (analyses/state/default_dir.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/report.h"
#include "analyses/result_writer.h"
#include "analyses/documents.h"
#include "analyses/rows.h"
#include "analyses/shards.h"
#include "analyses/state/train_counts.h"
#include "base/error.h"
#include "engine/arch/family.h"
#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"
#include "store/store.h"

int gs_default_row_inputs(store *st, int64_t run, const store_run_info *info, const gs_analyze_opts *o,
                          gs_analysis *a, gs_default_inputs *in) {
    memset(in, 0, sizeof *in);
    int64_t *counts = NULL, nv = 0;
    /* the decode half reads the logits as a vocabulary: a model that is not a
     * language model (an MLP-LDRU classifier) gets the mean direction only */
    const gs_family *fam = a->model ? gs_family_of(&a->model->cfg) : NULL;
    in->lm = fam && !fam->not_lm ? a->model : NULL;
    if (fam && !in->lm)
        gs_analysis_note(a, "default direction: the model is %s, not a language model: its mean direction without default tokens",
                         fam->not_lm);
    const int64_t V = in->lm ? in->lm->cfg.V : 0;
    if (in->lm) {
        if (store_read_unigram_counts(st, run, &counts, &nv) != 0) {
            gs_analysis_note(a, "no unigram counts (%s): Spearman skipped", gs_error());
        } else if (nv > V) {
            gs_analysis_note(a, "unigram counts cover %lld tokens, the model's vocabulary %lld: Spearman skipped",
                             (long long)nv, (long long)V);
        } else {
            in->unigram = calloc((size_t)V, sizeof *in->unigram);
            if (!in->unigram) { free(counts); return gs_fail("out of memory"); }
            for (int64_t i = 0; i < nv; i++) in->unigram[i] = (double)counts[i];
            in->V = V;
        }
        free(counts);
    }
    gs_default_opts_default(&in->opts);
    in->opts.seed = o->seed;
    in->opts.boot = o->boot;
    if (in->lm && o->train_corpus) {
        const char *tok = info->tokenizer_path[0] ? info->tokenizer_path : NULL;
        if (gs_train_unigram_counts(o->train_corpus, tok, V, &in->train) != 0) {
            gs_default_inputs_free(in);
            return -1;
        }
        in->opts.train_unigram = in->train;
        in->opts.train_unigram_len = V;
    }
    snprintf(a->recorded_corpus, sizeof a->recorded_corpus, "%s", info->corpus_path);
    /* the windows' documents, for batches that share none (a run without token rows: unknown, and said) */
    if (gs_doc_map_read(&st, &run, 1, in->lm ? (int)V : 0, &in->docs) == 0 && in->docs.n > 0) in->opts.docs = &in->docs;
    else gs_clear_error();
    return 0;
}

void gs_default_inputs_free(gs_default_inputs *in) {
    free(in->unigram);
    free(in->train);
    gs_doc_map_free(&in->docs);
    memset(in, 0, sizeof *in);
}

int gs_default_row_run(gs_analysis_ctx *c) {
    gs_default_inputs in;
    if (gs_default_row_inputs(c->st, c->run, c->info, c->o, c->a, &in)) return -1;
    int rc = gs_default_dir_run(c->src, &c->a->geometry, in.lm, in.unigram, in.V, &in.opts, &c->a->default_dir);
    gs_default_inputs_free(&in);
    if (rc != 0) { gs_fail_context("default direction: "); return -1; }
    return 0;
}

int gs_default_row_write(gs_result_writer *w, const gs_analysis *a, const gs_analyze_opts *o) {
    const gs_default_dir *r = &a->default_dir;
    char tc[512], dex[600];
    snprintf(tc, sizeof tc, "%s", o->train_corpus ? o->train_corpus : "");
    for (char *c = tc; *c; c++)
        if (*c == '\\' || *c == '"' || (unsigned char)*c < 0x20) *c = '_'; /* keep the settings valid JSON */
    snprintf(dex, sizeof dex, "\"batches\":8,\"train_corpus\":\"%s\"", tc);
    if (gs_result_begin(w, gs_analysis_stored_name(GS_AN_DEFAULT), o, dex) != 0) return -1;
    gs_result_scalar(w, GS_KEY_MEAN_NORM, r->mean_norm, "||s_bar||");
    gs_result_scalar(w, GS_KEY_NORM_RATIO, r->norm_ratio, "||s_bar|| / mean ||s||");
    if (!isnan(r->norm_ratio_lo)) {
        gs_result_scalar(w, GS_KEY_NORM_RATIO_LO, r->norm_ratio_lo, "95% bootstrap interval over windows");
        gs_result_scalar(w, GS_KEY_NORM_RATIO_HI, r->norm_ratio_hi, NULL);
    }
    gs_result_scalar(w, GS_KEY_WINDOWS, (double)r->n_windows, r->interval_note[0] ? r->interval_note : NULL);
    if (r->stability_valid) {
        gs_result_scalar(w, GS_KEY_BATCH_COS_MEAN, r->stab_mean,
                         r->batches_by_window ? "8 batches of whole windows" : "8 batches of rows (fewer than 8 windows)");
        gs_result_scalar(w, GS_KEY_BATCH_COS_STD, r->stab_std, NULL);
        if (!isnan(r->stab_lo)) {
            char note[160];
            snprintf(note, sizeof note, "95%% bootstrap interval: %d resamples of the windows within each batch", r->boot);
            gs_result_scalar(w, GS_KEY_BATCH_COS_LO, r->stab_lo, note);
            gs_result_scalar(w, GS_KEY_BATCH_COS_HI, r->stab_hi, NULL);
        }
        /* which grouping decides the 8-batch test, and why, as its note (issue 39.2) */
        gs_result_scalar(w, GS_KEY_BATCH_COS_BY_DOCUMENT, r->doc_valid ? 1 : 0, r->doc_note);
        if (r->n_docs > 0) gs_result_scalar(w, GS_KEY_DOCUMENTS, (double)r->n_docs, "documents among the windows read");
        if (r->doc_valid) {
            gs_result_scalar(w, GS_KEY_BATCH_COS_DOC_MEAN, r->doc_mean,
                             "8 batches that share no document: document i in batch i mod 8");
            gs_result_scalar(w, GS_KEY_BATCH_COS_DOC_LO, r->doc_lo, "95% bootstrap interval: each batch's documents resampled");
            gs_result_scalar(w, GS_KEY_BATCH_COS_DOC_HI, r->doc_hi, NULL);
        }
        double *x = gs_result_iota(r->n_pairs, 0);
        gs_result_series(w, GS_KEY_BATCH_COSINES, x, r->batch_cos, NULL, r->n_pairs);
        free(x);
    }
    if (r->random_valid) {
        gs_result_scalar(w, GS_KEY_BATCH_COS_RANDOM_MEAN, r->rand_mean, "8 random batches of rows (seeded), not of windows");
        gs_result_scalar(w, GS_KEY_BATCH_COS_RANDOM_STD, r->rand_std, NULL);
    }
    gs_result_scalar(w, GS_KEY_PC1_COS, r->pc1_cos, "|cos(s_bar, the centered PC1)|: top eigenvector of the covariance");
    gs_result_scalar(w, GS_KEY_MEAN_NORM2_OVER_LAMBDA1, r->mean_norm2_over_lambda1,
                     "||s_bar||^2 / top centered eigenvalue: above 1 the uncentered top singular vector leans to s_bar "
                     "by construction");
    if (r->has_t10) gs_result_scalar(w, GS_KEY_EMERGENCE_T10, r->emerg_t10, NULL);
    if (r->has_t100) gs_result_scalar(w, GS_KEY_EMERGENCE_T100, r->emerg_t100, NULL);
    gs_result_scalar(w, GS_KEY_TOP_SV_COS, r->top_sv_cos, "cos(s_bar, first right singular vector)");
    if (!isnan(r->top_sv_lo)) {
        char note[160];
        snprintf(note, sizeof note, "95%% bootstrap interval: %d resamples of all windows (each one's top singular "
                 "vector)", r->boot);
        gs_result_scalar(w, GS_KEY_TOP_SV_COS_LO, r->top_sv_lo, note);
        gs_result_scalar(w, GS_KEY_TOP_SV_COS_HI, r->top_sv_hi, NULL);
    } else if (r->top_sv_note[0]) {
        gs_result_scalar(w, GS_KEY_TOP_SV_COS_WINDOWS, (double)r->n_windows, r->top_sv_note);
    }
    double *x = gs_result_iota(r->emerg_len, 1);
    gs_result_series(w, GS_KEY_EMERGENCE, x, r->emergence, NULL, r->emerg_len);
    free(x);
    if (r->has_decode) {
        gs_result_scalar(w, GS_KEY_EMBEDDING_OVERLAP, r->emb_overlap, "of the top 10");
        gs_result_scalar(w, GS_KEY_EMBEDDING_COS, r->emb_cos, "cos(logits_emb, logits_bar)");
        char cn[700];
        snprintf(cn, sizeof cn, "recorded corpus %s (not the training corpus); average ranks for ties",
                 a->recorded_corpus[0] ? a->recorded_corpus : "(path unknown)");
        if (r->has_unigram && r->spearman_defined) gs_result_scalar(w, GS_KEY_SPEARMAN_UNIGRAM, r->spearman, cn);
        snprintf(cn, sizeof cn, "training corpus %s; average ranks for ties", o->train_corpus ? o->train_corpus : "?");
        if (r->has_train_unigram && r->spearman_train_defined)
            gs_result_scalar(w, GS_KEY_SPEARMAN_UNIGRAM_TRAIN, r->spearman_train, cn);
        for (int which = 0; which < 2 && w->st && w->rc == 0; which++) { /* labelled series: the store's alone */
            const int *top = which ? r->top_emb : r->top;
            const float *lg = which ? r->logits_emb : r->logits_bar;
            double xs[GS_TOPK], ys[GS_TOPK];
            char text[GS_TOPK][128];
            const char *labels[GS_TOPK];
            int n = 0;
            for (int i = 0; i < GS_TOPK && top[i] >= 0; i++, n++) {
                xs[i] = top[i];
                ys[i] = lg[top[i]];
                labels[i] = store_token_piece(w->st, a->run_id, top[i], text[i], sizeof text[i]) == 0 ? text[i] : NULL;
            }
            gs_clear_error();
            gs_result_series(w, which ? GS_KEY_EMBEDDING_TOKENS : GS_KEY_DEFAULT_TOKENS, xs, ys, labels, n);
        }
        if (w->st && w->rc == 0) w->rc = store_analysis_vector(w->st, w->id, GS_KEY_LOGITS_BAR, r->logits_bar, r->V);
    }
    return gs_result_end(w);
}

void gs_default_row_json(cJSON *j, const gs_analysis *a) {
    const gs_default_dir *r = &a->default_dir;
    cJSON_AddNumberToObject(j, "mean_norm", r->mean_norm);
    cJSON_AddNumberToObject(j, "norm_ratio", r->norm_ratio);
    if (r->stability_valid) {
        cJSON_AddNumberToObject(j, "batch_cos_mean", r->stab_mean);
        cJSON_AddNumberToObject(j, "batch_cos_std", r->stab_std);
        cJSON_AddItemToObject(j, "batch_cosines", cJSON_CreateDoubleArray(r->batch_cos, r->n_pairs));
        cJSON_AddStringToObject(j, "batch_grouping", r->doc_valid ? "documents" : "consecutive windows");
        cJSON_AddStringToObject(j, "batch_grouping_note", r->doc_note);
        if (r->n_docs > 0) cJSON_AddNumberToObject(j, "documents", (double)r->n_docs);
        if (r->doc_valid) cJSON_AddNumberToObject(j, "batch_cos_doc_mean", r->doc_mean);
        if (r->doc_valid && !isnan(r->doc_lo)) {
            cJSON_AddNumberToObject(j, "batch_cos_doc_lo", r->doc_lo);
            cJSON_AddNumberToObject(j, "batch_cos_doc_hi", r->doc_hi);
        }
    }
    if (r->has_decode) {
        cJSON_AddItemToObject(j, "default_tokens", cJSON_CreateIntArray(r->top, GS_TOPK));
        cJSON_AddItemToObject(j, "embedding_tokens", cJSON_CreateIntArray(r->top_emb, GS_TOPK));
        cJSON_AddNumberToObject(j, "embedding_overlap", r->emb_overlap);
        cJSON_AddNumberToObject(j, "embedding_cos", r->emb_cos);
        /* spearman_unigram: against the recorded corpus; _train: against the training corpus */
        if (r->has_unigram && r->spearman_defined) cJSON_AddNumberToObject(j, "spearman_unigram", r->spearman);
        if (r->has_train_unigram && r->spearman_train_defined)
            cJSON_AddNumberToObject(j, "spearman_unigram_train", r->spearman_train);
    }
    if (r->has_t10) cJSON_AddNumberToObject(j, "emergence_t10", r->emerg_t10);
    if (r->has_t100) cJSON_AddNumberToObject(j, "emergence_t100", r->emerg_t100);
    cJSON_AddNumberToObject(j, "top_sv_cos", r->top_sv_cos);
    if (!isnan(r->top_sv_lo)) { /* its 95% interval over windows */
        cJSON_AddNumberToObject(j, "top_sv_cos_lo", r->top_sv_lo);
        cJSON_AddNumberToObject(j, "top_sv_cos_hi", r->top_sv_hi);
    }
    if (r->pc1_cos == r->pc1_cos) cJSON_AddNumberToObject(j, "pc1_cos", r->pc1_cos);
    if (r->mean_norm2_over_lambda1 == r->mean_norm2_over_lambda1)
        cJSON_AddNumberToObject(j, "mean_norm2_over_lambda1", r->mean_norm2_over_lambda1);
    if (r->random_valid) {
        cJSON_AddNumberToObject(j, "batch_cos_random_mean", r->rand_mean);
        cJSON_AddNumberToObject(j, "batch_cos_random_std", r->rand_std);
    }
    cJSON_AddItemToObject(j, "emergence", cJSON_CreateDoubleArray(r->emergence, (int)r->emerg_len));
}

void gs_default_row_print(FILE *f, const gs_analysis *a, const gs_token_text *tokens) {
    gs_report_default_dir(f, &a->default_dir, tokens ? tokens->text : NULL, tokens ? tokens->ctx : NULL);
}

/* ---------- over the shards (gs_analysis_ctx.shards): the sums of each rank, added up ---------- */

/* The windows among shard s's first `take` states: the default direction
 * assigns batches by a window's place in the whole job. */
static int64_t count_windows(const store_shard *s, const char *kind, int skip, int limit, int64_t take) {
    store *st = store_open(s->path, STORE_READ);
    if (!st) return -1;
    int64_t n = store_count_windows_in_prefix(st, s->run, kind, skip, limit, take);
    store_close(st);
    return n;
}

/* The default direction: each of this rank's shards read on its own, with its
 * first window's and state's places in the job, adds its batch and emergence
 * sums; the sums are added up and rank 0 finishes, with the decode to default
 * tokens when the model is a language model (in: gs_default_row_inputs). */
static int default_part(gs_job *job, const gs_shard_input *c, const int64_t *all_take, const gs_default_inputs *in,
                        gs_analysis *a) {
    const int n = c->n;
    gs_geometry *g = &a->geometry;
    /* the documents of every shard's windows in rank order (a document may run across two shards), read by
     * every rank alike, for the batches that share no document: the merged store's documents */
    gs_default_opts op = in->opts;
    gs_doc_map dm = {0};
    {
        store **sts = calloc((size_t)n, sizeof *sts);
        int64_t *runs = calloc((size_t)n, sizeof *runs);
        int opened = 0, okd = sts && runs;
        for (; okd && opened < n; opened++) {
            runs[opened] = c->shards[opened].run;
            if (!(sts[opened] = store_open(c->shards[opened].path, STORE_READ))) okd = 0;
        }
        okd = okd && gs_doc_map_read(sts, runs, n, in->lm ? in->lm->cfg.V : 0, &dm) == 0 && dm.n > 0;
        if (!okd) gs_clear_error();
        op.docs = okd ? &dm : NULL;
        for (int i = 0; sts && i < opened; i++) store_close(sts[i]);
        free(sts);
        free(runs);
    }
    int64_t *wins = calloc((size_t)n, sizeof *wins);
    gs_default_sums sums = {0};
    int ok = wins && gs_default_sums_init(&sums, g->d, g->n_windows, &op) == 0, rc = -1;
    if (!wins) gs_fail("out of memory");
    for (int i = 0; ok && i < n; i++)
        if (c->take[i] > 0 && (wins[i] = count_windows(&c->shards[i], c->kind, c->skip, c->limit, c->take[i])) < 0) ok = 0;
    if (gs_shards_agree(job, ok) || gs_job_sum_i64(job, wins, n)) goto out;
    int64_t win0 = 0, row0 = 0;
    for (int i = 0; ok && i < n; win0 += wins[i], row0 += all_take[i], i++) {
        if (c->take[i] <= 0) continue;
        store *st = store_open(c->shards[i].path, STORE_READ);
        gs_state_source *src = st ? gs_store_source_open(st, c->shards[i].run, c->kind, c->skip, c->take[i]) : NULL;
        if (src) gs_store_source_limit(src, c->limit);
        if (!src || gs_default_dir_accumulate(src, g, &op, win0, row0, &sums)) {
            gs_fail_context("%s: ", c->shards[i].path);
            ok = 0;
        }
        gs_store_source_close(src);
        store_close(st);
    }
    if (gs_shards_agree(job, ok)) goto out;
    int64_t cap = sums.cap;
    if (gs_job_max_i64(job, &cap, 1)) goto out;
    if (cap > sums.cap) { /* the longest window may be another rank's */
        double *e = realloc(sums.emergence, (size_t)cap * sizeof *e);
        if (e) sums.emergence = e;
        int64_t *en = e ? realloc(sums.emergence_n, (size_t)cap * sizeof *en) : NULL;
        if (en) sums.emergence_n = en;
        ok = e && en;
        for (int64_t t = sums.cap; ok && t < cap; t++) sums.emergence[t] = 0, sums.emergence_n[t] = 0;
        if (ok) sums.cap = cap;
        else gs_fail("out of memory");
    }
    if (gs_shards_agree(job, ok)) goto out;
    const int64_t bd = (int64_t)sums.n_batches * sums.d;
    int64_t totals[2] = {sums.n, sums.n_windows};
    if (gs_job_sum_f64(job, sums.bsum, bd) || gs_job_sum_f64(job, sums.rsum, bd) ||
        gs_job_sum_i64(job, sums.bcount, sums.n_batches) || gs_job_sum_i64(job, sums.rcount, sums.n_batches) ||
        gs_job_sum_f64(job, sums.emergence, cap) || gs_job_sum_i64(job, sums.emergence_n, cap) ||
        gs_job_sum_i64(job, totals, 2) ||
        (sums.wsum && (gs_job_sum_f64(job, sums.wsum, sums.win_total * sums.d) ||
                       gs_job_sum_f64(job, sums.wnorm, sums.win_total))) ||
        (sums.wgram && gs_job_sum_f64(job, sums.wgram, sums.win_total * sums.d * sums.d)) ||
        (sums.wid && gs_job_sum_i64(job, sums.wid, sums.win_total)))
        goto out;
    sums.n = totals[0];
    sums.n_windows = totals[1];
    rc = job->rank ? 0 : gs_default_dir_finish(&sums, g, in->lm, in->unigram, in->V, &op, &a->default_dir);
    if (gs_shards_agree(job, rc == 0)) rc = -1; /* the ranks go on to the next part together, or none does */
out:
    gs_default_sums_free(&sums);
    gs_doc_map_free(&dm);
    free(wins);
    return rc;
}

int gs_default_row_run_shards(gs_analysis_ctx *c) {
    const gs_shard_input *in = c->shards;
    gs_default_inputs din = {0};
    int rc = gs_shards_agree(in->job, gs_default_row_inputs(c->st, c->run, c->info, c->o, c->a, &din) == 0) ||
                     default_part(in->job, in, in->all_take, &din, c->a)
                 ? -1
                 : 0;
    if (rc) gs_fail_context("default direction: ");
    gs_default_inputs_free(&din);
    return rc;
}
