/* The table and constants of analyses/state/geometry_keys.h. */
#include "analyses/state/geometry_keys.h"

GS_GEOMETRY_KEYS(GS_KEY_DEFINE)

static const gs_result_key rows[] = {
    GS_GEOMETRY_KEYS(GS_KEY_ROW)
    GS_GEOMETRY_SHARED_KEYS(GS_SHARED_KEY_ROW)
};

const gs_result_key_table gs_geometry_key_table = {"geometry", rows, (int)(sizeof rows / sizeof rows[0])};
