/* A small pool of sleeping worker threads for the engine's per-sequence loops
 * (the memory write/read and the logits statistics), which OpenBLAS does not
 * parallelize for us. Workers wait on a condition variable between calls, so
 * nothing spins next to OpenBLAS's own threads (OpenMP's spinning workers made
 * steps slower, see module.cmake). Threads: $GPNSCOPE_THREADS, else the number
 * of online CPUs (at most 16). */
#ifndef GS_ENGINE_PARALLEL_H
#define GS_ENGINE_PARALLEL_H

/* fn(ctx, begin, end) over [0, n) in chunks of `grain` items, which the
 * caller and up to n / grain - 1 workers take in turn until none are left;
 * returns when all are done. Calls from different threads are serialized. */
typedef void (*gs_range_fn)(void *ctx, long begin, long end);
void gs_parallel_for(long n, long grain, gs_range_fn fn, void *ctx);
/* the caller and the workers: how many take part at most */
int gs_parallel_threads(void);
/* The grain for items of this many floats of work each: tasks of about 64k
 * floats (256 KB of memory, logits or rows), at least one item; below one
 * task's worth the loop stays on the caller, where waking a worker would cost
 * more than it saves. */
long gs_parallel_grain(long floats_per_item);

#endif
