/* The table and constants of analyses/state/default_keys.h. */
#include "analyses/state/default_keys.h"

GS_DEFAULT_KEYS(GS_KEY_DEFINE)

static const gs_result_key rows[] = {
    GS_DEFAULT_KEYS(GS_KEY_ROW)
    GS_DEFAULT_SHARED_KEYS(GS_SHARED_KEY_ROW)
};

const gs_result_key_table gs_default_key_table = {"default_direction", rows, (int)(sizeof rows / sizeof rows[0])};
