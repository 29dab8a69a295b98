/* The result keys of the registry row "probe" (analyses/state/run_probe.c): each key's name, meaning and unit,
 * declared once. Writers and readers use the GS_KEY_* constants; `gpnscope analyze --keys`
 * lists the table (analyses/result_keys.h). */
#ifndef GS_ANALYSES_STATE_PROBE_KEYS_H
#define GS_ANALYSES_STATE_PROBE_KEYS_H

#include "analyses/result_keys.h"

/* X(constant, name, meaning, unit): the keys only this analysis writes */
#define GS_PROBE_KEYS(X) \
    X(GS_KEY_ACCURACY, "accuracy", "series: probe test accuracy by lag", "fraction") \
    X(GS_KEY_BASELINE, "baseline", "series: majority baseline by lag", "fraction") \
    X(GS_KEY_PASS, "pass", "series: 1 where the lag passes the rule", "flag") \
    X(GS_KEY_N_TEST, "n_test", "series: test rows by lag", "count") \
    X(GS_KEY_SE, "se", "series: the standard error the rule used", "fraction") \
    X(GS_KEY_SE_BLOCK, "se_block", "series: block standard error", "fraction") \
    X(GS_KEY_SE_BINOMIAL, "se_binomial", "series: binomial standard error", "fraction") \
    X(GS_KEY_SD_OVER_SPLITS, "sd_over_splits", "series: std of accuracy over the splits", "fraction") \
    X(GS_KEY_HORIZON_BY_SPLIT, "horizon_by_split", "series: each split's horizon (x: the split's seed)", "tokens") \
    X(GS_KEY_PROBE_HORIZON_MIN, "probe_horizon_min", "smallest horizon over the splits", "tokens") \
    X(GS_KEY_PROBE_HORIZON_MEDIAN, "probe_horizon_median", "lower median horizon over the splits", "tokens") \
    X(GS_KEY_PROBE_HORIZON_MAX, "probe_horizon_max", "largest horizon over the splits", "tokens") \
    X(GS_KEY_SPLITS, "splits", "train/test splits", "count") \
    X(GS_KEY_SPLIT_BY_DOCUMENT, "split_by_document", "1: whole documents held out; 0: windows", "flag") \
    X(GS_KEY_TRAIN_DOCUMENTS, "train_documents", "documents in the training split", "count") \
    X(GS_KEY_TEST_DOCUMENTS, "test_documents", "documents in the test split", "count") \
    X(GS_KEY_PROBE_HORIZON, "probe_horizon", "largest lag the rule passes", "tokens") \
    X(GS_KEY_PROBE_HORIZON_CENSORED, "probe_horizon_censored", "1: probe_horizon is a lower bound", "flag") \
    X(GS_KEY_TRAIN_WINDOWS, "train_windows", "windows in the training split", "count") \
    X(GS_KEY_TEST_WINDOWS, "test_windows", "windows in the test split", "count")

GS_PROBE_KEYS(GS_KEY_DECLARE)


#endif
