/* The lock of a run: one process records (or resumes, or analyses an
 * unfinished) run at a time.
 *
 *     store_lock *l = store_lock_run("study.db", run, "gpnscope record");   (NULL: someone else has it)
 *     ... record ...
 *     store_lock_release(l);
 *
 * The lock is an exclusive flock(2) on a sidecar file beside the store,
 * STORE.run-N.lock (STORE with symbolic links resolved, so two spellings of
 * one store share it), which holds what the holder is, its pid, host and
 * start time, for the message a second process gets. The kernel drops the lock when
 * its process ends, however it ends, so a lock file left by a dead process
 * (a SIGKILL, a crash) holds nothing and is simply taken over. */
#ifndef GS_STORE_LOCK_H
#define GS_STORE_LOCK_H

#include <stdint.h>

typedef struct store_lock store_lock;

/* Take the lock of run_id of the store at path (the file must exist); who
 * names the taker for others' messages ("gpnscope record"). NULL with
 * gs_error() set when another process holds it (the message names it:
 * "gpnscope record, pid P on host H since T") or the sidecar cannot be made. */
store_lock *store_lock_run(const char *path, int64_t run_id, const char *who);
/* Remove the sidecar and drop the lock; NULL is fine. */
void store_lock_release(store_lock *l);

#endif
