#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gs_append_linev(char *buf, size_t size, const char *fmt, va_list ap) {
    size_t len = strlen(buf);
    if (len + 2 >= size) return;
    vsnprintf(buf + len, size - len - 1, fmt, ap); /* keeps room for the newline */
    len = strlen(buf);
    buf[len] = '\n';
    buf[len + 1] = 0;
}

void gs_append_line(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_append_linev(buf, size, fmt, ap);
    va_end(ap);
}
