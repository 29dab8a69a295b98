/* The table and constants of analyses/state/horizons_keys.h. */
#include "analyses/state/horizons_keys.h"

GS_HORIZONS_KEYS(GS_KEY_DEFINE)

static const gs_result_key rows[] = {
    GS_HORIZONS_KEYS(GS_KEY_ROW)
    GS_HORIZONS_SHARED_KEYS(GS_SHARED_KEY_ROW)
};

const gs_result_key_table gs_horizons_key_table = {"horizons", rows, (int)(sizeof rows / sizeof rows[0])};
