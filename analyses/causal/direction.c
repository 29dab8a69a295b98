/* Directions by name (analyses/causal/direction.h). */
#include "analyses/causal/direction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/registry.h"
#include "analyses/state/geometry_keys.h"
#include "base/error.h"
#include "store/npy.h"

static int from_npy(const char *path, int d, float *out) {
    npy_file *f = npy_open(path);
    if (!f) return -1;
    int rc = 0;
    if (!f->is_float) rc = gs_fail("%s: a direction must be floats, not %s", path, npy_dtype_name(f->dtype));
    else if (f->count != d) rc = gs_fail("%s: %lld values, where the state has %d", path, (long long)f->count, d);
    else rc = npy_read_f32(f, out, d);
    npy_close(f);
    return rc;
}

int gs_direction_load(const char *spec, store *st, int64_t run, int d, float *out) {
    size_t n = strlen(spec);
    if (n > 4 && !strcmp(spec + n - 4, ".npy")) return from_npy(spec, d, out);
    char analysis[64], key[128];
    const char *colon = strchr(spec, ':');
    if (!strcmp(spec, "s_bar")) { snprintf(analysis, sizeof analysis, "%s", gs_analysis_stored_name(GS_AN_GEOMETRY)); snprintf(key, sizeof key, "%s", GS_KEY_MEAN); }
    /* pc1: the centered covariance's top eigenvector; top_sv: the uncentered states' (close to s_bar when the mean dominates) */
    else if (!strcmp(spec, "pc1") || !strcmp(spec, "top_sv")) {
        snprintf(analysis, sizeof analysis, "%s", gs_analysis_stored_name(GS_AN_GEOMETRY));
        snprintf(key, sizeof key, "%s", spec[0] == 'p' ? GS_KEY_PC1 : GS_KEY_TOP_SINGULAR_VECTOR);
    }
    else if (colon && colon > spec && (size_t)(colon - spec) < sizeof analysis && colon[1]) {
        snprintf(analysis, sizeof analysis, "%.*s", (int)(colon - spec), spec);
        snprintf(key, sizeof key, "%s", colon + 1);
    } else {
        return gs_fail("direction '%s': s_bar, pc1, top_sv, ANALYSIS:KEY (a stored vector) or FILE.npy", spec);
    }
    if (!st) return gs_fail("direction '%s' is read from a store's analyses: give the store (--from STORE)", spec);
    int64_t an = store_analysis_newest(st, run, analysis);
    if (an < 0) return -1;
    if (an <= 0) return gs_fail("direction '%s': the store has no %s analysis%s: run gpnscope analyze first", spec, analysis, run > 0 ? " of that run" : "");
    float *v = NULL;
    int64_t got = store_analysis_get_vector(st, an, key, &v);
    int rc = 0;
    if (got <= 0)
        rc = gs_fail("direction '%s': analysis %lld (%s) holds no vector '%s'%s", spec, (long long)an, analysis, key,
                     !strcmp(key, GS_KEY_PC1) ? " (analyzed before geometry stored it: run gpnscope analyze again)" : "");
    else if (got != d) rc = gs_fail("direction '%s': %lld values, where the model's state has %d", spec, (long long)got, d);
    else memcpy(out, v, (size_t)d * sizeof *out);
    free(v);
    return rc;
}
