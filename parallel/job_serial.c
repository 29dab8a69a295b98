/* The job without MPI: one rank (parallel/job.h). */
#include "parallel/job.h"

#include <stdio.h>
#include <string.h>

int gs_job_mpi_built(void) { return 0; }

int gs_job_start(gs_job *j) {
    memset(j, 0, sizeof *j);
    j->size = 1;
    return 0;
}

void gs_job_end(gs_job *j) { memset(j, 0, sizeof *j); }

static int64_t own_done, own_total;
void gs_job_report(gs_job *j, int64_t done, int64_t total) {
    (void)j;
    own_done = done;
    own_total = total;
}

void gs_job_progress(gs_job *j, int64_t *done, int64_t *total) {
    (void)j;
    *done = own_done;
    *total = own_total;
}

int gs_job_outcome(gs_job *j, int rc, const char *message, int (*wait)(void *ctx), void *ctx, int *failed_rank,
                   int *n_failed, char *msg, size_t msg_size) {
    (void)j, (void)wait, (void)ctx;
    *failed_rank = rc ? 0 : -1;
    *n_failed = rc != 0;
    snprintf(msg, msg_size, "%s", rc && message ? message : "");
    return rc;
}

int gs_job_sum_f64(gs_job *j, double *x, int64_t n) { return (void)j, (void)x, (void)n, 0; }
int gs_job_sum_i64(gs_job *j, int64_t *x, int64_t n) { return (void)j, (void)x, (void)n, 0; }
int gs_job_max_i64(gs_job *j, int64_t *x, int64_t n) { return (void)j, (void)x, (void)n, 0; }
