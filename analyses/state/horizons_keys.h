/* The result keys of the registry row "horizons" (analyses/state/run_horizons.c): each key's name, meaning and unit,
 * declared once. Writers and readers use the GS_KEY_* constants; `gpnscope analyze --keys`
 * lists the table (analyses/result_keys.h). */
#ifndef GS_ANALYSES_STATE_HORIZONS_KEYS_H
#define GS_ANALYSES_STATE_HORIZONS_KEYS_H

#include "analyses/result_keys.h"
#include "analyses/shared_keys.h"

/* X(constant, name, meaning, unit): the keys only this analysis writes */
#define GS_HORIZONS_KEYS(X) \
    X(GS_KEY_RAW, "raw", "series: raw lag cosine by lag k", "cosine") \
    X(GS_KEY_CENTERED, "centered", "series: centered lag cosine by lag k", "cosine") \
    X(GS_KEY_RAW_PAIRS, "raw_pairs", "series: pairs behind each raw lag cosine", "count") \
    X(GS_KEY_CENTERED_PAIRS, "centered_pairs", "series: pairs behind each centered lag cosine", "count") \
    X(GS_KEY_MIN_PAIRS, "min_pairs", "pairs a lag needs before readers use it", "count") \
    X(GS_KEY_C1, "c1", "centered lag cosine at k = 1", "cosine") \
    X(GS_KEY_CONTENT_HORIZON_E, "content_horizon_e", "lag where c_k <= c_1/e, log-k interpolation", "tokens") \
    X(GS_KEY_CONTENT_HORIZON_E_CENSORED, "content_horizon_e_censored", "1: content_horizon_e is a lower bound", "flag") \
    X(GS_KEY_CONTENT_HORIZON_002, "content_horizon_002", "lag where c_k < 0.02, log-k interpolation", "tokens") \
    X(GS_KEY_CONTENT_HORIZON_002_CENSORED, "content_horizon_002_censored", "1: content_horizon_002 is a lower bound", "flag") \
    X(GS_KEY_CONTENT_HORIZON_002_LO, "content_horizon_002_lo", "content_horizon_002, 95% bootstrap interval: low end", "tokens") \
    X(GS_KEY_CONTENT_HORIZON_002_HI, "content_horizon_002_hi", "content_horizon_002, 95% bootstrap interval: high end", "tokens") \
    X(GS_KEY_C1_LO, "c1_lo", "c1, 95% bootstrap interval: low end", "cosine") \
    X(GS_KEY_C1_HI, "c1_hi", "c1, 95% bootstrap interval: high end", "cosine") \
    X(GS_KEY_ZERO_STATES, "zero_states", "zero states left out of the raw curve", "count")

/* the keys of analyses/shared_keys.h this analysis writes too */
#define GS_HORIZONS_SHARED_KEYS(S) \
    S(GS_KEY_WINDOWS)

GS_HORIZONS_KEYS(GS_KEY_DECLARE)


#endif
