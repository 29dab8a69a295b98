/* The lock of a run: one process records (or resumes, or analyses an
 * unfinished) run at a time.
 *
 *     store_lock *l = store_lock_run("study.db", run, "gpnscope record");   (NULL: someone else has it)
 *     ... record ...
 *     store_lock_release(l);
 *
 * The lock is an open-file-description lock on one byte of the store file
 * itself (store/lock.c), so it follows the file by device and inode: a
 * second recorder through a hard link, or after the file beside the store
 * was removed, is refused. The sidecar STORE.run-N.lock says who holds it
 * (command, pid, host, start) for the message a second process gets. The
 * kernel drops the lock when its process ends, however it ends. */
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
