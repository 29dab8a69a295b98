/* Degenerate input gives a clear one-line message, never a crash or a NaN:
 * one state, identical states, a NaN or infinity in a state, a stream out of
 * order, windows of one state, constant windows, a zero mean, retention asked
 * of a model without memory. */
#include <math.h>

#include "analyses/state/default_dir.h"
#include "analyses/state/geometry.h"
#include "analyses/state/horizons.h"
#include "analyses/state/retention.h"
#include "base/error.h"
#include "test_analyses_util.h"
#include "testlib.h"

static int has(const char *needle) { return strstr(gs_error(), needle) != NULL; }

int main(void) {
    gs_geometry g;
    gs_horizons h;
    gs_default_dir r;
    owned_states o;

    /* one state */
    owned_alloc(&o, 1, 1, 6);
    for (int j = 0; j < 6; j++) o.x[j] = (float)j;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("at least 2 states (got 1)"), "%s", gs_error());
    CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == -1 && has("single state"), "%s", gs_error());
    owned_free(&o);

    /* no states at all */
    owned_alloc(&o, 0, 0, 6);
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("got 0"), "%s", gs_error());
    owned_free(&o);

    /* identical states */
    owned_alloc(&o, 3, 10, 6);
    for (int64_t i = 0; i < o.s.n * 6; i++) o.x[i] = 0.1f * (float)(i % 6) + 3.0f;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("identical"), "%s", gs_error());
    CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == -1 && has("every window is constant"), "%s", gs_error());
    /* all zero */
    memset(o.x, 0, sizeof(float) * o.s.n * 6);
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("identical"), "%s", gs_error());
    CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == -1 && has("no pair of non-zero states"), "%s", gs_error());
    owned_free(&o);

    /* a NaN, an infinity */
    owned_alloc(&o, 3, 10, 6);
    gs_rng rng = {1};
    for (int64_t i = 0; i < o.s.n * 6; i++) o.x[i] = (float)gs_rng_normal(&rng);
    o.x[(10 + 4) * 6 + 2] = NAN;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("window 101, position 4") && has("non-finite"),
          "%s", gs_error());
    CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == -1 && has("window 101, position 4"), "%s", gs_error());
    o.x[(10 + 4) * 6 + 2] = INFINITY;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("inf"), "%s", gs_error());
    o.x[(10 + 4) * 6 + 2] = 0.5f;

    /* out of order: a window split in two, positions going back */
    o.window[25] = 100;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("window 100 are not consecutive"), "%s", gs_error());
    o.window[25] = 102;
    o.pos[5] = 3;
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == -1 && has("position 3 follows position 4"), "%s", gs_error());
    o.pos[5] = 5;

    /* fine again: the default direction then refuses a zero mean */
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == 0, "%s", gs_error());
    gs_geometry_free(&g);
    for (int64_t t = 0; t < o.s.n; t += 2) /* pairs s, -s: mean exactly 0 */
        for (int j = 0; j < 6; j++) o.x[(t + 1) * 6 + j] = -o.x[t * 6 + j];
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == 0, "%s", gs_error());
    CHECK(g.mean_norm == 0 && isfinite(g.top_sv[0]), "zero mean: finite top singular vector");
    CHECK(gs_default_dir_run(owned_source(&o), &g, NULL, NULL, 0, NULL, &r) == -1 && has("s_bar is zero"), "%s",
          gs_error());
    CHECK(gs_default_dir_run(owned_source(&o), NULL, NULL, NULL, 0, NULL, &r) == -1 && has("geometry"), "%s",
          gs_error());
    gs_geometry_free(&g);
    owned_free(&o);

    /* windows of one state each: geometry works, horizons cannot */
    owned_alloc(&o, 5, 1, 3);
    for (int64_t i = 0; i < 15; i++) o.x[i] = (float)gs_rng_normal(&rng);
    CHECK(gs_geometry_run(owned_source(&o), NULL, &g) == 0, "%s", gs_error());
    gs_geometry_free(&g);
    CHECK(gs_horizons_run(owned_source(&o), NULL, &h) == -1 && has("single state"), "%s", gs_error());
    /* and the max-lag pass (no hint from the source) says the same */
    gs_state_source *src = owned_source(&o);
    src->max_span_hint = 0;
    CHECK(gs_horizons_run(src, NULL, &h) == -1 && has("single state"), "%s", gs_error());
    owned_free(&o);

    /* a source that fails part-way: its message comes through */
    CHECK(gs_geometry_run(NULL, NULL, &g) == -1, "NULL source refused");

    /* retention asked of a GPN without memory */
    gs_retention rt;
    int64_t ws[2] = {0, 10};
    CHECK(gs_retention_run(NULL, NULL, ws, 1, 0, NULL, &rt) == -1 && has("no memory"), "%s", gs_error());
    return test_summary();
}
