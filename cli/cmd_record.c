/* gpnscope record: run the engine over a corpus and record, per token, the
 * NLL, entropy and top-1; per token and memory head, alpha, beta and the
 * memory norm; the chosen states as BLOBs; plus the vocabulary, the corpus's
 * unigram counts and the run's metadata. Writes are batched per group of
 * windows; SIGINT stops after the current group; --resume continues. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "io/corpora/corpus.h"
#include "parallel/job.h"
#include "record/recorder.h"
#include "record/shard.h"

static const char *help =
    "usage: gpnscope record --model M.safetensors --corpus C --db FILE [options]\n\n"
    "Run the model over the corpus's windows and record into a SQLite store (created\n"
    "if missing; a store holds any number of runs):\n"
    "  tokens      one row per token: window, position, token, NLL, entropy, top-1\n"
    "  head_steps  one row per token and memory head: alpha (decay), beta, memory norm\n"
    "  states      the chosen states at the chosen positions, as float32/float16 BLOBs\n"
    "plus the vocabulary, the corpus's unigram counts and the run's settings.\n"
    "The row at position t is the model's prediction of token t from the tokens\n"
    "before it; its state is s_pred(t), the predicted state the paper analyses.\n\n"
    "  --model FILE        checkpoint (safetensors; gpnscope convert makes one from a .pkl)\n"
    "  --tokenizer FILE    tokenizer.json or tokenizer.model for text and JSONL (default\n"
    "                      $GPNSCOPE_TOKENIZER, else the source tree's third_party/llama2-tokenizer.json)\n"
    "  --corpus PATH       text file or folder, .jsonl file, or folder of data_XXXX.bin shards\n"
    "  --db FILE           the store\n"
    "  --seq-len L         tokens per window (default 2048; per document: the longest, at most 2048)\n"
    "  --per-document      window i is document i (a file or --separator piece, a JSONL line, a\n"
    "                      shard's index entry): its first token from a fresh state, cut at\n"
    "                      --seq-len; nothing is recorded past its end; --windows, --skip and\n"
    "                      --sample pick documents\n"
    "  --per-line          --per-document with each line of a text one document (prompts)\n"
    "  --windows N|all     record N windows, or all of them (the default; 0: all)\n"
    "  --skip M            skip the first M windows (default 0)\n"
    "  --sample N          of the selected windows keep N chosen at random (with --seed)\n"
    "  --seed S            seed for --sample and sample:K positions (default 1)\n"
    "  --batch B           windows run in lockstep (default 16); results depend on it only at\n"
    "                      float rounding (~1e-7 relative: the engine's sums depend on which\n"
    "                      windows share a batch), so resume and compare runs with the same B\n"
    "  --sites LIST        the sites to record, comma-separated (gpnscope info MODEL lists\n"
    "                      them; docs/hooks.md): vector sites go to states (state.pred as\n"
    "                      'pred', state.ground as 'ground', others by name), mem.alpha,\n"
    "                      mem.beta, mem.norm to head_steps; blocks.*.NAME means every layer\n"
    "                      (default: state.pred and, with memory, mem.alpha,mem.beta,mem.norm)\n"
    "                      A per-head site takes a head selector, SITE[heads=LIST] with LIST\n"
    "                      head numbers and ranges A-B (blocks.0.attn.hook_pattern[heads=0,3]):\n"
    "                      only those heads' slices are stored, under that name\n"
    "  --states LIST       the older spelling: pred,ground | pred | ground | none (default\n"
    "                      pred), with the memory's per-head rows\n"
    "  --positions RULE    all | stride:K (positions 0, K, 2K, ...) | sample:K (K random\n"
    "                      positions per window) (default all)\n"
    "  --dtype f32|f16     state BLOB dtype (default f32; f16 halves the size)\n"
    "  --field NAME        JSONL text field (default text)\n"
    "  --separator STR     text: split files into documents on STR (default: one per file)\n"
    "  --device DEV        cpu | cuda | cuda:N (default cpu); docs/cuda.md\n"
    "  --precision P       CUDA GEMMs: auto | f32 | tf32 | bf16 (default auto: bf16 for a\n"
    "                      BF16 checkpoint, else f32); the run records it\n"
    "  --resume            continue the newest unfinished run in the store (same model\n"
    "                      and settings required); its rows will equal an uninterrupted run's\n"
    "  --quiet             no progress line (on a terminal: a bar, the tokens of the total\n"
    "                      and the time left; elsewhere a plain line every 10 s or more and\n"
    "                      one at the end)\n\n"
    "Under MPI (mpirun -n K or srun; docs/scale.md) rank r of K records batches\n"
    "[nb*r/K, nb*(r+1)/K) of the nb = ceil(N/B) batches of B windows (--batch) of the N\n"
    "selected, at their own window numbers (so its rows are a one-process run's), into its own\n"
    "store FILE.rank-r-of-K.db beside --db (keep it on a local disk: SQLite's WAL must\n"
    "not live on a network file system); rank 0 draws one progress line for the job\n"
    "and names the first failing rank; --resume continues every shard. gpnscope merge\n"
    "folds the shards into one store equal to a one-process recording.\n";

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

/* A bad integer is reported as the other usage errors are, through
 * gs_error and the job's one report (rank 0's), not printed by each rank. */
static int integer_refused;
static void refuse_integer(const char *cmd, const cli_opt *row, const char *text) {
    (void)cmd;
    gs_fail("--%s '%s': expected a non-negative integer%s", row->name, text, row->zero_word ? " or 'all'" : "");
    integer_refused = 1;
}

/* 0, or 1 after the help, 3 after a printed line, -1 with gs_error() */
static int parse_args(int argc, char **argv, gs_record_opts *o, int *quiet) {
    gs_record_opts_default(o);
    int per_document = 0, per_line = 0;
    const cli_opt opts[] = {
        {CLI_STRING("model", &o->model)},
        {CLI_STRING("tokenizer", &o->tokenizer)},
        {CLI_STRING("corpus", &o->corpus)},
        {CLI_STRING("db", &o->db)},
        {CLI_INTEGER("seq-len", &o->seq_len, 0, INT64_MAX, ""), .seen = &o->seq_len_given},
        {CLI_FLAG("per-document", &per_document)},
        {CLI_FLAG("per-line", &per_line)},
        {CLI_WINDOWS(&o->windows, 0, "")},
        {CLI_INTEGER("skip", &o->skip, 0, INT64_MAX, "")},
        {CLI_INTEGER("sample", &o->sample, 0, INT64_MAX, "")},
        {CLI_INTEGER("seed", &o->seed, 0, INT64_MAX, "")},
        {CLI_INTEGER("batch", &o->batch, 0, INT_MAX, "")},
        {CLI_STRING("states", &o->states), .seen = &o->states_given},
        {CLI_STRING("positions", &o->positions)},
        {CLI_STRING("sites", &o->sites)},
        {CLI_STRING("dtype", &o->dtype)},
        {CLI_STRING("field", &o->field)},
        {CLI_STRING("separator", &o->separator)},
        {CLI_STRING("device", &o->device)},
        {CLI_STRING("precision", &o->precision)},
        {CLI_FLAG("resume", &o->resume)},
        {CLI_FLAG("quiet", quiet)},
        {0}};
    integer_refused = 0;
    int parsed = cli_parse_options(&(cli_command_opts){"record", help, refuse_integer}, opts, argc, argv);
    if (parsed == 0) return 1;                      /* --help */
    if (parsed != CLI_GO_ON) return integer_refused ? -1 : 3; /* 3: printed */
    if (optind != argc) return gs_fail("unexpected argument '%s' (see --help)", argv[optind]);
    o->per_document = per_line ? 2 : per_document; /* --per-line is --per-document split on newlines */
    if (!o->model || !o->corpus || !o->db) return gs_fail("--model, --corpus and --db are required (see --help)");
    /* text and JSONL need a tokenizer: the same default as tokenize, eval, lens, patch and steer */
    if (!o->tokenizer && access(o->corpus, R_OK) == 0 && corpus_detect(o->corpus) != CORPUS_SHARDS &&
        !(o->tokenizer = cli_default_tokenizer()))
        return gs_fail("%s is a %s corpus and needs a tokenizer: pass --tokenizer FILE, set GPNSCOPE_TOKENIZER, or run "
                       "scripts/fetch-tokenizer.sh", o->corpus, corpus_format_name(corpus_detect(o->corpus)));
    if (o->seq_len < 2) return gs_fail("--seq-len %lld: at least 2", (long long)o->seq_len);
    if (o->batch < 1 || o->batch > 4096) return gs_fail("--batch %d: between 1 and 4096", o->batch);
    return gs_device_parse(o->device, o->precision, &o->dev);
}

typedef struct {
    progress pg;
    gs_job *job;
    int said; /* rank 0 has said its own failure */
} bar;

/* One line for the whole job: rank 0 draws the sum of every rank's progress. */
static void draw_job(bar *b) {
    int64_t done, total;
    gs_job_progress(b->job, &done, &total);
    b->pg.total = total;
    progress_update(&b->pg, done);
}

static void on_progress(void *ctx, int64_t done, int64_t total) {
    bar *b = ctx;
    gs_job_report(b->job, done, total);
    if (b->job->rank == 0) draw_job(b);
}

/* Rank 0 waiting for the others: a signal now is mpirun ending the job
 * (one rank was killed or failed): say so, since the outcome will not come,
 * naming the ranks still recording by their last progress (a killed rank
 * is one of them; rank 0 itself only waited), not rank 0. */
static int wait_for_ranks(void *ctx) {
    bar *b = ctx;
    draw_job(b);
    if (!stop_requested) return 0;
    if (!b->said) {
        char who[256] = "";
        int n = 0;
        size_t at = 0;
        for (int r = 1; b->job->done && r < b->job->size && at + 16 < sizeof who; r++)
            if (!b->job->total[r] || b->job->done[r] < b->job->total[r])
                at += (size_t)snprintf(who + at, sizeof who - at, "%s%d", n++ ? ", " : "", r);
        fprintf(stderr, "gpnscope record: rank%s %s of %d had not finished when the job was stopped (mpirun ends every "
                "rank when one fails or is killed: a killed rank says nothing itself); every shard is resumable: run "
                "the same command again with --resume\n", n == 1 ? "" : "s", n ? who : "?", b->job->size);
    }
    return 130;
}

/* "N windows x L tokens", or per document "N documents of at most L
 * tokens", where L came from, and how many documents were cut at L. */
static void describe_windows(const gs_record_opts *o, const gs_record_result *res, int64_t n, char *out, size_t size) {
    if (!o->per_document) {
        snprintf(out, size, "%lld windows x %lld tokens", (long long)n, (long long)res->seq_len);
        return;
    }
    const char *unit = o->per_document == 2 ? "line" : "document";
    int at = snprintf(out, size, "%lld %s%s of at most %lld tokens%s", (long long)n, unit, n == 1 ? "" : "s", (long long)res->seq_len,
                      o->seq_len_given ? "" : " (the longest; --seq-len sets it)");
    if (res->n_cut && at > 0 && (size_t)at < size)
        snprintf(out + at, size - (size_t)at, "; %lld %s%s longer, cut at %lld: %lld tokens not recorded", (long long)res->n_cut,
                 unit, res->n_cut == 1 ? " was" : "s were", (long long)res->seq_len, (long long)res->cut_tokens);
}

/* What happened, in one line (without the "gpnscope record: " prefix);
 * returns the exit code. A shard's line names its file. */
static int outcome_line(int rc, const gs_record_opts *o, const gs_record_result *res, int sharded, char *line,
                        size_t size) {
    char q[4200], what[512];
    switch (rc) {
    case 0:
        describe_windows(o, res, res->end - res->begin, what, sizeof what);
        snprintf(line, size, "recorded run %lld into %s: %s", (long long)res->run, o->db, what);
        return 0;
    case 130:
        if (sharded)
            snprintf(line, size, "%s: stopped by a signal after %lld of its %lld windows; every shard is resumable: run "
                     "the same command again with --resume", o->db, (long long)(res->windows_done - res->begin),
                     (long long)(res->end - res->begin));
        else
            snprintf(line, size, "interrupted after %lld of %lld windows; run %lld is resumable with --resume",
                     (long long)res->windows_done, (long long)res->n_windows, (long long)res->run);
        return 130;
    case 2: snprintf(line, size, "%s", gs_error()); return 2;
    default:
        if (res->resumable && sharded)
            snprintf(line, size, "%s: %s; its %lld windows are kept: run the same command again with --resume", o->db,
                     gs_error(), (long long)(res->windows_done - res->begin));
        else if (res->resumable)
            snprintf(line, size, "%s; run %lld keeps its %lld windows: continue it with the same command and --resume "
                     "(gpnscope record ... --db %s --resume)", gs_error(), (long long)res->run,
                     (long long)res->windows_done, gs_shell_quote(o->db, q, sizeof q));
        else snprintf(line, size, "%s", gs_error());
        return 1;
    }
}

int cmd_record(int argc, char **argv) {
    gs_record_opts o;
    int quiet = 0;
    gs_job job;
    if (gs_job_start(&job)) { fprintf(stderr, "gpnscope record: %s\n", gs_error()); return 1; }
    int prc = parse_args(argc, argv, &o, &quiet);
    char shard[4096];
    const char *study = o.db;
    if (prc == 0 && job.mpi) { /* rank r of K records its share into its own shard */
        if (gs_shard_path(o.db, job.rank, job.size, shard, sizeof shard)) prc = -1;
        o.db = shard;
        o.shard = job.rank;
        o.n_shards = job.size;
    }
    if (prc == 1 || prc == 3) {
        gs_job_end(&job);
        return prc == 1 ? 0 : 2;
    }
    char line[GS_ERROR_MAX + 4400];
    int rc;
    gs_record_result res;
    memset(&res, 0, sizeof res);
    bar b;
    progress_start(&b.pg, "record", "tok", 0);
    /* not on a terminal (a log, CI, a notebook's subprocess): a plain line every 10 s or more and one at
     * the end, counting windows of seq_len tokens (documents differ in length: only their tokens) */
    progress_plain(&b.pg, 10, prc == 0 && !o.per_document ? o.seq_len : 0, "windows", "tokens");
    b.job = &job;
    b.said = 0;
    if (quiet || job.rank) b.pg.enabled = 0;
    if (prc) {
        snprintf(line, sizeof line, "%s", prc == 2 ? "bad usage" : gs_error());
        rc = 2;
    } else {
        o.code_version = GPNSCOPE_VERSION;
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        rc = outcome_line(gs_record(&o, on_progress, &b, &stop_requested, &res), &o, &res, job.mpi, line, sizeof line);
    }
    /* a plain line is printed at the end of a complete recording only: a stopped or failed one says how
     * far it got in its one line (a terminal's line is ended either way) */
    if (rc != 0 && b.pg.enabled == PROGRESS_PLAIN) b.pg.enabled = PROGRESS_OFF;
    if (!job.mpi) {
        if (rc == 0 || rc == 130) progress_end(&b.pg, res.tokens);
        if (rc == 0) printf("%s\n", line);
        else fprintf(stderr, "gpnscope record: %s\n", line);
        gs_job_end(&job);
        return rc;
    }
    /* the job: rank 0 waits for every rank (drawing their progress), then says the outcome once */
    gs_job_report(&job, res.tokens, res.tokens_total);
    /* rank 0's own failure is said at once: when a rank is killed, mpirun stops
     * the others and the outcome never arrives */
    if (job.rank == 0 && rc) {
        fprintf(stderr, "gpnscope record: rank 0 of %d: %s\n", job.size, line);
        b.said = 1;
    }
    int failed, n_failed;
    char msg[sizeof line];
    int own = rc;
    rc = gs_job_outcome(&job, rc, line, wait_for_ranks, &b, &failed, &n_failed, msg, sizeof msg);
    if (rc && failed < 0) return rc; /* rank 0 gave up waiting: mpirun is ending the job (no MPI_Finalize) */
    if (job.rank == 0 && (rc == 0 || !(own && failed == 0))) {
        if (rc != 0 && b.pg.enabled == PROGRESS_PLAIN) b.pg.enabled = PROGRESS_OFF; /* as above */
        int64_t done, total;
        gs_job_progress(&job, &done, &total);
        progress_end(&b.pg, done);
        if (rc == 0) {
            char first[4096], last[4096];
            gs_shard_path(study, 0, job.size, first, sizeof first);
            gs_shard_path(study, job.size - 1, job.size, last, sizeof last);
            char what[512];
            describe_windows(&o, &res, res.n_windows, what, sizeof what);
            printf("recorded %s into %d shard%s (%s%s%s); fold them into one store with gpnscope merge %s SHARD...\n", what,
                   job.size, job.size > 1 ? "s" : "", first, job.size > 1 ? " ... " : "", job.size > 1 ? last : "", study);
        } else if (n_failed > 1) {
            fprintf(stderr, "gpnscope record: rank %d of %d: %s (and %d more ranks failed)\n", failed, job.size, msg,
                    n_failed - 1);
        } else {
            fprintf(stderr, "gpnscope record: rank %d of %d: %s\n", failed, job.size, msg);
        }
    }
    gs_job_end(&job);
    return rc;
}
