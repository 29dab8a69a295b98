/* Result keys declared once (docs/architecture.md, "Adding an analysis"): each
 * analysis owns a table of the keys it stores (name, meaning, unit), written
 * as an X-macro list in its *_keys.h that makes both the GS_KEY_* constants
 * writers and readers use and the rows `gpnscope analyze --keys` prints. */
#ifndef GS_ANALYSES_RESULT_KEYS_H
#define GS_ANALYSES_RESULT_KEYS_H

#include <stdio.h>

typedef struct {
    const char *name;
    const char *meaning; /* NULL: a shared key, described in analyses/shared_keys.h */
    const char *unit;    /* "" where the value has the states' own scale or none */
} gs_result_key;

typedef struct {
    const char *analysis; /* the registry row's stored name */
    const gs_result_key *rows;
    int n;
} gs_result_key_table;

/* What an X(constant, name, meaning, unit) list expands to: declarations in the
 * header, definitions in the .c, and the table's rows. */
#define GS_KEY_DECLARE(id, name, meaning, unit) extern const char id[];
#define GS_KEY_DEFINE(id, name, meaning, unit) const char id[] = name;
#define GS_KEY_ROW(id, name, meaning, unit) {id, meaning, unit},
#define GS_SHARED_KEY_ROW(id) {id, NULL, NULL},

/* Every analysis' table, in registry order; NULL-terminated. */
extern const gs_result_key_table *const gs_result_key_tables[];

/* One line per key: analysis, name, unit, meaning, tab-separated. */
void gs_result_keys_print(FILE *out);

#endif
