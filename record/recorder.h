/* The recorder: run a model over a corpus's windows (the runner,
 * probes/runner.h) and write the chosen sites into a store (store/), the
 * run's settings and sites included; resumable, one process per run
 * (store/lock.h). `gpnscope record` and the demo call it; it prints nothing.
 *
 * Sites: `sites` (comma-separated, docs/hooks.md), or the older `states`
 * spelling (pred, ground, pred,ground, none, with the memory's per-head
 * rows); neither: the family's state site and its per-head rows. */
#ifndef GS_RECORD_RECORDER_H
#define GS_RECORD_RECORDER_H

#include <signal.h>
#include <stdint.h>

#include "engine/engine.h"

typedef struct {
    const char *model, *tokenizer, *corpus, *db, *states, *sites, *positions, *dtype, *field, *separator, *device,
        *precision;
    gs_device dev;   /* parsed from device and precision by gs_record */
    int64_t seq_len, windows, skip, sample;
    uint64_t seed;
    int batch, resume, states_given;
    /* --per-document (1) / --per-line (2): window i is document (line) i
     * from a fresh state, cut at seq_len; nothing recorded past its end.
     * seq_len_given 0: seq_len is the longest document, at most 2048. */
    int per_document, seq_len_given;
    const char *recorded; /* set by gs_record: the vector sites' kinds */
    const char *code_version;
    /* a rank's share of an MPI job (docs/scale.md): of the N selected windows
     * in batches of B, batches [nb*shard/n_shards, nb*(shard+1)/n_shards) of
     * the nb = ceil(N/B) (store_shard_range), at their own window numbers;
     * the run's settings say so ("shard"). n_shards 0: every window. */
    int shard, n_shards;
    /* a control of run control_of (gpnscope controls; docs/controls.md): "untrained" (the model given is
     * the family's initialisation) or "shuffled" (each window's tokens after its first permuted, from
     * control_seed and the window's index); the settings say so. NULL: an ordinary run. */
    const char *control;
    int64_t control_of;
    uint64_t control_seed;
} gs_record_opts;

typedef struct {
    int64_t run;          /* -1 when no run was created */
    int64_t first;        /* the first window this call recorded (> 0 when resumed) */
    int64_t windows_done; /* the run's complete windows */
    int64_t n_windows;
    int resumable;        /* a failed run that --resume can continue */
    int64_t begin, end;   /* the windows this recording covers ([0, n_windows) unless a shard) */
    int64_t seq_len;      /* the window length used (per document: maybe chosen) */
    int64_t n_cut, cut_tokens; /* per document: selected documents cut at seq_len, tokens past it */
    int64_t tokens, tokens_total; /* real tokens this call recorded, of those it was to record */
} gs_record_result;

/* Tokens recorded by this call so far, of total (per document: real
 * tokens, not the padding). */
typedef void (*gs_record_progress)(void *ctx, int64_t tokens_done, int64_t tokens_total);

/* Returns 0 (complete), 130 (stopped by *stop between batches: resumable),
 * 2 (bad options: sites, positions, dtype, device), or 1 (failure); on 1 and 2
 * gs_error() says why. Defaults as `gpnscope record --help` states them. */
int gs_record(const gs_record_opts *o, gs_record_progress progress, void *ctx, const volatile sig_atomic_t *stop,
              gs_record_result *out);
void gs_record_opts_default(gs_record_opts *o);

#endif
