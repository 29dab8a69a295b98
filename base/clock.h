/* A monotonic clock in seconds, for elapsed times and progress (never for
 * results). */
#ifndef GS_BASE_CLOCK_H
#define GS_BASE_CLOCK_H

double gs_now(void);

#endif
