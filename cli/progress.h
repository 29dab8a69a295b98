/* A progress line on stderr for long commands: done/total, rate, ETA. Drawn
 * only when stderr is a terminal (and at most ~10 times a second), so logs
 * and pipes stay clean. */
#ifndef GS_CLI_PROGRESS_H
#define GS_CLI_PROGRESS_H

#include <stdint.h>

typedef struct {
    const char *label, *unit; /* "record", "tok" */
    int64_t total;            /* 0: unknown */
    double started, last_draw;
    int enabled;
    char extra[96];           /* appended text, e.g. "loss 3.21" */
} progress;

void progress_start(progress *p, const char *label, const char *unit, int64_t total);
/* done: units so far in this run (the rate counts from progress_start) */
void progress_update(progress *p, int64_t done);
void progress_end(progress *p, int64_t done);
double progress_now(void); /* monotonic seconds */
/* The analyses' progress callback (int (*)(void *ctx, int64_t done, int64_t total)) drawing
 * on the progress line ctx points to; never asks to stop. */
int progress_callback(void *ctx, int64_t done, int64_t total);

#endif
