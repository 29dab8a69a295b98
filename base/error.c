#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char error_message[GS_ERROR_MAX];

int gs_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    /* one line, always: a newline in a file name must not split the message */
    for (char *p = error_message; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

int gs_fail_context(const char *fmt, ...) {
    char prefix[GS_ERROR_MAX], old[GS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, error_message, sizeof old);
    return gs_fail("%s%s", prefix, old);
}

const char *gs_error(void) { return error_message[0] ? error_message : "unknown error"; }

void gs_clear_error(void) { error_message[0] = 0; }
