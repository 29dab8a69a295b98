/* Small text helpers shared by modules: notes for the user, option lists. */
#ifndef GS_BASE_TEXT_H
#define GS_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/* Append one formatted line (a newline is added) to the NUL-terminated text
 * in buf[size]; a line that does not fit is dropped or cut, never overflows. */
void gs_append_line(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gs_append_linev(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* A comma-separated list of names ("geometry,probe") as the OR of their bits.
 * Returns 0, or -1 with the first unknown item in bad[bad_len] (the caller
 * words the error); an empty item is skipped when skip_empty, else unknown. */
typedef struct {
    const char *name;
    unsigned bit;
} gs_flag_name;
int gs_parse_flag_list(const char *list, const gs_flag_name *names, size_t n_names, int skip_empty, unsigned *bits,
                       const char **bad, int *bad_len);

/* s as one word for a POSIX shell, into buf[size]: unchanged when it holds
 * only characters no shell treats specially, else in single quotes (a quote
 * inside becomes '\''), so a printed hint can be pasted as it is. A quoted
 * form that does not fit is cut short and still closed.
 * Returns buf. */
const char *gs_shell_quote(const char *s, char *buf, size_t size);

/* The word of names[0..n) closest to `word` by edit distance (insertions,
 * deletions, substitutions, and a swap of two neighbours counted as one), for
 * "did you mean": NULL when none is within max(1, strlen(word) / 3). */
const char *gs_closest_word(const char *word, const char *const *names, size_t n);
/* A model's name for titles and labels: the folder of a model.safetensors
 * (every shipped model has that file name), else the file's own name. */
const char *gs_model_name(const char *path, char *out, size_t size);

#endif
