/* Controls (issue 39.3; docs/controls.md): the same recording of a run with
 * its model replaced by the family's initialisation ("untrained") and with
 * its text's order destroyed ("shuffled": each window's tokens after the
 * first permuted), so every rule can be read beside what it gives where the
 * structure cannot have been learned. Each control is a run of the same
 * store, with the run's own settings plus {"control": {kind, of, seed}};
 * `gpnscope analyze` of the run then analyzes its controls and reports them. */
#ifndef GS_RECORD_CONTROLS_H
#define GS_RECORD_CONTROLS_H

#include <signal.h>
#include <stdint.h>

#include "record/recorder.h"

typedef struct {
    int64_t run;       /* the run to control (0: the store's newest complete one) */
    unsigned kinds;    /* bit k: record control k (STORE_CONTROL_*); 0: both */
    uint64_t seed;     /* the initialisation's and the shuffle's seed (1) */
    const char *code_version;
} gs_controls_opts;

typedef struct {
    int64_t of;                      /* the run controlled */
    int64_t run[2];                  /* each control's run id (0: none) */
    int recorded[2];                 /* 1: recorded by this call; 0: found already complete, or skipped */
    char skipped[2][256];            /* why a control could not be recorded ("" when it was) */
} gs_controls_result;

/* Record the run's missing controls into db (resuming an unfinished one).
 * progress gets the tokens of the control being recorded (k: its kind).
 * Returns 0, 130 (stopped: resumable), or 1 with gs_error(). */
int gs_record_controls(const char *db, const gs_controls_opts *o,
                       void (*progress)(void *ctx, int k, int64_t done, int64_t total), void *ctx,
                       const volatile sig_atomic_t *stop, gs_controls_result *res);

#endif
