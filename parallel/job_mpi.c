/* The job over MPI (parallel/job.h). Progress and outcomes are small
 * point-to-point messages to rank 0, which polls for them (MPI_Iprobe) so
 * that no rank waits on another while it works; only the end (the job's
 * code) and the reductions are collective. */
#include "parallel/job.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"

enum { TAG_PROGRESS = 7301, TAG_OUTCOME = 7302 };

int gs_job_mpi_built(void) { return 1; }

/* An MPI launcher leaves these in each rank's environment: Open MPI's mpirun,
 * PMI (MPICH's hydra, Slurm's srun --mpi=pmi2) and PMIx (srun --mpi=pmix). A
 * process started by hand has none and stays one rank without MPI_Init. */
static int launched_by_mpi(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int gs_job_start(gs_job *j) {
    memset(j, 0, sizeof *j);
    j->size = 1;
    if (launched_by_mpi()) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return gs_fail("MPI_Init failed");
        j->mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &j->size);
    }
    /* rank 0 keeps every rank's progress, a process started by hand its own (it used to keep none, so
     * record's progress line read 0 tokens with no total) */
    if (j->rank == 0) {
        j->done = calloc((size_t)j->size, sizeof *j->done);
        j->total = calloc((size_t)j->size, sizeof *j->total);
        if (!j->done || !j->total) return gs_fail("out of memory");
    }
    return 0;
}

void gs_job_end(gs_job *j) {
    if (j->mpi) MPI_Finalize();
    free(j->done);
    free(j->total);
    memset(j, 0, sizeof *j);
}

void gs_job_report(gs_job *j, int64_t done, int64_t total) {
    if (j->rank == 0) {
        if (j->done) j->done[0] = done, j->total[0] = total;
        return;
    }
    int64_t m[2] = {done, total};
    MPI_Send(m, 2, MPI_INT64_T, 0, TAG_PROGRESS, MPI_COMM_WORLD);
}

typedef struct {
    int32_t rc;
    char msg[GS_ERROR_MAX];
} outcome;

/* Rank 0: receive what has arrived; progress in place, outcomes into out. */
static int drain(gs_job *j, outcome *out, unsigned char *seen) {
    int got = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) return got;
        int r = st.MPI_SOURCE;
        if (st.MPI_TAG == TAG_PROGRESS) {
            int64_t m[2];
            MPI_Recv(m, 2, MPI_INT64_T, r, TAG_PROGRESS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            j->done[r] = m[0], j->total[r] = m[1];
        } else if (st.MPI_TAG == TAG_OUTCOME && out) {
            MPI_Recv(&out[r], (int)sizeof out[r], MPI_BYTE, r, TAG_OUTCOME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            seen[r] = 1;
            got++;
        } else {
            return got; /* an outcome while only progress is wanted: left for gs_job_outcome */
        }
    }
}

void gs_job_progress(gs_job *j, int64_t *done, int64_t *total) {
    *done = *total = 0;
    if (!j->done) return;
    if (j->mpi) drain(j, NULL, NULL);
    for (int r = 0; r < j->size; r++) *done += j->done[r], *total += j->total[r];
}

int gs_job_outcome(gs_job *j, int rc, const char *message, int (*wait)(void *ctx), void *ctx, int *failed_rank,
                   int *n_failed, char *msg, size_t msg_size) {
    *failed_rank = -1;
    *n_failed = 0;
    msg[0] = 0;
    if (!j->mpi) {
        if (rc) *failed_rank = 0, *n_failed = 1, snprintf(msg, msg_size, "%s", message ? message : "");
        return rc;
    }
    int32_t job_rc = 0;
    if (j->rank) {
        outcome o = {rc, ""};
        snprintf(o.msg, sizeof o.msg, "%s", rc && message ? message : "");
        MPI_Send(&o, (int)sizeof o, MPI_BYTE, 0, TAG_OUTCOME, MPI_COMM_WORLD);
    } else {
        outcome *all = calloc((size_t)j->size, sizeof *all);
        unsigned char *seen = calloc((size_t)j->size, 1);
        if (!all || !seen) MPI_Abort(MPI_COMM_WORLD, 1);
        all[0].rc = rc;
        snprintf(all[0].msg, sizeof all[0].msg, "%s", rc && message ? message : "");
        seen[0] = 1;
        for (int left = j->size - 1; left > 0;) {
            left -= drain(j, all, seen);
            if (left <= 0) break;
            int gave_up = wait ? wait(ctx) : 0;
            if (gave_up) { /* no Bcast: the job is ending under us */
                free(all);
                free(seen);
                return gave_up;
            }
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        for (int r = 0; r < j->size; r++) {
            if (!all[r].rc) continue;
            if (!(*n_failed)++) {
                *failed_rank = r;
                job_rc = all[r].rc;
                snprintf(msg, msg_size, "%s", all[r].msg);
            }
        }
        free(all);
        free(seen);
    }
    MPI_Bcast(&job_rc, 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    return job_rc;
}

/* MPI counts are ints: large arrays go in pieces */
static int allreduce(gs_job *j, void *x, int64_t n, MPI_Datatype t, size_t size, MPI_Op op) {
    if (!j->mpi) return 0;
    const int64_t piece = 1 << 26;
    for (int64_t at = 0; at < n; at += piece) {
        int k = (int)(n - at < piece ? n - at : piece);
        if (MPI_Allreduce(MPI_IN_PLACE, (char *)x + (size_t)at * size, k, t, op, MPI_COMM_WORLD) != MPI_SUCCESS)
            return gs_fail("MPI_Allreduce failed");
    }
    return 0;
}

int gs_job_sum_f64(gs_job *j, double *x, int64_t n) { return allreduce(j, x, n, MPI_DOUBLE, sizeof *x, MPI_SUM); }
int gs_job_sum_i64(gs_job *j, int64_t *x, int64_t n) { return allreduce(j, x, n, MPI_INT64_T, sizeof *x, MPI_SUM); }
int gs_job_max_i64(gs_job *j, int64_t *x, int64_t n) { return allreduce(j, x, n, MPI_INT64_T, sizeof *x, MPI_MAX); }
