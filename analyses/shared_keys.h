/* Result keys that several analyses write with one meaning (mean_norm: default and geometry;
 * windows: default, horizons and attention), declared once here; each analysis' table lists the ones it writes. */
#ifndef GS_ANALYSES_SHARED_KEYS_H
#define GS_ANALYSES_SHARED_KEYS_H

#include "analyses/result_keys.h"

/* X(constant, name, meaning, unit) */
#define GS_SHARED_KEYS(X) \
    X(GS_KEY_MEAN_NORM, "mean_norm", "||s_bar||", "") \
    X(GS_KEY_WINDOWS, "windows", "windows read", "count")

GS_SHARED_KEYS(GS_KEY_DECLARE)

/* The shared row of that name (meaning, unit), or NULL: the rows an analysis lists with S() point here. */
const gs_result_key *gs_shared_key(const char *name);

#endif
