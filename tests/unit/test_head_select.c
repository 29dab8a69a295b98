/* probes/head_select.h: --sites splits on commas outside brackets; a
 * selector's heads come out ascending and deduplicated only by refusal, in
 * the canonical spelling (runs of three or more as A-B); the gather takes
 * each selected head's slice. The recorder's use is tests/cli/pattern_heads.sh. */
#include "base/error.h"
#include "probes/head_select.h"
#include "testlib.h"

static void canonical(const char *spec, int H, const char *want_name, const char *want) {
    char name[64], got[64];
    gs_head_select sel;
    int rc = gs_head_select_parse(spec, H, name, sizeof name, &sel);
    CHECK(rc == 0, "%s: %s", spec, gs_error());
    if (rc) return;
    CHECK(gs_head_select_format(&sel, got, sizeof got) == 0 && !strcmp(got, want) && !strcmp(name, want_name),
          "%s: name '%s' selector '%s', want '%s' '%s'", spec, name, got, want_name, want);
}

int main(void) {
    const char *list = "state.pred,blocks.0.attn.hook_pattern[heads=0,3],,blocks.*.attn.state[heads=1-2],";
    const char *want[] = {"state.pred", "blocks.0.attn.hook_pattern[heads=0,3]", "blocks.*.attn.state[heads=1-2]"};
    char item[128];
    int n = 0, got;
    for (const char *cur = list; (got = gs_sites_next(&cur, item, sizeof item)) > 0; n++)
        CHECK(n < 3 && !strcmp(item, want[n]), "item %d: '%s'", n, item);
    CHECK(got == 0 && n == 3, "split into %d items (rc %d)", n, got);
    const char *open = "a[heads=0,1";
    CHECK(gs_sites_next(&open, item, sizeof item) < 0, "an unclosed bracket was accepted");

    canonical("blocks.0.attn.hook_pattern[heads=3,0-1]", 4, "blocks.0.attn.hook_pattern", "[heads=0,1,3]");
    canonical("x[heads=5,0-3]", 8, "x", "[heads=0-3,5]");
    canonical("x[heads=7,6,5,1]", 8, "x", "[heads=1,5-7]");
    canonical("x[heads=0]", 1, "x", "[heads=0]");
    canonical("x", 4, "x", "");

    char name[64];
    gs_head_select sel;
    const char *bad[] = {"x[heads=4]", "x[heads=-1]", "x[heads=1,1]", "x[heads= 1]", "x[heads=0x1]", "x[heads=2-1]",
                         "x[head=1]", "x[heads=1]]", "x[heads=1][heads=2]"};
    for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++)
        CHECK(gs_head_select_parse(bad[i], 4, name, sizeof name, &sel) < 0 && !strchr(gs_error(), '\n') && sel.n == 0,
              "%s was accepted", bad[i]);

    CHECK(gs_head_select_parse("x[heads=0]", 0, name, sizeof name, &sel) < 0 && strstr(gs_error(), "no heads"),
          "a model without heads took a selector: %s", gs_error());
    CHECK(gs_head_select_parse("x[heads=2,0]", 3, name, sizeof name, &sel) == 0, "%s", gs_error());
    float row[6] = {0, 1, 10, 11, 20, 21}, out[4];
    gs_head_select_gather(&sel, row, 2, out);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 20 && out[3] == 21, "gather: %g %g %g %g", out[0], out[1], out[2], out[3]);
    return test_summary();
}
