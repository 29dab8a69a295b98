/* The table and constants of analyses/state/probe_keys.h. */
#include "analyses/state/probe_keys.h"

GS_PROBE_KEYS(GS_KEY_DEFINE)

static const gs_result_key rows[] = {
    GS_PROBE_KEYS(GS_KEY_ROW)
};

const gs_result_key_table gs_probe_key_table = {"probe", rows, (int)(sizeof rows / sizeof rows[0])};
