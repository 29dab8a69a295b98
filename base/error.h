/* One-line error messages shared by every module.
 *
 * Library functions never print and never exit: on failure they call
 * gs_fail() (which records "what failed, on which input, what to do") and
 * return an error code or NULL; the CLI prints gs_error() as one line.
 * The message lives in thread-local storage, so threads do not clobber it. */
#ifndef GS_BASE_ERROR_H
#define GS_BASE_ERROR_H

#define GS_ERROR_MAX 1024

/* Record a message (printf format) and return -1, so `return gs_fail(...)`. */
int gs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prepend context ("reading x.safetensors: ") to the current message. */
int gs_fail_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *gs_error(void);
void gs_clear_error(void);

#endif
