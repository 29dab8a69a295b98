/* The constants and rows of analyses/shared_keys.h. */
#include "analyses/shared_keys.h"

#include <string.h>

GS_SHARED_KEYS(GS_KEY_DEFINE)

static const gs_result_key rows[] = {GS_SHARED_KEYS(GS_KEY_ROW)};

const gs_result_key *gs_shared_key(const char *name) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}
