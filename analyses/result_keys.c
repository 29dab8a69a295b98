/* Every analysis' key table, made here from the lists in its *_keys.h, and
 * their printout (analyses/result_keys.h). */
#include "analyses/result_keys.h"

#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"
#include "analyses/state/geometry_keys.h"
#include "analyses/state/horizons_keys.h"
#include "analyses/state/probe_keys.h"

/* An analysis' constants, rows and table from its X-macro lists: KEYS, the
 * keys it alone writes, and SHARED, the shared ones it writes too. */
#define GS_KEY_TABLE(var, analysis, KEYS, SHARED)                                                      \
    KEYS(GS_KEY_DEFINE)                                                                                \
    static const gs_result_key var##_rows[] = {KEYS(GS_KEY_ROW) SHARED(GS_SHARED_KEY_ROW)};          \
    static const gs_result_key_table var = {analysis, var##_rows, (int)(sizeof var##_rows / sizeof var##_rows[0])};
#define GS_NO_SHARED_KEYS(S)

GS_KEY_TABLE(default_keys, "default_direction", GS_DEFAULT_KEYS, GS_DEFAULT_SHARED_KEYS)
GS_KEY_TABLE(geometry_keys, "geometry", GS_GEOMETRY_KEYS, GS_GEOMETRY_SHARED_KEYS)
GS_KEY_TABLE(horizons_keys, "horizons", GS_HORIZONS_KEYS, GS_HORIZONS_SHARED_KEYS)
GS_KEY_TABLE(probe_keys, "probe", GS_PROBE_KEYS, GS_NO_SHARED_KEYS)

const gs_result_key_table *const gs_result_key_tables[] = {&default_keys, &geometry_keys, &horizons_keys,
                                                            &probe_keys, NULL};

void gs_result_keys_print(FILE *out) {
    for (int t = 0; gs_result_key_tables[t]; t++) {
        const gs_result_key_table *tab = gs_result_key_tables[t];
        for (int i = 0; i < tab->n; i++) {
            const gs_result_key *k = &tab->rows[i];
            const gs_result_key *shared = k->meaning ? NULL : gs_shared_key(k->name);
            const char *meaning = shared ? shared->meaning : k->meaning, *unit = shared ? shared->unit : k->unit;
            fprintf(out, "%s\t%s\t%s\t%s\n", tab->analysis, k->name, unit ? unit : "", meaning ? meaning : "");
        }
    }
}
