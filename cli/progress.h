/* A progress line on stderr for long commands: done/total, rate, ETA. On a
 * terminal it is redrawn in place (at most ~10 times a second). Elsewhere (a
 * log file, CI, a notebook's subprocess) nothing, unless the command asks
 * for plain lines with progress_plain: then one line of plain text (no
 * carriage return, no escape codes) at most every few seconds and one at the
 * end. */
#ifndef GS_CLI_PROGRESS_H
#define GS_CLI_PROGRESS_H

#include <stdint.h>

enum { PROGRESS_OFF = 0, PROGRESS_TERMINAL = 1, PROGRESS_PLAIN = 2 };

typedef struct {
    const char *label, *unit; /* "record", "tok" */
    int64_t total;            /* 0: unknown */
    double started, last_draw;
    int enabled;              /* PROGRESS_OFF, _TERMINAL or _PLAIN; a caller sets OFF for --quiet */
    char extra[96];           /* appended text, e.g. "loss 3.21" */
    /* plain lines (progress_plain) */
    double every;             /* seconds between plain lines */
    int64_t chunk;            /* units per counted item (a window's tokens); 0: none */
    const char *chunk_unit, *unit_word; /* "windows", "tokens" */
    /* steps (progress_step): named parts run one after another */
    int step, steps;
    double step_started;
    char step_name[64];       /* the part running */
    char step_times[512];     /* "geometry 3 s, default 1 s, ..." of the parts done */
} progress;

void progress_start(progress *p, const char *label, const char *unit, int64_t total);
/* When stderr is not a terminal: plain lines, at most every `every` seconds
 * (the first after `every`) and one at the end, e.g. "record: 12/64 windows,
 * 24,576 tokens, 410 tok/s, about 2 min left"; the environment's
 * GPNSCOPE_PROGRESS_SECONDS replaces `every` (0: a line at each update); chunk units make one
 * chunk_unit (0: no count of those), unit_word is the unit in full. Call
 * after progress_start; on a terminal it changes nothing. */
void progress_plain(progress *p, double every, int64_t chunk, const char *chunk_unit, const char *unit_word);
/* done: units so far in this run (the rate counts from progress_start) */
void progress_update(progress *p, int64_t done);
void progress_end(progress *p, int64_t done);
/* Part k (from 0) of n, called `name`, starts: "analyze: geometry (1/5) ... 3 s" (the time since
 * progress_start), redrawn on a terminal, and as a plain line when the last one is `every` seconds
 * old; k == n: every part is done: "analyze: 5 parts in 21 s (geometry 3 s, ...)", on a terminal and
 * as a plain line alike. */
void progress_step(progress *p, int k, int n, const char *name);
/* On a terminal: erase the line drawn so far, so that an error message starts a clean line. */
void progress_clear(progress *p);
double progress_now(void); /* monotonic seconds */
/* The analyses' progress callback (int (*)(void *ctx, int64_t done, int64_t total)) drawing
 * on the progress line ctx points to; never asks to stop. */
int progress_callback(void *ctx, int64_t done, int64_t total);

#endif
