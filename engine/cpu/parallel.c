#include "engine/cpu/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 16

static struct {
    pthread_once_t once;
    pthread_mutex_t call; /* one gs_parallel_for at a time */
    pthread_mutex_t m;
    pthread_cond_t go, done;
    int n_threads;        /* including the caller */
    int stop;             /* set at exit: workers return */
    pthread_t tid[MAX_THREADS];
    unsigned long generation;
    int parts, pending;
    long n, grain;
    gs_range_fn fn;
    void *ctx;
    atomic_long next; /* the first item no one has taken yet */
} pool = {.once = PTHREAD_ONCE_INIT, .call = PTHREAD_MUTEX_INITIALIZER, .m = PTHREAD_MUTEX_INITIALIZER,
          .go = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER, .n_threads = 1};

/* Take `grain` items at a time until none are left: a thread slowed down (by
 * OpenBLAS's idle worker spinning on its core, say) simply takes fewer. */
static void take_work(long n, long grain, gs_range_fn fn, void *ctx) {
    for (;;) {
        long b = atomic_fetch_add(&pool.next, grain);
        if (b >= n) return;
        fn(ctx, b, b + grain < n ? b + grain : n);
    }
}

static void *worker(void *arg) {
    int part = (int)(long)arg; /* 1..n_threads-1; the caller runs part 0 */
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool.m);
        while (pool.generation == seen && !pool.stop) pthread_cond_wait(&pool.go, &pool.m);
        if (pool.stop) {
            pthread_mutex_unlock(&pool.m);
            return NULL;
        }
        seen = pool.generation;
        int parts = pool.parts;
        long n = pool.n, grain = pool.grain;
        gs_range_fn fn = pool.fn;
        void *ctx = pool.ctx;
        pthread_mutex_unlock(&pool.m);
        if (part >= parts) continue; /* not needed this time */
        take_work(n, grain, fn, ctx);
        pthread_mutex_lock(&pool.m);
        if (--pool.pending == 0) pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.m);
    }
    return NULL;
}

/* At exit the workers are woken, return and are joined, so that nothing of
 * theirs is left for a leak checker (valgrind's "possibly lost"); a call in
 * progress is finished first (stop waits for `call`). */
static void stop_workers(void) {
    pthread_mutex_lock(&pool.call);
    pthread_mutex_lock(&pool.m);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.m);
    for (int i = 1; i < pool.n_threads; i++) pthread_join(pool.tid[i], NULL);
    pool.n_threads = 1;
    pthread_mutex_unlock(&pool.call);
}

static void start(void) {
    const char *env = getenv("GPNSCOPE_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    pool.n_threads = 1;
    for (long i = 1; i < n; i++) {
        if (pthread_create(&pool.tid[i], NULL, worker, (void *)i) != 0) break; /* fewer threads is still correct */
        pool.n_threads++;
    }
    if (pool.n_threads > 1) atexit(stop_workers);
}

long gs_parallel_grain(long floats_per_item) {
    long g = 65536L / (floats_per_item > 0 ? floats_per_item : 1);
    return g > 0 ? g : 1;
}

int gs_parallel_threads(void) {
    pthread_once(&pool.once, start);
    return pool.n_threads;
}

void gs_parallel_for(long n, long grain, gs_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int threads = gs_parallel_threads();
    long by_grain = n / grain;
    int parts = by_grain < threads ? (int)(by_grain > 0 ? by_grain : 1) : threads;
    if (parts == 1) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.call);
    if (pool.stop) { /* the process is exiting and the workers are gone */
        pthread_mutex_unlock(&pool.call);
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.m);
    pool.parts = parts;
    pool.pending = parts - 1;
    pool.n = n;
    pool.grain = grain;
    pool.fn = fn;
    pool.ctx = ctx;
    atomic_store(&pool.next, 0);
    pool.generation++;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.m);
    take_work(n, grain, fn, ctx);
    pthread_mutex_lock(&pool.m);
    while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.m);
    pthread_mutex_unlock(&pool.m);
    pthread_mutex_unlock(&pool.call);
}
