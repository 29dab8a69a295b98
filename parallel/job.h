/* A job of ranks: the processes one `mpirun -n K` (or `srun`) starts
 * (docs/scale.md). Commands that split their work (record, analyze --shards)
 * ask for their rank and the number of ranks, report progress to rank 0,
 * which draws one line for the whole job, and end with one outcome for the
 * job: rank 0 learns every rank's return code and message and says the first
 * failure once.
 *
 * Without MPI (a build without it, or a process not started by an MPI
 * launcher) a job is one rank, 0 of 1, and every call here is local: the
 * commands behave exactly as they do without MPI. */
#ifndef GS_PARALLEL_JOB_H
#define GS_PARALLEL_JOB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int rank, size;
    int mpi;               /* 1: MPI_Init was called (launched by mpirun/srun in an MPI build) */
    int64_t *done, *total; /* rank 0: the latest progress of each rank */
} gs_job;

/* 1 when this build has MPI. */
int gs_job_mpi_built(void);
/* Start the job: MPI when this build has it and an MPI launcher started the
 * process (its environment says so), else one rank. 0, or -1 with gs_error(). */
int gs_job_start(gs_job *j);
void gs_job_end(gs_job *j);

/* Progress of this rank (units done and its total). On rank 0 it is kept;
 * elsewhere sent to rank 0. */
void gs_job_report(gs_job *j, int64_t done, int64_t total);
/* Rank 0: take in the reports that arrived; *done and *total: the job's. */
void gs_job_progress(gs_job *j, int64_t *done, int64_t *total);

/* The job's outcome: every rank passes its return code and message (NULL
 * when rc is 0). Every rank gets the job's code: 0 when all ranks returned 0,
 * else the first failing rank's (by rank); rank 0 also gets that rank in
 * *failed_rank, its message in msg, and the number of failing ranks in
 * *n_failed. While it waits, rank 0 calls wait(ctx) about 20 times a second
 * (a progress line); a non-zero return gives up waiting (a signal: mpirun is
 * ending the job) and is returned, with *failed_rank -1. */
int gs_job_outcome(gs_job *j, int rc, const char *message, int (*wait)(void *ctx), void *ctx, int *failed_rank,
                   int *n_failed, char *msg, size_t msg_size);

/* In-place sums and maxima over every rank (every rank calls them, in the
 * same order). 0, or -1 with gs_error(). */
int gs_job_sum_f64(gs_job *j, double *x, int64_t n);
int gs_job_sum_i64(gs_job *j, int64_t *x, int64_t n);
int gs_job_max_i64(gs_job *j, int64_t *x, int64_t n);

#endif
