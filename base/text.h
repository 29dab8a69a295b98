/* Small text helpers shared by modules that collect notes for the user. */
#ifndef GS_BASE_TEXT_H
#define GS_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/* Append one formatted line (a newline is added) to the NUL-terminated text
 * in buf[size]; a line that does not fit is dropped or cut, never overflows. */
void gs_append_line(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gs_append_linev(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
