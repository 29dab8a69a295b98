/* The list of every analysis' key table and its printout (analyses/result_keys.h). */
#include "analyses/result_keys.h"

#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"
#include "analyses/state/geometry_keys.h"
#include "analyses/state/horizons_keys.h"
#include "analyses/state/probe_keys.h"

const gs_result_key_table *const gs_result_key_tables[] = {&gs_default_key_table, &gs_geometry_key_table,
                                                            &gs_horizons_key_table, &gs_probe_key_table, NULL};

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
